// tests/test_gpu_stream.cpp: frames streamed through the GPU in pieces
// (cuda/host_stream.hpp), the host API's path for inputs larger than the GPU
// holds. Small pieces (one chunk, a few chunks, sizes that do not divide the
// input) stand in for inputs beyond GPU memory: every piece boundary is
// crossed as it would be there. Frames are compared with the CPU backend's
// byte for byte, and the streamed decoder with the input. Skips without a GPU.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA
#include "cuda/host_stream.hpp"
#include "format/frame.hpp"

namespace vlec {
namespace {

std::vector<uint8_t> streamed_frame(const std::vector<uint8_t>& data, DType t, uint32_t chunk, uint64_t piece_bytes,
                                    unsigned limit = 0) {
  const uint64_t n = data.size() / dtype_bytes(t);
  const std::size_t bound = compress_bound(data.size(), {CodecChoice::huffman, t, chunk});
  std::vector<uint8_t> out(bound + 64, 0xA5);  // poison: every byte of the frame must be written
  const std::size_t size =
      cuda::compress_huffman_streamed(data.data(), n, t, chunk, limit, 3, out.data(), bound, piece_bytes);
  EXPECT_LE(size, bound);
  EXPECT_EQ(out[bound], 0xA5) << "wrote past its capacity";
  out.resize(size);
  return out;
}

std::vector<uint8_t> streamed_decode(const std::vector<uint8_t>& frame, uint64_t piece_bytes) {
  const format::ParsedFrame f = format::parse_frame(frame.data(), frame.size(), 0);
  std::vector<uint8_t> out(f.header.elements * f.header.width, 0x5A);
  cuda::decompress_frame_streamed(f, out.data(), 2, piece_bytes);
  return out;
}

TEST(GpuStream, MatchesCpuBytesAcrossPieces) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::seed_for(501);
  for (auto [gen, t] : {std::pair{"skewed", DType::u8}, std::pair{"text", DType::u8},
                        std::pair{"quant1024", DType::u16}, std::pair{"quant65536", DType::u16},
                        std::pair{"quant1024", DType::u32}, std::pair{"uniform", DType::u8}}) {
    for (uint32_t chunk : {128u, 4096u, 65536u}) {
      const std::size_t n = std::size_t{chunk} * 7 + 333;  // 8 chunks, the last partial
      const std::vector<uint8_t> data = test::sample(gen, n, t, seed);
      const std::vector<uint8_t> cpu = test::cpu_frame(data, t, chunk, Codec::huffman);
      const uint64_t cb = uint64_t{chunk} * dtype_bytes(t);
      // one chunk a piece; three (not dividing 8); all but one; more than all
      for (uint64_t piece : {cb, 3 * cb, 7 * cb, 100 * cb}) {
        SCOPED_TRACE(std::string(gen) + " " + std::string(to_string(t)) + " chunk " + std::to_string(chunk) + " piece " +
                     std::to_string(piece));
        const std::vector<uint8_t> gpu = streamed_frame(data, t, chunk, piece);
        ASSERT_EQ(gpu, cpu);
        EXPECT_EQ(streamed_decode(gpu, piece), data);
      }
    }
  }
}

TEST(GpuStream, Edges) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::seed_for(502);
  // empty, one element, every element equal, odd sizes, a fixed length limit
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{129}, std::size_t{70001}}) {
    std::vector<uint8_t> data = test::sample("skewed", n, DType::u8, seed + n);
    for (uint64_t piece : {uint64_t{128}, uint64_t{1} << 20}) {
      EXPECT_EQ(streamed_frame(data, DType::u8, 128, piece), test::cpu_frame(data, DType::u8, 128, Codec::huffman));
      if (n) EXPECT_EQ(streamed_decode(streamed_frame(data, DType::u8, 128, piece), piece), data);
    }
    std::fill(data.begin(), data.end(), 7);
    EXPECT_EQ(streamed_frame(data, DType::u8, 256, 512), test::cpu_frame(data, DType::u8, 256, Codec::huffman));
  }
  const std::vector<uint8_t> q = test::sample("quant65536", 300000, DType::u16, seed);
  for (unsigned limit : {16u, 24u})
    EXPECT_EQ(streamed_frame(q, DType::u16, 65536, 131072, limit),
              test::cpu_frame(q, DType::u16, 65536, Codec::huffman, limit));
}

