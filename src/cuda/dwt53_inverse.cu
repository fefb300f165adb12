// cuda/dwt53_inverse.cu: the inverse 5/3 kernels, the mirror image of
// dwt53_forward.cu: one kernel per 2D level reads each coefficient once and
// writes each sample once.
//
// Rows pass: a warp owns a strip of 30 V sample columns (lanes 0 and 31 are
// halo lanes, dwt53_common.cuh) and a run of output row pairs. Each lane
// loads, per coefficient row, its V/2 low and V/2 high coefficients (two
// 16-byte loads, from the LL source or the caller's coefficients), undoes
// the y lifting streamed in registers (keeping the current even row and
// high row), then undoes the x lifting with two warp shuffles and stores its
// V samples with one 8/16-byte store, range-checked against the sample type
// with one OR per lane (as the CPU does per row). Coefficient indices past
// a band's end are clamped (H[-1] = H[0], H[hx] = H[hx-1]), which is the
// symmetric extension in the coefficient domain; x[nx] = x[nx-2] for even
// nx is applied explicitly. Coded details (the wavelet decoder's finest
// levels) are read from the decoded symbols and low bits; on long chains
// their next step is prefetched as raw words and decoded a step later
// (kRawPrefetch), so that no decode waits for a load of its own step.
//
// The z pass (3D) is one thread per (x, y) column, streamed along z.
#include <algorithm>
#include <type_traits>

#include "common/safety.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/dwt53_coded.cuh"
#include "cuda/dwt53_common.cuh"
#include "cuda/dwt53_gpu.hpp"
#include "cuda/warp_index.cuh"

