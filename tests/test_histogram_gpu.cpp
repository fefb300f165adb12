// tests/test_histogram_gpu.cpp: the GPU histogram (src/cuda/histogram_gpu.hpp)
// against the CPU's huffman::accumulate_histogram, for every method and
// element type: generated data of awkward sizes at aligned and misaligned
// addresses, inputs of one repeated value (every shared atomic on one bin, and
// long enough for the hot window's periodic flush), data that makes the 16-bit
// cold counters wrap many times, and u32 values outside the alphabet, whose
// first index must be reported. Every test skips where no GPU is present.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/histogram_gpu.hpp"
#include "common/xxh3.hpp"
#include "huffman/codebook.hpp"
#include "test_util.hpp"

namespace vlec {
namespace {

using cuda::HistogramMethod;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

constexpr HistogramMethod kMethods[] = {HistogramMethod::replicated_shared, HistogramMethod::global_atomic,
                                        HistogramMethod::cub, HistogramMethod::automatic};
constexpr uint64_t kNone = ~uint64_t{0};

struct GpuResult {
  std::vector<uint64_t> hist;
  uint64_t bad = 0;
};

// Runs histogram_device on `elements` elements already on the device at d_in.
// d_hist and d_bad_index are poisoned first: the call must set both.
GpuResult run_device(const void* d_in, uint64_t elements, DType t, HistogramMethod m) {
  cuda::DeviceBuffer<uint64_t> d_hist(cuda::kHistogramBins), d_bad(1);
  CUDA_CHECK(cudaMemset(d_hist.get(), 0xA5, cuda::kHistogramBins * 8));
  CUDA_CHECK(cudaMemset(d_bad.get(), 0x5A, 8));
  // The poison is written on the legacy stream, which a non-blocking stream
  // does not wait for: finish it first.
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::size_t temp = cuda::histogram_temp_bytes(elements, t, m);
  cuda::DeviceBuffer<uint8_t> d_temp(temp);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cuda::histogram_device(d_in, elements, t, d_hist.get(), d_bad.get(), d_temp.get(), temp, stream, m);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaStreamDestroy(stream));
  GpuResult r;
  r.hist.resize(cuda::kHistogramBins);
  CUDA_CHECK(cudaMemcpy(r.hist.data(), d_hist.get(), cuda::kHistogramBins * 8, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&r.bad, d_bad.get(), 8, cudaMemcpyDeviceToHost));
  return r;
}

// Uploads host elements `offset` elements past a 256-byte aligned address
// (offset 1: misaligned by one element) and runs the histogram.
GpuResult run_host(const std::vector<uint8_t>& data, DType t, HistogramMethod m, unsigned offset) {
  const std::size_t w = dtype_bytes(t), elements = data.size() / w;
  cuda::DeviceBuffer<uint8_t> d_in(data.size() + offset * w + 16);
  if (!data.empty()) CUDA_CHECK(cudaMemcpy(d_in.get() + offset * w, data.data(), data.size(), cudaMemcpyHostToDevice));
  return run_device(d_in.get() + offset * w, elements, t, m);
}

huffman::Histogram cpu_histogram(const std::vector<uint8_t>& data, DType t) {
  huffman::Histogram h;
  huffman::accumulate_histogram(data.data(), data.size() / dtype_bytes(t), t, h);
  h.resize(cuda::kHistogramBins, 0);
  return h;
}

void put(std::vector<uint8_t>& data, DType t, std::size_t i, uint32_t v) {
  std::memcpy(data.data() + i * dtype_bytes(t), &v, dtype_bytes(t));  // little-endian
}

TEST(GpuHistogram, MatchesCpuOnGeneratedData) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 11;
  std::printf("[ seed     ] %llu\n", static_cast<unsigned long long>(seed));
  for (auto [gen, t] : {std::pair{"skewed", DType::u8}, std::pair{"runs", DType::u8}, std::pair{"uniform", DType::u8},
                        std::pair{"quant1024", DType::u16}, std::pair{"quant65536", DType::u16},
                        std::pair{"quant1024", DType::u32}, std::pair{"quant65536", DType::u32}}) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{1000},
                          std::size_t{65537}, std::size_t{10000003}}) {
      const std::vector<uint8_t> data = test::sample(gen, n, t, seed + n);
      const huffman::Histogram cpu = cpu_histogram(data, t);
      for (unsigned offset : {0u, 1u}) {
        for (HistogramMethod m : kMethods) {
          SCOPED_TRACE(std::string(gen) + " " + std::string(to_string(t)) + " n " + std::to_string(n) + " offset " +
                       std::to_string(offset) + " method " + cuda::to_string(m) + " seed " +
                       std::to_string(seed + n));
          const GpuResult r = run_host(data, t, m, offset);
          ASSERT_EQ(r.bad, kNone);
          ASSERT_EQ(r.hist, cpu);
        }
      }
    }
  }
}

