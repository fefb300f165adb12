// dwt/lifting.hpp: the 5/3 lifting steps along one axis, in two shapes, and
// the fused first-level kernels (x+y forward, y+x inverse) built from them.
//
//  * Lines (the x axis): one contiguous line at a time. The line is split into
//    its even and odd samples in a small buffer (a stride-2 gather the
//    compiler turns into shuffles), then predict and update run over the two
//    contiguous halves as plain element-wise loops, which vectorize, with the
//    symmetric extension peeled off at both ends so the loops have no branch.
//
//  * Column blocks (the y and z axes): B adjacent columns at once (B = 256
//    by default, 1 KiB of each row per visit). Each step reads or writes B
//    contiguous int32 of one row, so the memory walk is a
//    sequence of B*4-byte runs (whole cache lines) instead of one strided
//    4-byte load per row and column, and the inner loop over the B lanes is a
//    fixed-length vector loop. The forward pass streams down the block and
//    lifts in place: the low band goes straight to row i (every row it
//    overwrites has already been read), only the high band waits in a buffer
//    of floor(n/2) x B until the end. The inverse buffers the low band and
//    streams likewise. The steps take __restrict rows so the lane loops
//    vectorize without overlap checks.
//
// Forward arithmetic is plain int32: the caller has bounded the samples so no
// sum overflows (vlec/dwt.hpp). The inverse computes modulo 2^32 (wadd/wsub),
// so coefficients that no forward transform produced are never undefined
// behaviour; the final output step checks the range of the sample type.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace vlec::dwt {

inline int32_t wadd(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
inline int32_t wsub(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b)); }

// ---------------------------------------------------------------------------
// Lines (contiguous samples)
// ---------------------------------------------------------------------------

// Forward along one line of n >= 2 samples: low band to out[0, ceil(n/2)),
// high band to out[ceil(n/2), n). `out` may be `in` (Tin = int32_t).
// lo and hi are scratch of ceil(n/2) each.
template <typename Tin>
inline void forward_line(const Tin* in, int32_t* out, std::size_t n, int32_t* lo, int32_t* hi) {
  const std::size_t nh = n / 2, nl = n - nh;
  for (std::size_t i = 0; i < nh; ++i) {
    lo[i] = static_cast<int32_t>(in[2 * i]);
    hi[i] = static_cast<int32_t>(in[2 * i + 1]);
  }
  if (n & 1) lo[nh] = static_cast<int32_t>(in[n - 1]);
  // Predict: d[i] = x[2i+1] - ((x[2i] + x[2i+2]) >> 1); for even n the last
  // one mirrors x[n] = x[n-2], and (2a) >> 1 = a.
  const std::size_t np = (n & 1) ? nh : nh - 1;
  for (std::size_t i = 0; i < np; ++i) hi[i] -= (lo[i] + lo[i + 1]) >> 1;
  if (!(n & 1)) hi[nh - 1] -= lo[nh - 1];
  // Update: s[i] = x[2i] + ((d[i-1] + d[i] + 2) >> 2), d[-1] = d[0] and, for
  // odd n, d[nh] = d[nh-1].
  out[0] = lo[0] + ((2 * hi[0] + 2) >> 2);
  for (std::size_t i = 1; i < nh; ++i) out[i] = lo[i] + ((hi[i - 1] + hi[i] + 2) >> 2);
  if (n & 1) out[nh] = lo[nh] + ((2 * hi[nh - 1] + 2) >> 2);
  std::copy(hi, hi + nh, out + nl);
}

