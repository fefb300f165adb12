// tests/test_xxh3.cpp: vlec's own XXH3-64 (common/xxh3.hpp, shared with the
// GPU kernels) against the xxHash library, for every length up to 4 KiB and a
// few large ones, on random bytes, and the block-sum decomposition the GPU
// decoder relies on.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/checksum.hpp"
#include "common/xxh3.hpp"
#include "test_util.hpp"

namespace vlec {
namespace {

TEST(Xxh3, MatchesTheLibraryAtEveryLength) {
  std::mt19937_64 rng(test::base_seed() + 30);
  SCOPED_TRACE("seed " + std::to_string(test::base_seed() + 30));
  std::vector<uint8_t> data(300000);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (std::size_t len = 0; len <= 4096; ++len)
    ASSERT_EQ(xxh3::hash64(data.data() + len % 7, len), checksum64(data.data() + len % 7, len)) << "length " << len;
  for (std::size_t len : {65536, 65537, 131072 + 333, 299990})
    ASSERT_EQ(xxh3::hash64(data.data(), len), checksum64(data.data(), len)) << "length " << len;
}

// Within a block the accumulators are sums, so adding each word's
// contributions in any order, then scrambling, gives the same hash.
TEST(Xxh3, BlockContributionsCommute) {
  std::mt19937_64 rng(test::base_seed() + 31);
  std::vector<uint8_t> data(5000);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  uint64_t acc[8];
  xxh3::init_acc(acc);
  const uint64_t len = data.size(), blocks = (len - 1) / xxh3::kBlock;
  for (uint64_t b = 0; b < blocks; ++b) {
    uint64_t sum[8] = {};
    for (int w = 127; w >= 0; --w) {  // the block's 128 words, backwards
      const unsigned s = w / 8, i = w % 8;
      const uint64_t v = xxh3::read64(data.data() + b * xxh3::kBlock + 8 * w);
      sum[i ^ 1] += v;
      sum[i] += xxh3::keyed_product(v, 8 * s + 8 * i);
    }
    for (unsigned i = 0; i < 8; ++i) acc[i] = xxh3::scramble(acc[i] + sum[i], i);
  }
  EXPECT_EQ(xxh3::finish_long(acc, data.data(), len), checksum64(data.data(), len));
}

}  // namespace
}  // namespace vlec
