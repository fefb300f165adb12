#!/usr/bin/env bash
# scripts/cuda-env.sh: find a CUDA compiler and print the CMake arguments that
# select it (nvcc on PATH, /usr/local/cuda, or the wheels install-deps.sh puts
# in /opt/vlec-cuda). Exits 1 if there is none. --quiet prints nothing.
for nvcc in "$(command -v nvcc 2>/dev/null)" /usr/local/cuda/bin/nvcc /opt/vlec-cuda/nvidia/cu13/bin/nvcc; do
  if [ -n "$nvcc" ] && [ -x "$nvcc" ] && "$nvcc" --version >/dev/null 2>&1; then
    root=$(cd "$(dirname "$nvcc")/.." && pwd)
    [ "${1:-}" = "--quiet" ] || echo "-DVLEC_CUDA=ON -DCMAKE_CUDA_COMPILER=$nvcc -DCUDAToolkit_ROOT=$root"
    exit 0
  fi
done
exit 1