// Inverse along one line of n >= 2 coefficients (low band then high band) to
// n samples in `out` (may be `in` for Tout = int32_t). lo and hi are scratch
// of ceil(n/2) each. With kCheck, returns false (`out` then holds wrapped
// values) if a sample v falls outside [range_lo, range_lo + span], where span
// is 2^k - 1: v - range_lo, as uint32, then has a bit above span set, which
// one OR over the line finds (a branch-free reduction; SSE2 has no 32-bit
// min/max).
template <typename Tout, bool kCheck>
inline bool inverse_line(const int32_t* in, Tout* out, std::size_t n, int32_t* __restrict lo, int32_t* __restrict hi,
                         int32_t range_lo, uint32_t span) {
  const std::size_t nh = n / 2, nl = n - nh;
  std::copy(in, in + nl, lo);
  std::copy(in + nl, in + n, hi);
  // Undo the update: x[2i] = s[i] - ((d[i-1] + d[i] + 2) >> 2).
  lo[0] = wsub(lo[0], wadd(wadd(hi[0], hi[0]), 2) >> 2);
  for (std::size_t i = 1; i < nh; ++i) lo[i] = wsub(lo[i], wadd(wadd(hi[i - 1], hi[i]), 2) >> 2);
  if (n & 1) lo[nh] = wsub(lo[nh], wadd(wadd(hi[nh - 1], hi[nh - 1]), 2) >> 2);
  // Undo the predict: x[2i+1] = d[i] + ((x[2i] + x[2i+2]) >> 1).
  const std::size_t np = (n & 1) ? nh : nh - 1;
  for (std::size_t i = 0; i < np; ++i) hi[i] = wadd(hi[i], wadd(lo[i], lo[i + 1]) >> 1);
  if (!(n & 1)) hi[nh - 1] = wadd(hi[nh - 1], lo[nh - 1]);
  const uint32_t base = static_cast<uint32_t>(range_lo);
  uint32_t acc = 0;
  for (std::size_t i = 0; i < nh; ++i) {
    out[2 * i] = static_cast<Tout>(lo[i]);
    out[2 * i + 1] = static_cast<Tout>(hi[i]);
    if (kCheck) acc |= (static_cast<uint32_t>(lo[i]) - base) | (static_cast<uint32_t>(hi[i]) - base);
  }
  if (n & 1) {
    out[n - 1] = static_cast<Tout>(lo[nh]);
    if (kCheck) acc |= static_cast<uint32_t>(lo[nh]) - base;
  }
  return !kCheck || (acc & ~span) == 0;
}

// Whether every v of in[0, n) lies in [range_lo, range_lo + span], span = 2^k - 1.
inline bool in_range(const int32_t* in, std::size_t n, int32_t range_lo, uint32_t span) {
  const uint32_t base = static_cast<uint32_t>(range_lo);
  uint32_t acc = 0;
  for (std::size_t i = 0; i < n; ++i) acc |= static_cast<uint32_t>(in[i]) - base;
  return (acc & ~span) == 0;
}

// ---------------------------------------------------------------------------
// Column blocks: L adjacent columns (lanes) of n >= 2 samples, sample i of
// lane b at p[i * stride + b].
// ---------------------------------------------------------------------------

// One forward step over the lanes of rows 2i, 2i+1, 2i+2 (e0, o, e1), with
// d[i-1] in hp: d[i] to h, s[i] to s. For i >= 1 nothing written is read
// through another pointer, so __restrict lets the compiler vectorize without
// run-time overlap checks (e0 == e1 at the mirrored end is a read-only alias).
inline void forward_step(const int32_t* __restrict e0, const int32_t* __restrict o, const int32_t* __restrict e1,
                         const int32_t* __restrict hp, int32_t* __restrict h, int32_t* __restrict s, std::size_t L) {
  for (std::size_t b = 0; b < L; ++b) {
    const int32_t d = o[b] - ((e0[b] + e1[b]) >> 1);
    h[b] = d;
    s[b] = e0[b] + ((hp[b] + d + 2) >> 2);
  }
}

