#!/usr/bin/env bash
# scripts/test.sh: install dependencies, build everything (CUDA included, for
# sm_90, where a CUDA compiler exists) and run the whole test suite; then build
# the tests again with AddressSanitizer and UndefinedBehaviorSanitizer and run
# them, and fuzz the CPU decoders for a minute a target (scripts/fuzz-smoke.sh).
# GPU tests skip on machines without a GPU. This is README command (b) and
# what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
cuda_args=$(bash scripts/cuda-env.sh || echo "-DVLEC_CUDA=OFF")
echo "== build (Release): $cuda_args"
# shellcheck disable=SC2086
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 $cuda_args >/dev/null
cmake --build build -j"$jobs"
echo "== tests"
ctest --test-dir build --output-on-failure -j"$jobs"
echo "== tests under AddressSanitizer + UndefinedBehaviorSanitizer (CPU backend)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVLEC_SANITIZE=ON -DVLEC_CUDA=OFF \
  -DVLEC_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs" --target vlec_tests vlec_cli
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
echo "== libFuzzer smoke run of the CPU decoders (fuzz/)"
bash scripts/fuzz-smoke.sh
echo "== all tests passed"
