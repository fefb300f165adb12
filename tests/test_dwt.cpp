// tests/test_dwt.cpp: the reversible 5/3 wavelet transform (vlec/dwt.hpp;
// the reference, data and shapes in dwt_test_util.hpp):
// known answers worked out by hand, equality with a naive reference written
// straight from the JPEG 2000 formulas, exact round trips for every sample
// type, shape (1D/2D/3D, odd, prime, 1 x N, sizes below 2^levels) and level
// count 0..6 on data shaped like real data, thread-count invariance, energy
// compaction, the overflow bound of i32 input, and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "dwt/dwt53.hpp"
#include "dwt_test_util.hpp"
#include "test_util.hpp"
#include "vlec/dwt.hpp"
#include "vlec/error.hpp"

namespace vlec {
namespace {

using namespace dwt_test;

// ---------------------------------------------------------------------------
// Known answers (worked out by hand from the formulas)
// ---------------------------------------------------------------------------

TEST(Dwt53, KnownAnswers1D) {
  struct Case {
    std::vector<int32_t> x;
    unsigned levels;
    std::vector<int32_t> want;
  };
  const std::vector<Case> cases = {
      {{7}, 1, {7}},                                   // length 1 passes through
      {{3, 8}, 1, {6, 5}},                             // d = 8-3 = 5, s = 3 + (5+5+2)/4 = 6
      {{1, 5, 2}, 1, {3, 4, 4}},                       // d = 5-1 = 4, s0 = 1+2, s1 = 2+(4+4+2)/4
      {{10, 2, 7, 3}, 1, {7, 5, -6, -4}},              // d = 2-8, 3-7; s = 10+floor(-10/4), 7+floor(-8/4)
      {{-3, 4, 0, -5, 9}, 1, {0, -1, 5, 6, -9}},       // floor(-3/2) = -2, floor(-1/4) = -1
      {{0, 1, 2, 3, 4, 5, 6, 7}, 1, {0, 2, 4, 6, 0, 0, 0, 1}},  // a ramp: d = 0 but at the mirrored end
      {{0, 1, 2, 3, 4, 5, 6, 7}, 2, {0, 5, 0, 2, 0, 0, 0, 1}},
      {{0, 1, 2, 3, 4, 5, 6, 7}, 3, {3, 5, 0, 2, 0, 0, 0, 1}},
      {{0, 1, 2, 3, 4, 5, 6, 7}, 6, {3, 5, 0, 2, 0, 0, 0, 1}},  // stops when the low band has 1 sample
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("n " + std::to_string(c.x.size()) + " levels " + std::to_string(c.levels));
    const DwtShape s{c.x.size()};
    EXPECT_EQ(forward(c.x, s, c.levels, 1), c.want);
    const std::vector<int64_t> ref = naive_forward(std::vector<int64_t>(c.x.begin(), c.x.end()), s, c.levels);
    EXPECT_EQ(std::vector<int32_t>(ref.begin(), ref.end()), c.want);
    EXPECT_EQ(inverse<int32_t>(c.want, s, c.levels, 1), c.x);
  }
}

TEST(Dwt53, KnownAnswer2D) {
  // Rows [1 2] and [3 4] give [2 1] and [4 1]; the columns [2 4] and [1 1]
  // give [3 2] and [1 0]: LL 3, HL 1, LH 2, HH 0.
  const std::vector<uint8_t> x = {1, 2, 3, 4};
  EXPECT_EQ(forward(x, {2, 2}, 1), (std::vector<int32_t>{3, 1, 2, 0}));
  // 3D: the z pass comes last: the 2 x 2 plane above, and a plane of 5s
  // (all zero but its LL 5); along z the LL pair [3 5] becomes [4 2] etc.
  const std::vector<uint8_t> y = {1, 2, 3, 4, 5, 5, 5, 5};
  const std::vector<int64_t> ref = naive_forward({1, 2, 3, 4, 5, 5, 5, 5}, {2, 2, 2}, 1);
  EXPECT_EQ(forward(y, {2, 2, 2}, 1), std::vector<int32_t>(ref.begin(), ref.end()));
  EXPECT_EQ(forward(y, {2, 2, 2}, 1), (std::vector<int32_t>{4, 1, 1, 0, 2, -1, -2, 0}));
}

// ---------------------------------------------------------------------------
// Optimized == naive reference
// ---------------------------------------------------------------------------

TEST(Dwt53, EqualsNaiveReference) {
  for_each_type([](auto tag) {
    using T = decltype(tag);
    for (const DwtShape& s : shapes()) {
      for (unsigned levels : {0u, 1u, 2u, 3u, 6u}) {
        const uint64_t seed = test::base_seed() + s.samples() * 7 + levels;
        SCOPED_TRACE(std::string(tname<T>()) + " " + shape_name(s) + " levels " + std::to_string(levels) +
                     " seed " + std::to_string(seed));
        for (const char* pattern : {"random", "smooth"}) {
          const std::vector<T> v = make_data<T>(pattern, s, seed);
          const std::vector<int64_t> ref = naive_forward(std::vector<int64_t>(v.begin(), v.end()), s, levels);
          const std::vector<int32_t> got = forward(v, s, levels, 2);
          ASSERT_EQ(std::vector<int64_t>(got.begin(), got.end()), ref) << pattern;
        }
      }
    }
  });
}

// A larger 2D and 3D case, where column blocks are full and the tail is narrow.
TEST(Dwt53, EqualsNaiveReferenceLarge) {
  const uint64_t seed = test::base_seed() + 3;
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (DwtShape s : {DwtShape{301, 203}, DwtShape{77, 45, 39}}) {
    const std::vector<uint16_t> v = make_data<uint16_t>("random", s, seed);
    const std::vector<int64_t> ref = naive_forward(std::vector<int64_t>(v.begin(), v.end()), s, 5);
    const std::vector<int32_t> got = forward(v, s, 5, 3);
    EXPECT_EQ(std::vector<int64_t>(got.begin(), got.end()), ref) << shape_name(s);
  }
}

// ---------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------

TEST(Dwt53, RoundTripEveryTypeShapeLevel) {
  for_each_type([](auto tag) {
    using T = decltype(tag);
    for (const char* pattern : kPatterns) {
      for (const DwtShape& s : shapes()) {
        for (unsigned levels = 0; levels <= 6; ++levels) {
          const uint64_t seed = test::base_seed() + s.nx * 1000003 + s.ny * 1009 + s.nz * 17 + levels;
          SCOPED_TRACE(std::string(tname<T>()) + " " + pattern + " " + shape_name(s) + " levels " +
                       std::to_string(levels) + " seed " + std::to_string(seed));
          const std::vector<T> v = make_data<T>(pattern, s, seed);
          const std::vector<int32_t> c = forward(v, s, levels);
          ASSERT_EQ(inverse<T>(c, s, levels), v);
          // In place: the coefficients as working memory, and for int32 as
          // the samples' buffer too.
          std::vector<int32_t> work = c;
          std::vector<T> back(v.size());
          dwt53_inverse_inplace(work.data(), back.data(), s, {levels, 0});
          ASSERT_EQ(back, v) << "in place";
          if constexpr (std::is_same_v<T, int32_t>) {
            work = c;
            dwt53_inverse_inplace(work.data(), work.data(), s, {levels, 0});
            ASSERT_EQ(work, v) << "in place, samples over the coefficients";
          }
        }
      }
    }
  });
}

TEST(Dwt53, InverseInPlace) {
  const DwtShape s{67, 35, 3};
  const uint64_t seed = test::base_seed() + 5;
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<int16_t> v = make_data<int16_t>("smooth", s, seed);
  std::vector<int32_t> c = forward(v, s, 4);
  std::vector<int16_t> back(v.size());
  dwt53_inverse_inplace(c.data(), back.data(), s, {4, 2});
  EXPECT_EQ(back, v);
  // int32 samples: the coefficients' buffer itself can receive them.
  const std::vector<int32_t> w = make_data<int32_t>("random", s, seed);
  std::vector<int32_t> cw = forward(w, s, 4);
  dwt53_inverse_inplace(cw.data(), cw.data(), s, {4, 2});
  EXPECT_EQ(cw, w);
  // 1D along z only (nx == 1): no x pass, conversion passes instead.
  const DwtShape sz{1, 1, 300};
  const std::vector<uint8_t> u = make_data<uint8_t>("edges", sz, seed);
  std::vector<int32_t> cu = forward(u, sz, 3);
  std::vector<uint8_t> bu(u.size());
  dwt53_inverse_inplace(cu.data(), bu.data(), sz, {3, 1});
  EXPECT_EQ(bu, u);
}

// The const inverse reads the coefficients only, on every path (1D full
// copy, 2D and 3D compact LL copies, an axis of length 1).
TEST(Dwt53, ConstInverseLeavesCoefficientsAlone) {
  const uint64_t seed = test::base_seed() + 10;
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (DwtShape s : {DwtShape{999}, DwtShape{130, 77}, DwtShape{40, 33, 21}, DwtShape{1, 50, 9}, DwtShape{9, 1, 30}}) {
    const std::vector<uint16_t> v = make_data<uint16_t>("random", s, seed);
    const std::vector<int32_t> c = forward(v, s, 4);
    const std::vector<int32_t> kept = c;
    EXPECT_EQ(inverse<uint16_t>(c, s, 4, 2), v) << shape_name(s);
    EXPECT_EQ(c, kept) << shape_name(s);
  }
}

// Rotated shapes are the same transform: {n}, {1, n} and {1, 1, n}.
TEST(Dwt53, AxisOfLengthOneChangesNothing) {
  const uint64_t seed = test::base_seed() + 6;
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<uint16_t> v = make_data<uint16_t>("random", {1001}, seed);
  const std::vector<int32_t> a = forward(v, {1001}, 5);
  EXPECT_EQ(forward(v, {1, 1001}, 5), a);
  EXPECT_EQ(forward(v, {1, 1, 1001}, 5), a);
  EXPECT_EQ(forward(v, {1001, 1, 1}, 5), a);
}

// ---------------------------------------------------------------------------
// Threads, energy compaction, geometry
// ---------------------------------------------------------------------------

TEST(Dwt53, SameResultForAnyThreadCount) {
  const uint64_t seed = test::base_seed() + 7;
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (DwtShape s : {DwtShape{1 << 18}, DwtShape{1021, 700}, DwtShape{70, 61, 53}}) {
    const std::vector<uint16_t> v = make_data<uint16_t>("smooth", s, seed);
    const std::vector<int32_t> one = forward(v, s, 5, 1);
    for (unsigned t : {2u, 3u, 8u}) {
      EXPECT_EQ(forward(v, s, 5, t), one) << shape_name(s) << " threads " << t;
      EXPECT_EQ(inverse<uint16_t>(one, s, 5, t), v) << shape_name(s) << " threads " << t;
    }
  }
}

TEST(Dwt53, EnergyCompactionOnSmoothField) {
  const DwtShape s{256, 256};
  std::vector<uint16_t> v(s.samples());
  for (std::size_t y = 0; y < s.ny; ++y)
    for (std::size_t x = 0; x < s.nx; ++x)
      v[x + s.nx * y] = static_cast<uint16_t>(32768 + 30000 * std::sin(x / 40.0) * std::cos(y / 55.0));
  const std::vector<int32_t> c = forward(v, s, 3);
  ASSERT_EQ(dwt53_low_extent(s, 3).nx, 32u);
  // The input spans 60,000. Per level, the three high bands of that level:
  // their mean magnitude is a tiny fraction of it, and so is their largest
  // value, which sits at the right and bottom edges, where the whole-sample
  // extension of an even-length signal leaves a first difference.
  for (unsigned level = 1; level <= 3; ++level) {
    const DwtShape outer = dwt53_low_extent(s, level - 1), inner = dwt53_low_extent(s, level);
    int32_t high_max = 0;
    double high_sum = 0;
    std::size_t high_n = 0;
    for (std::size_t y = 0; y < outer.ny; ++y)
      for (std::size_t x = 0; x < outer.nx; ++x) {
        if (x < inner.nx && y < inner.ny) continue;
        high_max = std::max(high_max, std::abs(c[x + s.nx * y]));
        high_sum += std::abs(c[x + s.nx * y]);
        ++high_n;
      }
    const double mean = high_sum / high_n;
    std::printf("level %u high bands: mean |c| %.1f, max %d, of a range of 60000\n", level, mean, high_max);
    EXPECT_LT(mean, 60000 * 0.0005 * (1 << (2 * (level - 1))));  // detail grows 4x per level on a smooth field
    EXPECT_LT(high_max, 60000 * 0.02 * (1 << (level - 1)));
  }
}

TEST(Dwt53, LowExtent) {
  EXPECT_EQ(dwt53_low_extent({100, 7, 1}, 0).nx, 100u);
  const DwtShape a = dwt53_low_extent({100, 7, 1}, 2);
  EXPECT_EQ(a.nx, 25u);
  EXPECT_EQ(a.ny, 2u);
  EXPECT_EQ(a.nz, 1u);
  const DwtShape b = dwt53_low_extent({5, 2, 3}, 10);
  EXPECT_EQ(b.nx + b.ny + b.nz, 3u);
  EXPECT_EQ(dwt::level_extents({5, 2, 3}, 10).size(), 4u);  // 5 -> 3 -> 2 -> 1: three levels
  EXPECT_EQ(dwt::level_extents({1, 1, 1}, 10).size(), 1u);
}

// ---------------------------------------------------------------------------
// The i32 bound and the errors
// ---------------------------------------------------------------------------

// Samples at the ends of the accepted i32 range, arranged as the sign pattern
// of a deep high-pass (and low-pass) filter along every axis: the input
// that drives one coefficient as far as it can go. Nothing may overflow (the
// sanitizer build checks it) and the coefficients stay within the bound that
// vlec/dwt.hpp documents.
TEST(Dwt53, I32ExtremesDoNotOverflow) {
  const double r = (double(kDwtMaxI32) - kDwtMinI32) / 2, m = (double(kDwtMaxI32) + kDwtMinI32) / 2;
  // (length, levels, coefficient, how far it must go): an interior sample of
  // the deepest high band, far enough from the ends that its 93 taps are not
  // folded, and one of the low band of level 2. The gain nears the 2.87^3 of
  // the bound (2.82^3 = 22.4 at level 5).
  struct Target {
    std::size_t n;
    unsigned levels;
    std::size_t coef;
    double gain;
  };
  for (const Target t : {Target{128, 5, 6, 20.0}, Target{32, 2, 4, 4.0}}) {
    const std::size_t n = t.n;
    const unsigned levels = t.levels;
    std::vector<int> sign(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<int64_t> impulse(n, 0);
      impulse[i] = 1 << 20;
      sign[i] = naive_forward(impulse, {n}, levels)[t.coef] >= 0 ? 1 : -1;
    }
    for (int flip : {1, -1}) {
      const DwtShape s{n, n, n};
      std::vector<int32_t> v(s.samples());
      for (std::size_t z = 0; z < n; ++z)
        for (std::size_t y = 0; y < n; ++y)
          for (std::size_t x = 0; x < n; ++x)
            v[x + n * (y + n * z)] = flip * sign[x] * sign[y] * sign[z] > 0 ? kDwtMaxI32 : kDwtMinI32;
      const std::vector<int32_t> c = forward(v, s, levels);
      double worst = 0;
      for (int32_t x : c) worst = std::max(worst, std::abs(double(x) - m));
      std::printf("levels %u coefficient %zu flip %d: max |c - m| = %.2f r\n", levels, t.coef, flip, worst / r);
      EXPECT_LE(worst, 23.6 * r + 64) << "coefficient " << t.coef << " flip " << flip;
      EXPECT_GT(worst, t.gain * r) << "the pattern should drive the coefficient far";
      EXPECT_EQ(inverse<int32_t>(c, s, levels), v);
      // The same pattern in u8 and u16 samples stays within the bit counts of
      // vlec/dwt.hpp (14 and 22 bits, signed, in 3D).
      std::vector<uint8_t> v8(v.size());
      std::vector<uint16_t> v16(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        v8[i] = v[i] > 0 ? 255 : 0;
        v16[i] = v[i] > 0 ? 65535 : 0;
      }
      for (int32_t x : forward(v8, s, levels)) ASSERT_LT(std::abs(x), 1 << 13);
      for (int32_t x : forward(v16, s, levels)) ASSERT_LT(std::abs(x), 1 << 21);
      EXPECT_EQ(inverse<uint8_t>(forward(v8, s, levels), s, levels), v8);
      // 1D and 2D likewise.
      const std::vector<int32_t> line(v.begin(), v.begin() + n), plane(v.begin(), v.begin() + n * n);
      EXPECT_EQ(inverse<int32_t>(forward(line, {n}, levels), {n}, levels), line);
      EXPECT_EQ(inverse<int32_t>(forward(plane, {n, n}, levels), {n, n}, levels), plane);
    }
  }
}

template <typename F>
void expect_error(F&& f, ErrorCode code, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning \"" << fragment << "\"";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Dwt53, RejectsI32OutsideTheRange) {
  std::vector<int32_t> v(1000, 5), c(1000);
  v[777] = kDwtMaxI32 + 1;
  expect_error([&] { dwt53_forward(v.data(), c.data(), {10, 10, 10}, {3, 2}); }, ErrorCode::invalid_argument,
               "i32 sample 33554432 at index 777 (x 7, y 7, z 7)");
  v[777] = 5;
  v[3] = std::numeric_limits<int32_t>::min();
  expect_error([&] { dwt53_forward(v.data(), c.data(), {1000}, {}); }, ErrorCode::invalid_argument, "-2147483648");
  v[3] = kDwtMinI32;
  EXPECT_NO_THROW(dwt53_forward(v.data(), c.data(), {1000}, {}));
}

TEST(Dwt53, RejectsBadArguments) {
  std::vector<uint8_t> v(64);
  std::vector<int32_t> c(64);
  expect_error([&] { dwt53_forward(v.data(), c.data(), {8, 8}, {kDwtMaxLevels + 1, 0}); },
               ErrorCode::invalid_argument, "levels 33");
  expect_error([&] { dwt53_forward(static_cast<const uint8_t*>(nullptr), c.data(), {8, 8}, {}); },
               ErrorCode::invalid_argument, "null buffer");
  expect_error([&] { dwt53_inverse(c.data(), static_cast<uint8_t*>(nullptr), {8, 8}, {}); },
               ErrorCode::invalid_argument, "null buffer");
  const std::size_t big = std::size_t{1} << 40;
  expect_error([&] { dwt53_forward(v.data(), c.data(), {big, big, 1}, {}); }, ErrorCode::invalid_argument,
               "too large");
  // An empty shape is nothing to do, null buffers included.
  EXPECT_NO_THROW(dwt53_forward(static_cast<const uint16_t*>(nullptr), nullptr, {0, 5, 5}, {}));
}

// Coefficients that no forward transform produced: the inverse reports the
// sample that does not fit instead of wrapping it, and does no undefined
// arithmetic on the way (the sanitizer build checks it).
TEST(Dwt53, InverseRejectsForeignCoefficients) {
  const std::vector<int32_t> huge(48 * 40, std::numeric_limits<int32_t>::max());
  std::vector<uint8_t> out8(huge.size());
  expect_error([&] { dwt53_inverse(huge.data(), out8.data(), {48, 40}, {3, 2}); }, ErrorCode::invalid_argument,
               "not a forward transform of u8 samples");
  std::vector<int32_t> out32(huge.size());
  expect_error([&] { dwt53_inverse(huge.data(), out32.data(), {48, 40}, {3, 2}); }, ErrorCode::invalid_argument,
               "outside [-33554432, 33554431]");
  // In place, int32 samples over the coefficients themselves.
  std::vector<int32_t> work = huge;
  expect_error([&] { dwt53_inverse_inplace(work.data(), work.data(), {48, 40}, {3, 2}); },
               ErrorCode::invalid_argument, "not a forward transform of i32 samples");
  // A small error in the coefficients of a u8 image at its extremes: the
  // first sample out of range is named (no x pass: nx == 1).
  std::vector<uint8_t> v(50, 255);
  std::vector<int32_t> c = forward(v, {1, 50}, 2);
  c[0] += 1000;
  expect_error([&] { dwt53_inverse(c.data(), out8.data(), {1, 50}, {2, 1}); }, ErrorCode::invalid_argument,
               "index 0 (x 0, y 0, z 0)");
  // Random coefficients of every size never trip the sanitizers.
  std::mt19937_64 rng(test::base_seed() + 9);
  SCOPED_TRACE("seed " + std::to_string(test::base_seed() + 9));
  for (const DwtShape& s : shapes()) {
    std::vector<int32_t> r(s.samples());
    for (int32_t& x : r) x = static_cast<int32_t>(rng());
    std::vector<int16_t> o(r.size());
    try {
      dwt53_inverse(r.data(), o.data(), s, {4, 2});
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    }
  }
}

}  // namespace
}  // namespace vlec
