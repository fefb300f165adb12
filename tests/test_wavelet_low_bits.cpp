// The quad low-bit placement of the GPU writer's symbols kernel
// (wavelet/low_bits_quad.hpp), on the host, against placing every bit one
// at a time: every shift k the format allows (1..24), every bit offset in
// the first word, quads cut short by the tile's end (zero values), values
// with bits above k set (they must not leak), and all-ones values.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "test_util.hpp"
#include "wavelet/low_bits_quad.hpp"

namespace vlec {
namespace {

// The quad's bits placed one at a time into five words (the fifth must stay 0).
void reference(const uint32_t (&z)[4], uint32_t k, uint32_t off, uint32_t (&out)[5]) {
  for (uint32_t& w : out) w = 0;
  for (uint32_t m = 0; m < 4; ++m)
    for (uint32_t i = 0; i < k; ++i)
      if ((z[m] >> i) & 1u) {
        const uint32_t bit = off + m * k + i;
        out[bit / 32] |= 1u << (bit % 32);
      }
}

void check(const uint32_t (&z)[4], uint32_t k, uint32_t off) {
  uint32_t want[5];
  reference(z, k, off, want);
  ASSERT_EQ(want[4], 0u) << "a quad of k = " << k << " at bit " << off << " reached a fifth word";
  const wavelet::QuadLowWords got = wavelet::quad_low_words(z, k, (1u << k) - 1, off);
  for (unsigned q = 0; q < 4; ++q)
    ASSERT_EQ(got.words[q], want[q]) << "word " << q << ", k = " << k << ", off = " << off << ", values " << z[0]
                                     << " " << z[1] << " " << z[2] << " " << z[3];
}

TEST(WaveletLowBits, QuadPlacementMatchesBitByBit) {
  const uint64_t seed = test::seed_for(91);
  std::mt19937_64 rng(seed);
  for (uint32_t k = 1; k <= 24; ++k) {
    for (uint32_t off = 0; off < 32; ++off) {
      const uint32_t ones[4] = {~0u, ~0u, ~0u, ~0u};
      check(ones, k, off);  // bits above k set in every value: masked off
      for (unsigned count = 1; count <= 4; ++count) {
        for (int trial = 0; trial < 20; ++trial) {
          uint32_t z[4] = {0, 0, 0, 0};
          // Zigzagged coefficients of up to 25 bits, the values past `count` 0.
          for (unsigned m = 0; m < count; ++m) z[m] = static_cast<uint32_t>(rng()) >> 7;
          check(z, k, off);
        }
      }
      const uint32_t last_only[4] = {0, 0, 0, (1u << k) - 1};  // the highest bit of the quad alone
      check(last_only, k, off);
    }
  }
}

}  // namespace
}  // namespace vlec
