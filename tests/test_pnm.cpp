// tests/test_pnm.cpp: the PGM/PPM reader of the wavelet codec (wavelet/pnm.hpp):
// header forms the Netpbm definition allows (comments, any whitespace, maxval
// 1..65535), headers it forbids, sizes that do not match, and the byte-exact
// restore of a file through a wavelet frame.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vlec/vlec.hpp"
#include "wavelet/pnm.hpp"

namespace vlec {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes file(const std::string& header, std::size_t raster_bytes, uint8_t seed = 7) {
  Bytes b(header.begin(), header.end());
  for (std::size_t i = 0; i < raster_bytes; ++i) b.push_back(static_cast<uint8_t>(seed + i * 37 + (i >> 5)));
  return b;
}

TEST(Pnm, HeaderForms) {
  struct Case { std::string header; std::size_t w, h; unsigned planes; DType t; };
  const std::vector<Case> cases = {
      {"P5\n3 2\n255\n", 3, 2, 1, DType::u8},
      {"P6 3 2 255 ", 3, 2, 3, DType::u8},
      {"P5\n# a comment\n3 2\n# another\n65535\n", 3, 2, 1, DType::u16},
      {"P6#c\n3#c\n2\t\r\n256\r", 3, 2, 3, DType::u16},
      {"P5\n1 1\n1\n", 1, 1, 1, DType::u8},
      {"P5\n 7\n\n 1 \n 4095\n", 7, 1, 1, DType::u16},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    const std::size_t raster = c.w * c.h * c.planes * dtype_bytes(c.t);
    const Bytes f = file(c.header, raster);
    ASSERT_TRUE(pnm::looks_like_pnm(f.data(), f.size()));
    const pnm::Parsed p = pnm::parse(f.data(), f.size());
    EXPECT_EQ(p.image.width, c.w);
    EXPECT_EQ(p.image.height, c.h);
    EXPECT_EQ(p.image.planes, c.planes);
    EXPECT_EQ(p.image.dtype, c.t);
    EXPECT_EQ(p.header_bytes, c.header.size());
    // Through a wavelet frame and back: the identical file.
    WaveletOptions o;
    pnm::set_container(f.data(), p, o);
    const Bytes samples = pnm::host_samples(f.data(), p);
    const Bytes stream = wavelet_compress(samples.data(), p.image, o);
    EXPECT_EQ(decompress(stream.data(), stream.size()), f);
  }
}

TEST(Pnm, SixteenBitSamplesAreBigEndian) {
  const Bytes f = file("P5 2 1 65535\n", 4);
  const pnm::Parsed p = pnm::parse(f.data(), f.size());
  const Bytes s = pnm::host_samples(f.data(), p);
  ASSERT_EQ(s.size(), 4u);
  const std::size_t h = p.header_bytes;
  EXPECT_EQ(s[0], f[h + 1]);
  EXPECT_EQ(s[1], f[h + 0]);
  EXPECT_EQ(s[2], f[h + 3]);
  EXPECT_EQ(s[3], f[h + 2]);
}

TEST(Pnm, BadHeadersAreRejected) {
  const std::vector<std::pair<std::string, std::size_t>> bad = {
      {"P3\n3 2\n255\n", 6},         // ASCII PPM
      {"P7\n3 2\n255\n", 6},         // PAM
      {"P5\n3\n", 6},                // no height
      {"P5\n3 2\n", 6},              // no maxval
      {"P5\n3 2 255", 0},            // no whitespace after maxval
      {"P5\n0 2\n255\n", 0},         // empty
      {"P5\n3 0\n255\n", 0},
      {"P5\n3 2\n0\n", 6},           // maxval 0
      {"P5\n3 2\n65536\n", 12},      // maxval too large
      {"P5\n3 2\n-1\n", 6},
      {"P5\n3x2\n255\n", 6},
      {"P53 2 255\n", 6},            // no whitespace after the magic
      {"P5\n99999999999999 2\n255\n", 6},
      {"P5\n3 2\n255\n", 5},         // truncated
      {"P5\n3 2\n255\n", 7},         // trailing byte
      {"P5\n3 2\n255\n", 12},        // two images
      {"P5\n3 2\n65535\n", 6},       // 16-bit raster too short
  };
  for (const auto& [header, raster] : bad) {
    SCOPED_TRACE(header + " + " + std::to_string(raster) + " bytes");
    const Bytes f = file(header, raster);
    EXPECT_THROW(pnm::parse(f.data(), f.size()), Error);
  }
  EXPECT_FALSE(pnm::looks_like_pnm(nullptr, 0));
  const Bytes tiny = {'P', '5'};
  EXPECT_FALSE(pnm::looks_like_pnm(tiny.data(), tiny.size()));
  EXPECT_THROW(pnm::parse(tiny.data(), tiny.size()), Error);
}

}  // namespace
}  // namespace vlec
