// tests/test_shift_rule.cpp: the wavelet writer's integer size estimate and
// shift rule (src/wavelet/shift_rule.hpp), which the CPU and GPU encoders
// must evaluate identically: log2_fx against long double, the codebook size
// against the real serialization, the code size against real Huffman codes,
// the partition invariance a parallel reduction relies on, the stop and tie
// rule, and the CPU's in-place merge against the header's reference.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "huffman/codebook.hpp"
#include "vlec/vlec.hpp"
#include "test_util.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/shift_rule.hpp"

namespace vlec {

#ifdef VLEC_WITH_CUDA
namespace test {
std::vector<uint64_t> shift_rule_on_device(const std::vector<uint32_t>& hist, uint64_t n, uint32_t top,
                                           unsigned search);  // tests/shift_rule_device.cu
}
#endif

namespace {

namespace sr = wavelet::shift_rule;

using test::seed_for;

// Zigzag values of Laplacian-like coefficients of scale `scale` (like a
// wavelet subband), n of them.
std::vector<uint32_t> laplacian_values(std::size_t n, double scale, std::mt19937_64& rng) {
  std::exponential_distribution<double> mag(1.0 / scale);
  std::bernoulli_distribution sign(0.5);
  std::vector<uint32_t> z(n);
  for (auto& v : z) {
    const double m = std::min(mag(rng), 1.0e9);
    const int32_t c = static_cast<int32_t>(std::llround(sign(rng) ? m : -m));
    v = wavelet::zigzag(c);
  }
  return z;
}

TEST(ShiftRule, Log2FixedPointIsCloseBelowTheTrueValue) {
  for (unsigned e = 0; e < 64; ++e) EXPECT_EQ(sr::log2_fx(uint64_t{1} << e), e << sr::kFracBits) << e;
  std::mt19937_64 rng(seed_for(1));
  uint32_t prev = 0;
  for (uint64_t x = 1; x < 200000; ++x) {  // every small count: monotone, within 4 units below
    const uint32_t v = sr::log2_fx(x);
    const long double exact = std::log2(static_cast<long double>(x)) * 65536.0L;
    EXPECT_LE(v, exact + 1e-9L) << x;
    EXPECT_GE(static_cast<long double>(v), std::floor(exact) - 4) << x;
    EXPECT_GE(v, prev) << x;
    prev = v;
  }
  for (int i = 0; i < 200000; ++i) {
    const uint64_t x = rng() >> (rng() % 64);
    if (x == 0) continue;
    const long double exact = std::log2(static_cast<long double>(x)) * 65536.0L;
    const uint32_t v = sr::log2_fx(x);
    EXPECT_LE(v, exact + 1e-6L) << x;
    EXPECT_GE(static_cast<long double>(v), std::floor(exact) - 4) << x;
  }
  EXPECT_EQ(sr::log2_fx(UINT64_MAX) >> sr::kFracBits, 63u);
}

TEST(ShiftRule, SmallestAndLastShift) {
  EXPECT_EQ(sr::smallest_shift(0), 0u);
  EXPECT_EQ(sr::smallest_shift(65535), 0u);
  EXPECT_EQ(sr::smallest_shift(65536), 1u);
  EXPECT_EQ(sr::smallest_shift(UINT32_MAX), 16u);
  EXPECT_EQ(sr::last_shift(0, 0, 8), 0u);        // every value already symbol 0
  EXPECT_EQ(sr::last_shift(1, 0, 8), 1u);        // k = 1 maps all to 0: the last tried
  EXPECT_EQ(sr::last_shift(1000, 0, 8), 8u);
  EXPECT_EQ(sr::last_shift(1000, 0, 0), 0u);
  EXPECT_EQ(sr::last_shift(UINT32_MAX, 16, 8), 24u);  // capped at kMaxShift
}

TEST(ShiftRule, CodebookBytesMatchTheSerialization) {
  std::mt19937_64 rng(seed_for(2));
  unsigned exact = 0, cases = 0;
  for (double scale : {0.3, 1.0, 4.0, 30.0, 300.0, 3000.0}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{17}, std::size_t{5000}, std::size_t{300000}}) {
      const std::vector<uint32_t> z = laplacian_values(n, scale, rng);
      uint32_t top = 0;
      for (uint32_t v : z) top = std::max(top, v);
      const unsigned k0 = sr::smallest_shift(top);
      huffman::Histogram h((top >> k0) + 1, 0);
      for (uint32_t v : z) ++h[v >> k0];
      const huffman::Codebook book = huffman::build_codebook(h);
      const uint64_t real = huffman::serialize_codebook(book).size();
      const sr::Summary s = sr::summarize([&](uint32_t b) { return h[b]; }, 0, static_cast<uint32_t>(h.size()), n);
      const uint64_t est = sr::codebook_bytes(s);
      ++cases;
      // The estimate differs from the real size only in the width of the
      // length fields (4 or 5 bits), which it guesses from the symbol count.
      if ((book.max_length <= 15) == (s.symbols <= sr::kNarrowLengthSymbols)) {
        EXPECT_EQ(est, real) << "scale " << scale << " n " << n;
        ++exact;
      } else {
        EXPECT_NEAR(static_cast<double>(est), static_cast<double>(real), 0.25 * real + 4);
      }
      // And the code bits: close to the real Huffman code. Above it only
      // where one symbol dominates (the 1-bit floor counts it, not what the
      // other symbols gain from it: 13 % at scale 0.3, where 0 has p = 0.8); below it by
      // Huffman's excess over the entropy (a few percent).
      uint64_t huff = 0;
      for (std::size_t b = 0; b < h.size(); ++b) huff += h[b] * book.lengths[b];
      const uint64_t code_est = sr::estimated_bits(s, 0) - 8 * est;
      EXPECT_LE(code_est, huff + huff * 20 / 100 + 64) << "scale " << scale << " n " << n;
      EXPECT_GE(code_est + code_est / 20 + 64, huff) << "scale " << scale << " n " << n;
    }
  }
  EXPECT_GT(exact, cases / 2);
}

