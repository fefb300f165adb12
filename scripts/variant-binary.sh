#!/usr/bin/env bash
# scripts/variant-binary.sh: a binary built with some source files as they
# are at another commit, the rest as they are now, for timing two builds in
# one device call (kernel changes are compared build against build: a
# switch's own "off" position can carry the switch's register cost).
#
#   scripts/variant-binary.sh REV TARGET OUT FILE...
#
# Takes FILE... from REV into the working tree, builds TARGET in build-gpu
# (incrementally: only what those files touch is compiled again), copies the
# binary to OUT, then puts the files back as they were (also on failure) and
# builds TARGET again so that build-gpu matches the tree. Files that do not
# exist at REV are removed for the build.
#
#   scripts/variant-binary.sh ea1b0ff wavelet_gpu_bench /tmp/wgb_old \
#     src/cuda/wavelet_encode_kernels.cu src/cuda/wavelet_encode_tiles.cuh
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,17p "$0"; exit 2; }
cd "$(dirname "$0")/.."
rev=$1 target=$2 out=$3
shift 3
git rev-parse --verify --quiet "$rev^{commit}" >/dev/null || { echo "no commit $rev" >&2; exit 2; }
[ -d build-gpu ] || { echo "no build-gpu: run scripts/prepare-device-carry.sh first" >&2; exit 2; }
keep=$(mktemp -d)
restore() {
  for f in "$@"; do
    # (a plain copy: the restored file is newer than the variant's objects)
    if [ -e "$keep/$f.absent" ]; then rm -f "$f"; else cp "$keep/$f" "$f"; fi
  done
  rm -rf "$keep"
}
saved=()
for f in "$@"; do
  mkdir -p "$keep/$(dirname "$f")"
  if [ -e "$f" ]; then cp -p "$f" "$keep/$f"; else touch "$keep/$f.absent"; fi
  saved+=("$f")
done
trap 'restore "${saved[@]}"' EXIT
for f in "$@"; do
  if git cat-file -e "$rev:$f" 2>/dev/null; then git show "$rev:$f" >"$f"; else rm -f "$f"; fi
done
cmake --build build-gpu --target "$target" -j"$(nproc)"
binary=$(find build-gpu -type f -name "$target" -perm -u+x | head -1)
[ -n "$binary" ] || { echo "no binary named $target in build-gpu" >&2; exit 1; }
cp "$binary" "$out"
trap - EXIT
restore "${saved[@]}"
cmake --build build-gpu --target "$target" -j"$(nproc)" >/dev/null
echo "$out: $target with $* from $rev"
