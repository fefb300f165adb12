// tests/test_gpu.cpp: the CUDA backend against the CPU backend. Every test
// skips where no GPU is present. Streams written by the CPU backend are
// decoded on the GPU and must give back exactly the input; corrupted and
// truncated streams must make the GPU decoder report an error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "test_util.hpp"
#include "vlec/vlec.hpp"

namespace vlec {
namespace {

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

const DecompressOptions kGpu{0, Backend::cuda};
const DecompressOptions kCpu{0, Backend::cpu};

TEST(Gpu, DecodeMatchesCpuOverTheMatrix) {
  REQUIRE_GPU();
  for (auto [gen, t] : {std::pair{"skewed", DType::u8}, std::pair{"text", DType::u8}, std::pair{"runs", DType::u8},
                        std::pair{"uniform", DType::u8}, std::pair{"quant1024", DType::u16},
                        std::pair{"quant65536", DType::u16}, std::pair{"quant1024", DType::u32},
                        std::pair{"volume", DType::u8}}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{65535}, std::size_t{65537},
                          std::size_t{1000003}}) {
      const uint64_t seed = test::base_seed() + n;
      SCOPED_TRACE(std::string(gen) + " " + std::string(to_string(t)) + " n " + std::to_string(n) + " seed " +
                   std::to_string(seed));
      const std::vector<uint8_t> data = test::sample(gen, n, t, seed);
      for (CodecChoice c : {CodecChoice::huffman, CodecChoice::raw, CodecChoice::rle}) {
        for (uint32_t chunk : {128u, 16384u, 65536u}) {
          for (unsigned limit : {0u, 24u}) {
            CompressOptions o;
            o.codec = c;
            o.dtype = t;
            o.chunk_elements = chunk;
            o.max_code_length = limit;
            o.backend = Backend::cpu;
            const std::vector<uint8_t> s = compress(data.data(), data.size(), o);
            const std::vector<uint8_t> gpu = decompress(s.data(), s.size(), kGpu);
            const std::vector<uint8_t> cpu = decompress(s.data(), s.size(), kCpu);
            ASSERT_EQ(gpu, cpu) << to_string(c) << " chunk " << chunk << " limit " << limit;
            ASSERT_EQ(gpu, data);
          }
        }
      }
    }
  }
}

TEST(Gpu, EveryElementEqualAndLongestCodes) {
  REQUIRE_GPU();
  std::vector<uint8_t> same(1 << 20, 0x33);
  CompressOptions o;
  o.codec = CodecChoice::huffman;
  std::vector<uint8_t> s = compress(same.data(), same.size(), o);
  EXPECT_EQ(decompress(s.data(), s.size(), kGpu), same);
  std::vector<uint32_t> f;
  uint64_t a = 1, b = 1;
  for (uint32_t sym = 0; sym < 28; ++sym, b = a + b, a = b - a)
    for (uint64_t k = 0; k < a; ++k) f.push_back(sym * 7);
  std::shuffle(f.begin(), f.end(), std::mt19937_64(test::base_seed()));
  o.dtype = DType::u32;
  o.max_code_length = 24;
  s = compress(f.data(), 4 * f.size(), o);
  const std::vector<uint8_t> back = decompress(s.data(), s.size(), kGpu);
  ASSERT_EQ(back.size(), 4 * f.size());
  EXPECT_EQ(0, std::memcmp(back.data(), f.data(), back.size()));
}

// Rows that take the most words a row can take: the decoder tops up its
// supply of upcoming words once per row, sized for 32 * ceil(4L / 32) words
// a row (K = 4: 32, K = 2: 64, K = 1: 96). A dominant value (a 1-bit code)
// fills half of every 16,384 elements and the other half cycles through
// 2^(L-1) other values, each equally often: their codes are all L bits, so
// those rows take one word per lane (L = 8) or two (L = 16). A dominant value
// with 65,535 distinct rare values, placed together, gives rows of 17-bit
// codes (three words in some lanes' rows, K = 1).
template <typename T>
std::vector<T> half_dominant_half_longest(std::size_t elements, unsigned others, std::mt19937_64& rng) {
  const T dominant = static_cast<T>(rng() % (others + 1));
  std::vector<T> values;
  for (uint32_t v = 0; values.size() < others; ++v)
    if (v != dominant) values.push_back(static_cast<T>(v));
  std::vector<T> out;
  while (out.size() < elements) {
    out.insert(out.end(), 8192, dominant);
    std::vector<T> block;
    while (block.size() < 8192) block.insert(block.end(), values.begin(), values.end());
    std::shuffle(block.begin(), block.end(), rng);
    out.insert(out.end(), block.begin(), block.begin() + 8192);
  }
  out.resize(elements);
  return out;
}

