// tests/test_roundtrip.cpp: whole streams through the public API. Every
// generator x element type x codec x chunk size round-trips exactly, and the
// bytes written do not depend on the thread count; then the edges: sizes from
// 0 to 10^7+3, all-equal data, incompressible data, the largest alphabet, the
// longest codes, the real Canterbury corpus, misaligned buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "test_util.hpp"
#include "vlec/vlec.hpp"

namespace vlec {
namespace {

std::vector<uint8_t> round_trip(const std::vector<uint8_t>& data, const CompressOptions& o) {
  const std::vector<uint8_t> stream = compress(data.data(), data.size(), o);
  EXPECT_LE(stream.size(), compress_bound(data.size(), o));
  DecompressOptions d;
  d.threads = o.threads;
  d.backend = Backend::cpu;
  return decompress(stream.data(), stream.size(), d);
}

struct MatrixCase {
  std::string generator;
  DType dtype;
};

class Matrix : public ::testing::TestWithParam<MatrixCase> {};

TEST_P(Matrix, EveryCodecChunkSizeAndThreadCount) {
  const MatrixCase& mc = GetParam();
  const uint64_t seed = test::base_seed() + std::hash<std::string>{}(mc.generator) % 1000;
  SCOPED_TRACE("generator " + mc.generator + " dtype " + std::string(to_string(mc.dtype)) + " seed " +
               std::to_string(seed));
  const std::vector<uint8_t> data = test::sample(mc.generator, 100003, mc.dtype, seed);
  std::vector<CodecChoice> codecs = {CodecChoice::automatic, CodecChoice::raw, CodecChoice::rle,
                                     CodecChoice::rle_huffman};
  if (mc.dtype != DType::u64) codecs.push_back(CodecChoice::huffman);
  for (CodecChoice codec : codecs) {
    for (uint32_t chunk : {128u, 16384u, 65536u}) {
      CompressOptions o;
      o.codec = codec;
      o.dtype = mc.dtype;
      o.chunk_elements = chunk;
      o.threads = 1;
      o.backend = Backend::cpu;
      const std::vector<uint8_t> one = compress(data.data(), data.size(), o);
      o.threads = 3;
      const std::vector<uint8_t> three = compress(data.data(), data.size(), o);
      ASSERT_EQ(one, three) << to_string(codec) << " chunk " << chunk << ": output depends on the thread count";
      const std::vector<uint8_t> back = decompress(three.data(), three.size(), {3, Backend::cpu});
      ASSERT_EQ(back, data) << to_string(codec) << " chunk " << chunk;
      EXPECT_LE(three.size(), compress_bound(data.size(), o));
    }
  }
}

std::vector<MatrixCase> matrix_cases() {
  std::vector<MatrixCase> cases;
  for (const char* g : {"skewed", "runs", "text", "volume", "uniform"})
    for (DType t : {DType::u8, DType::u16, DType::u32, DType::u64}) cases.push_back({g, t});
  for (const char* g : {"quant1024", "quant65536"})
    for (DType t : {DType::u16, DType::u32, DType::u64}) cases.push_back({g, t});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Generators, Matrix, ::testing::ValuesIn(matrix_cases()),
                         [](const ::testing::TestParamInfo<MatrixCase>& i) {
                           return i.param.generator + "_" + std::string(to_string(i.param.dtype));
                         });

TEST(RoundTrip, EdgeSizes) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{65535},
                        std::size_t{65537}, std::size_t{10000003}}) {
    for (auto [gen, t] : {std::pair{"skewed", DType::u8}, std::pair{"quant1024", DType::u16}}) {
      const uint64_t seed = test::base_seed() + n;
      SCOPED_TRACE(std::string(gen) + " n " + std::to_string(n) + " seed " + std::to_string(seed));
      const std::vector<uint8_t> data = test::sample(gen, n, t, seed);
      for (CodecChoice c : {CodecChoice::automatic, CodecChoice::huffman, CodecChoice::rle_huffman}) {
        CompressOptions o;
        o.codec = c;
        o.dtype = t;
        ASSERT_EQ(round_trip(data, o), data) << to_string(c);
      }
    }
  }
}

