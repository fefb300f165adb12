// tests/dwt_test_util.hpp: what the 5/3 transform's CPU tests (test_dwt.cpp)
// share: a naive reference written straight from the JPEG 2000 formulas,
// data shaped like real data for every sample type, and the shapes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "vlec/dwt.hpp"

namespace vlec::dwt_test {

// ---------------------------------------------------------------------------
// Naive reference: int64, one line at a time, the formulas as written, with
// whole-sample symmetric extension applied to the index of x.
// ---------------------------------------------------------------------------

inline int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

inline std::vector<int64_t> naive_line(const std::vector<int64_t>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  if (n < 2) return x;
  auto X = [&](int64_t i) {  // x[-i] = x[i], x[n-1+i] = x[n-1-i]
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
    return x[static_cast<std::size_t>(i)];
  };
  auto D = [&](int64_t i) { return X(2 * i + 1) - floor_div(X(2 * i) + X(2 * i + 2), 2); };
  std::vector<int64_t> out;
  for (int64_t i = 0; 2 * i < n; ++i) out.push_back(X(2 * i) + floor_div(D(i - 1) + D(i) + 2, 4));
  for (int64_t i = 0; 2 * i + 1 < n; ++i) out.push_back(D(i));
  return out;
}

// Multi-level, multi-axis reference on v (x fastest).
inline std::vector<int64_t> naive_forward(std::vector<int64_t> v, DwtShape s, unsigned levels) {
  DwtShape e = s;
  for (unsigned k = 0; k < levels; ++k) {
    if (e.nx == 1 && e.ny == 1 && e.nz == 1) break;
    const std::size_t len[3] = {e.nx, e.ny, e.nz};
    const std::size_t step[3] = {1, s.nx, s.nx * s.ny};
    for (int axis = 0; axis < 3; ++axis) {
      if (len[axis] < 2) continue;
      for (std::size_t z = 0; z < (axis == 2 ? 1 : e.nz); ++z)
        for (std::size_t y = 0; y < (axis == 1 ? 1 : e.ny); ++y)
          for (std::size_t x = 0; x < (axis == 0 ? 1 : e.nx); ++x) {
            const std::size_t base = x + s.nx * (y + s.ny * z);
            std::vector<int64_t> line(len[axis]);
            for (std::size_t i = 0; i < len[axis]; ++i) line[i] = v[base + i * step[axis]];
            line = naive_line(line);
            for (std::size_t i = 0; i < len[axis]; ++i) v[base + i * step[axis]] = line[i];
          }
    }
    e = {e.nx - e.nx / 2, e.ny - e.ny / 2, e.nz - e.nz / 2};
  }
  return v;
}

// ---------------------------------------------------------------------------
// Data shaped like real data, in the accepted range of T.
// ---------------------------------------------------------------------------

template <typename T> int64_t type_lo() { return std::is_same_v<T, int32_t> ? kDwtMinI32 : std::numeric_limits<T>::min(); }
template <typename T> int64_t type_hi() { return std::is_same_v<T, int32_t> ? kDwtMaxI32 : std::numeric_limits<T>::max(); }
template <typename T> const char* tname() {
  if (std::is_same_v<T, uint8_t>) return "u8";
  if (std::is_same_v<T, uint16_t>) return "u16";
  if (std::is_same_v<T, int16_t>) return "i16";
  return "i32";
}

inline const char* const kPatterns[] = {"smooth", "edges", "random", "constant", "extremes", "negative"};

template <typename T>
std::vector<T> make_data(const std::string& pattern, DwtShape s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t lo = type_lo<T>(), hi = type_hi<T>();
  const double range = static_cast<double>(hi - lo), mid = (static_cast<double>(lo) + hi) / 2;
  auto uniform = [&](int64_t a, int64_t b) { return a + static_cast<int64_t>(rng() % static_cast<uint64_t>(b - a + 1)); };
  auto clamp = [&](double v) { return static_cast<T>(std::clamp<int64_t>(std::llround(v), lo, hi)); };
  const double f1 = 0.5 + (rng() % 100) / 50.0, f2 = 0.5 + (rng() % 100) / 50.0, f3 = 0.5 + (rng() % 100) / 50.0;
  const int64_t c = uniform(lo, hi), c2 = uniform(lo, hi), c3 = uniform(lo, hi);
  std::vector<T> v(s.samples());
  for (std::size_t z = 0; z < s.nz; ++z)
    for (std::size_t y = 0; y < s.ny; ++y)
      for (std::size_t x = 0; x < s.nx; ++x) {
        const double fx = double(x) / 16, fy = double(y) / 16, fz = double(z) / 16;
        T& out = v[x + s.nx * (y + s.ny * z)];
        if (pattern == "smooth") {  // a smooth field with a little noise
          const double noise = (double(rng() % 2001) - 1000) / 1000 * range / 200;
          out = clamp(mid + range * 0.3 * (std::sin(f1 * fx + f2 * fy) * std::cos(f3 * fz + 0.3 * fx)) + noise);
        } else if (pattern == "edges") {  // flat regions, sharp edges, faint noise: an image
          const double dx = double(x) - s.nx * 0.4, dy = double(y) - s.ny * 0.6, dz = double(z) - s.nz * 0.5;
          int64_t base = (dx * dx + dy * dy + dz * dz < 0.1 * double(s.nx * s.nx + s.ny * s.ny)) ? c
                         : ((x / 7 + y / 5 + z / 3) % 2 ? c2 : c3);
          out = clamp(double(base) + double(rng() % 5) - 2);
        } else if (pattern == "random") {
          out = static_cast<T>(uniform(lo, hi));
        } else if (pattern == "constant") {
          out = static_cast<T>(c);
        } else if (pattern == "extremes") {
          out = static_cast<T>(rng() % 2 ? hi : lo);
        } else {  // negative: the lower half of a signed type, the bottom of an unsigned one
          out = static_cast<T>(lo < 0 ? uniform(lo, lo / 2) : uniform(lo, lo + 3));
        }
      }
  return v;
}

template <typename T>
std::vector<int32_t> forward(const std::vector<T>& v, DwtShape s, unsigned levels, unsigned threads = 0) {
  std::vector<int32_t> c(v.size());
  dwt53_forward(v.data(), c.data(), s, {levels, threads});
  return c;
}

template <typename T>
std::vector<T> inverse(const std::vector<int32_t>& c, DwtShape s, unsigned levels, unsigned threads = 0) {
  std::vector<T> v(c.size());
  dwt53_inverse(c.data(), v.data(), s, {levels, threads});
  return v;
}

template <typename F>
void for_each_type(F&& f) {
  f(uint8_t{});
  f(uint16_t{});
  f(int16_t{});
  f(int32_t{});
}

inline std::string shape_name(DwtShape s) {
  return std::to_string(s.nx) + "x" + std::to_string(s.ny) + "x" + std::to_string(s.nz);
}

// 1D, 2D and 3D shapes: 1, 2, 3, 5, odd, primes, powers of two and one off,
// 1 x N and N x 1, and sizes below 2^levels.
inline const std::vector<DwtShape>& shapes() {
  static const std::vector<DwtShape> s = [] {
    std::vector<DwtShape> v;
    for (std::size_t n : {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 32, 33, 64, 97, 127, 128, 129, 1000, 4097}) v.push_back({n});
    for (auto [x, y] : std::vector<std::pair<std::size_t, std::size_t>>{
             {1, 1}, {1, 2}, {2, 1}, {1, 37}, {37, 1}, {2, 2}, {2, 3}, {3, 2}, {5, 5}, {7, 13}, {16, 16},
             {17, 31}, {64, 65}, {127, 3}, {3, 127}, {129, 130}, {45, 33}})
      v.push_back({x, y});
    for (auto [x, y, z] : std::vector<std::tuple<std::size_t, std::size_t, std::size_t>>{
             {1, 1, 1}, {2, 2, 2}, {3, 5, 7}, {1, 1, 9}, {9, 1, 1}, {1, 9, 1}, {5, 1, 7}, {2, 3, 1},
             {16, 16, 16}, {17, 9, 33}, {33, 32, 31}, {40, 3, 2}})
      v.push_back({x, y, z});
    return v;
  }();
  return s;
}

}  // namespace vlec::dwt_test