TEST(Gpu, RowsThatTakeTheMostWords) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 17;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<uint8_t> bytes = half_dominant_half_longest<uint8_t>((1 << 20) + 77, 128, rng);
  const std::vector<uint16_t> words = half_dominant_half_longest<uint16_t>((1 << 20) + 77, 1 << 15, rng);
  std::vector<uint16_t> rare_tail((1 << 21) - 65535, static_cast<uint16_t>(rng()));
  const uint16_t dominant = rare_tail[0];
  for (uint32_t v = 0; v < 65536; ++v)
    if (v != dominant) rare_tail.push_back(static_cast<uint16_t>(v));
  std::shuffle(rare_tail.end() - 65535, rare_tail.end(), rng);
  struct Case {
    const void* data;
    std::size_t bytes;
    DType dtype;
    unsigned min_length, max_length;  // the codebook's longest code must land here
  };
  for (const Case& c : {Case{bytes.data(), bytes.size(), DType::u8, 8, 8},
                        Case{words.data(), 2 * words.size(), DType::u16, 16, 16},
                        Case{rare_tail.data(), 2 * rare_tail.size(), DType::u16, 17, 24}}) {
    for (uint32_t chunk : {16384u, 65536u, 100096u}) {  // 100,096: rows cross its chunks' 16,384-element halves
      CompressOptions o;
      o.codec = CodecChoice::huffman;
      o.dtype = c.dtype;
      o.chunk_elements = chunk;
      o.backend = Backend::cpu;
      const std::vector<uint8_t> s = compress(c.data, c.bytes, o);
      const unsigned L = inspect(s.data(), s.size()).frames[0].max_code_length;
      SCOPED_TRACE(std::string(to_string(c.dtype)) + " chunk " + std::to_string(chunk) + " L " + std::to_string(L));
      EXPECT_GE(L, c.min_length);
      EXPECT_LE(L, c.max_length);
      EXPECT_LT(s.size(), c.bytes * 3 / 4);  // coded, not stored raw
      const std::vector<uint8_t> back = decompress(s.data(), s.size(), kGpu);
      ASSERT_EQ(back.size(), c.bytes);
      EXPECT_EQ(0, std::memcmp(back.data(), c.data, c.bytes));
    }
  }
}

TEST(Gpu, CorruptionAndTruncationAreReported) {
  REQUIRE_GPU();
  const std::vector<uint8_t> data = test::sample("skewed", 300000, DType::u8, test::base_seed());
  CompressOptions o;
  o.codec = CodecChoice::huffman;
  o.chunk_elements = 16384;
  const std::vector<uint8_t> s = compress(data.data(), data.size(), o);
  std::mt19937_64 rng(test::base_seed() + 99);
  SCOPED_TRACE("seed " + std::to_string(test::base_seed() + 99));
  const std::size_t header = s.size() - (s.size() - inspect(s.data(), s.size()).frames[0].header_bytes);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<uint8_t> bad = s;
    // Flip bits in the payload, where the GPU decoder itself must notice.
    const std::size_t at = header + rng() % (s.size() - header);
    bad[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
    EXPECT_THROW(decompress(bad.data(), bad.size(), kGpu), Error) << "flip at byte " << at;
  }
  for (std::size_t cut : {std::size_t{0}, std::size_t{10}, header, s.size() / 2, s.size() - 1})
    EXPECT_THROW(decompress(s.data(), cut, kGpu), Error) << "cut at " << cut;
}

// The host API with Backend::cuda writes the CPU backend's bytes for every codec.
TEST(Gpu, HostApiCompressMatchesCpu) {
  REQUIRE_GPU();
  for (auto [gen, t] : {std::pair{"skewed", DType::u8}, std::pair{"runs", DType::u8},
                        std::pair{"quant1024", DType::u16}, std::pair{"uniform", DType::u8}}) {
    const uint64_t seed = test::base_seed() + 5;
    const std::vector<uint8_t> data = test::sample(gen, 200003, t, seed);
    for (CodecChoice c : {CodecChoice::automatic, CodecChoice::huffman, CodecChoice::raw, CodecChoice::rle,
                          CodecChoice::rle_huffman}) {
      SCOPED_TRACE(std::string(gen) + " " + std::string(to_string(c)) + " seed " + std::to_string(seed));
      CompressOptions o;
      o.codec = c;
      o.dtype = t;
      o.backend = Backend::cpu;
      const std::vector<uint8_t> cpu = compress(data.data(), data.size(), o);
      o.backend = Backend::cuda;
      const std::vector<uint8_t> gpu = compress(data.data(), data.size(), o);
      ASSERT_TRUE(gpu == cpu);
      ASSERT_EQ(decompress(gpu.data(), gpu.size(), kGpu), data);
    }
  }
  // Errors are the CPU's: a u32 value outside the alphabet, named with its index.
  std::vector<uint32_t> v(5000, 3);
  v[4321] = 1u << 20;
  CompressOptions o;
  o.codec = CodecChoice::huffman;
  o.dtype = DType::u32;
  o.backend = Backend::cuda;
  try {
    compress(v.data(), 4 * v.size(), o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::value_out_of_alphabet);
    EXPECT_NE(std::string(e.what()).find("value 1048576 at element 4321"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vlec