TEST(ShiftRule, SummariesOfBinRangesMergeToTheWhole) {
  std::mt19937_64 rng(seed_for(3));
  const std::vector<uint32_t> z = laplacian_values(100000, 200.0, rng);
  uint32_t top = 0;
  for (uint32_t v : z) top = std::max(top, v);
  std::vector<uint32_t> h(top + 1, 0);
  for (uint32_t v : z) ++h[v];
  const auto bin = [&](uint32_t b) { return uint64_t{h[b]}; };
  const uint32_t bins = static_cast<uint32_t>(h.size());
  const sr::Summary whole = sr::summarize(bin, 0, bins, z.size());
  // Ranges of 16-multiples, merged in reverse order.
  sr::Summary parts;
  for (uint32_t first = (bins - 1) / 48 * 48;; first -= 48) {
    parts = sr::merge(parts, sr::summarize(bin, first, std::min(bins, first + 48), z.size()));
    if (first == 0) break;
  }
  EXPECT_EQ(parts.n, whole.n);
  EXPECT_EQ(parts.n, z.size());
  EXPECT_EQ(parts.cost_fx, whole.cost_fx);
  EXPECT_EQ(parts.symbols, whole.symbols);
  EXPECT_EQ(parts.groups, whole.groups);
  EXPECT_EQ(parts.alphabet, whole.alphabet);
  EXPECT_EQ(whole.alphabet, top + 1);
}

TEST(ShiftRule, PickShiftStopsAtTheSecondWorseAndTiesToTheSmaller) {
  uint64_t best = 0;
  {
    const uint64_t e[] = {100, 90, 95, 96, 10};  // stops after 95, 96: 10 is never seen
    EXPECT_EQ(sr::pick_shift(e, 5, 3, &best), 4u);
    EXPECT_EQ(best, 90u);
  }
  {
    const uint64_t e[] = {100, 100, 80, 100, 100, 70};
    EXPECT_EQ(sr::pick_shift(e, 6, 0, &best), 2u);  // the tie at 1 is one "worse"; 80 resets
    EXPECT_EQ(best, 80u);
  }
  {
    const uint64_t e[] = {50, 50, 50, 40};  // two ties in a row end the search
    EXPECT_EQ(sr::pick_shift(e, 4, 0, &best), 0u);
    EXPECT_EQ(best, 50u);
  }
  {
    const uint64_t e[] = {7};
    EXPECT_EQ(sr::pick_shift(e, 1, 5, &best), 5u);
    EXPECT_EQ(best, 7u);
  }
  EXPECT_TRUE(sr::split_pays(99, 2, 100));
  EXPECT_FALSE(sr::split_pays(100, 2, 100));
  EXPECT_FALSE(sr::split_pays(10, 1, 100));
}

