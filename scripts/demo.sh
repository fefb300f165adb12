#!/usr/bin/env bash
# scripts/demo.sh: install dependencies, build vlec, and run its main job on a
# generated sample (256 MiB of skewed bytes): compress, decompress, verify
# byte for byte, and print the ratio and throughput, beside zlib's
# Huffman-only mode. Decompression runs on the GPU when one is present and
# the CUDA backend could be built, on the CPU otherwise. README command (a).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cuda_args=$(bash scripts/cuda-env.sh || echo "-DVLEC_CUDA=OFF")
# shellcheck disable=SC2086
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 $cuda_args >/dev/null
cmake --build build -j"$(nproc)" --target vlec_cli
./build/vlec bench --synthetic skewed --size "${VLEC_DEMO_MIB:-256}" --repeat 3 --seed 1
