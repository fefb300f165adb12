#!/usr/bin/env bash
# scripts/prepare-device-carry.sh: build the GPU binaries here (sm_90) and put
# them in .device-carry/ (git-ignored), for `run` with carry [".device-carry"].
# They depend only on the C and C++ runtime and zlib: xxHash is header-only and
# the CUDA runtime is linked statically.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -DVLEC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=${CARRY_TARGETS:-vlec_tests gpu_bench gpu_sweep rle_bench histogram_bench vlec_cli volume_pipeline stream_bench}
# shellcheck disable=SC2086
cmake --build build-gpu -j"$(nproc)" --target $targets
mkdir -p .device-carry
rm -f .device-carry/*.gz .device-carry/*.xz  # a previous call's packed binaries (packed again below, they would nest)
for f in build-gpu/tests/vlec_tests build-gpu/bench/gpu_bench build-gpu/bench/gpu_sweep build-gpu/bench/rle_bench \
  build-gpu/bench/histogram_bench build-gpu/vlec build-gpu/volume_pipeline build-gpu/bench/dwt_gpu_bench \
  build-gpu/bench/image_bench build-gpu/bench/stream_bench build-gpu/bench/wavelet_gpu_bench build-gpu/bench/lane_layout_probe; do
  case " $targets " in *" $(basename "$f" | sed 's/^vlec$/vlec_cli/') "*) cp "$f" .device-carry/ && strip .device-carry/"$(basename "$f")" ;; esac
done
# Packed: each binary holds all of vlec's device code. With xz a binary is
# ~10-14 MB, gzipped ~13-18 MB (session 31: five gzipped binaries came to
# 77 MB, past the carry limit of 64 MiB); gpu-check.sh unpacks either.
pack() { if command -v xz >/dev/null; then xz -T0 -6 -f "$1"; else gzip -f -6 "$1"; fi; }
for f in .device-carry/*; do [ -f "$f" ] && [ -x "$f" ] && pack "$f"; done
# Real test data (scripts/fetch-test-data.sh) when CARRY_DATA names a folder:
# volumes and images, and the OpenJPEG and libpng libraries image_bench needs.
if [ -n "${CARRY_DATA:-}" ]; then
  mkdir -p .device-carry/data .device-carry/lib
  cp -r "$CARRY_DATA/volumes" .device-carry/data/ 2>/dev/null || true
  [ -z "${CARRY_IMAGES:-}" ] || cp -r "$CARRY_DATA/images" .device-carry/data/
  cp -L /usr/lib/x86_64-linux-gnu/libopenjp2.so.7 /usr/lib/x86_64-linux-gnu/libpng16.so.16 .device-carry/lib/ 2>/dev/null || true
fi
# The nvCOMP comparison is built only where nvCOMP was unpacked into .device-carry/nvcomp (never committed).
if [ -f build-gpu/bench/nvcomp_bench ]; then cp build-gpu/bench/nvcomp_bench .device-carry/; fi
git rev-parse HEAD >.device-carry/COMMIT
git status --short --untracked-files=no | sed 's/^/dirty: /' >>.device-carry/COMMIT
ls -la .device-carry