// Forward in place. hbuf: scratch of floor(n/2) * lanes.
inline void forward_columns(int32_t* p, std::ptrdiff_t stride, std::size_t n, std::size_t L, int32_t* hbuf) {
  const std::size_t nh = n / 2, nl = n - nh;
  // Step i reads rows 2i, 2i+1, 2i+2 and writes low row i: rows written so far
  // (< i) are all below 2i, so the input is never overwritten before it is read.
  {  // i = 0: s[0] overwrites row 0 (e0) and d[-1] = d[0]
    const int32_t* o = p + stride;
    const int32_t* e1 = n > 2 ? o + stride : p;  // x[n] = x[n-2]
    for (std::size_t b = 0; b < L; ++b) {
      const int32_t e = p[b], d = o[b] - ((e + e1[b]) >> 1);
      hbuf[b] = d;
      p[b] = e + ((2 * d + 2) >> 2);
    }
  }
  for (std::size_t i = 1; i < nh; ++i) {
    const int32_t* e0 = p + static_cast<std::ptrdiff_t>(2 * i) * stride;
    const int32_t* o = e0 + stride;
    const int32_t* e1 = (2 * i + 2 < n) ? o + stride : e0;  // x[n] = x[n-2]
    forward_step(e0, o, e1, hbuf + (i - 1) * L, hbuf + i * L, p + static_cast<std::ptrdiff_t>(i) * stride, L);
  }
  if (n & 1) {  // last low sample: d[nh] mirrors d[nh-1]
    const int32_t* e = p + static_cast<std::ptrdiff_t>(n - 1) * stride;
    const int32_t* h = hbuf + (nh - 1) * L;
    int32_t* s = p + static_cast<std::ptrdiff_t>(nh) * stride;
    for (std::size_t b = 0; b < L; ++b) s[b] = e[b] + ((2 * h[b] + 2) >> 2);
  }
  for (std::size_t i = 0; i < nh; ++i)
    std::copy(hbuf + i * L, hbuf + i * L + L, p + static_cast<std::ptrdiff_t>(nl + i) * stride);
}

// One inverse step: d[i], d[i+1] (d, dn: read-only, equal at the mirrored
// end), s[i+1] (s1) and x[2i] (ecur) give x[2i+2] (enext) and rows 2i, 2i+1
// (xe, xo). The caller only uses it where no output row is an input row.
inline void inverse_step(const int32_t* __restrict d, const int32_t* __restrict dn, const int32_t* __restrict s1,
                         const int32_t* __restrict ecur, int32_t* __restrict enext, int32_t* __restrict xe,
                         int32_t* __restrict xo, std::size_t L) {
  for (std::size_t b = 0; b < L; ++b) {
    const int32_t e1 = wsub(s1[b], wadd(wadd(d[b], dn[b]), 2) >> 2);
    enext[b] = e1;
    xe[b] = ecur[b];
    xo[b] = wadd(d[b], wadd(ecur[b], e1) >> 1);
  }
}

// Inverse from `src` to `dst` (the same pointer: in place). sbuf: scratch of
// (ceil(n/2) + 2) * lanes. If split > 0, lanes [0, split) of the low rows are
// read from `ll` (row i at ll + i * ll_stride) instead of src: the const 3D
// inverse keeps the deeper levels' result in a compact copy of the LL band.
inline void inverse_columns(const int32_t* src, int32_t* dst, std::ptrdiff_t stride, std::size_t n, std::size_t L,
                            int32_t* sbuf, const int32_t* ll = nullptr, std::ptrdiff_t ll_stride = 0,
                            std::size_t split = 0) {
  const std::size_t nh = n / 2, nl = n - nh;
  // In place, the low band is copied out: rows 2i and 2i+1, written at step
  // i, hold low samples of later steps. The high band is read in place: step
  // i reads rows nl+i and nl+i+1, and steps before it wrote only rows below
  // 2i <= nl+i (i < nl); step i itself writes row 2i+1 = nl+i only when
  // i = nl-1, the last step of an even n, which reads each lane of d before
  // writing it.
  for (std::size_t i = 0; i < nl; ++i) {
    const int32_t* r = src + static_cast<std::ptrdiff_t>(i) * stride;
    if (split) std::copy(ll + static_cast<std::ptrdiff_t>(i) * ll_stride, ll + static_cast<std::ptrdiff_t>(i) * ll_stride + split, sbuf + i * L);
    std::copy(r + split, r + L, sbuf + i * L + split);
  }
  int32_t* ecur = sbuf + nl * L;  // x[2i]
  int32_t* enext = ecur + L;      // x[2i+2]
  const int32_t* d0 = src + static_cast<std::ptrdiff_t>(nl) * stride;
  for (std::size_t b = 0; b < L; ++b) ecur[b] = wsub(sbuf[b], wadd(wadd(d0[b], d0[b]), 2) >> 2);
  for (std::size_t i = 0; i < nh; ++i) {
    const int32_t* d = src + static_cast<std::ptrdiff_t>(nl + i) * stride;
    int32_t* xe = dst + static_cast<std::ptrdiff_t>(2 * i) * stride;
    int32_t* xo = xe + stride;
    if (i + 1 < nl) {
      const int32_t* dn = (i + 1 < nh) ? d + stride : d;  // d[nh] = d[nh-1] (odd n)
      inverse_step(d, dn, sbuf + (i + 1) * L, ecur, enext, xe, xo, L);
      std::swap(ecur, enext);
    } else {  // even n, last pair: x[n] = x[n-2]; xo may be d
      for (std::size_t b = 0; b < L; ++b) {
        const int32_t db = d[b];
        xe[b] = ecur[b];
        xo[b] = wadd(db, ecur[b]);
      }
    }
  }
  if (n & 1) std::copy(ecur, ecur + L, dst + static_cast<std::ptrdiff_t>(n - 1) * stride);
}

