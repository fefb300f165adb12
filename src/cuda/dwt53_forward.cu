// cuda/dwt53_forward.cu: the forward 5/3 kernels (layout and plan in
// dwt53_gpu.hpp / dwt53_device.cu).
//
// The rows pass does a whole 2D level in one kernel, reading every sample
// once and writing every coefficient once (plus a few halo reads that hit
// L1/L2):
//  * a warp owns a strip of 30 V columns (dwt53_common.cuh: lanes 0 and 31
//    are halo lanes) and a run of `pairs_per_warp` output row pairs;
//  * each row is read with one 8/16-byte load per lane (coalesced: a warp
//    reads 32 V consecutive samples), x-lifted in registers with two warp
//    shuffles, and handed to the y lifting; the two rows of the next y step
//    are fetched (kept packed, 16 bytes a row) before the current step is
//    lifted and stored, so two steps' loads are in flight per warp;
//  * the y lifting streams down the rows in registers: each lane keeps the
//    previous even row and the previous high row of its V columns, so one
//    y step reads two new rows and writes one low and one high row, with no
//    shared memory and no barrier;
//  * each lane stores its V/2 low and V/2 high coefficients of a row with
//    16-byte stores, a warp writing 30 x 16 contiguous bytes to each of the
//    two subbands of that row (Mallat quadrants, coalesced).
// This is the lecture's tile design (shared-memory tile, rows then columns,
// transposed thread mapping, coalesced subband stores) with the tile turned
// into a strip that is streamed: the x step trades shared memory for
// shuffles, the y step trades a column walk in shared memory for registers,
// and the tile's vertical halo (2 rows above, 1 below) is paid once per
// strip run instead of once per tile.
//
// The z pass (3D) is one thread per (x, y) column, streamed along z the same
// way; coalesced across x. It is correct for every shape; speed for 3D is
// not tuned.
#include <algorithm>

#include "common/safety.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/dwt53_common.cuh"
#include "cuda/dwt53_gpu.hpp"
#include "cuda/warp_index.cuh"