// Huffman chunks wait in arenas lent by a process-wide pool (cpu/chunk_arena.hpp):
// calls from several host threads at once, each on several threads, between
// them a call refused for a value past the alphabet, still write the bytes
// of a one-thread call.
TEST(RoundTrip, ConcurrentCallsShareTheArenaPool) {
  const uint64_t seed = test::base_seed() + 43;
  std::printf("RoundTrip.ConcurrentCallsShareTheArenaPool seed %llu\n", static_cast<unsigned long long>(seed));
  struct Case {
    const char* name;
    DType t;
  };
  const Case cases[] = {{"skewed", DType::u8}, {"quant1024", DType::u16}, {"quant65536", DType::u16}};
  std::vector<std::vector<uint8_t>> data, want;
  for (const Case& c : cases) {
    data.push_back(test::sample(c.name, 700001, c.t, seed));
    CompressOptions o;
    o.codec = CodecChoice::huffman;
    o.dtype = c.t;
    o.chunk_elements = 16384;
    o.threads = 1;
    o.backend = Backend::cpu;
    want.push_back(compress(data.back().data(), data.back().size(), o));
  }
  std::vector<std::thread> callers;
  std::vector<int> same(4, 0);
  for (unsigned k = 0; k < 4; ++k)
    callers.emplace_back([&, k] {
      for (int r = 0; r < 6; ++r) {
        const std::size_t i = (k + r) % 3;
        CompressOptions o;
        o.codec = CodecChoice::huffman;
        o.dtype = cases[i].t;
        o.chunk_elements = 16384;
        o.threads = 1 + (k + r) % 3;
        o.backend = Backend::cpu;
        same[k] += compress(data[i].data(), data[i].size(), o) == want[i];
        if (r == 3) {  // a u32 value past the alphabet, in the middle of the input
          std::vector<uint32_t> bad(200000, 7);
          bad[123456] = 70000;
          o.dtype = DType::u32;
          try {
            compress(bad.data(), 4 * bad.size(), o);
          } catch (const Error& e) {
            same[k] += e.code() == ErrorCode::value_out_of_alphabet;
          }
        }
      }
    });
  for (std::thread& t : callers) t.join();
  for (unsigned k = 0; k < 4; ++k) EXPECT_EQ(same[k], 7) << "caller " << k;
}

TEST(RoundTrip, EveryElementEqual) {
  for (DType t : {DType::u8, DType::u16, DType::u32, DType::u64}) {
    std::vector<uint8_t> data(300001 * dtype_bytes(t));
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(0x5A + i % dtype_bytes(t));
    for (CodecChoice c : {CodecChoice::automatic, CodecChoice::raw, CodecChoice::huffman, CodecChoice::rle,
                          CodecChoice::rle_huffman}) {
      if (c == CodecChoice::huffman && t == DType::u64) continue;
      if (c == CodecChoice::huffman && t == DType::u32) continue;  // 0x5D5C5B5A is outside the alphabet
      CompressOptions o;
      o.codec = c;
      o.dtype = t;
      const std::vector<uint8_t> stream = compress(data.data(), data.size(), o);
      ASSERT_EQ(decompress(stream.data(), stream.size()), data) << to_string(t) << " " << to_string(c);
      if (c == CodecChoice::rle || c == CodecChoice::rle_huffman || c == CodecChoice::automatic)
        EXPECT_LT(stream.size(), data.size() / 100) << to_string(c);
    }
  }
}

