// tests/test_gpu_wavelet.cpp: the GPU decoder of wavelet frames
// (vlec/device_wavelet.hpp, cuda/wavelet_decode.cu) against the CPU codec,
// which defines the answer: frames written by the CPU writer, of many shapes
// (1x1, odd, 1D, 3D, 4097x3), u8 and u16, 1 to 4 planes, RCT on and off,
// every level count from 0 to the most the shape allows, big-endian output,
// container prefixes of odd and aligned lengths, photograph-like data, noise
// that forces shifted low bits, and sparse volumes that embed rle frames,
// must decode on the GPU to the original samples, byte for byte, through the
// device API (with the details of levels 1-3 where their bands are large,
// of level 1 alone, or of every 2D level read from the symbols by the
// inverse, and with every coefficient scattered first) and through vlec::decompress
// with the CUDA backend. The samples
// checksum kernels (both definitions of FORMAT §10.2) are checked against
// the host XXH3 at lengths around every boundary. Damaged and truncated
// frames, the threaded plan and the header reads: test_gpu_wavelet_damage.cpp;
// the helpers both files use: gpu_wavelet_test_util.hpp. Every case prints
// its seed. Skips without a GPU.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/wavelet_checksum.hpp"
#include "cuda/wavelet_kernels.hpp"
#include "format/frame.hpp"
#include "test_util.hpp"
#include "gpu_wavelet_test_util.hpp"
#include "wavelet_test_util.hpp"
#include "vlec/device_wavelet.hpp"
#include "vlec/dwt.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/frame_format.hpp"
#include "wavelet/layout.hpp"
#include "wavelet/samples_checksum.hpp"

namespace vlec {
namespace {

using cuda::DeviceBuffer;
using test::Bytes;
using test::check_case;
using test::expected;
using test::gpu_decode;
using test::GpuResult;
using test::seed_for;

using test::image;
using test::noise;
using test::photo;
using test::sparse;

TEST(GpuWavelet, ShapesTypesPlanesLevels) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(1);
  const std::vector<std::array<std::size_t, 3>> shapes = {
      {1, 1, 1}, {2, 1, 1}, {1, 9, 1}, {7, 5, 1}, {33, 17, 1}, {64, 64, 1}, {100, 1, 1}, {1000, 1, 1},
      {4097, 3, 1}, {3, 4097, 1}, {17, 9, 5}, {16, 16, 16}, {5, 1, 7}, {129, 67, 1}};
  std::size_t cases = 0;
  for (std::size_t si = 0; si < shapes.size(); ++si)
    for (DType t : {DType::u8, DType::u16})
      for (unsigned planes = 1; planes <= 4; ++planes) {
        const WaveletImage im = image(shapes[si][0], shapes[si][1], shapes[si][2], planes, t);
        const unsigned max_levels = wavelet::effective_levels(DwtShape{im.width, im.height, im.depth}, kDwtMaxLevels);
        const Bytes data = photo(im, seed + 100 * si + 10 * planes + static_cast<unsigned>(t));
        for (unsigned levels : {0u, 1u, 2u, max_levels}) {
          if (levels > max_levels) continue;
          WaveletOptions o;
          o.levels = levels;  // 0: automatic (6, clamped); a 1x1 image has 0 levels
          o.colour_transform = (planes + levels) % 2 == 1;
          check_case(data, im, o, "photo");
          ++cases;
        }
      }
  std::cout << cases << " frames decoded on the GPU" << std::endl;
}

TEST(GpuWavelet, EveryLevelCountAndNoLevels) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(2);
  const WaveletImage im = image(67, 45, 1, 3, DType::u16);
  const Bytes data = photo(im, seed, 4.0);
  for (unsigned levels = 1; levels <= 8; ++levels) {
    WaveletOptions o;
    o.levels = levels;
    check_case(data, im, o, "every level");
  }
  // levels = 0 asks for the automatic count; a 1x1 image has no level at all.
  check_case(photo(image(1, 1, 1, 4, DType::u16), seed), image(1, 1, 1, 4, DType::u16), {}, "1x1");
}

TEST(GpuWavelet, NoiseShiftsPrefixesAndByteOrder) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(3);
  for (unsigned planes : {1u, 3u, 4u})
    for (DType t : {DType::u8, DType::u16}) {
      const WaveletImage im = image(211, 73, 1, planes, t);
      const Bytes data = noise(im, seed + planes);
      for (std::size_t prefix : {0, 1, 13, 16, 19}) {
        WaveletOptions o;
        for (std::size_t i = 0; i < prefix; ++i) o.container_prefix.push_back(static_cast<uint8_t>('A' + i));
        o.big_endian_output = t == DType::u16 && prefix % 2 == 1;
        check_case(data, im, o, "noise");
      }
    }
}

TEST(GpuWavelet, SparseVolumesAndExtremes) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(4);
  for (DType t : {DType::u8, DType::u16}) {
    const WaveletImage vol = image(48, 40, 36, 1, t);
    check_case(sparse(vol, seed), vol, {}, "sparse volume");
    // All-equal at the top of the range, and a checkerboard of the extremes.
    const WaveletImage im = image(97, 31, 1, 3, t);
    Bytes top(im.samples() * dtype_bytes(t), 0xFF), board(top.size());
    for (std::size_t i = 0; i < board.size(); ++i) {
      const std::size_t pixel = i / dtype_bytes(t) / 3;
      board[i] = (pixel % 97 + pixel / 97) % 2 ? 0xFF : 0;
    }
    check_case(top, im, {}, "all max");
    check_case(board, im, {}, "extremes");
  }
}

