#!/usr/bin/env bash
# scripts/prepare-device-carry.sh: build the GPU binaries here (sm_90) and put
# them in .device-carry/ (git-ignored), for `run` with carry [".device-carry"].
# They depend only on the C and C++ runtime and zlib: xxHash is header-only and
# the CUDA runtime is linked statically.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -DVLEC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-gpu -j"$(nproc)" --target vlec_tests gpu_bench gpu_sweep rle_bench histogram_bench vlec_cli
mkdir -p .device-carry
cp build-gpu/tests/vlec_tests build-gpu/bench/gpu_bench build-gpu/bench/gpu_sweep build-gpu/bench/rle_bench build-gpu/bench/histogram_bench build-gpu/vlec .device-carry/
# The nvCOMP comparison is built only where nvCOMP was unpacked into .device-carry/nvcomp (never committed).
if [ -f build-gpu/bench/nvcomp_bench ]; then cp build-gpu/bench/nvcomp_bench .device-carry/; fi
git rev-parse HEAD >.device-carry/COMMIT
git status --short --untracked-files=no | sed 's/^/dirty: /' >>.device-carry/COMMIT
ls -la .device-carry
