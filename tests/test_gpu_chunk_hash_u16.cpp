// tests/test_gpu_chunk_hash_u16.cpp: the u16 histogram that takes each
// chunk's XXH3-64 in the same pass (histogram_chunk_hash_u16.cu), against the
// CPU's counts and hashes, and device::compress of u16 with it against the
// CPU's frames, byte for byte. Skips without a GPU.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA
#include <cstring>
#include <random>

#include "common/xxh3.hpp"
#include "cuda/histogram_gpu.hpp"
#include "gpu_frame_util.hpp"
#include "vlec/device.hpp"

namespace vlec {
namespace {

// Three far-apart values take most of the input: the hot window holds at
// most one of them, so the cold 16-bit counters of the others wrap many times
// a block.
std::vector<uint8_t> three_peaks(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> out(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    const uint16_t v = r % 8 == 0 ? static_cast<uint16_t>(r >> 16) : r % 3 == 0 ? 3 : r % 3 == 1 ? 30000 : 65535;
    std::memcpy(out.data() + 2 * i, &v, 2);
  }
  return out;
}

std::vector<uint8_t> input(const std::string& gen, std::size_t n, uint64_t seed) {
  return gen == "three-peaks" ? three_peaks(n, seed) : test::sample(gen, n, DType::u16, seed);
}

// The pass's histogram and checksums equal the CPU's, including where hot
// counters are flushed within a chunk (48 MiB in 128 KiB chunks: 128 KiB
// steps a round) and cold counters wrap (three-peaks).
TEST(GpuChunkHashU16, CountsAndChecksumsEqualTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::base_seed() + 41;
  std::printf("[ seed     ] %llu\n", static_cast<unsigned long long>(seed));
  struct Case {
    const char* gen;
    std::size_t n;
    uint32_t chunk_bytes;
  };
  const Case cases[] = {{"quant1024", 1, 1024},          {"quant1024", 120, 1024},         {"quant65536", 121, 32768},
                        {"quant65536", 513, 1024},       {"quant1024", 700001, 32768},     {"quant65536", 700001, 131072},
                        {"three-peaks", 1000003, 32768}, {"three-peaks", 3000000, 131072}, {"quant1024", 25165824, 131072},
                        {"quant65536", 2000000, 2048}};
  for (const Case& c : cases) {
    const std::vector<uint8_t> data = input(c.gen, c.n, seed + c.n);
    std::vector<uint64_t> want(cuda::kHistogramBins, 0);
    for (std::size_t i = 0; i < c.n; ++i) {
      uint16_t v;
      std::memcpy(&v, data.data() + 2 * i, 2);
      ++want[v];
    }
    const uint64_t chunks = (data.size() + c.chunk_bytes - 1) / c.chunk_bytes;
    std::vector<uint64_t> want_sums(chunks);
    for (uint64_t k = 0; k < chunks; ++k) {
      const uint64_t at = k * c.chunk_bytes, len = std::min<uint64_t>(c.chunk_bytes, data.size() - at);
      want_sums[k] = xxh3::hash64(data.data() + at, len);
    }
    cuda::DeviceBuffer<uint8_t> in(data.size());
    cuda::DeviceBuffer<uint64_t> hist(cuda::kHistogramBins), bad(1), sums(chunks);
    CUDA_CHECK(cudaMemcpy(in.get(), data.data(), data.size(), cudaMemcpyHostToDevice));
    ASSERT_TRUE(cuda::histogram_u16_chunk_hashes_fit(in.get(), c.chunk_bytes));
    {
      SCOPED_TRACE(std::string(c.gen) + " n " + std::to_string(c.n) + " chunk bytes " + std::to_string(c.chunk_bytes));
      CUDA_CHECK(cudaMemset(sums.get(), 0, 8 * chunks));
      cuda::histogram_u16_chunk_hashes(in.get(), c.n, c.chunk_bytes, hist.get(), bad.get(), sums.get(), nullptr);
      std::vector<uint64_t> got(cuda::kHistogramBins), got_sums(chunks);
      uint64_t got_bad = 0;
      CUDA_CHECK(cudaMemcpy(got.data(), hist.get(), 8 * got.size(), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(got_sums.data(), sums.get(), 8 * chunks, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(&got_bad, bad.get(), 8, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got_bad, ~0ull);
      ASSERT_TRUE(got == want);
      ASSERT_TRUE(got_sums == want_sums);
    }
  }
}

// device::compress of u16 takes the chunks' checksums with the histogram
// where the chunks are whole KiB (multiples of 512 elements) up to
// u16_hashed_chunk_max_bytes (raised here to every size), and the lanes
// encoder then does not hash; elsewhere (and with the switch off) the encoder
// hashes. Both write the CPU's frame.
TEST(GpuChunkHashU16, CompressWritesTheCpuFrame) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::base_seed() + 42;
  std::printf("[ seed     ] %llu\n", static_cast<unsigned long long>(seed));
  for (const char* gen : {"quant1024", "quant65536", "three-peaks"}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{120}, std::size_t{513}, std::size_t{700001}}) {
      const std::vector<uint8_t> data = input(gen, n, seed + n);
      for (uint32_t chunk : {512u, 640u, 16384u, 65536u}) {
        const std::vector<uint8_t> cpu = test::cpu_frame(data, DType::u16, chunk, Codec::huffman);
        for (bool with_histogram : {true, false}) {
          SCOPED_TRACE(std::string(gen) + " n " + std::to_string(n) + " chunk " + std::to_string(chunk) +
                       (with_histogram ? "" : " encoder hashes"));
          device::CompressOptions o;
          o.dtype = DType::u16;
          o.chunk_elements = chunk;
          cuda::hash_chunks_with_histogram = with_histogram;
          const uint32_t bound = cuda::u16_hashed_chunk_max_bytes;
          cuda::u16_hashed_chunk_max_bytes = UINT32_MAX;
          const test::DeviceResult d = test::device_compress(data, o);
          cuda::u16_hashed_chunk_max_bytes = bound;
          cuda::hash_chunks_with_histogram = true;
          ASSERT_EQ(d.error, ~0ull);
          ASSERT_TRUE(d.frame == cpu) << "sizes " << d.frame.size() << " / " << cpu.size();
        }
      }
    }
  }
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
