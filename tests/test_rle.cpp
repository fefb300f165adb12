// tests/test_rle.cpp: the run-length layer alone: runs split at 65,536 and at
// the end of the data, every width, and lengths that do not add up rejected.
#include <gtest/gtest.h>

#include <random>

#include "rle/rle.hpp"
#include "test_util.hpp"
#include "vlec/error.hpp"

namespace vlec::rle {
namespace {

TEST(Rle, SplitsLongRunsAndRoundTrips) {
  std::vector<uint16_t> v(200000, 9);
  v[0] = 1;
  v[199999] = 2;
  EXPECT_EQ(count_runs(v.data(), v.size(), 2), 1u + 4u + 1u);  // 199,998 nines = 3 x 65,536 + 3,390
  std::vector<uint8_t> values(6 * 2);
  std::vector<uint16_t> lengths(6);
  ASSERT_EQ(encode_runs(v.data(), v.size(), 2, values.data(), lengths.data()), 6u);
  EXPECT_EQ(lengths[1], 65535);
  EXPECT_EQ(lengths[4], 199998 - 3 * 65536 - 1);
  std::vector<uint16_t> back(v.size());
  decode_runs(values.data(), reinterpret_cast<const uint8_t*>(lengths.data()), 6, 2, v.size(), back.data());
  EXPECT_EQ(back, v);
}

TEST(Rle, EveryWidth) {
  std::mt19937_64 rng(test::base_seed() + 20);
  SCOPED_TRACE("seed " + std::to_string(test::base_seed() + 20));
  for (unsigned w : {1u, 2u, 4u, 8u}) {
    std::vector<uint8_t> data;
    while (data.size() < 50000 * w) {
      const uint64_t value = rng() % 4 ? rng() % 3 : rng();
      for (uint64_t k = 0, len = 1 + rng() % 20; k < len; ++k)
        for (unsigned b = 0; b < w; ++b) data.push_back(static_cast<uint8_t>(value >> (8 * b)));
    }
    data.resize(50000 * w);
    const std::size_t runs = count_runs(data.data(), 50000, w);
    std::vector<uint8_t> values(runs * w);
    std::vector<uint16_t> lengths(runs);
    ASSERT_EQ(encode_runs(data.data(), 50000, w, values.data(), lengths.data()), runs);
    std::vector<uint8_t> back(data.size());
    decode_runs(values.data(), reinterpret_cast<const uint8_t*>(lengths.data()), runs, w, 50000, back.data());
    EXPECT_EQ(back, data) << "width " << w;
    // Lengths one short or one long of the chunk are rejected.
    lengths[runs / 2] += 1;
    EXPECT_THROW(decode_runs(values.data(), reinterpret_cast<const uint8_t*>(lengths.data()), runs, w, 50000, back.data()),
                 Error);
    lengths[runs / 2] -= 2;
    EXPECT_THROW(decode_runs(values.data(), reinterpret_cast<const uint8_t*>(lengths.data()), runs, w, 50000, back.data()),
                 Error);
  }
}

TEST(Rle, EmptyAndSingle) {
  EXPECT_EQ(count_runs(nullptr, 0, 4), 0u);
  const uint32_t one = 0xDEADBEEF;
  EXPECT_EQ(count_runs(&one, 1, 4), 1u);
  EXPECT_EQ(payload_bytes(3, 1), 4u + 6u);  // 3 value bytes padded to 4, then 3 lengths
}

}  // namespace
}  // namespace vlec::rle
