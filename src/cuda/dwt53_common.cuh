// cuda/dwt53_common.cuh: device helpers shared by the forward and inverse
// 5/3 kernels: wrapping arithmetic, symmetric extension, vector loads and
// stores of sample groups, and the x lifting of a warp's row segment.
//
// The rows pass maps one warp to a strip of a row: lane l holds the V
// consecutive samples (V/2 lifting pairs) starting at g = strip * 30V +
// (l - 1) * V. Lanes 1..30 own their samples; lanes 0 and 31 are halo lanes
// that load and lift their neighbours' samples only so that the owners can
// take what the lifting needs across the group boundary (x[2i+2], d[i-1])
// with one register shuffle each, instead of a trip through shared memory.
// Halo lanes never store, and the two halo groups are L1/L2 hits (the
// neighbouring strips own them). Groups past an image edge read mirrored
// samples (whole-sample symmetric extension), which reproduces the CPU's
// boundary rules exactly (vlec/dwt.hpp). row_warp / rows_grid give both
// passes the same warp numbering and launch shape; column_thread does the
// same for the z passes (one thread per (x, y) column and chunk of z pairs).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/safety.hpp"
#include "cuda/dwt53_gpu.hpp"

namespace vlec::cuda::dwt {

constexpr int kOwnerLanes = 30;
constexpr int kWarpsPerBlock = 4;

// Modular arithmetic (as the CPU's wadd/wsub): the inverse of coefficients
// that no forward transform produced must not be undefined behaviour.
__device__ __forceinline__ int32_t wadd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
__device__ __forceinline__ int32_t wsub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
// floor((a + b) / 2) and floor((a + b + 2) / 4), modulo 2^32 like the CPU.
__device__ __forceinline__ int32_t half_sum(int32_t a, int32_t b) { return wadd(a, b) >> 1; }
__device__ __forceinline__ int32_t quarter_sum(int32_t a, int32_t b) { return wadd(wadd(a, b), 2) >> 2; }

// Whole-sample symmetric extension of index i into [0, n): x[-1] = x[1],
// x[n] = x[n-2], period 2(n-1); n == 1 maps everything to 0.
__device__ __forceinline__ int mirror(int i, int n) {
  if (static_cast<unsigned>(i) < static_cast<unsigned>(n)) return i;
  if (n == 1) return 0;
  const int p = 2 * (n - 1);
  i %= p;
  if (i < 0) i += p;
  return i >= n ? p - i : i;
}
__device__ __forceinline__ int clampi(int i, int lo, int hi) { return i < lo ? lo : (i > hi ? hi : i); }

// Raw vector of B bytes.
template <int B> struct RawVec;
template <> struct RawVec<4> { using type = uint32_t; };
template <> struct RawVec<8> { using type = uint2; };
template <> struct RawVec<16> { using type = uint4; };

// N samples of type T from p (aligned to N * sizeof(T), at most 16 bytes per
// access) into v[OFF, OFF + N) as int32.
template <typename T, int N, int OFF, int V>
__device__ __forceinline__ void load_vec(const T* p, int32_t (&v)[V]) {
  constexpr int kBytes = N * static_cast<int>(sizeof(T)) > 16 ? 16 : N * static_cast<int>(sizeof(T));
  constexpr int kPer = kBytes / static_cast<int>(sizeof(T));
  using Raw = typename RawVec<kBytes>::type;
#pragma unroll
  for (int c = 0; c < N / kPer; ++c) {
    const Raw raw = *reinterpret_cast<const Raw*>(p + c * kPer);
    T t[kPer];
    memcpy(t, &raw, sizeof raw);
#pragma unroll
    for (int i = 0; i < kPer; ++i) v[OFF + c * kPer + i] = static_cast<int32_t>(t[i]);
  }
}

// v[OFF, OFF + N) as T to p (aligned to N * sizeof(T), or 16 bytes).
template <typename T, int N, int OFF, int V>
__device__ __forceinline__ void store_vec(T* p, const int32_t (&v)[V]) {
  constexpr int kBytes = N * static_cast<int>(sizeof(T)) > 16 ? 16 : N * static_cast<int>(sizeof(T));
  constexpr int kPer = kBytes / static_cast<int>(sizeof(T));
  using Raw = typename RawVec<kBytes>::type;
#pragma unroll
  for (int c = 0; c < N / kPer; ++c) {
    T t[kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i) t[i] = static_cast<T>(v[OFF + c * kPer + i]);
    Raw raw;
    memcpy(&raw, t, sizeof raw);
    *reinterpret_cast<Raw*>(p + c * kPer) = raw;
  }
}

// Forward x lifting of the warp's row segment: v holds samples g .. g+V-1;
// c gets the V/2 low coefficients (pairs g/2 ..) then the V/2 high ones.
// Every lane of the warp must call it (shuffles).
template <int V>
__device__ __forceinline__ void lift_x_forward(const int32_t (&v)[V], int32_t (&c)[V]) {
  constexpr int P = V / 2;
  const int32_t next_even = __shfl_down_sync(0xffffffffu, v[0], 1);
  int32_t d[P];
#pragma unroll
  for (int i = 0; i < P; ++i) d[i] = wsub(v[2 * i + 1], half_sum(v[2 * i], i + 1 < P ? v[2 * i + 2] : next_even));
  const int32_t d_left = __shfl_up_sync(0xffffffffu, d[P - 1], 1);
#pragma unroll
  for (int i = 0; i < P; ++i) {
    c[i] = wadd(v[2 * i], quarter_sum(i ? d[i - 1] : d_left, d[i]));
    c[P + i] = d[i];
  }
}

// Inverse x lifting: c holds the low coefficients of pairs p0 .. p0+P-1 then
// the high ones (clamped to the band: H[-1] = H[0], H[hx] = H[hx-1]); x gets
// samples 2p0 .. 2p0+V-1. lx = ceil(nx/2): for even nx, x[nx] = x[nx-2].
template <int V>
__device__ __forceinline__ void lift_x_inverse(const int32_t (&c)[V], int32_t (&x)[V], int p0, int lx) {
  constexpr int P = V / 2;
  const int32_t h_left = __shfl_up_sync(0xffffffffu, c[V - 1], 1);
#pragma unroll
  for (int i = 0; i < P; ++i) x[2 * i] = wsub(c[i], quarter_sum(i ? c[P + i - 1] : h_left, c[P + i]));
  const int32_t next_even = __shfl_down_sync(0xffffffffu, x[0], 1);
#pragma unroll
  for (int i = 0; i < P; ++i) {
    int32_t e1 = i + 1 < P ? x[2 * i + 2] : next_even;
    if (p0 + i + 1 >= lx) e1 = x[2 * i];
    x[2 * i + 1] = wadd(c[P + i], half_sum(x[2 * i], e1));
  }
}

// The sample type's accepted range [lo, lo + span] (span = 2^k - 1), as the CPU's range_lo/range_span.
template <typename T> struct Range;
template <> struct Range<uint8_t> { static constexpr int32_t lo = 0; static constexpr uint32_t span = 0xffu; };
template <> struct Range<uint16_t> { static constexpr int32_t lo = 0; static constexpr uint32_t span = 0xffffu; };
template <> struct Range<int16_t> { static constexpr int32_t lo = -32768; static constexpr uint32_t span = 0xffffu; };
template <> struct Range<int32_t> {
  static constexpr int32_t lo = -(int32_t{1} << 25);
  static constexpr uint32_t span = (uint32_t{1} << 26) - 1;
};

template <typename T>
__device__ __forceinline__ bool out_of_range(int32_t v) {
  return ((static_cast<uint32_t>(v) - static_cast<uint32_t>(Range<T>::lo)) & ~Range<T>::span) != 0;
}

__device__ __forceinline__ void report(uint64_t* d_error, uint64_t index) {
  atomicMin(reinterpret_cast<unsigned long long*>(d_error), static_cast<unsigned long long>(index));
}

// Where rows-pass warp w works: strip w % strips of rows chunk
// (w / strips) % chunks of plane w / strips / chunks; g is the lane's first
// sample column (lane 0 starts one group left of the strip), owner says
// whether it stores (lanes 1..30).
struct RowWarp {
  int chunk, z, g;
  bool owner;
};
template <int V>
__device__ __forceinline__ RowWarp row_warp(int64_t w, int strips, int chunks) {
  RowWarp r;
  const int lane = threadIdx.x & 31;
  const int strip = static_cast<int>(w % strips);
  const int64_t rest = w / strips;
  r.chunk = static_cast<int>(rest % chunks);
  r.z = static_cast<int>(rest / chunks);
  r.g = strip * kOwnerLanes * V + (lane - 1) * V;
  r.owner = lane >= 1 && lane <= kOwnerLanes;
  return r;
}

// Where z-pass thread t works: column (x, y) of the e.nx * e.ny plane, chunk
// t / (nx ny) of z pairs.
struct ColumnThread {
  int x, y, chunk;
};
__device__ __forceinline__ ColumnThread column_thread(int64_t t, const Box& e) {
  ColumnThread c;
  c.x = static_cast<int>(t % e.nx);
  const int64_t rest = t / e.nx;
  c.y = static_cast<int>(rest % e.ny);
  c.chunk = static_cast<int>(rest / e.ny);
  return c;
}

// Rows-pass launch shape: strips of 30 V columns, chunks of ppw pairs (or
// rows) of `rows`, one warp per (strip, chunk, plane).
// ppw: row pairs a warp streams through; halved (down to 1) while the level
// would give fewer than min_warps warps (0: never), so that a coarse level
// fills the GPU with short chains instead of a few long ones (Tuning).
struct RowsGrid {
  int strips, chunks, ppw;
  int64_t warps;
};
template <int V>
inline RowsGrid rows_grid(const Box& e, int rows, int ppw, int64_t min_warps = 0) {
  RowsGrid r;
  r.strips = (e.nx + kOwnerLanes * V - 1) / (kOwnerLanes * V);
  r.ppw = ppw > 0 ? ppw : 1;
  for (;;) {
    r.chunks = (rows + r.ppw - 1) / r.ppw;
    r.warps = int64_t{r.strips} * r.chunks * e.nz;
    if (r.ppw == 1 || r.warps >= min_warps) return r;
    r.ppw = (r.ppw + 1) / 2;
  }
}

inline bool aligned(const void* p, std::size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }
// A band can take vector loads/stores: 16-byte base and row/plane strides of whole int4s.
inline bool ref_vec_ok(const Ref& r) { return aligned(r.p, 16) && r.sy % 4 == 0 && r.sz % 4 == 0; }

// Blocks for `units` work items, per_block each (at least one block).
inline unsigned grid_for(int64_t units, int per_block) {
  const int64_t blocks = (units + per_block - 1) / per_block;
  VLEC_REQUIRE(blocks < (int64_t{1} << 31), "dwt53: shape too large for one launch (", units, " work items)");
  return static_cast<unsigned>(std::max<int64_t>(blocks, 1));
}

}  // namespace vlec::cuda::dwt