TEST(ShiftRule, CpuShiftEqualsTheHeaderReference) {
  std::mt19937_64 rng(seed_for(4));
  unsigned shifted = 0;
  for (int round = 0; round < 60; ++round) {
    const double scale = std::pow(10.0, std::uniform_real_distribution<double>(-1, 6.5)(rng));
    std::vector<uint32_t> z = laplacian_values(std::size_t{1} + rng() % 70000, scale, rng);
    if (round == 0) z.assign(z.size(), 12345);    // all equal
    if (round == 1) z.assign(1, UINT32_MAX);      // one element, the largest value
    if (round == 2) z.assign(z.size(), 0);        // all zero
    const std::size_t n = z.size();
    uint32_t top = 0;
    for (uint32_t v : z) top = std::max(top, v);
    const unsigned k0 = sr::smallest_shift(top);
    std::vector<uint64_t> h((top >> k0) + 1, 0);
    for (uint32_t v : z) ++h[v >> k0];
    for (unsigned search : {0u, 1u, 8u}) {
      uint64_t ref_bits = 0, cpu_bits = 0, z_bits = 0;
      const unsigned ref = sr::choose_shift(h.data(), static_cast<uint32_t>(h.size()), n, top, search, &ref_bits);
      const unsigned cpu = wavelet::choose_shift(h, n, top, search, &cpu_bits);
      const unsigned from_z = wavelet::choose_shift(z.data(), n, search, &z_bits);
      ASSERT_EQ(cpu, ref) << "round " << round << " n " << n << " scale " << scale;
      ASSERT_EQ(cpu_bits, ref_bits);
      ASSERT_EQ(from_z, ref);
      ASSERT_EQ(z_bits, ref_bits);
      ASSERT_GE(ref, k0);
      ASSERT_LE(ref, std::min(k0 + search, sr::kMaxShift));
      shifted += ref > k0;
    }
    // A histogram with extra empty bins gives the same answer.
    std::vector<uint64_t> padded = h;
    padded.resize(h.size() + 37, 0);
    EXPECT_EQ(wavelet::choose_shift(padded, n, top, 8), wavelet::choose_shift(h, n, top, 8));
  }
  EXPECT_GT(shifted, 0u);  // the data reach shifts above k0
}

TEST(ShiftRule, NoisyLowBitsAreShiftedOut) {
  // 16-bit-like values whose low 6 bits are uniform noise: every shift up to
  // 6 codes them in the same Shannon bits, but the codebook over ~20,000
  // symbols halves with each one, so the rule shifts them out; small smooth
  // values stay unshifted.
  std::mt19937_64 rng(seed_for(5));
  std::vector<uint32_t> noisy = laplacian_values(200000, 50.0, rng);
  for (auto& v : noisy) v = (v << 6) | static_cast<uint32_t>(rng() & 63);
  EXPECT_GE(wavelet::choose_shift(noisy.data(), noisy.size()), 4u);
  const std::vector<uint32_t> smooth = laplacian_values(200000, 1.5, rng);
  EXPECT_EQ(wavelet::choose_shift(smooth.data(), smooth.size()), 0u);
}

TEST(ShiftRule, DeviceMatchesHost) {
#ifndef VLEC_WITH_CUDA
  GTEST_SKIP() << "no GPU: CUDA backend not built";
#else
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device";
  std::mt19937_64 rng(seed_for(6));
  for (int round = 0; round < 40; ++round) {
    const double scale = std::pow(10.0, std::uniform_real_distribution<double>(-1, 6.5)(rng));
    std::vector<uint32_t> z = laplacian_values(std::size_t{1} + rng() % 300000, scale, rng);
    if (round == 0) z.assign(z.size(), 7);
    if (round == 1) z.assign(1, UINT32_MAX);
    uint32_t top = 0;
    for (uint32_t v : z) top = std::max(top, v);
    const unsigned k0 = sr::smallest_shift(top);
    std::vector<uint32_t> h32((top >> k0) + 1, 0);
    std::vector<uint64_t> h64(h32.size(), 0);
    for (uint32_t v : z) ++h32[v >> k0], ++h64[v >> k0];
    const uint64_t n = z.size();
    const std::vector<uint64_t> dev = test::shift_rule_on_device(h32, n, top, sr::kDefaultSearch);
    uint64_t bits = 0;
    const unsigned k = wavelet::choose_shift(h64, n, top, sr::kDefaultSearch, &bits);
    const sr::Summary s =
        sr::summarize([&](uint32_t b) { return h64[b]; }, 0, static_cast<uint32_t>(h64.size()), n);
    EXPECT_EQ(dev[0], k) << "round " << round;
    EXPECT_EQ(dev[1], bits) << "round " << round;
    EXPECT_EQ(dev[2], s.cost_fx);
    EXPECT_EQ(dev[3], s.symbols);
    EXPECT_EQ(dev[4], s.groups);
    EXPECT_EQ(dev[5], s.alphabet);
    EXPECT_EQ(dev[6], n);
  }
#endif
}

}  // namespace
}  // namespace vlec