namespace vlec::cuda::dwt {
namespace {

// N int32 of row (yi, z) of r at columns x0 .. into c[OFF, OFF + N), the
// columns clamped to [0, limit); vector load when all are in and `vec`.
template <int N, int OFF, int V>
__device__ __forceinline__ void load_part(const Ref& r, int x0, int limit, int yi, int z, int32_t (&c)[V],
                                          bool vec) {
  const int32_t* p = r.p + yi * r.sy + z * r.sz;
  if (vec && x0 >= 0 && x0 + N <= limit) {
    load_vec<int32_t, N, OFF>(p + x0, c);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) c[OFF + i] = p[clampi(x0 + i, 0, limit - 1)];
  }
}

// kCoded (a 2D level of the wavelet decoder, X and Y): the three detail
// bands come from cd (load_coded), not from hi; the low band from lo as ever.
// kRawPrefetch (with kCoded and kPrefetch): the next step's rows are
// prefetched as raw words (issue_coded) and decoded a step later
// (decode_coded), instead of loaded and decoded at once: a coded value's
// decode uses its loads, so load_coded waits for them where it stands, and
// a step's three coded parts (HL of the even row, LH and HH of the odd one)
// waited one after the other. kLowBits false (raw prefetch only): none of
// the three bands has low bits (k = 0), so the raw words are the symbols
// alone (rows_yx checks).
template <typename T, int V, bool X, bool Y, bool kCheck, bool kPrefetch, bool kCoded = false,
          bool kRawPrefetch = false, bool kLowBits = true, int kMinBlocks = 0>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, kMinBlocks)
    inverse_rows_kernel(Ref lo, Ref hi, T* __restrict__ dst, int64_t dsy, int64_t dsz, Box e, int lx, int ly,
                        int pairs_per_warp, int strips, int chunks, int64_t warps, bool vec, uint64_t* d_error,
                        CodedDetails cd) {
  static_assert(!kCoded || (X && Y), "coded details: the fused 2D rows pass only");
  static_assert(!kRawPrefetch || (kCoded && kPrefetch), "raw prefetch: coded details, prefetching");
  constexpr int P = V / 2;
  const int64_t w = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + uniform_warp_index();
  if (w >= warps) return;  // whole warps only: the shuffles need all 32 lanes
  const RowWarp rw = row_warp<V>(w, strips, chunks);
  const int chunk = rw.chunk, z = rw.z, g = rw.g;  // g: first sample column of this lane
  const bool owner = rw.owner;
  const int hx = e.nx / 2;

  // Coefficient row yi (ylow: a row of the y low band, whose x low part is
  // the LL band, read from lo).
  auto load_row = [&](int yi, bool ylow, int32_t(&c)[V]) {
    if constexpr (kCoded) {  // rows [0, ly): LL | HL; rows [ly, ny): LH | HH
      const int p0 = g / 2;
      if (ylow) {
        load_part<P, 0>(lo, p0, lx, yi, z, c, vec);
        load_coded<P, P>(cd.band[0], p0, yi, c, cd.wide);
      } else {
        load_coded<P, 0>(cd.band[1], p0, yi - ly, c, cd.wide);
        load_coded<P, P>(cd.band[2], p0, yi - ly, c, cd.wide);
      }
    } else if constexpr (X) {
      const int p0 = g / 2;
      load_part<P, 0>(ylow ? lo : hi, p0, lx, yi, z, c, vec);
      Ref h = hi;
      h.p += lx;
      load_part<P, P>(h, p0, hx, yi, z, c, vec);
    } else if (!ylow || g >= lx) {
      load_part<V, 0>(hi, g, e.nx, yi, z, c, vec);
    } else if (g + V <= lx) {
      load_part<V, 0>(lo, g, lx, yi, z, c, vec);
    } else {  // the group straddles the low band's edge
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const int x = clampi(g + i, 0, e.nx - 1);
        const Ref& r = x < lx ? lo : hi;
        c[i] = r.p[x + yi * r.sy + z * r.sz];
      }
    }
  };
  auto emit = [&](int y, const int32_t(&c)[V]) {
    int32_t x[V];
    if constexpr (X) {
      lift_x_inverse<V>(c, x, g / 2, lx);
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i) x[i] = c[i];
    }
    if (!owner) return;
    const int64_t off = y * dsy + z * dsz;
    if constexpr (kCheck) {
      uint32_t acc = 0;
#pragma unroll
      for (int i = 0; i < V; ++i)
        if (g + i < e.nx) acc |= out_of_range<T>(x[i]) ? 1u << i : 0u;
      if (acc) report(d_error, static_cast<uint64_t>(off + g + __ffs(acc) - 1));
    }
    T* row = dst + off;
    if (vec && g + V <= e.nx) {
      store_vec<T, V, 0>(row + g, x);
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i)
        if (g + i < e.nx) row[g + i] = static_cast<T>(x[i]);
    }
  };

  if constexpr (Y) {
    const int nh = e.ny / 2;
    const int j0 = chunk * pairs_per_warp, j1 = min(ly, j0 + pairs_per_warp);
    auto load_d = [&](int j, int32_t(&c)[V]) { load_row(ly + clampi(j, 0, nh - 1), false, c); };  // d[-1] = d[0], d[nh] = d[nh-1]
    int32_t ev[V], en[V], dcur[V], dn[V], t[V];
    // With kPrefetch, s[j+2] and d[j+2] are loaded before step j is undone
    // and stored, so each warp has two steps' loads in flight.
    int32_t sp[V], dpf[V];
    // kRawPrefetch: the even row's LL part (loaded into sp as is: no use
    // waits for it), and the raw words of its HL part and of the odd row's
    // LH and HH parts.
    CodedRaw raw_hl, raw_lh, raw_hh;
    const int p0 = g / 2;
    auto issue_d = [&](int j, CodedRaw& lh, CodedRaw& hh) {
      const int jd = clampi(j, 0, nh - 1);
      issue_coded<P, kLowBits>(cd.band[1], p0, jd, lh);
      issue_coded<P, kLowBits>(cd.band[2], p0, jd, hh);
    };
    auto decode_d = [&](int j, const CodedRaw& lh, const CodedRaw& hh, int32_t(&d)[V]) {
      const int jd = clampi(j, 0, nh - 1);
      decode_coded<P, 0, kLowBits>(cd.band[1], p0, jd, lh, d, cd.wide);
      decode_coded<P, P, kLowBits>(cd.band[2], p0, jd, hh, d, cd.wide);
    };
    auto issue_step = [&](int j) {
      load_part<P, 0>(lo, p0, lx, j, z, sp, vec);
      issue_coded<P, kLowBits>(cd.band[0], p0, j, raw_hl);
      issue_d(j, raw_lh, raw_hh);
    };
    auto decode_step = [&](int j, int32_t(&s)[V], int32_t(&d)[V]) {
#pragma unroll
      for (int i = 0; i < P; ++i) s[i] = sp[i];
      decode_coded<P, P, kLowBits>(cd.band[0], p0, j, raw_hl, s, cd.wide);
      decode_d(j, raw_lh, raw_hh, d);
    };
    // (The first step's five coded parts issued at once and decoded
    // together, as the loop does, took 104 registers and level 1 of a u16
    // 8192^2 image 0.187-0.190 ms against 0.176-0.179 loaded one by one:
    // bench/results/2026-11-27-h100-session20-raw-prefetch-*.)
    load_d(j0, dcur);
    load_d(j0 - 1, t);
    load_row(j0, true, ev);
#pragma unroll
    for (int i = 0; i < V; ++i) ev[i] = wsub(ev[i], quarter_sum(t[i], dcur[i]));  // x[2 j0]
    if constexpr (kRawPrefetch) {
      if (j0 + 1 < ly) issue_step(j0 + 1);
    } else if constexpr (kPrefetch) {
      if (j0 + 1 < ly) {
        load_row(j0 + 1, true, sp);
        load_d(j0 + 1, dpf);
      }
    }
    for (int j = j0; j < j1; ++j) {
      if (j + 1 < ly) {  // x[2j+2]
        if constexpr (kRawPrefetch) {
          decode_step(j + 1, en, dn);
          if (j + 2 < ly && j + 1 < j1) issue_step(j + 2);
        } else if constexpr (kPrefetch) {
#pragma unroll
          for (int i = 0; i < V; ++i) en[i] = sp[i], dn[i] = dpf[i];
          if (j + 2 < ly && j + 1 < j1) {
            load_row(j + 2, true, sp);
            load_d(j + 2, dpf);
          }
        } else {
          load_row(j + 1, true, en);
          load_d(j + 1, dn);
        }
#pragma unroll
        for (int i = 0; i < V; ++i) en[i] = wsub(en[i], quarter_sum(dcur[i], dn[i]));
      } else {  // even ny: x[ny] = x[ny-2]
#pragma unroll
        for (int i = 0; i < V; ++i) en[i] = ev[i], dn[i] = dcur[i];
      }
      emit(2 * j, ev);
      if (j < nh) {
#pragma unroll
        for (int i = 0; i < V; ++i) t[i] = wadd(dcur[i], half_sum(ev[i], en[i]));
        emit(2 * j + 1, t);
      }
#pragma unroll
      for (int i = 0; i < V; ++i) ev[i] = en[i], dcur[i] = dn[i];
    }
  } else {
    const int y0 = chunk * pairs_per_warp, y1 = min(e.ny, y0 + pairs_per_warp);
    for (int y = y0; y < y1; ++y) {
      int32_t c[V];
      load_row(y, y < ly, c);
      emit(y, c);
    }
  }
}

