#!/usr/bin/env bash
# scripts/fuzz-smoke.sh: a short libFuzzer run of the CPU decoders (fuzz/),
# part of scripts/test.sh: builds the harnesses with clang (ASan, fatal
# UBSan, coverage), writes the seed corpus, replays it and fuzzes each target
# for FUZZ_SECONDS (default 60). Any crash, sanitizer report, hang or
# disagreement between the readers fails it. Skipped, with a note, where
# clang cannot link a libFuzzer target (install clang and libclang-rt-*-dev).
# Longer runs: fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
probe=$(mktemp -d)
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$probe/p.cpp"
if ! command -v clang++ >/dev/null || ! clang++ -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>/dev/null; then
  echo "fuzz-smoke: skipped (clang++ with libFuzzer not available)"
  rm -rf "$probe"
  exit 0
fi
rm -rf "$probe"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DVLEC_CUDA=OFF -DVLEC_FUZZ=ON -DVLEC_BUILD_TESTS=OFF \
  -DVLEC_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_seeds fuzz_decompress fuzz_resealed
work=$(mktemp -d)
mkdir -p "$work/seeds"
build-fuzz/fuzz/fuzz_seeds "$work/seeds" >/dev/null
for target in fuzz_resealed fuzz_decompress; do
  mkdir -p "$work/$target"
  echo "fuzz-smoke: $target, ${seconds} s from $(ls "$work/seeds" | wc -l) seeds"
  build-fuzz/fuzz/$target -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
    -dict=fuzz/vlec.dict -artifact_prefix="$work/$target-" -print_final_stats=1 "$work/$target" "$work/seeds" \
    2>"$work/$target.log" || { tail -60 "$work/$target.log"; echo "fuzz-smoke: $target FAILED (artifacts in $work)"; exit 1; }
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$target.log" | tr '\n' ' '
  echo
done
rm -rf "$work"
echo "fuzz-smoke: passed"