// One value everywhere: every atomic of a warp on one bin, and (for the big
// sizes) enough elements per block for the hot window's periodic flush (more
// than 63 tiles of 32 Ki u16 elements, 127 of 16 Ki u32, on 132 blocks).
TEST(GpuHistogram, AllElementsEqual) {
  REQUIRE_GPU();
  struct Case {
    DType t;
    uint8_t byte;  // memset byte: the value is this byte repeated over the element
    std::size_t n;
  };
  const Case cases[] = {
      {DType::u8, 0xA7, 1000},       {DType::u8, 0xA7, 10000003},    {DType::u8, 0x00, 300000005},
      {DType::u8, 0x5C, 1100000007},  // more than 2^30 elements: the cub method runs in two pieces
      {DType::u16, 0x39, 1000},      {DType::u16, 0x39, 10000003},   {DType::u16, 0x39, 400000005},  // odd bin
      {DType::u16, 0x42, 400000005},                                                                 // even bin
      {DType::u16, 0xFF, 10000003},                                                                  // bin 65535
      {DType::u32, 0x00, 10000003},  {DType::u32, 0x00, 350000001},
  };
  for (const Case& c : cases) {
    const std::size_t w = dtype_bytes(c.t);
    uint32_t value = 0;
    std::memset(&value, c.byte, w);
    cuda::DeviceBuffer<uint8_t> d_in(c.n * w + 16);
    CUDA_CHECK(cudaMemset(d_in.get(), c.byte, c.n * w + 16));
    for (unsigned offset : {0u, 1u}) {
      for (HistogramMethod m : kMethods) {
        SCOPED_TRACE(std::string(to_string(c.t)) + " value " + std::to_string(value) + " n " + std::to_string(c.n) +
                     " offset " + std::to_string(offset) + " method " + cuda::to_string(m));
        const GpuResult r = run_device(d_in.get() + offset * w, c.n, c.t, m);
        ASSERT_EQ(r.bad, kNone);
        std::vector<uint64_t> expect(cuda::kHistogramBins, 0);
        expect[value] = c.n;
        ASSERT_EQ(r.hist, expect);
      }
    }
  }
  // u32 65535, the largest value in the alphabet, from the host.
  std::vector<uint8_t> top(4 * 10000003);
  for (std::size_t i = 0; i < 10000003; ++i) put(top, DType::u32, i, 65535);
  for (HistogramMethod m : kMethods) {
    SCOPED_TRACE(cuda::to_string(m));
    const GpuResult r = run_host(top, DType::u32, m, 1);
    ASSERT_EQ(r.bad, kNone);
    ASSERT_EQ(r.hist[65535], 10000003u);
  }
}

// Each block places its hot window from its first tile; here the first
// eighth of the input (which holds every block's first tile) is small values
// and the rest crowds onto bins 40000 and 40001, far outside the window, so
// the 16-bit cold counters of every block wrap several times, an even bin's
// carries included. A sprinkling of other values keeps the test honest.
TEST(GpuHistogram, ColdCountersWrap) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 23;
  std::printf("[ seed     ] %llu\n", static_cast<unsigned long long>(seed));
  for (DType t : {DType::u16, DType::u32}) {
    const std::size_t n = (std::size_t{1} << 25) + 5;
    std::vector<uint8_t> data(n * dtype_bytes(t));
    uint64_t x = seed;
    for (std::size_t i = 0; i < n; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const uint32_t r = static_cast<uint32_t>(x >> 33);
      uint32_t v;
      if (i < n / 8) v = r % 7;
      else if (r % 100 < 60) v = 40000;
      else if (r % 100 < 99) v = 40001;
      else v = r % 65536;
      put(data, t, i, v);
    }
    const huffman::Histogram cpu = cpu_histogram(data, t);
    for (unsigned offset : {0u, 1u}) {
      for (HistogramMethod m : kMethods) {
        SCOPED_TRACE(std::string(to_string(t)) + " offset " + std::to_string(offset) + " method " +
                     cuda::to_string(m) + " seed " + std::to_string(seed));
        const GpuResult r = run_host(data, t, m, offset);
        ASSERT_EQ(r.bad, kNone);
        ASSERT_EQ(r.hist, cpu);
      }
    }
  }
}