// ---------------------------------------------------------------------------
// Fused x + y forward of the first level, samples to coefficients: the steps
// i in [i0, i1) of the y lifting of one slice (nx x ny samples, ny >= 2,
// nx >= 2), whose rows are x-transformed as the step needs them. The input
// is the caller's samples, never the output, so low row i and high row nl+i
// go straight to their places: no high-band buffer, and the x-transformed
// rows live in three row buffers in cache instead of a full pass through
// memory. Steps of different jobs write different rows; a job starting at
// i0 > 0 recomputes d[i0-1] from rows 2*i0-2 .. 2*i0 into its scratch.
// scratch: 4 * nx + 2 * ceil(nx/2) int32.
// ---------------------------------------------------------------------------
template <typename Tin>
inline void forward_xy_rows(const Tin* src, int32_t* out, std::size_t nx, std::size_t ny, std::size_t i0,
                            std::size_t i1, int32_t* scratch) {
  const std::size_t nh = ny / 2, nl = ny - nh, hx = nx - nx / 2;
  int32_t* e0 = scratch;
  int32_t* o = e0 + nx;
  int32_t* e1 = o + nx;
  int32_t* lo = e1 + nx;
  int32_t* hi = lo + hx;
  auto xrow = [&](std::size_t r, int32_t* dst) { forward_line(src + r * nx, dst, nx, lo, hi); };
  auto row = [&](std::size_t r) { return out + r * nx; };
  int32_t* dfirst = hi + hx;  // d[i0-1]: the job before writes it to its row; this one keeps its own copy
  auto dprev = [&](std::size_t i) -> const int32_t* { return i == i0 ? dfirst : row(nl + i - 1); };
  xrow(2 * i0, e0);
  if (i0 > 0) {
    xrow(2 * i0 - 2, e1);
    xrow(2 * i0 - 1, o);
    for (std::size_t b = 0; b < nx; ++b) dfirst[b] = o[b] - ((e1[b] + e0[b]) >> 1);
  }
  for (std::size_t i = i0; i < i1; ++i) {
    if (i < nh) {
      xrow(2 * i + 1, o);
      const int32_t* next = e0;  // x[ny] = x[ny-2]
      if (2 * i + 2 < ny) {
        xrow(2 * i + 2, e1);
        next = e1;
      }
      if (i == 0) {  // d[-1] = d[0]
        int32_t* d = row(nl);
        int32_t* s0 = row(0);
        for (std::size_t b = 0; b < nx; ++b) {
          const int32_t db = o[b] - ((e0[b] + next[b]) >> 1);
          d[b] = db;
          s0[b] = e0[b] + ((2 * db + 2) >> 2);
        }
      } else {
        forward_step(e0, o, next, dprev(i), row(nl + i), row(i), nx);
      }
      std::swap(e0, e1);
    } else {  // odd ny, the last low row: d[nh] = d[nh-1]
      const int32_t* dp = dprev(nh);
      int32_t* s = row(nh);
      for (std::size_t b = 0; b < nx; ++b) s[b] = e0[b] + ((2 * dp[b] + 2) >> 2);
    }
  }
}

