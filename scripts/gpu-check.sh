#!/usr/bin/env bash
# scripts/gpu-check.sh: everything vlec runs on the GPU machine, in one go:
# the GPU test suite (each GPU result compared with the CPU backend), the
# corruption tests once under compute-sanitizer memcheck, the GPU benchmark
# and the size sweep against the CPU backend. Logs go to $OUT (the device
# tool brings them back).
#
# The GPU machine cannot install packages, so the binaries are built here
# (scripts/prepare-device-carry.sh) and carried in .device-carry/; without
# them this script builds with cmake, which needs the project's dependencies.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
BIN=${VLEC_CARRY:-.device-carry}
# Binaries travel gzipped (each holds all of vlec's device code: ~22 MB, 7 MB
# packed) or, to fit more of them in the carry limit, xz-packed (~4 MB; python's
# lzma where the machine has no xz).
for f in "$BIN"/*.gz; do [ -f "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
for f in "$BIN"/*.xz; do
  [ -f "$f" ] || continue
  xz -d -f "$f" 2>/dev/null ||
    python3 -c "import lzma,sys,os; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read()); os.remove(sys.argv[1])" "$f"
  chmod +x "${f%.xz}"
done
if [ ! -x "$BIN/vlec_tests" ]; then
  BIN=build-gpu
  cmake -S . -B "$BIN" -DVLEC_CUDA=ON -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
    cmake --build "$BIN" -j"$(nproc)" >>"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
  cp "$BIN/tests/vlec_tests" "$BIN/bench/gpu_bench" "$BIN/bench/gpu_sweep" "$BIN/bench/rle_bench" "$BIN/bench/histogram_bench" "$BIN/vlec" "$BIN/" 2>/dev/null
fi
export VLEC_TEST_SEED=${VLEC_TEST_SEED:-20261121}
{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "commit: $(cat "$BIN/COMMIT" 2>/dev/null || git rev-parse HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  nproc
} >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
status=0
echo "== GPU tests"
"$BIN/vlec_tests" --gtest_filter="${GPU_TEST_FILTER:-Gpu*:*Gpu*}" ${GPU_TEST_ARGS:-} >"$OUT/gpu-tests.log" 2>&1 || status=1
tail -5 "$OUT/gpu-tests.log"
echo "== compute-sanitizer memcheck (corruption tests)"
VLEC_GPU_WAVELET_FLIPS=${VLEC_GPU_WAVELET_FLIPS:-25} compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN/vlec_tests" \
  --gtest_filter='Gpu.CorruptionAndTruncationAreReported:GpuRleDecode.CorruptChunksReportTheirError:GpuRleFrames.CorruptionIsReported:GpuWavelet.CorruptAndTruncatedFramesAreRejected:GpuDecodeBatch.DamagedFrameFailsAlone' \
  >"$OUT/memcheck.log" 2>&1 || status=1
tail -3 "$OUT/memcheck.log"
if [ -n "${NCU_BENCH_ARGS:-}" ]; then
  echo "== Nsight Compute: kernel times of one benchmark pass"
  ncu --print-summary per-kernel --metrics gpu__time_duration.sum "$BIN/gpu_bench" $NCU_BENCH_ARGS \
    >"$OUT/ncu.log" 2>&1 || status=1
  grep -E "^  [a-z_].*\(|gpu__time_duration" "$OUT/ncu.log" | paste - - | sed 's/  */ /g' | head -40
fi
if [ -x "$BIN/gpu_bench" ] && [ -z "${SKIP_GPU_BENCH:-}" ]; then
  echo "== GPU benchmark"
  "$BIN/gpu_bench" ${GPU_BENCH_ARGS:-} 2>&1 | tee "$OUT/gpu-bench.log" || status=1
fi
if [ -x "$BIN/lane_layout_probe" ] && [ -n "${LAYOUT_PROBE_ARGS:-}" ]; then
  echo "== lane layout probe (a word-interleaved layout's encoder beside vlec's; a format probe)"
  # shellcheck disable=SC2086
  "$BIN/lane_layout_probe" $LAYOUT_PROBE_ARGS 2>&1 | tee "$OUT/lane-layout-probe.log" || status=1
fi
if [ -x "$BIN/rle_bench" ] && [ -z "${SKIP_RLE_BENCH:-}" ]; then
  echo "== RLE benchmark (parle, chunked, default, CUB baseline, decode, whole rle frames)"
  "$BIN/rle_bench" ${RLE_BENCH_ARGS:---size 1024 --repeat 10 --seed 1 --data runs,volume --chunks 65536} 2>&1 |
    tee "$OUT/rle-bench.log" || status=1