// u32 values >= 65,536: the first one's index is reported (relative to d_in),
// and the others are left out of the histogram.
TEST(GpuHistogram, OutOfAlphabetU32ReportsTheFirstIndex) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 37;
  std::printf("[ seed     ] %llu\n", static_cast<unsigned long long>(seed));
  const std::vector<std::pair<std::size_t, std::vector<std::size_t>>> cases = {
      {1, {0}},
      {31, {30}},
      {1000, {999, 3}},
      {65537, {65536, 40000, 70000 % 65537}},
      {10000003, {7777777, 123457, 9999999, 5000000}},
      {10000003, {0, 10000002}},
      {10000003, {10000002}},
  };
  for (const auto& [n, positions] : cases) {
    std::vector<uint8_t> data = test::sample("quant65536", n, DType::u32, seed + n);
    std::vector<uint8_t> good = data;
    std::size_t first = n;
    for (std::size_t k = 0; k < positions.size(); ++k) {
      const uint32_t bad_value = k % 2 ? 0xFFFFFFFFu : 65536u + static_cast<uint32_t>(k);
      put(data, DType::u32, positions[k], bad_value);
      put(good, DType::u32, positions[k], 0);
      first = std::min(first, positions[k]);
    }
    // The CPU rejects the same input.
    huffman::Histogram h;
    try {
      huffman::accumulate_histogram(data.data(), n, DType::u32, h);
      ADD_FAILURE() << "the CPU histogram accepted a value >= 65536";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::value_out_of_alphabet);
      EXPECT_NE(std::string(e.what()).find("at element " + std::to_string(first) + " "), std::string::npos)
          << e.what();
    }
    huffman::Histogram expect = cpu_histogram(good, DType::u32);
    expect[0] -= positions.size();  // the bad elements are not counted
    for (unsigned offset : {0u, 1u}) {
      for (HistogramMethod m : kMethods) {
        SCOPED_TRACE("n " + std::to_string(n) + " first " + std::to_string(first) + " offset " +
                     std::to_string(offset) + " method " + cuda::to_string(m) + " seed " + std::to_string(seed + n));
        const GpuResult r = run_host(data, DType::u32, m, offset);
        ASSERT_EQ(r.bad, first);
        ASSERT_EQ(r.hist, expect);
      }
    }
  }
}

