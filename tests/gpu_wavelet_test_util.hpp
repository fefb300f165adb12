// tests/gpu_wavelet_test_util.hpp: what the GPU wavelet decoder's tests
// (test_gpu_wavelet.cpp, test_gpu_wavelet_damage.cpp) share: the bytes
// decompress() must return, a decode through the device API that keeps the
// error it threw, the CPU decoder's answer, and one CPU-written frame decoded
// on the GPU every way the decoder can be switched. CUDA builds only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/wavelet_kernels.hpp"
#include "vlec/device_wavelet.hpp"
#include "vlec/vlec.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet_test_util.hpp"

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

namespace vlec::test {

using Bytes = std::vector<uint8_t>;
using cuda::DeviceBuffer;

// Decode `stream` (only its first `bytes` bytes are on the device, in a
// buffer of exactly that size, so that compute-sanitizer sees any read
// past it) with the device API: the output, or the error it threw.
struct GpuResult {
  bool threw = false;
  ErrorCode code{};
  std::string what;
  Bytes out;
};

inline GpuResult gpu_decode(const uint8_t* stream, std::size_t bytes) {
  GpuResult r;
  try {
    DeviceBuffer<uint8_t> d_frame(std::max<std::size_t>(bytes, 1));
    if (bytes) CUDA_CHECK(cudaMemcpy(d_frame.get(), stream, bytes, cudaMemcpyHostToDevice));
    const uint64_t out_bytes = device::wavelet_decompressed_size(d_frame.get(), bytes);
    const std::size_t temp = device::wavelet_decompress_temp_bytes(d_frame.get(), bytes);
    DeviceBuffer<uint8_t> d_out(std::max<uint64_t>(out_bytes, 16)), d_temp(temp);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    try {
      const std::size_t n =
          device::wavelet_decompress(d_frame.get(), bytes, d_out.get(), d_out.size(), d_temp.get(), temp, s);
      EXPECT_EQ(n, out_bytes);
    } catch (...) {
      cudaStreamDestroy(s);
      throw;
    }
    CUDA_CHECK(cudaStreamDestroy(s));
    r.out.resize(out_bytes);
    if (out_bytes) CUDA_CHECK(cudaMemcpy(r.out.data(), d_out.get(), out_bytes, cudaMemcpyDeviceToHost));
  } catch (const Error& e) {
    r.threw = true, r.code = e.code(), r.what = e.what();
  }
  return r;
}

struct CpuResult {
  bool threw = false;
  ErrorCode code{};
  Bytes out;
};

inline CpuResult cpu_decode(const uint8_t* stream, std::size_t bytes) {
  CpuResult r;
  DecompressOptions o;
  o.backend = Backend::cpu;
  try {
    r.out = decompress(stream, bytes, o);
  } catch (const Error& e) {
    r.threw = true, r.code = e.code();
  }
  return r;
}

// One frame: CPU-written, decoded on the GPU (device API and host API).
inline void check_case(const Bytes& data, const WaveletImage& im, const WaveletOptions& o, const std::string& what) {
  SCOPED_TRACE(what + " " + name(im) + " levels " + std::to_string(o.levels) + (o.colour_transform ? " rct" : "") +
               (o.big_endian_output ? " be" : "") + " prefix " + std::to_string(o.container_prefix.size()));
  const Bytes stream = wavelet_compress(data.data(), im, o);
  const Bytes want = expected(data, im, o);
  const GpuResult g = gpu_decode(stream.data(), stream.size());
  ASSERT_FALSE(g.threw) << g.what;
  ASSERT_EQ(g.out.size(), want.size());
  EXPECT_TRUE(g.out == want);
  // Also with every coefficient scattered first (level 1's details not read
  // from the symbols by the inverse: wavelet_gpu::coded_detail_bands).
  cuda::wavelet_gpu::coded_detail_bands = false;
  const GpuResult scattered = gpu_decode(stream.data(), stream.size());
  cuda::wavelet_gpu::coded_detail_bands = true;
  ASSERT_FALSE(scattered.threw) << scattered.what;
  EXPECT_TRUE(scattered.out == want) << "every coefficient scattered";
  // And with every embedded chunk's checksum checked in the decode (by
  // default only when another check fails: wavelet_gpu::deferred_chunk_checks).
  cuda::wavelet_gpu::deferred_chunk_checks = false;
  const GpuResult checked = gpu_decode(stream.data(), stream.size());
  cuda::wavelet_gpu::deferred_chunk_checks = true;
  ASSERT_FALSE(checked.threw) << checked.what;
  EXPECT_TRUE(checked.out == want) << "every chunk's checksum checked";
  // And with only level 1's details read from the symbols, and with every
  // 2D level's whatever its size (the default reads levels 1-3 where their
  // bands are large: wavelet_gpu::coded_detail_levels, coded_level_min_samples).
  const unsigned coded_levels = cuda::wavelet_gpu::coded_detail_levels;
  const uint64_t min_samples = cuda::wavelet_gpu::coded_level_min_samples;
  for (const unsigned levels : {1u, 32u}) {
    cuda::wavelet_gpu::coded_detail_levels = levels;
    cuda::wavelet_gpu::coded_level_min_samples = 0;
    const GpuResult r = gpu_decode(stream.data(), stream.size());
    cuda::wavelet_gpu::coded_detail_levels = coded_levels;
    cuda::wavelet_gpu::coded_level_min_samples = min_samples;
    ASSERT_FALSE(r.threw) << r.what;
    EXPECT_TRUE(r.out == want) << (levels == 1 ? "level 1's details alone" : "every 2D level's details")
                               << " from the symbols";
  }
  // And with every 2D level's details prefetched raw a step ahead however
  // short the warps' chains, and with none (each decoded where it is
  // loaded): wavelet_gpu::dwt_tuning's coded_raw_min_pairs, coded_raw_prefetch.
  // (Raw: with levels without low bits on their own kernel, the default, and
  // on the kernel with the window: coded_shift_free.)
  const cuda::dwt::Tuning tuning = cuda::wavelet_gpu::dwt_tuning;
  for (const int mode : {0, 1, 2}) {  // raw, raw with the window everywhere, decoded where loaded
    cuda::wavelet_gpu::coded_detail_levels = 32;
    cuda::wavelet_gpu::coded_level_min_samples = 0;
    cuda::wavelet_gpu::dwt_tuning.coded_raw_prefetch = mode < 2;
    cuda::wavelet_gpu::dwt_tuning.coded_shift_free = mode == 0;
    cuda::wavelet_gpu::dwt_tuning.coded_raw_min_pairs = 0;
    const GpuResult r = gpu_decode(stream.data(), stream.size());
    cuda::wavelet_gpu::coded_detail_levels = coded_levels;
    cuda::wavelet_gpu::coded_level_min_samples = min_samples;
    cuda::wavelet_gpu::dwt_tuning = tuning;
    ASSERT_FALSE(r.threw) << r.what;
    EXPECT_TRUE(r.out == want) << "every 2D level's details "
                               << (mode == 0 ? "prefetched raw" : mode == 1 ? "prefetched raw, window kernel"
                                                                            : "decoded where loaded");
  }
  DecompressOptions d;
  d.backend = Backend::cuda;
  EXPECT_TRUE(decompress(stream.data(), stream.size(), d) == want);
}

}  // namespace vlec::test
