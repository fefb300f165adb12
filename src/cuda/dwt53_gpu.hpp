// cuda/dwt53_gpu.hpp: internals of the GPU 5/3 wavelet transform
// (vlec/device_dwt.hpp is the public API): the description of one pass that
// the host planner (dwt53_device.cu) hands to the kernels (dwt53_forward.cu,
// dwt53_inverse.cu), and the tuning knobs the benchmark sweeps.
//
// A level transforms a box e (the low band of the level before) and is one
// or two passes:
//  * rows pass: x lifting (warp shuffles) and/or y lifting (streamed down the
//    rows in registers) in one kernel: the whole level for 1D and 2D;
//  * z pass: z lifting, one thread per (x, y) column, streamed along z
//    (3D only, after a rows pass into a full-size buffer W).
// The output of the pass that finishes a level is routed: coefficients of
// the new low band (x < lx, y < ly, z < lz) go to `lo`, all others to `hi`
// (the caller's coefficients); the inverse reads the same way. Levels never
// work in place, so no block reads what another writes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "vlec/device_dwt.hpp"

namespace vlec::cuda::dwt {

// Tuning of the rows pass; the defaults are what the public API uses.
struct Tuning {
  // Output row pairs (y steps) one warp streams through. 8 measured fastest
  // on the H100 (u16 8192^2, one level: forward 353 GS/s against 328 with 16,
  // 280 with 32; five levels 214 against 178; inverse 398 against 393:
  // bench/results/2026-11-22-h100-dwt-gpu-bench.log): more warps in flight.
  int pairs_per_warp = 8;
  bool vector_io = true;    // 8/16-byte loads and stores where alignment allows
  bool fuse_xy = true;      // false: x pass and y pass as two kernels through W (the unfused baseline)
  bool prefetch = true;     // fused kernel: load the next y step's rows before finishing this one
  // With coded details (the wavelet decoder): prefetch the next step's
  // symbols and low bits as raw words and decode them a step later, so that
  // no decode waits for a load issued in the same step, on levels whose
  // warps take at least coded_raw_min_pairs row pairs each. H100, u16
  // 8192^2 (bench/results/2026-11-27-h100-session20-raw-prefetch-*): level
  // 1 (u16 out, 8 pairs a warp) 0.208 -> 0.179 ms, level 2 (i32 out, 8
  // pairs) 0.075 -> 0.071; but level 3 (i32 out, 4 pairs a warp, min_warps)
  // 0.027 -> 0.031-0.034. The kernels take more registers (u16 out 96
  // against 80, i32 out 64 against 48: 20 resident warps a SM against 24,
  // 32 against 40), which short chains pay for and do not win back.
  bool coded_raw_prefetch = true;
  int coded_raw_min_pairs = 8;
  // A level whose three detail bands have no low bits (k = 0: level 1 of
  // the smooth benchmark image and of the MR slice, 8-bit images) takes a
  // raw-prefetch kernel without the low-bit window: 79 registers against
  // 96 (u16 out; 24 resident warps a SM against 20). Level 1 of u16 8192^2,
  // alternated (bench/results/2026-11-27-h100-session20-shift-free-*):
  // smooth 0.181 -> 0.163 ms, MR 0.176 -> 0.159 (its level 2 0.063 ->
  // 0.056); hdr_room16 (k > 0) unchanged.
  bool coded_shift_free = true;
  // A level whose warps at pairs_per_warp would be fewer than this takes
  // fewer pairs a warp (halved down to 1; 0: never). The coarse levels of a
  // multi-level transform are latency-bound: 1,024^2 int32 at 8 pairs is 576
  // warps of 9 dependent row loads each (~4 a SM), and took ~10-19 us a
  // level where its bytes move in ~3 us; at 1 pair it is 4,608 short chains.
  int min_warps = 4096;
  // The fused kernel that takes the subbands' tops (the wavelet writer's) is
  // built for 6 blocks an SM: left alone, ptxas gave its u16 form 106
  // registers (4 blocks, 16 warps an SM) where 79 fit 6 without spills.
  // Nsight Compute, u16 8192^2 level 1 in the writer: 202.2 -> 182.1 us
  // (8 blocks, 64 registers and a few spills: 194.6); level 2 (int32) 71.2
  // -> 68.7 (bench/results/2026-11-27-h100-session22-forward-tops-blocks.log).
  bool tops_six_blocks = true;
  // The decoder's raw-prefetch kernels (coded details) built for this many
  // 4-warp blocks an SM (7 or 8; 0: as ptxas leaves them, 79 registers
  // without the low-bit window and 96 with it for u16 out: 6 and 5 blocks).
  // At 7 (72 registers; no spills without the window, 44 bytes with it),
  // level 1 of u16 8192^2 took 0.158 -> 0.154 ms (MR slice), 0.162 ->
  // 0.159 (smooth), 0.217 -> 0.210 (hdr_room16, with the window); at 8 (64
  // registers, a few spills) 0.154 / 0.158 / 0.225
  // (bench/results/2026-11-27-h100-session23-gather-*-wavelet-gpu-bench.log).
  int coded_min_blocks = 7;
};

// An int32 array with element strides (x stride 1).
struct Ref {
  int32_t* p = nullptr;
  int64_t sy = 0, sz = 0;
};

struct Box {
  int nx = 1, ny = 1, nz = 1;
};

// A detail subband read straight from a wavelet frame's decoded symbols
// (cuda/wavelet_decode.cu) instead of from a coefficient array: the inverse
// rebuilds each coefficient as the scatter would (FORMAT §10.4-10.5:
// z = (symbol << k) | low bits, unzigzagged), so the details read that way
// (the wavelet decoder's level 1 by default: 3/4 of a 2D image's
// coefficients) are never written as int32 and read back. Coefficient
// (x, y) of the box is value index0 + y nx + x of its group.
struct DetailBand {
  const uint8_t* symbols = nullptr;  // the group's decoded symbols (16-byte aligned)
  const uint32_t* low = nullptr;     // the group's low bits (8-byte aligned), low_words words
  uint64_t low_words = 0;
  uint64_t index0 = 0;
  uint32_t nx = 0;
  uint32_t width = 1;  // symbol bytes
  uint32_t shift = 0;  // k
  uint32_t group = 0;  // for the error word
};
// A level's three detail subbands, by kind: x high (HL), y high (LH), both
// (HH). A coefficient wider than 32 bits sets *wide (atomicMin of
// group << 40 | index, the scatter's error word).
struct CodedDetails {
  DetailBand band[3];
  unsigned long long* wide = nullptr;
};

// The largest zigzag value ((c << 1) ^ (c >> 31)) of each subband a 2D
// forward level writes, raised into these words by atomicMax (null: not
// wanted): the wavelet writer's subband tops (cuda/wavelet_encode.cu), taken
// while the coefficients are stored instead of by a pass that reads them
// again. LL is the new low band (final at the last level only); HL, LH, HH
// the details of kinds 1, 2, 3 (x high, y high, both).
struct BandTops {
  uint32_t* band[4] = {nullptr, nullptr, nullptr, nullptr};  // LL, HL, LH, HH
  bool any() const { return band[0] || band[1] || band[2] || band[3]; }
};

// One pass. Forward: src (type `type`, strides ssy/ssz) -> routed lo/hi.
// Inverse: routed lo/hi -> dst (type `type`, strides ssy/ssz), range-checked
// against the type when `check` (the last pass, into the caller's samples).
// The box e is the extent the pass transforms; lx/ly/lz its low extents
// after the level (routing only).
struct Pass {
  const void* src = nullptr;  // forward input
  void* dst = nullptr;        // inverse output
  device::DwtSample type = device::DwtSample::i32;
  int64_t ssy = 0, ssz = 0;
  Ref lo, hi;
  Box e;
  int lx = 1, ly = 1, lz = 1;
  bool do_x = false, do_y = false;
  bool check = false;
  uint64_t* d_error = nullptr;
  const CodedDetails* coded = nullptr;  // inverse, 2D levels only: the details from symbols, not from hi
  BandTops tops;                        // forward, levels that split x and y in 2D only
};

// Benchmark hook (not thread-safe): when set, inverse() records events[0]
// before its first level and events[j] after its j-th (coarsest first),
// j <= kDwtMaxLevels.
extern cudaEvent_t* inverse_level_events;

// Forward passes (dwt53_forward.cu).
void forward_rows(const Pass& pass, const Tuning& tuning, cudaStream_t stream);
void forward_z(const Pass& pass, cudaStream_t stream);
// Samples -> int32 for 0 levels; i32 range check of the forward input.
void forward_convert(const void* src, device::DwtSample type, int32_t* dst, uint64_t n, cudaStream_t stream);
void forward_check_i32(const int32_t* src, uint64_t n, uint64_t* d_error, cudaStream_t stream);

// Inverse passes (dwt53_inverse.cu).
void inverse_rows(const Pass& pass, const Tuning& tuning, cudaStream_t stream);
void inverse_z(const Pass& pass, cudaStream_t stream);
void inverse_convert(const int32_t* src, void* dst, device::DwtSample type, uint64_t n, uint64_t* d_error,
                     cudaStream_t stream);

// The transform with explicit tuning (the public functions use Tuning{}).
std::size_t temp_bytes(const DwtShape& shape, unsigned levels, const Tuning& tuning);
// tops[k - 1], for k <= levels when tops is set: level k's subband tops
// (BandTops; only levels that split x and y of a 2D shape, with tuning's
// fused, prefetching rows pass).
// level_done[k - 1], for k <= levels where set, is recorded on the stream
// after level k (the wavelet writer counts the finest levels' histograms
// while the coarser levels run).
void forward(const void* d_samples, device::DwtSample type, int32_t* d_coeffs, const DwtShape& shape,
             unsigned levels, uint64_t* d_error, void* d_temp, std::size_t temp_bytes, cudaStream_t stream,
             const Tuning& tuning, const BandTops* tops = nullptr, const cudaEvent_t* level_done = nullptr);
// coded[k - 1], for the levels k <= coded_levels where its band[0].symbols
// is set: level k's details come from it (d_coeffs is not read there); only
// levels that split x and y of a 2D shape, with tuning's fused, prefetching
// rows pass.
void inverse(const int32_t* d_coeffs, void* d_samples, device::DwtSample type, const DwtShape& shape,
             unsigned levels, uint64_t* d_error, void* d_temp, std::size_t temp_bytes, cudaStream_t stream,
             const Tuning& tuning, const CodedDetails* coded = nullptr, std::size_t coded_levels = 0);

}  // namespace vlec::cuda::dwt