TEST(GpuStream, RawFallbackAndRleFramesDecode) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::seed_for(503);
  // Noise: coding would make the frame larger, so it is written raw.
  const std::vector<uint8_t> noise = test::sample("uniform", 1 << 20, DType::u8, seed);
  const std::vector<uint8_t> frame = streamed_frame(noise, DType::u8, 4096, 3 * 4096);
  EXPECT_EQ(frame, test::cpu_frame(noise, DType::u8, 4096, Codec::huffman));
  EXPECT_EQ(static_cast<Codec>(frame[6]), Codec::raw);
  EXPECT_EQ(streamed_decode(frame, 5 * 4096), noise);
  // rle and rle+huffman frames written by the CPU decode slice by slice.
  for (Codec c : {Codec::rle, Codec::rle_huffman}) {
    const std::vector<uint8_t> runs = test::sample("runs", 1000003, DType::u8, seed);
    const std::vector<uint8_t> f = test::cpu_frame(runs, DType::u8, 8192, c);
    for (uint64_t piece : {uint64_t{8192}, uint64_t{5 * 8192}}) EXPECT_EQ(streamed_decode(f, piece), runs);
  }
}

TEST(GpuStream, Errors) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::seed_for(504);
  // A u32 value outside the alphabet in the third piece: named with its index.
  std::vector<uint8_t> data = test::sample("quant1024", 20000, DType::u32, seed);
  const uint32_t big = 70000;
  std::memcpy(data.data() + 4 * 12345, &big, 4);
  try {
    streamed_frame(data, DType::u32, 1024, 4 * 4096);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::value_out_of_alphabet);
    EXPECT_NE(std::string(e.what()).find("12345"), std::string::npos) << e.what();
  }
  // A length limit too short for the alphabet: the CPU's error.
  const std::vector<uint8_t> q = test::sample("quant1024", 50000, DType::u16, seed);
  EXPECT_THROW(streamed_frame(q, DType::u16, 4096, 8192, 4), Error);
  // An output buffer too small.
  const std::vector<uint8_t> s = test::sample("skewed", 100000, DType::u8, seed);
  std::vector<uint8_t> small(1000);
  try {
    cuda::compress_huffman_streamed(s.data(), s.size(), DType::u8, 4096, 0, 2, small.data(), small.size(), 8192);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::output_too_small);
  }
  // A corrupt chunk in a later slice: the decoder's checksum or code check.
  std::vector<uint8_t> frame = test::cpu_frame(s, DType::u8, 4096, Codec::huffman);
  const format::ParsedFrame f = format::parse_frame(frame.data(), frame.size(), 0);
  const uint64_t at = (f.payload - frame.data()) + f.offsets[20] + 5;
  frame[at] ^= 0x10;
  try {
    streamed_decode(frame, 3 * 4096);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(e.code() == ErrorCode::checksum_mismatch || e.code() == ErrorCode::corrupt_stream) << e.what();
    EXPECT_NE(std::string(e.what()).find("counted from chunk 18"), std::string::npos) << e.what();
  }
}

// The host API streams what is larger than four pieces: the same bytes, and
// both ways round (a real > 1 GiB input; the benchmark streams more).
TEST(GpuStream, HostApiLargeInput) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::seed_for(505);
  const std::size_t n = (std::size_t{1} << 30) + 4096 + 77;
  ASSERT_TRUE(cuda::stream_in_pieces(n));
  const std::vector<uint8_t> data = test::sample("skewed", n, DType::u8, seed);
  CompressOptions o{CodecChoice::huffman, DType::u8};
  o.backend = Backend::cuda;
  const std::vector<uint8_t> gpu = compress(data.data(), data.size(), o);
  o.backend = Backend::cpu;
  EXPECT_TRUE(gpu == compress(data.data(), data.size(), o));
  DecompressOptions d;
  d.backend = Backend::cuda;
  EXPECT_TRUE(decompress(gpu.data(), gpu.size(), d) == data);
}

}  // namespace
}  // namespace vlec

#endif