TEST(RoundTrip, IncompressibleDataIsStoredRaw) {
  const std::vector<uint8_t> data = test::sample("uniform", 1 << 20, DType::u8, test::base_seed());
  for (CodecChoice c : {CodecChoice::automatic, CodecChoice::huffman, CodecChoice::rle, CodecChoice::rle_huffman}) {
    CompressOptions o;
    o.codec = c;
    const std::vector<uint8_t> stream = compress(data.data(), data.size(), o);
    EXPECT_LE(stream.size(), compress_bound(data.size(), o));
    EXPECT_LE(stream.size(), data.size() + 64 + 16 * (data.size() / 65536) + 16) << to_string(c);
    const StreamInfo info = inspect(stream.data(), stream.size());
    ASSERT_EQ(info.frames.size(), 1u);
    EXPECT_EQ(info.frames[0].raw_chunks, info.frames[0].chunks) << to_string(c);
    EXPECT_EQ(decompress(stream.data(), stream.size()), data);
  }
}

TEST(RoundTrip, LargestAlphabetAndLongestCodes) {
  std::mt19937_64 rng(test::base_seed() + 7);
  SCOPED_TRACE("seed " + std::to_string(test::base_seed() + 7));
  // Every one of the 65,536 u16 values, half of the data on one value.
  std::vector<uint16_t> v;
  for (uint32_t s = 0; s < 65536; ++s) v.push_back(static_cast<uint16_t>(s));
  v.insert(v.end(), 65536 + 1000, 12345);
  std::shuffle(v.begin(), v.end(), rng);
  // Fibonacci counts over 30 u32 symbols: the deepest possible codes.
  std::vector<uint32_t> f;
  uint64_t a = 1, b = 1;
  for (uint32_t s = 0; s < 30; ++s, b = a + b, a = b - a)
    for (uint64_t k = 0; k < a; ++k) f.push_back(s * 2000);
  std::shuffle(f.begin(), f.end(), rng);
  const std::vector<uint8_t> v8(reinterpret_cast<uint8_t*>(v.data()), reinterpret_cast<uint8_t*>(v.data() + v.size()));
  const std::vector<uint8_t> f8(reinterpret_cast<uint8_t*>(f.data()), reinterpret_cast<uint8_t*>(f.data() + f.size()));
  CompressOptions o;
  o.codec = CodecChoice::huffman;
  o.dtype = DType::u16;
  std::vector<uint8_t> s = compress(v8.data(), v8.size(), o);
  EXPECT_EQ(inspect(s.data(), s.size()).frames[0].alphabet_size, 65536u);
  EXPECT_EQ(decompress(s.data(), s.size()), v8);
  o.dtype = DType::u32;
  o.max_code_length = 24;  // the format's longest codes
  s = compress(f8.data(), f8.size(), o);
  EXPECT_EQ(inspect(s.data(), s.size()).frames[0].max_code_length, 24u);
  EXPECT_EQ(decompress(s.data(), s.size()), f8);
  o.max_code_length = 12;  // a caller's limit below the data's depth
  s = compress(f8.data(), f8.size(), o);
  EXPECT_EQ(inspect(s.data(), s.size()).frames[0].max_code_length, 12u);
  EXPECT_EQ(decompress(s.data(), s.size()), f8);
}

TEST(RoundTrip, CanterburyCorpus) {
  const std::filesystem::path dir = std::filesystem::path(VLEC_SHARED_DATA_DIR) / "canterbury";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no corpus at " << dir;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), {});
    for (CodecChoice c : {CodecChoice::automatic, CodecChoice::huffman, CodecChoice::rle_huffman}) {
      CompressOptions o;
      o.codec = c;
      ASSERT_EQ(round_trip(data, o), data) << entry.path() << " " << to_string(c);
    }
    ++files;
  }
  EXPECT_EQ(files, 11);
}