namespace vlec::cuda::dwt {
namespace {

// N coefficients c[OFF, OFF + N) of output row yo at columns x0 .. of r,
// those below `limit`. Vector store when the whole group is in and `vec`.
template <int N, int OFF, int V>
__device__ __forceinline__ void store_part(const Ref& r, int x0, int limit, int yo, int z, const int32_t (&c)[V],
                                           bool vec) {
  int32_t* p = r.p + yo * r.sy + z * r.sz + x0;
  if (vec && x0 + N <= limit) {
    store_vec<int32_t, N, OFF>(p, c);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (x0 + i < limit) p[i] = c[OFF + i];
  }
}

__device__ __forceinline__ uint32_t zigzag(int32_t c) {
  return (static_cast<uint32_t>(c) << 1) ^ static_cast<uint32_t>(c >> 31);
}

// A warp's largest value into *top (null: not wanted). Most warps find a
// top already as large (the word only grows, so a stale read only costs an
// atomic), which keeps ~18,000 warps of a level off one address.
__device__ __forceinline__ void raise_top(uint32_t* top, uint32_t v) {
  v = __reduce_max_sync(0xFFFFFFFFu, v);
  if (top && (threadIdx.x % 32) == 0 && v > __ldcg(top)) atomicMax(top, v);
}

// kTops (X and Y only): the largest zigzag value of each subband the warp
// stores, raised into tops' words at the end (BandTops). kMinBlocks: the
// blocks an SM ptxas must fit (Tuning::tops_six_blocks).
template <typename T, int V, bool X, bool Y, bool kPrefetch, bool kTops = false, int kMinBlocks = 1>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, kMinBlocks)
    forward_rows_kernel(const T* __restrict__ src, int64_t ssy, int64_t ssz, Ref lo, Ref hi, Box e, int lx, int ly,
                        int pairs_per_warp, int strips, int chunks, int64_t warps, bool vec, BandTops tops) {
  static_assert(!kTops || (X && Y), "subband tops are taken by the fused x-and-y pass");
  constexpr int P = V / 2;
  const int64_t w = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + uniform_warp_index();
  if (w >= warps) return;  // whole warps only: the shuffles need all 32 lanes
  const RowWarp rw = row_warp<V>(w, strips, chunks);
  const int chunk = rw.chunk, z = rw.z, g = rw.g;  // g: first sample column of this lane
  const bool owner = rw.owner;
  const T* plane = src + z * ssz;

  // fetch: the lane's V samples of row y (mirrored), kept packed (8 or 16
  // bytes: the prefetched rows cost 2-4 registers each, not V); lift:
  // unpack and x-lift a fetched row (every lane calls it: shuffles).
  using Packed = typename RawVec<V * sizeof(T)>::type;
  auto fetch = [&](int y) -> Packed {
    const T* row = plane + static_cast<int64_t>(mirror(y, e.ny)) * ssy;
    if (vec && g >= 0 && g + V <= e.nx) return *reinterpret_cast<const Packed*>(row + g);
    T t[V];
#pragma unroll
    for (int i = 0; i < V; ++i) t[i] = row[mirror(g + i, e.nx)];
    Packed pk;
    memcpy(&pk, t, sizeof pk);
    return pk;
  };
  auto lift = [&](const Packed& pk, int32_t(&c)[V]) {
    T t[V];
    memcpy(t, &pk, sizeof pk);
    int32_t v[V];
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = static_cast<int32_t>(t[i]);
    if constexpr (X) {
      lift_x_forward<V>(v, c);
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i) c[i] = v[i];
    }
  };
  auto load_row = [&](int y, int32_t(&c)[V]) { lift(fetch(y), c); };
  uint32_t top[4] = {0, 0, 0, 0};  // kTops: LL, HL, LH, HH of the lane's stores
  auto store_row = [&](int yo, const int32_t(&c)[V]) {
    if (!owner) return;
    const bool ylow = yo < ly;
    if constexpr (X) {
      const int p0 = g / 2;
      if constexpr (kTops) {
        uint32_t tl = 0, th = 0;
#pragma unroll
        for (int i = 0; i < P; ++i) {
          if (p0 + i < lx) tl = max(tl, zigzag(c[i]));
          if (lx + p0 + i < e.nx) th = max(th, zigzag(c[P + i]));
        }
        if (ylow) {
          top[0] = max(top[0], tl), top[1] = max(top[1], th);
        } else {
          top[2] = max(top[2], tl), top[3] = max(top[3], th);
        }
      }
      store_part<P, 0>(ylow ? lo : hi, p0, lx, yo, z, c, vec);       // L: x < lx
      store_part<P, P>(hi, lx + p0, e.nx, yo, z, c, vec);             // H: lx + p, p < nx / 2
    } else if (!ylow || g >= lx) {
      store_part<V, 0>(hi, g, e.nx, yo, z, c, vec);
    } else if (g + V <= lx) {
      store_part<V, 0>(lo, g, lx, yo, z, c, vec);
    } else {  // the group straddles the low band's edge
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const int x = g + i;
        const Ref& r = x < lx ? lo : hi;
        if (x < e.nx) r.p[x + yo * r.sy + z * r.sz] = c[i];
      }
    }
  };

  if constexpr (Y) {
    const int nh = e.ny / 2;
    const int j0 = chunk * pairs_per_warp, j1 = min(ly, j0 + pairs_per_warp);
    int32_t ev[V], dp[V], o[V], en[V];
    // x[2 j0] and d[j0 - 1] (mirrored rows at the top: d[-1] = d[0]).
    load_row(2 * j0, ev);
    load_row(2 * j0 - 1, o);
    load_row(2 * j0 - 2, en);
#pragma unroll
    for (int i = 0; i < V; ++i) dp[i] = wsub(o[i], half_sum(en[i], ev[i]));
    // With kPrefetch the two rows of step j+1 are fetched before step j is
    // lifted and stored, so each warp has two steps' loads in flight.
    Packed ro{}, re{};
    if constexpr (kPrefetch) {
      ro = fetch(2 * j0 + 1);
      re = fetch(2 * j0 + 2);
    }
    for (int j = j0; j < j1; ++j) {
      if constexpr (kPrefetch) {
        lift(ro, o);
        lift(re, en);
        if (j + 1 < j1) {
          ro = fetch(2 * j + 3);
          re = fetch(2 * j + 4);
        }
      } else {
        load_row(2 * j + 1, o);  // mirrored at the bottom: x[ny] = x[ny-2]
        load_row(2 * j + 2, en);
      }
      int32_t s[V];
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const int32_t d = wsub(o[i], half_sum(ev[i], en[i]));
        s[i] = wadd(ev[i], quarter_sum(dp[i], d));
        dp[i] = d;
        ev[i] = en[i];
      }
      store_row(j, s);
      if (j < nh) store_row(ly + j, dp);  // odd ny: the last low row has no high row
    }
    if constexpr (kTops) {
#pragma unroll
      for (int b = 0; b < 4; ++b) raise_top(tops.band[b], top[b]);
    }
  } else {
    const int y0 = chunk * pairs_per_warp, y1 = min(e.ny, y0 + pairs_per_warp);
    for (int y = y0; y < y1; ++y) {
      int32_t c[V];
      load_row(y, c);
      store_row(y, c);
    }
  }
}

