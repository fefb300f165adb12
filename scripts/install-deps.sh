#!/usr/bin/env bash
# scripts/install-deps.sh: install what vlec needs to build and test, on Debian
# 12 as root. Idempotent: packages already present are not touched.
#
# Debian packages: compiler, CMake, GoogleTest, Google Benchmark, xxHash,
# CLI11, zlib. The CUDA compiler is taken from an existing toolkit (nvcc on
# PATH or /usr/local/cuda); where there is none, NVIDIA's CUDA 13.0 compiler
# wheels from PyPI are installed into /opt/vlec-cuda (set VLEC_NO_CUDA=1 to
# skip that and build the CPU backend only). scripts/cuda-env.sh finds it.
set -euo pipefail

packages=(build-essential cmake pkg-config git libgtest-dev libgmock-dev libbenchmark-dev libxxhash-dev
          libcli11-dev zlib1g-dev python3 python3-pip)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# clang and its libFuzzer runtime for scripts/fuzz-smoke.sh; optional (the
# smoke run skips without them), so a failure here stops nothing.
if ! dpkg-query -W -f='${Status}' clang 2>/dev/null | grep -q "install ok installed"; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends clang >/dev/null 2>&1 || echo "install-deps: clang not installed (fuzz smoke run skips)"
fi
clang_major=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
if [ -n "$clang_major" ] && ! dpkg-query -W -f='${Status}' "libclang-rt-$clang_major-dev" 2>/dev/null | grep -q "install ok installed"; then
  apt-get install -y -qq --no-install-recommends "libclang-rt-$clang_major-dev" >/dev/null 2>&1 || true
fi

here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${VLEC_NO_CUDA:-}" ] && ! bash "$here/cuda-env.sh" --quiet; then
  echo "install-deps: no CUDA compiler found; installing NVIDIA's CUDA 13.0 compiler wheels into /opt/vlec-cuda"
  pip_flags=(--quiet --no-deps --target /opt/vlec-cuda)
  python3 -m pip install --help | grep -q -- --break-system-packages && pip_flags+=(--break-system-packages)
  python3 -m pip install "${pip_flags[@]}" "nvidia-cuda-nvcc==13.0.*" "nvidia-cuda-runtime==13.0.*" \
    "nvidia-cuda-cccl==13.0.*" "nvidia-nvvm==13.0.*" "nvidia-cuda-crt==13.0.*"
  bash "$here/cuda-env.sh" --quiet || { echo "install-deps: the CUDA wheels did not give a working nvcc" >&2; exit 1; }
fi
echo "install-deps: done"