fi
if [ -x "$BIN/gpu_sweep" ] && [ -z "${SKIP_SWEEP:-}" ]; then
  echo "== size sweep: GPU against the CPU backend"
  "$BIN/gpu_sweep" ${SWEEP_ARGS:-} 2>&1 | tee "$OUT/gpu-sweep.log" || status=1
fi
if [ -x "$BIN/nvcomp_bench" ] && [ -z "${SKIP_NVCOMP_BENCH:-}" ]; then
  echo "== nvCOMP on the same data (ANS, GDeflate entropy-only)"
  LD_LIBRARY_PATH="$BIN/nvcomp/lib64:${LD_LIBRARY_PATH:-}" "$BIN/nvcomp_bench" ${NVCOMP_BENCH_ARGS:-} 2>&1 |
    tee "$OUT/nvcomp-bench.log" || status=1
fi
if [ -x "$BIN/stream_bench" ] && [ -z "${SKIP_STREAM_BENCH:-}" ]; then
  echo "== host data through the GPU in pieces (host API, CUDA backend) against the CPU backend; then with all but ~10 GiB of the GPU taken"
  "$BIN/stream_bench" ${STREAM_BENCH_ARGS:---gib 4 --repeat 3 skewed quant1024} 2>&1 | tee "$OUT/stream-bench.log" || status=1
  "$BIN/stream_bench" --gib 16 --occupy-gib 68 --repeat 3 skewed 2>&1 | tee -a "$OUT/stream-bench.log" || status=1
fi
if [ -x "$BIN/histogram_bench" ] && [ -z "${SKIP_HISTOGRAM_BENCH:-}" ]; then
  echo "== histogram benchmark"
  "$BIN/histogram_bench" ${HISTOGRAM_BENCH_ARGS:-} 2>&1 | tee "$OUT/histogram-bench.log" || status=1
fi
if [ -x "$BIN/volume_pipeline" ] && [ -z "${SKIP_VOLUME:-}" ]; then
  echo "== volume pipeline: compress + D2H against the raw D2H (generated 512^3, then any carried real volume)"
  "$BIN/volume_pipeline" ${VOLUME_ARGS:-} 2>&1 | tee "$OUT/volume-pipeline.log" || status=1
  for v in "$BIN"/data/volumes/*.u8; do
    [ -f "$v" ] || continue
    shape=$(basename "$v" .u8 | grep -oE '[0-9]+x[0-9]+x[0-9]+$')
    "$BIN/volume_pipeline" --volume "$v@$shape" ${VOLUME_ARGS:-} 2>&1 | tee -a "$OUT/volume-pipeline.log" || status=1
  done
  if [ -x "$BIN/vlec" ]; then
    echo "== vlec bench --volume"
    "$BIN/vlec" bench --volume generated --repeat 20 2>&1 | tee "$OUT/vlec-bench-volume.log" || status=1
    for v in "$BIN"/data/volumes/*.u8; do
      [ -f "$v" ] || continue
      shape=$(basename "$v" .u8 | grep -oE '[0-9]+x[0-9]+x[0-9]+$')
      "$BIN/vlec" bench --volume "$v@$shape" --repeat 20 2>&1 | tee -a "$OUT/vlec-bench-volume.log" || status=1
    done
  fi
fi
if [ -x "$BIN/dwt_gpu_bench" ] && [ -z "${SKIP_DWT_BENCH:-}" ]; then
  echo "== GPU 5/3 wavelet transform"
  "$BIN/dwt_gpu_bench" ${DWT_BENCH_ARGS:-} 2>&1 | tee "$OUT/dwt-gpu-bench.log" || status=1
fi
if [ -x "$BIN/wavelet_gpu_bench" ] && [ -z "${SKIP_WAVELET_BENCH:-}" ]; then
  echo "== wavelet frames decoded on the GPU (u16 8192^2: carried 16-bit images mirrored, and a generated one)"
  "$BIN/wavelet_gpu_bench" ${WAVELET_BENCH_ARGS:---repeat 11} $(ls "$BIN"/data/images/*16*.p?m "$BIN"/data/images/mr_*.pgm 2>/dev/null) \
    2>&1 | tee "$OUT/wavelet-gpu-bench.log" || status=1
fi
if [ -x "$BIN/image_bench" ] && [ -z "${SKIP_IMAGE_BENCH:-}" ] && ls "$BIN"/data/images/* >/dev/null 2>&1; then
  echo "== wavelet codec against OpenJPEG and PNG on the carried real images"
  LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}" "$BIN/image_bench" ${IMAGE_BENCH_ARGS:-} "$BIN"/data/images/* \
    2>&1 | tee "$OUT/image-bench.log" || status=1
fi
exit $status