// The byte histogram with each chunk's XXH3-64 (device::compress's stage 1
// for the lanes encoder): the histogram of histogram_device, and each
// chunk's checksum as the CPU hashes it, for chunk sizes of 1 to 64 KiB,
// last chunks that are whole, of 1 byte, below 240 bytes (XXH3's short
// path), inside a 1 KiB block, and inputs 8-byte but not 16-byte aligned;
// both kernels (u8_chunk_hash_by_warps_max_bytes).
TEST(GpuHistogram, ChunkHashesWithTheByteHistogram) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 12;
  std::printf("[ seed     ] %llu\n", static_cast<unsigned long long>(seed));
  for (const char* gen : {"skewed", "uniform", "runs"}) {
    for (uint32_t chunk : {1024u, 16384u, 65536u}) {
      for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{239}, uint64_t{1000}, uint64_t{chunk}, uint64_t{chunk} + 1,
                         uint64_t{chunk} * 3 + 240, uint64_t{chunk} * 5 + 1500, uint64_t{chunk} * 700 + 77}) {
        const std::vector<uint8_t> data = test::sample(gen, n, DType::u8, seed + n);
        const huffman::Histogram cpu = cpu_histogram(data, DType::u8);
        for (unsigned variant : {0u, 8u, 1u}) {  // offset 8: 8-byte, not 16-byte aligned; 1, 0: the kernel by warps, not
          const unsigned offset = variant & 8u;
          const bool by_warps = variant == 1;
          SCOPED_TRACE(std::string(gen) + " chunk " + std::to_string(chunk) + " n " + std::to_string(n) +
                       " offset " + std::to_string(offset) + (by_warps ? " by warps" : "") + " seed " +
                       std::to_string(seed + n));
          cuda::DeviceBuffer<uint8_t> d_in(n + offset + 16);
          if (n) CUDA_CHECK(cudaMemcpy(d_in.get() + offset, data.data(), n, cudaMemcpyHostToDevice));
          ASSERT_TRUE(cuda::histogram_chunk_hashes_fit(d_in.get() + offset, chunk));
          const uint64_t chunks = (n + chunk - 1) / chunk;
          cuda::DeviceBuffer<uint64_t> d_hist(cuda::kHistogramBins), d_bad(1), d_sums(std::max<uint64_t>(chunks, 1));
          CUDA_CHECK(cudaMemset(d_hist.get(), 0xA5, cuda::kHistogramBins * 8));  // poisoned: the call sets both
          CUDA_CHECK(cudaMemset(d_bad.get(), 0x5A, 8));
          CUDA_CHECK(cudaMemset(d_sums.get(), 0x3C, 8 * std::max<uint64_t>(chunks, 1)));
          const uint32_t bound = cuda::u8_chunk_hash_by_warps_max_bytes;
          cuda::u8_chunk_hash_by_warps_max_bytes = by_warps ? UINT32_MAX : 0;
          cuda::histogram_u8_chunk_hashes(d_in.get() + offset, n, chunk, d_hist.get(), d_bad.get(), d_sums.get(), 0);
          cuda::u8_chunk_hash_by_warps_max_bytes = bound;
          std::vector<uint64_t> hist(cuda::kHistogramBins), sums(chunks);
          uint64_t bad = 0;
          CUDA_CHECK(cudaMemcpy(hist.data(), d_hist.get(), cuda::kHistogramBins * 8, cudaMemcpyDeviceToHost));
          CUDA_CHECK(cudaMemcpy(&bad, d_bad.get(), 8, cudaMemcpyDeviceToHost));
          if (chunks) CUDA_CHECK(cudaMemcpy(sums.data(), d_sums.get(), 8 * chunks, cudaMemcpyDeviceToHost));
          ASSERT_EQ(bad, kNone);
          ASSERT_EQ(hist, cpu);
          for (uint64_t c = 0; c < chunks; ++c) {
            const uint64_t len = std::min<uint64_t>(chunk, n - c * chunk);
            ASSERT_EQ(sums[c], xxh3::hash64(data.data() + c * chunk, len)) << "chunk " << c << " of " << len << " bytes";
          }
        }
      }
    }
  }
  // What it does not take: chunks of a part of a KiB or above 64 KiB, input not 8-byte aligned.
  cuda::DeviceBuffer<uint8_t> d_in(64);
  EXPECT_FALSE(cuda::histogram_chunk_hashes_fit(d_in.get(), 1000));
  EXPECT_FALSE(cuda::histogram_chunk_hashes_fit(d_in.get(), 131072));
  EXPECT_FALSE(cuda::histogram_chunk_hashes_fit(d_in.get() + 4, 1024));
}

TEST(GpuHistogram, RejectsBadArguments) {
  REQUIRE_GPU();
  cuda::DeviceBuffer<uint8_t> d_in(64);
  cuda::DeviceBuffer<uint64_t> d_hist(cuda::kHistogramBins), d_bad(1);
  auto code_of = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode{};
  };
  EXPECT_EQ(code_of([&] { cuda::histogram_temp_bytes(8, DType::u64, HistogramMethod::automatic); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(code_of([&] {
              cuda::histogram_device(d_in.get(), 8, DType::u64, d_hist.get(), d_bad.get(), nullptr, 0, 0);
            }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(code_of([&] {  // a u16 input at an odd address
              cuda::histogram_device(d_in.get() + 1, 8, DType::u16, d_hist.get(), d_bad.get(), nullptr, 0, 0);
            }),
            ErrorCode::invalid_argument);
  const std::size_t need = cuda::histogram_temp_bytes(8, DType::u16, HistogramMethod::cub);
  ASSERT_GT(need, 0u);
  EXPECT_EQ(code_of([&] {  // too little temporary storage
              cuda::histogram_device(d_in.get(), 8, DType::u16, d_hist.get(), d_bad.get(), d_in.get(), need - 1, 0,
                                     HistogramMethod::cub);
            }),
            ErrorCode::invalid_argument);
}

}  // namespace
}  // namespace vlec

#else  // a build without the CUDA backend

TEST(GpuHistogram, NotBuilt) { GTEST_SKIP() << "vlec was built without the CUDA backend"; }

#endif