template <typename T, bool kCheck>
__global__ void inverse_z_kernel(Ref lo, Ref hi, T* __restrict__ dst, int64_t dsy, int64_t dsz, Box e, int lx, int ly,
                                 int lz, int pairs_per_thread, int chunks, int64_t threads, uint64_t* d_error) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  const ColumnThread ct = column_thread(t, e);
  const int x = ct.x, y = ct.y, chunk = ct.chunk;
  const bool xylow = x < lx && y < ly;
  const int nh = e.nz / 2;
  auto S = [&](int j) {
    const Ref& r = xylow ? lo : hi;
    return r.p[x + y * r.sy + j * r.sz];
  };
  auto D = [&](int j) { return hi.p[x + y * hi.sy + (lz + clampi(j, 0, nh - 1)) * hi.sz]; };
  auto put = [&](int zo, int32_t v) {
    const int64_t off = x + y * dsy + zo * dsz;
    if (kCheck && out_of_range<T>(v)) report(d_error, static_cast<uint64_t>(off));
    dst[off] = static_cast<T>(v);
  };
  const int j0 = chunk * pairs_per_thread, j1 = min(lz, j0 + pairs_per_thread);
  int32_t dcur = D(j0);
  int32_t ev = wsub(S(j0), quarter_sum(D(j0 - 1), dcur));
  for (int j = j0; j < j1; ++j) {
    int32_t en = ev, dn = dcur;
    if (j + 1 < lz) {
      dn = D(j + 1);
      en = wsub(S(j + 1), quarter_sum(dcur, dn));
    }
    put(2 * j, ev);
    if (j < nh) put(2 * j + 1, wadd(dcur, half_sum(ev, en)));
    ev = en;
    dcur = dn;
  }
}