// ---------------------------------------------------------------------------
// Fused y + x inverse of the first level, coefficients to samples: steps
// i in [i0, i1) of the y inverse of one slice write sample rows 2i and 2i+1
// straight to `out` (not the coefficients: no row is read after it is
// written), each x-inverted from a row buffer. Returns ~0 or, if a sample
// falls outside [range_lo, range_lo + span], the offset in the slice of the
// first such sample of the first bad row. scratch: 4 * nx + 2 * ceil(nx/2).
// ---------------------------------------------------------------------------

// x[2i] = s[i] - ((d[i-1] + d[i] + 2) >> 2) over a row (dm, d: read-only, may be equal).
inline void inverse_even_row(const int32_t* __restrict s, const int32_t* __restrict dm, const int32_t* __restrict d,
                             int32_t* __restrict x, std::size_t L) {
  for (std::size_t b = 0; b < L; ++b) x[b] = wsub(s[b], wadd(wadd(dm[b], d[b]), 2) >> 2);
}
// x[2i+1] = d[i] + ((x[2i] + x[2i+2]) >> 1) over a row (e0, e1: read-only, may be equal).
inline void inverse_odd_row(const int32_t* __restrict d, const int32_t* __restrict e0, const int32_t* __restrict e1,
                            int32_t* __restrict x, std::size_t L) {
  for (std::size_t b = 0; b < L; ++b) x[b] = wadd(d[b], wadd(e0[b], e1[b]) >> 1);
}

// The low rows' first ceil(nx/2) lanes (the LL band) are read from `ll`
// (row stride ll_stride): `work` itself, or a compact copy of the LL band that
// the deeper levels were inverted in, so that the const inverse copies only it.
template <typename Tout>
inline std::size_t inverse_yx_rows(const int32_t* work, const int32_t* ll, std::size_t ll_stride, Tout* out,
                                   std::size_t nx, std::size_t ny, std::size_t i0, std::size_t i1, int32_t* scratch,
                                   int32_t range_lo, uint32_t span) {
  const std::size_t nh = ny / 2, nl = ny - nh, hx = nx - nx / 2;
  int32_t* ecur = scratch;
  int32_t* enext = ecur + nx;
  int32_t* orow = enext + nx;
  int32_t* tmp = orow + nx;
  int32_t* lo = tmp + nx;
  int32_t* hi = lo + hx;
  auto row = [&](std::size_t r) { return work + r * nx; };
  auto D = [&](std::ptrdiff_t j) {  // d[-1] = d[0], d[nh] = d[nh-1]
    const std::size_t k = j < 0 ? 0 : std::min(static_cast<std::size_t>(j), nh - 1);
    return row(nl + k);
  };
  auto even = [&](std::size_t i, int32_t* dst) {
    const int32_t* dm = D(static_cast<std::ptrdiff_t>(i) - 1);
    const int32_t* d = D(static_cast<std::ptrdiff_t>(i));
    inverse_even_row(ll + i * ll_stride, dm, d, dst, hx);
    inverse_even_row(row(i) + hx, dm + hx, d + hx, dst + hx, nx - hx);
  };
  std::size_t bad = ~std::size_t{0};
  auto emit = [&](const int32_t* v, std::size_t r) {
    if (inverse_line<Tout, true>(v, out + r * nx, nx, lo, hi, range_lo, span)) return true;
    inverse_line<int32_t, false>(v, tmp, nx, lo, hi, 0, 0u);
    std::size_t x = 0;
    while (x + 1 < nx && (static_cast<uint32_t>(tmp[x]) - static_cast<uint32_t>(range_lo)) <= span) ++x;
    bad = r * nx + x;
    return false;
  };
  even(i0, ecur);
  for (std::size_t i = i0; i < i1; ++i) {
    if (i + 1 < nl) even(i + 1, enext);
    if (i < nh) {
      inverse_odd_row(row(nl + i), ecur, i + 1 < nl ? enext : ecur, orow, nx);  // x[ny] = x[ny-2]
      if (!emit(ecur, 2 * i) || !emit(orow, 2 * i + 1)) return bad;
    } else if (!emit(ecur, 2 * i)) {  // odd ny: the last row
      return bad;
    }
    std::swap(ecur, enext);
  }
  return bad;
}

}  // namespace vlec::dwt
