// gen/sampling.hpp: the random sources of the generators (generators.cpp):
// xoshiro256** seeded through splitmix64 and the generator's name, the
// inverse-CDF sampler of discrete symbols, and two small helpers. Internal to
// the generators; kept apart so that generators.cpp holds the data shapes.
//
// Why it is built this way: reproducibility comes first (see generators.cpp):
// every draw is integer work or +, -, *, /, sqrt, exp, log, cos on doubles,
// so the bytes do not depend on the standard library's distributions. The
// discrete sampler resolves four symbols per 64-bit draw from a 65,536-entry
// table; only entries that straddle two symbols search the thresholds.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

// Fused multiply-adds would change low bits and so, rarely, a quantization code.
// GCC does not contract in ISO mode (-std=c++17); clang needs to be told.
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

namespace vlec::gen::sampling {

constexpr double kPi = 3.14159265358979323846;

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// FNV-1a: mixes the generator name into the seed so that different generators
// given the same seed do not share a random stream.
inline uint64_t hash_name(const std::string& name) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

// xoshiro256** (Blackman & Vigna): fast, 256-bit state, good statistics.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& word : s_) word = splitmix64(seed);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n) by multiply-shift; the bias, below n / 2^32, is negligible here.
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(((next() >> 32) * n) >> 32); }
  // Standard normal by Box-Muller; the second variate is dropped to keep no state.
  double gaussian() {
    const double u1 = static_cast<double>((next() >> 11) + 1) * 0x1.0p-53;  // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<uint64_t, 4> s_;
};

inline Rng make_rng(const std::string& name, uint64_t seed) {
  uint64_t mixed = seed ^ hash_name(name);
  return Rng(splitmix64(mixed));
}

// Samples symbols 0..K-1 with given weights by inverse CDF on a 32-bit uniform.
// The CDF is rounded once to integer thresholds, so sampling itself is exact
// integer work. The top 16 bits index a table that resolves the symbol
// directly unless a threshold falls inside that 2^16-wide slice; then 16 more
// random bits are drawn and the thresholds are searched.
class DiscreteSampler {
 public:
  explicit DiscreteSampler(const std::vector<double>& weights) : bound_(weights.size()) {
    if (weights.empty() || weights.size() >= kEscape) throw std::invalid_argument("DiscreteSampler: bad alphabet");
    double total = 0;
    for (double w : weights) total += w;
    double cumulative = 0;
    uint64_t previous = 0;
    for (size_t k = 0; k < weights.size(); ++k) {
      cumulative += weights[k] / total;
      const double scaled = std::min(cumulative, 1.0) * 0x1.0p32;
      bound_[k] = std::max(previous, static_cast<uint64_t>(scaled));
      previous = bound_[k];
    }
    bound_.back() = uint64_t{1} << 32;  // the last symbol takes the rounding remainder
    table_.resize(65536);
    size_t k = 0;
    for (uint64_t slice = 0; slice < 65536; ++slice) {
      const uint64_t lo = slice << 16, hi = lo + 0xFFFF;
      while (bound_[k] <= lo) ++k;
      table_[slice] = bound_[k] > hi ? static_cast<uint16_t>(k) : kEscape;
    }
  }
  // `top16` are 16 random bits; `rng` supplies 16 more only on an escape.
  uint32_t sample(uint32_t top16, Rng& rng) const {
    const uint16_t direct = table_[top16];
    if (direct != kEscape) return direct;
    const uint64_t u = (uint64_t{top16} << 16) | (rng.next() >> 48);
    return static_cast<uint32_t>(std::upper_bound(bound_.begin(), bound_.end(), u) - bound_.begin());
  }
  uint32_t sample(Rng& rng) const { return sample(static_cast<uint32_t>(rng.next() >> 48), rng); }
  // The table entry alone: the symbol, or 0xFFFF when `top16` needs more bits.
  uint32_t direct(uint32_t top16) const { return table_[top16]; }

 private:
  static constexpr uint16_t kEscape = 0xFFFF;
  std::vector<uint64_t> bound_;   // bound_[k] = 2^32 * P(X <= k), last = 2^32
  std::vector<uint16_t> table_;   // symbol for each top-16-bit slice, or kEscape
};

// Weights of P(k) = p (1-p)^k for k < count-1, with the tail mass on the last
// symbol: a geometric variable clamped to count-1.
inline std::vector<double> clamped_geometric(double p, size_t count) {
  std::vector<double> w(count);
  double tail = 1.0;  // (1-p)^k
  for (size_t k = 0; k + 1 < count; ++k) {
    w[k] = p * tail;
    tail *= 1.0 - p;
  }
  w[count - 1] = tail;
  return w;
}

// Largest n with n^3 <= v.
inline size_t integer_cbrt(size_t v) {
  size_t n = static_cast<size_t>(std::cbrt(static_cast<double>(v)));
  auto cube_fits = [v](size_t m) { return m == 0 || (m * m <= v / m && m * m * m <= v); };
  while (n > 0 && !cube_fits(n)) --n;
  while (cube_fits(n + 1)) ++n;
  return n;
}

}  // namespace vlec::gen::sampling
