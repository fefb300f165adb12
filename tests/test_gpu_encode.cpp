// tests/test_gpu_encode.cpp: the GPU frame encoder against the CPU backend,
// byte for byte, with the codebook built on the host (the GPU codebook
// builder has its own tests). Skips without a GPU.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA
#include "cpu/frame_codec.hpp"
#include "cuda/device_codebook.hpp"
#include "cuda/frame_device.hpp"
#include "cuda/histogram_gpu.hpp"
#include "gpu_frame_util.hpp"
#include "vlec/device.hpp"

namespace vlec {
namespace {

// The frame the GPU writes from a host-built codebook (limit 0: automatic),
// its reported size within the CPU's bound.
std::vector<uint8_t> gpu_frame(const std::vector<uint8_t>& data, DType t, uint32_t chunk, bool raw,
                               unsigned limit = 0) {
  huffman::Histogram hist;
  huffman::accumulate_histogram(data.data(), data.size() / dtype_bytes(t), t, hist);
  test::GpuFrameOptions o;
  o.raw = raw;
  uint64_t size = 0;
  o.reported_size = &size;
  std::vector<uint8_t> out = test::gpu_encode_frame(data, t, chunk, huffman::build_codebook(hist, limit), o);
  EXPECT_LE(size, compress_bound(data.size(), {CodecChoice::huffman, t, chunk}));
  return out;
}

using test::cpu_frame;

TEST(GpuEncode, MatchesCpuBytes) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  for (auto [gen, t] : {std::pair{"skewed", DType::u8}, std::pair{"text", DType::u8}, std::pair{"runs", DType::u8},
                        std::pair{"volume", DType::u8}, std::pair{"quant1024", DType::u16},
                        std::pair{"quant65536", DType::u16}, std::pair{"quant1024", DType::u32}}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{127}, std::size_t{128},
                          std::size_t{4097}, std::size_t{65535}, std::size_t{65537}, std::size_t{1000003}}) {
      const uint64_t seed = test::base_seed() + n;
      const std::vector<uint8_t> data = test::sample(gen, n, t, seed);
      for (uint32_t chunk : {128u, 1024u, 16384u, 65536u}) {
        for (unsigned limit : {0u, 12u, 24u}) {
          SCOPED_TRACE(std::string(gen) + " " + std::string(to_string(t)) + " n " + std::to_string(n) + " chunk " +
                       std::to_string(chunk) + " limit " + std::to_string(limit) + " seed " + std::to_string(seed));
          if (limit == 12 && t != DType::u8) continue;
          const std::vector<uint8_t> cpu = cpu_frame(data, t, chunk, Codec::huffman, limit);
          const std::vector<uint8_t> gpu = gpu_frame(data, t, chunk, false, limit);
          ASSERT_EQ(gpu.size(), cpu.size());
          ASSERT_TRUE(gpu == cpu) << "first difference at byte "
                                  << (std::mismatch(gpu.begin(), gpu.end(), cpu.begin()).first - gpu.begin());
          // The GPU-written frame decodes on the CPU.
          ASSERT_EQ(decompress(gpu.data(), gpu.size(), {1, Backend::cpu}), data);
        }
      }
      // Raw frames too.
      const std::vector<uint8_t> raw_cpu = cpu_frame(data, t, 16384, Codec::raw);
      ASSERT_TRUE(gpu_frame(data, t, 16384, true) == raw_cpu) << gen << " n " << n;
    }
  }
}

TEST(GpuEncode, IncompressibleAndEmpty) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const std::vector<uint8_t> noise = test::sample("uniform", 300001, DType::u8, test::base_seed() + 1);
  EXPECT_TRUE(gpu_frame(noise, DType::u8, 65536, false) == cpu_frame(noise, DType::u8, 65536, Codec::huffman));
  const std::vector<uint8_t> empty;
  EXPECT_TRUE(gpu_frame(empty, DType::u8, 65536, false) == cpu_frame(empty, DType::u8, 65536, Codec::huffman));
  std::vector<uint8_t> same(1 << 20, 7);
  EXPECT_TRUE(gpu_frame(same, DType::u8, 65536, false) == cpu_frame(same, DType::u8, 65536, Codec::huffman));
}

using test::device_compress;
using test::DeviceResult;

TEST(GpuCompress, WholePipelineMatchesCpuBytes) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  for (auto [gen, t] : {std::pair{"skewed", DType::u8}, std::pair{"text", DType::u8}, std::pair{"uniform", DType::u8},
                        std::pair{"quant1024", DType::u16}, std::pair{"quant65536", DType::u16},
                        std::pair{"quant65536", DType::u32}}) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{4097}, std::size_t{65537},
                          std::size_t{3000017}}) {
      const uint64_t seed = test::base_seed() + 7 * n;
      const std::vector<uint8_t> data = test::sample(gen, n, t, seed);
      for (unsigned limit : {0u, 11u, 24u}) {
        for (Codec codec : {Codec::huffman, Codec::raw}) {
          SCOPED_TRACE(std::string(gen) + " " + std::string(to_string(t)) + " n " + std::to_string(n) + " limit " +
                       std::to_string(limit) + " " + std::string(to_string(codec)) + " seed " + std::to_string(seed));
          device::CompressOptions o;
          o.codec = codec;
          o.dtype = t;
          o.max_code_length = limit;
          const DeviceResult d = device_compress(data, o);
          std::vector<uint8_t> cpu;
          bool cpu_ok = true;
          try {
            cpu = cpu_frame(data, t, o.chunk_elements, codec, limit);
          } catch (const Error&) {
            cpu_ok = false;  // a limit too short for the alphabet
          }
          if (!cpu_ok) {
            EXPECT_EQ(d.error, ~1ull);
            continue;
          }
          EXPECT_EQ(d.error, ~0ull);
          ASSERT_TRUE(d.frame == cpu) << "sizes " << d.frame.size() << " / " << cpu.size();
        }
      }
    }
  }
}