template <typename T>
__global__ void forward_z_kernel(const T* __restrict__ src, int64_t ssy, int64_t ssz, Ref lo, Ref hi, Box e, int lx,
                                 int ly, int lz, int pairs_per_thread, int chunks, int64_t threads) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  const ColumnThread ct = column_thread(t, e);
  const int x = ct.x, y = ct.y, chunk = ct.chunk;
  const T* col = src + x + y * ssy;
  auto at = [&](int zz) { return static_cast<int32_t>(col[mirror(zz, e.nz) * ssz]); };
  const bool xylow = x < lx && y < ly;
  auto put = [&](int zo, int32_t v) {
    const Ref& r = (xylow && zo < lz) ? lo : hi;
    r.p[x + y * r.sy + zo * r.sz] = v;
  };
  const int nh = e.nz / 2;
  const int j0 = chunk * pairs_per_thread, j1 = min(lz, j0 + pairs_per_thread);
  int32_t ev = at(2 * j0);
  int32_t dp = wsub(at(2 * j0 - 1), half_sum(at(2 * j0 - 2), ev));
  for (int j = j0; j < j1; ++j) {
    const int32_t o = at(2 * j + 1), en = at(2 * j + 2);
    const int32_t d = wsub(o, half_sum(ev, en));
    put(j, wadd(ev, quarter_sum(dp, d)));
    if (j < nh) put(lz + j, d);
    dp = d;
    ev = en;
  }
}

template <typename T>
__global__ void convert_kernel(const T* __restrict__ src, int32_t* __restrict__ dst, uint64_t n) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    dst[i] = static_cast<int32_t>(src[i]);
}

__global__ void check_i32_kernel(const int32_t* __restrict__ src, uint64_t n, uint64_t* d_error) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    if (out_of_range<int32_t>(src[i])) report(d_error, i);
}

