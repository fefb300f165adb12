// vlec/dwt.hpp: the reversible 5/3 wavelet transform of JPEG 2000 Part 1
// (integer lifting), in 1, 2 or 3 dimensions, on the CPU.
//
// One level along an axis of n >= 2 samples x[0..n) computes
//   d[i] = x[2i+1] - floor((x[2i] + x[2i+2]) / 2)           i < floor(n/2)
//   s[i] = x[2i]   + floor((d[i-1] + d[i] + 2) / 4)          i < ceil(n/2)
// with whole-sample symmetric extension (x[-1] = x[1], x[n] = x[n-2], and so
// d[-1] = d[0], and d[floor(n/2)] = d[floor(n/2)-1] when n is odd), and stores
// the low band s then the high band d in place of x. An axis of length 1 is
// left as it is. A level transforms x (every row), then y (every column),
// then z, of the current low band; the next level transforms the new low
// band, which occupies the first ceil(w/2) x ceil(h/2) x ceil(d/2) samples of
// the previous one (Mallat layout, in place). An axis stops being split when
// its low band has length 1; the transform stops when every axis has.
//
// Data layout: x varies fastest: sample (x, y, z) is at x + nx * (y + ny * z).
// 1D is {n}, 2D {width, height}, 3D {nx, ny, nz}: an axis of length 1 changes
// nothing, so {n, 1, 1} is the 1D transform of n samples.
//
// Coefficients are int32. With samples in [lo, hi], m = (lo + hi) / 2 and
// r = (hi - lo) / 2, every coefficient c satisfies |c - m| <= G * r + E for
// any number of levels, where G is the largest L1 norm of the equivalent
// analysis filters (those of the deepest high bands): 2.87 in 1D, 8.22 in 2D,
// 23.6 in 3D (tests/test_dwt.cpp drives a coefficient to 22.4 r with the
// worst sign pattern), and E is the rounding of the lifting steps: each
// level's floors add at most 1 (1D), 3 (2D) or 7 (3D) per coefficient, later
// levels amplify that by at most G, so E <= 3, 25 or 170 per level (a loose
// bound; a few units in practice). High-band coefficients are centred on 0
// rather than m. In bits, signed: u8 samples give coefficients of at most 11
// (1D), 13 (2D) or 14 (3D) bits, u16 and i16 samples 19, 21 or 22 bits. i32 samples must lie in [kDwtMinI32, kDwtMaxI32] (26-bit signed),
// which keeps every coefficient, and every sum inside a lifting step, within
// int32; other i32 samples are rejected with invalid_argument, never wrapped.
//
// The inverse is exact: inverse(forward(x)) == x for every accepted input.
// Coefficients that no forward transform produced may reconstruct samples
// outside the sample type; the inverse reports that with invalid_argument
// instead of wrapping (its arithmetic is modular, so no such input is
// undefined behaviour).
//
// Results are identical for every thread count. Every function throws
// vlec::Error; after an error the output buffer's contents are unspecified.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vlec/error.hpp"

namespace vlec {

struct DwtShape {
  std::size_t nx = 0, ny = 1, nz = 1;
  std::size_t samples() const { return nx * ny * nz; }
};

struct DwtOptions {
  unsigned levels = 5;   // 0 .. kDwtMaxLevels; 0 only converts to int32
  unsigned threads = 0;  // CPU threads; 0 = all hardware threads
};

constexpr unsigned kDwtMaxLevels = 32;
constexpr int32_t kDwtMinI32 = -(int32_t{1} << 25);
constexpr int32_t kDwtMaxI32 = (int32_t{1} << 25) - 1;

// Forward: `samples` (shape.samples() of them) -> `coeffs` (as many int32).
// The two buffers must not overlap.
void dwt53_forward(const uint8_t* samples, int32_t* coeffs, const DwtShape& shape, const DwtOptions& options = {});
void dwt53_forward(const uint16_t* samples, int32_t* coeffs, const DwtShape& shape, const DwtOptions& options = {});
void dwt53_forward(const int16_t* samples, int32_t* coeffs, const DwtShape& shape, const DwtOptions& options = {});
void dwt53_forward(const int32_t* samples, int32_t* coeffs, const DwtShape& shape, const DwtOptions& options = {});

// Inverse: `coeffs` -> `samples`, with the shape and levels of the forward
// transform. `coeffs` is left untouched and must not overlap `samples`; the
// transform allocates int32 working memory: a copy of the level-1 LL band (a
// quarter in 2D, an eighth in 3D, plus a full-size buffer in 3D), or of all
// the coefficients in 1D and where an axis has length 1.
void dwt53_inverse(const int32_t* coeffs, uint8_t* samples, const DwtShape& shape, const DwtOptions& options = {});
void dwt53_inverse(const int32_t* coeffs, uint16_t* samples, const DwtShape& shape, const DwtOptions& options = {});
void dwt53_inverse(const int32_t* coeffs, int16_t* samples, const DwtShape& shape, const DwtOptions& options = {});
void dwt53_inverse(const int32_t* coeffs, int32_t* samples, const DwtShape& shape, const DwtOptions& options = {});

// Inverse without the copy: `coeffs` is the working memory and is left
// unspecified. For int32 samples, `samples` may be `coeffs` itself.
void dwt53_inverse_inplace(int32_t* coeffs, uint8_t* samples, const DwtShape& shape, const DwtOptions& options = {});
void dwt53_inverse_inplace(int32_t* coeffs, uint16_t* samples, const DwtShape& shape, const DwtOptions& options = {});
void dwt53_inverse_inplace(int32_t* coeffs, int16_t* samples, const DwtShape& shape, const DwtOptions& options = {});
void dwt53_inverse_inplace(int32_t* coeffs, int32_t* samples, const DwtShape& shape, const DwtOptions& options = {});

// Extent of the low band after `level` levels (level 0: the whole shape):
// each axis longer than 1 becomes ceil(n / 2) per level. The subbands of level
// k + 1 (k >= 0) tile the low band of level k: along each axis, the low half
// [0, ceil(n/2)) and, where the axis was split, the high half [ceil(n/2), n).
DwtShape dwt53_low_extent(const DwtShape& shape, unsigned level);

}  // namespace vlec
