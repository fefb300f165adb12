// tests/test_samples_checksum.cpp: the samples checksum of wavelet frames
// (src/wavelet/samples_checksum.hpp, docs/FORMAT.md §10.2 flag bit 2): the
// segmented definition against its spelled-out form at segment edges, thread
// and byte-swap invariance, and whole frames with flag bit 2 set (what vlec
// writes) and clear (the first 1.1 definition), both decoding, and a damaged
// checksum or flag rejected in both.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "format/frame.hpp"
#include "test_util.hpp"
#include "wavelet_test_util.hpp"
#include "vlec/vlec.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet/frame_format.hpp"
#include "wavelet/samples_checksum.hpp"

namespace vlec {
namespace {

using Bytes = std::vector<uint8_t>;

using test::seed_for;

// The definition, spelled out: XXH3-64 of the u64 LE hashes of 65,536-byte
// segments.
uint64_t reference(const Bytes& b) {
  Bytes hashes;
  std::size_t at = 0;
  do {
    const std::size_t len = std::min<std::size_t>(65536, b.size() - at);
    const uint64_t h = checksum64(b.data() + at, len);
    for (int i = 0; i < 8; ++i) hashes.push_back(static_cast<uint8_t>(h >> (8 * i)));
    at += len;
  } while (at < b.size());
  return checksum64(hashes.data(), hashes.size());
}

TEST(SamplesChecksum, SegmentsAtTheirEdges) {
  std::mt19937_64 rng(seed_for(1));
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{65534}, std::size_t{65536},
                        std::size_t{65538}, std::size_t{3 * 65536 + 6}, std::size_t{1000000}}) {
    Bytes b(n);
    for (auto& v : b) v = static_cast<uint8_t>(rng() % 7 + 100);  // sample-like: few values
    Bytes swapped = b;
    for (std::size_t i = 0; i + 1 < n; i += 2) std::swap(swapped[i], swapped[i + 1]);
    const uint64_t want = reference(b);
    EXPECT_EQ(wavelet::checksum_segments(n), std::max<std::size_t>(1, (n + 65535) / 65536));
    for (unsigned threads : {1u, 2u, 5u}) {
      EXPECT_EQ(wavelet::segmented_checksum(b.data(), n, false, threads), want) << n << " " << threads;
      EXPECT_EQ(wavelet::segmented_checksum(swapped.data(), n, true, threads), want) << n << " " << threads;
    }
    EXPECT_EQ(wavelet::whole_checksum(b.data(), n, false), checksum64(b.data(), n));
    EXPECT_EQ(wavelet::whole_checksum(swapped.data(), n, true), checksum64(b.data(), n));
    if (n > 65536) EXPECT_NE(want, checksum64(b.data(), n));
  }
}

using test::with_header;

TEST(SamplesChecksum, BothDefinitionsDecodeAndDamageIsRejected) {
  std::mt19937_64 rng(seed_for(2));
  // u16 RGB written big-endian (the swap path), 6 segments; and u8 gray.
  struct Case { WaveletImage im; bool big_endian; };
  const Case cases[] = {{{300, 200, 1, 3, DType::u16}, true}, {{257, 311, 1, 1, DType::u8}, false}};
  for (const Case& c : cases) {
    const std::size_t n = c.im.width * c.im.height * c.im.planes;
    Bytes data(n * dtype_bytes(c.im.dtype));
    for (std::size_t i = 0; i < n; ++i) {  // a gradient with noise, as in an image
      const uint32_t v = static_cast<uint32_t>((i % c.im.width) * 3 + (i / c.im.width) / 2 + rng() % 9);
      if (c.im.dtype == DType::u8) data[i] = static_cast<uint8_t>(v);
      else store_le16(&data[2 * i], static_cast<uint16_t>(v * 37));
    }
    WaveletOptions o;
    o.big_endian_output = c.big_endian;
    const Bytes s = wavelet_compress(data.data(), c.im, o);
    const Bytes out = decompress(s.data(), s.size());
    Bytes expect = data;
    if (c.big_endian)
      for (std::size_t i = 0; i + 1 < expect.size(); i += 2) std::swap(expect[i], expect[i + 1]);
    ASSERT_EQ(out, expect);
    const uint8_t flags = s[48 + 26];
    ASSERT_TRUE(flags & wavelet::kFlagSegmentedChecksum);  // writers always set bit 2
    EXPECT_EQ(load_le64(&s[48 + 40]), reference(expect));

    // Bit 2 clear: the whole-input XXH3-64.
    const uint8_t old_flags = flags & ~wavelet::kFlagSegmentedChecksum;
    const Bytes old = with_header(s, old_flags, checksum64(expect.data(), expect.size()));
    EXPECT_EQ(decompress(old.data(), old.size()), expect);
    // Damaged checksums, and each checksum under the other definition.
    for (const Bytes& bad : {with_header(s, flags, reference(expect) ^ 1),
                             with_header(s, old_flags, checksum64(expect.data(), expect.size()) ^ (1ull << 63)),
                             with_header(s, old_flags, reference(expect)),
                             with_header(s, flags, checksum64(expect.data(), expect.size()))}) {
      try {
        decompress(bad.data(), bad.size());
        ADD_FAILURE() << "damaged samples checksum accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::checksum_mismatch) << e.what();
      }
    }
    // An unknown flag bit stays corrupt.
    const Bytes unknown = with_header(s, flags | 8, reference(expect));
    EXPECT_THROW(decompress(unknown.data(), unknown.size()), Error);
  }
}

}  // namespace
}  // namespace vlec