// device::compress of bytes takes the chunks' checksums with the histogram
// where the chunks are whole KiB up to 64 KiB and the input is 8-byte aligned
// (the lanes encoder then does not hash; device::compress takes 16-byte
// aligned input); elsewhere the encoder hashes. Both write the CPU's frame:
// chunk sizes on both sides of the rule, and the switch off.
TEST(GpuCompress, ByteChunksHashedWithTheHistogram) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::base_seed() + 31;
  std::printf("[ seed     ] %llu\n", static_cast<unsigned long long>(seed));
  for (const char* gen : {"skewed", "text"}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{240}, std::size_t{1025}, std::size_t{700001}}) {
      const std::vector<uint8_t> data = test::sample(gen, n, DType::u8, seed + n);
      for (uint32_t chunk : {1024u, 1152u, 16384u, 65536u, 131072u}) {
        const std::vector<uint8_t> cpu = cpu_frame(data, DType::u8, chunk, Codec::huffman);
        for (bool with_histogram : {true, false}) {
          SCOPED_TRACE(std::string(gen) + " n " + std::to_string(n) + " chunk " + std::to_string(chunk) +
                       (with_histogram ? "" : " encoder hashes"));
          device::CompressOptions o;
          o.dtype = DType::u8;
          o.chunk_elements = chunk;
          cuda::hash_chunks_with_histogram = with_histogram;
          const DeviceResult d = device_compress(data, o);
          cuda::hash_chunks_with_histogram = true;
          ASSERT_EQ(d.error, ~0ull);
          ASSERT_TRUE(d.frame == cpu) << "sizes " << d.frame.size() << " / " << cpu.size();
        }
      }
    }
  }
}

TEST(GpuCompress, ValueOutsideTheAlphabetIsReported) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  std::vector<uint8_t> data = test::sample("quant1024", 100000, DType::u32, test::base_seed());
  const uint32_t big = 70000;
  std::memcpy(data.data() + 4 * 54321, &big, 4);
  std::memcpy(data.data() + 4 * 99999, &big, 4);
  device::CompressOptions o;
  o.dtype = DType::u32;
  EXPECT_EQ(device_compress(data, o).error, 54321u);
}

// Device-resident decompression (vlec/device.hpp): decode and verify on the GPU.
TEST(GpuDecompress, DeviceStreamsDecodeAndCorruptionIsCaught) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  for (auto [gen, t] : {std::pair{"skewed", DType::u8}, std::pair{"quant65536", DType::u16},
                        std::pair{"quant1024", DType::u32}, std::pair{"uniform", DType::u8}}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{300}, std::size_t{65537}, std::size_t{1000003}}) {
      const uint64_t seed = test::base_seed() + 3 * n;
      SCOPED_TRACE(std::string(gen) + " n " + std::to_string(n) + " seed " + std::to_string(seed));
      const std::vector<uint8_t> data = test::sample(gen, n, t, seed);
      CompressOptions o;
      o.codec = CodecChoice::huffman;
      o.dtype = t;
      o.chunk_elements = 16384;
      std::vector<uint8_t> s = compress(data.data(), data.size(), o);
      cuda::DeviceBuffer<uint8_t> d_s(s.size()), d_out(data.size() + 16);
      CUDA_CHECK(cudaMemcpy(d_s.get(), s.data(), s.size(), cudaMemcpyHostToDevice));
      ASSERT_EQ(device::decompressed_size(d_s.get(), s.size()), data.size());
      cuda::DeviceBuffer<uint8_t> d_temp(device::decompress_temp_bytes(d_s.get(), s.size()));
      ASSERT_EQ(device::decompress(d_s.get(), s.size(), d_out.get(), data.size(), d_temp.get(), d_temp.size(), nullptr),
                data.size());
      std::vector<uint8_t> back(data.size());
      CUDA_CHECK(cudaMemcpy(back.data(), d_out.get(), back.size(), cudaMemcpyDeviceToHost));
      ASSERT_TRUE(back == data);
      // Flip one payload bit in each of several places: always reported.
      const std::size_t header = inspect(s.data(), s.size()).frames[0].header_bytes;
      for (std::size_t at : {header, header + (s.size() - header) / 2, s.size() - 1}) {
        std::vector<uint8_t> bad = s;
        bad[at] ^= 0x04;
        CUDA_CHECK(cudaMemcpy(d_s.get(), bad.data(), bad.size(), cudaMemcpyHostToDevice));
        EXPECT_THROW(device::decompress(d_s.get(), s.size(), d_out.get(), data.size(), d_temp.get(), d_temp.size(),
                                        nullptr),
                     Error)
            << "flip at " << at;
      }
    }
  }
}

}  // namespace
}  // namespace vlec
#endif  // VLEC_WITH_CUDA