template <typename T, int V, bool X, bool Y, bool kPrefetch = false, bool kTops = false, int kMinBlocks = 1>
void launch_rows(const Pass& a, const Tuning& tu, cudaStream_t stream) {
  const RowsGrid rg = rows_grid<V>(a.e, Y ? a.ly : a.e.ny, tu.pairs_per_warp, tu.min_warps);
  const int strips = rg.strips, chunks = rg.chunks, ppw = rg.ppw;
  const int64_t warps = rg.warps;
  const bool vec = tu.vector_io && a.e.nx % V == 0 && aligned(a.src, std::min<std::size_t>(16, V * sizeof(T))) &&
                   a.ssy % V == 0 && a.ssz % V == 0 && ref_vec_ok(a.lo) && ref_vec_ok(a.hi);
  forward_rows_kernel<T, V, X, Y, kPrefetch, kTops, kMinBlocks>
      <<<grid_for(warps, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(
          static_cast<const T*>(a.src), a.ssy, a.ssz, a.lo, a.hi, a.e, a.lx, a.ly, ppw, strips, chunks, warps, vec,
          a.tops);
  CUDA_CHECK(cudaGetLastError());
}

template <typename T, int V>
void rows_xy(const Pass& a, const Tuning& tu, cudaStream_t stream) {
  if (a.do_x && a.do_y) {
    if (a.tops.any()) {  // forward() checked the tuning
      if (tu.tops_six_blocks) launch_rows<T, V, true, true, true, true, 6>(a, tu, stream);
      else launch_rows<T, V, true, true, true, true>(a, tu, stream);
    }
    else if (tu.prefetch) launch_rows<T, V, true, true, true>(a, tu, stream);
    else launch_rows<T, V, true, true, false>(a, tu, stream);
  } else if (a.do_x) {
    launch_rows<T, V, true, false>(a, tu, stream);
  } else if (a.do_y) {
    launch_rows<T, V, false, true>(a, tu, stream);
  } else {
    VLEC_REQUIRE(false, "dwt53: a rows pass with nothing to do");
  }
}

template <typename T>
void launch_z(const Pass& a, cudaStream_t stream) {
  constexpr int kPairs = 64;
  const int chunks = (a.lz + kPairs - 1) / kPairs;
  const int64_t threads = int64_t{a.e.nx} * a.e.ny * chunks;
  forward_z_kernel<T><<<grid_for(threads, 256), 256, 0, stream>>>(static_cast<const T*>(a.src), a.ssy, a.ssz, a.lo,
                                                                   a.hi, a.e, a.lx, a.ly, a.lz, kPairs, chunks, threads);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void forward_rows(const Pass& a, const Tuning& tu, cudaStream_t stream) {
  switch (a.type) {
    case device::DwtSample::u8: return rows_xy<uint8_t, 8>(a, tu, stream);
    case device::DwtSample::u16: return rows_xy<uint16_t, 8>(a, tu, stream);
    case device::DwtSample::i16: return rows_xy<int16_t, 8>(a, tu, stream);
    case device::DwtSample::i32: return rows_xy<int32_t, 4>(a, tu, stream);
  }
}

void forward_z(const Pass& a, cudaStream_t stream) {
  switch (a.type) {
    case device::DwtSample::u8: return launch_z<uint8_t>(a, stream);
    case device::DwtSample::u16: return launch_z<uint16_t>(a, stream);
    case device::DwtSample::i16: return launch_z<int16_t>(a, stream);
    case device::DwtSample::i32: return launch_z<int32_t>(a, stream);
  }
}

void forward_convert(const void* src, device::DwtSample type, int32_t* dst, uint64_t n, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(std::min<uint64_t>((n + 255) / 256, 65536));
  switch (type) {
    case device::DwtSample::u8: convert_kernel<<<grid, 256, 0, stream>>>(static_cast<const uint8_t*>(src), dst, n); break;
    case device::DwtSample::u16: convert_kernel<<<grid, 256, 0, stream>>>(static_cast<const uint16_t*>(src), dst, n); break;
    case device::DwtSample::i16: convert_kernel<<<grid, 256, 0, stream>>>(static_cast<const int16_t*>(src), dst, n); break;
    case device::DwtSample::i32: convert_kernel<<<grid, 256, 0, stream>>>(static_cast<const int32_t*>(src), dst, n); break;
  }
  CUDA_CHECK(cudaGetLastError());
}

void forward_check_i32(const int32_t* src, uint64_t n, uint64_t* d_error, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(std::min<uint64_t>((n + 255) / 256, 65536));
  check_i32_kernel<<<grid, 256, 0, stream>>>(src, n, d_error);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda::dwt