TEST(RoundTrip, MisalignedBuffersAndConcatenatedFrames) {
  const std::vector<uint8_t> data = test::sample("quant1024", 50001, DType::u16, test::base_seed() + 8);
  std::vector<uint8_t> shifted(data.size() + 1);
  std::copy(data.begin(), data.end(), shifted.begin() + 1);
  CompressOptions o;
  o.dtype = DType::u16;
  o.codec = CodecChoice::huffman;
  const std::vector<uint8_t> s1 = compress(shifted.data() + 1, data.size(), o);
  o.codec = CodecChoice::rle;
  const std::vector<uint8_t> s2 = compress(data.data(), data.size(), o);
  std::vector<uint8_t> both = s1;
  both.insert(both.end(), s2.begin(), s2.end());
  EXPECT_EQ(inspect(both.data(), both.size()).frames.size(), 2u);
  std::vector<uint8_t> out(2 * data.size() + 1);
  ASSERT_EQ(decompress(both.data(), both.size(), out.data() + 1, 2 * data.size()), 2 * data.size());
  EXPECT_TRUE(std::equal(data.begin(), data.end(), out.begin() + 1));
  EXPECT_TRUE(std::equal(data.begin(), data.end(), out.begin() + 1 + data.size()));
  // An output buffer one byte short is refused.
  EXPECT_THROW(decompress(both.data(), both.size(), out.data(), 2 * data.size() - 1), Error);
}

TEST(RoundTrip, BadOptionsAreRefused) {
  const std::vector<uint8_t> data(1001, 7);
  CompressOptions o;
  o.dtype = DType::u16;
  EXPECT_THROW(compress(data.data(), data.size(), o), Error);  // odd size for u16
  o.dtype = DType::u8;
  o.chunk_elements = 1000;
  EXPECT_THROW(compress(data.data(), data.size(), o), Error);  // not a multiple of 128
  o.chunk_elements = 0;
  o.dtype = DType::u64;
  o.codec = CodecChoice::huffman;
  std::vector<uint8_t> d64(800, 1);
  EXPECT_THROW(compress(d64.data(), d64.size(), o), Error);
  o.dtype = DType::u8;
  o.max_code_length = 25;
  EXPECT_THROW(compress(data.data(), data.size(), o), Error);
}

}  // namespace
}  // namespace vlec

namespace vlec {
namespace {

// Offsets beyond 4 GiB: a 4.5 GB input, so that output offsets, element
// indices and (for the raw frame) payload offsets all pass 2^32. Skipped under
// the sanitizers, whose memory and time overheads make it impractical there.
TEST(RoundTrip, OffsetsBeyond4GiB) {
#ifdef VLEC_SANITIZE_BUILD
  GTEST_SKIP() << "needs ~14 GB of memory; run in the plain build";
#endif
  const std::size_t bytes = (std::size_t{9} << 29) + 123;  // 4.5 GiB + 123 bytes
  std::vector<uint8_t> data = test::sample("skewed", 1 << 24, DType::u8, test::base_seed() + 11);
  data.resize(bytes);
  for (std::size_t i = std::size_t{1} << 24; i < bytes; ++i) data[i] = data[i % ((std::size_t{1} << 24) - 7)];
  data[(std::size_t{1} << 32) + 5] = 200;  // a rare symbol just past 4 GiB
  for (CodecChoice c : {CodecChoice::huffman, CodecChoice::raw}) {
    CompressOptions o;
    o.codec = c;
    std::vector<uint8_t> s = compress(data.data(), data.size(), o);
    if (c == CodecChoice::raw) {
      EXPECT_GT(s.size(), std::size_t{1} << 32);
    }
    {
      std::vector<uint8_t> back = decompress(s.data(), s.size());
      ASSERT_EQ(back.size(), data.size());
      EXPECT_TRUE(back == data) << to_string(c);
    }
    // A flipped bit beyond 4 GiB of stream or of output is still caught.
    s[s.size() - 1000] ^= 0x10;
    EXPECT_THROW(decompress(s.data(), s.size()), Error) << to_string(c);
  }
}

}  // namespace
}  // namespace vlec