TEST(GpuWavelet, LargeImage) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(5);
  const WaveletImage im = image(2048, 1531, 1, 1, DType::u16);
  check_case(photo(im, seed, 3.0), im, {}, "large");
  const WaveletImage rgb = image(1023, 767, 1, 3, DType::u8);
  check_case(photo(rgb, seed + 1), rgb, {}, "large rgb");
}

// The samples checksum kernels against the host XXH3, both definitions.
TEST(GpuWavelet, SamplesChecksumBothDefinitions) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(6);
  std::mt19937_64 rng(seed);
  const uint64_t S = cuda::kChecksumSegmentBytes;
  for (uint64_t len : {uint64_t{1}, uint64_t{16}, uint64_t{240}, uint64_t{241}, uint64_t{1024}, uint64_t{1025},
                       uint64_t{2049}, uint64_t{4096 + 63}, uint64_t{5 * 1024 + 1}, uint64_t{8 * 1024 + 241}, S - 1, S, S + 1, 3 * S + 5, 17 * S, uint64_t{5} << 20, uint64_t{300} * S + 777,
                       // over 8,192 segments: the segment hashes' own hash covers more than 64 KiB
                       uint64_t{8300} * S + 99}) {
    Bytes data(len);
    for (uint64_t at = 0; at < len; at += 8) {
      const uint64_t r = rng();
      std::memcpy(data.data() + at, &r, std::min<uint64_t>(8, len - at));
    }
    std::vector<uint64_t> seg;
    for (uint64_t at = 0; at < len; at += S) seg.push_back(checksum64(data.data() + at, std::min(S, len - at)));
    const uint64_t want_seg = checksum64(seg.data(), 8 * seg.size());
    EXPECT_EQ(want_seg, wavelet::segmented_checksum(data.data(), len, false, 0));  // the CPU reader's definition
    const uint64_t want_seq = checksum64(data.data(), len);
    DeviceBuffer<uint8_t> d(len);
    CUDA_CHECK(cudaMemcpy(d.get(), data.data(), len, cudaMemcpyHostToDevice));
    DeviceBuffer<uint64_t> h(1);
    // Sequential; segmented; segmented block by block (checksum_blocks_in_flight 1).
    for (int mode : {0, 1, 2}) {
      const bool segmented = mode > 0;
      DeviceBuffer<uint8_t> temp(cuda::samples_checksum_temp_bytes(len, segmented));
      cuda::checksum_blocks_in_flight = mode == 2 ? 1 : cuda::kBlocksInFlight;
      cuda::samples_checksum_device(d.get(), len, segmented, h.get(), temp.get(), temp.size(), nullptr);
      cuda::checksum_blocks_in_flight = cuda::kBlocksInFlight;
      uint64_t got = 0;
      CUDA_CHECK(cudaMemcpy(&got, h.get(), 8, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, segmented ? want_seg : want_seq)
          << "length " << len << (segmented ? " segmented" : "") << (mode == 2 ? ", block by block" : "");
    }
  }
}

using test::with_header;

// Frames of both checksum definitions (flag bit 2 set: segmented, what
// writers write; clear: one XXH3 over all samples, the first 1.1 streams)
// decode on the GPU; a checksum under the other definition is a mismatch.
TEST(GpuWavelet, BothSamplesChecksumDefinitionsEndToEnd) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(8);
  for (const WaveletImage& im : {image(300, 229, 1, 3, DType::u16), image(1000, 333, 1, 1, DType::u8)}) {
    WaveletOptions o;
    o.big_endian_output = im.dtype == DType::u16;
    o.container_prefix = {'P', '6', '\n'};  // samples behind an odd prefix: the staged path
    const Bytes data = photo(im, seed);
    const Bytes s = wavelet_compress(data.data(), im, o);
    const Bytes want = expected(data, im, o);
    const Bytes samples(want.begin() + 3, want.end());
    const uint8_t flags = s[48 + 26];
    ASSERT_TRUE(flags & wavelet::kFlagSegmentedChecksum);
    const uint8_t old_flags = flags & ~wavelet::kFlagSegmentedChecksum;
    const uint64_t whole = checksum64(samples.data(), samples.size());
    const uint64_t segmented = wavelet::segmented_checksum(samples.data(), samples.size(), false, 0);
    for (const Bytes& good : {s, with_header(s, old_flags, whole)}) {
      const GpuResult g = gpu_decode(good.data(), good.size());
      ASSERT_FALSE(g.threw) << g.what;
      EXPECT_TRUE(g.out == want);
    }
    for (const Bytes& bad : {with_header(s, flags, segmented ^ 1), with_header(s, old_flags, whole ^ (1ull << 63)),
                             with_header(s, old_flags, segmented), with_header(s, flags, whole)}) {
      const GpuResult g = gpu_decode(bad.data(), bad.size());
      ASSERT_TRUE(g.threw);
      EXPECT_EQ(g.code, ErrorCode::checksum_mismatch) << g.what;
    }
  }
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