template <typename T>
__global__ void convert_kernel(const int32_t* __restrict__ src, T* __restrict__ dst, uint64_t n, uint64_t* d_error) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const int32_t v = src[i];
    if (out_of_range<T>(v)) report(d_error, i);
    dst[i] = static_cast<T>(v);
  }
}

template <typename T, int V, bool X, bool Y, bool kCheck, bool kPrefetch = false, bool kCoded = false,
          bool kRawPrefetch = false, bool kLowBits = true, int kMinBlocks = 0>
void launch_rows(const Pass& a, const Tuning& tu, cudaStream_t stream) {
  const RowsGrid rg = rows_grid<V>(a.e, Y ? a.ly : a.e.ny, tu.pairs_per_warp, tu.min_warps);
  const int strips = rg.strips, chunks = rg.chunks, ppw = rg.ppw;
  const int64_t warps = rg.warps;
  const bool vec = tu.vector_io && a.e.nx % V == 0 && aligned(a.dst, std::min<std::size_t>(16, V * sizeof(T))) &&
                   a.ssy % V == 0 && a.ssz % V == 0 && ref_vec_ok(a.lo) && ref_vec_ok(a.hi);
  inverse_rows_kernel<T, V, X, Y, kCheck, kPrefetch, kCoded, kRawPrefetch, kLowBits, kMinBlocks>
      <<<grid_for(warps, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(
          a.lo, a.hi, static_cast<T*>(a.dst), a.ssy, a.ssz, a.e, a.lx, a.ly, ppw, strips, chunks, warps, vec,
          a.d_error, a.coded ? *a.coded : CodedDetails{});
  CUDA_CHECK(cudaGetLastError());
}

template <typename T, int V, bool kCheck>
void rows_yx(const Pass& a, const Tuning& tu, cudaStream_t stream) {
  if (a.coded) {  // the wavelet decoder's 2D levels (u8, u16 or i32 out; dwt53_device.cu checked the shape)
    VLEC_REQUIRE((!std::is_same_v<T, int16_t>) && a.do_x && a.do_y && tu.prefetch,
                 "dwt53: coded details need u8, u16 or i32 output and the fused, prefetching 2D pass");
    if constexpr (!std::is_same_v<T, int16_t>) {
      // Raw prefetch only where the warps' chains are long (Tuning::coded_raw_min_pairs).
      const int ppw = rows_grid<V>(a.e, a.ly, tu.pairs_per_warp, tu.min_warps).ppw;
      if (tu.coded_raw_prefetch && ppw >= tu.coded_raw_min_pairs) {
        const CodedDetails& c = *a.coded;
        const bool shift_free = tu.coded_shift_free && !c.band[0].shift && !c.band[1].shift && !c.band[2].shift;
        if constexpr (!std::is_same_v<T, int32_t>) {  // (probing register budgets: Tuning::coded_min_blocks)
          if (tu.coded_min_blocks == 7)
            return shift_free ? launch_rows<T, V, true, true, kCheck, true, true, true, false, 7>(a, tu, stream)
                              : launch_rows<T, V, true, true, kCheck, true, true, true, true, 7>(a, tu, stream);
          if (tu.coded_min_blocks == 8)
            return shift_free ? launch_rows<T, V, true, true, kCheck, true, true, true, false, 8>(a, tu, stream)
                              : launch_rows<T, V, true, true, kCheck, true, true, true, true, 8>(a, tu, stream);
        }
        if (shift_free) return launch_rows<T, V, true, true, kCheck, true, true, true, false>(a, tu, stream);
        return launch_rows<T, V, true, true, kCheck, true, true, true>(a, tu, stream);
      }
      return launch_rows<T, V, true, true, kCheck, true, true>(a, tu, stream);
    }
  }
  if (a.do_x && a.do_y) {
    if (tu.prefetch) launch_rows<T, V, true, true, kCheck, true>(a, tu, stream);
    else launch_rows<T, V, true, true, kCheck, false>(a, tu, stream);
  } else if (a.do_x) {
    launch_rows<T, V, true, false, kCheck>(a, tu, stream);
  } else if (a.do_y) {
    launch_rows<T, V, false, true, kCheck>(a, tu, stream);
  } else {
    VLEC_REQUIRE(false, "dwt53: a rows pass with nothing to do");
  }
}

template <typename T, bool kCheck>
void launch_z(const Pass& a, cudaStream_t stream) {
  constexpr int kPairs = 64;
  const int chunks = (a.lz + kPairs - 1) / kPairs;
  const int64_t threads = int64_t{a.e.nx} * a.e.ny * chunks;
  inverse_z_kernel<T, kCheck><<<grid_for(threads, 256), 256, 0, stream>>>(
      a.lo, a.hi, static_cast<T*>(a.dst), a.ssy, a.ssz, a.e, a.lx, a.ly, a.lz, kPairs, chunks, threads, a.d_error);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

// Unchecked passes write int32 work buffers (a.type is i32 there).
void inverse_rows(const Pass& a, const Tuning& tu, cudaStream_t stream) {
  if (!a.check) return rows_yx<int32_t, 4, false>(a, tu, stream);
  switch (a.type) {
    case device::DwtSample::u8: return rows_yx<uint8_t, 8, true>(a, tu, stream);
    case device::DwtSample::u16: return rows_yx<uint16_t, 8, true>(a, tu, stream);
    case device::DwtSample::i16: return rows_yx<int16_t, 8, true>(a, tu, stream);
    case device::DwtSample::i32: return rows_yx<int32_t, 4, true>(a, tu, stream);
  }
}

void inverse_z(const Pass& a, cudaStream_t stream) {
  if (!a.check) return launch_z<int32_t, false>(a, stream);
  switch (a.type) {
    case device::DwtSample::u8: return launch_z<uint8_t, true>(a, stream);
    case device::DwtSample::u16: return launch_z<uint16_t, true>(a, stream);
    case device::DwtSample::i16: return launch_z<int16_t, true>(a, stream);
    case device::DwtSample::i32: return launch_z<int32_t, true>(a, stream);
  }
}

void inverse_convert(const int32_t* src, void* dst, device::DwtSample type, uint64_t n, uint64_t* d_error,
                     cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(std::min<uint64_t>((n + 255) / 256, 65536));
  switch (type) {
    case device::DwtSample::u8: convert_kernel<<<grid, 256, 0, stream>>>(src, static_cast<uint8_t*>(dst), n, d_error); break;
    case device::DwtSample::u16: convert_kernel<<<grid, 256, 0, stream>>>(src, static_cast<uint16_t*>(dst), n, d_error); break;
    case device::DwtSample::i16: convert_kernel<<<grid, 256, 0, stream>>>(src, static_cast<int16_t*>(dst), n, d_error); break;
    case device::DwtSample::i32: convert_kernel<<<grid, 256, 0, stream>>>(src, static_cast<int32_t*>(dst), n, d_error); break;
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda::dwt
