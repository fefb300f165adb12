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
// the host XXH3 at lengths around every boundary. Corrupt and truncated
// frames must throw the CPU decoder's error code, never crash (the device run
// also runs this test under compute-sanitizer). Every case prints its seed.
// Skips without a GPU.
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

using Bytes = std::vector<uint8_t>;
using cuda::DeviceBuffer;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

using test::seed_for;

using test::image;
using test::name;
using test::noise;
using test::photo;
using test::sparse;

// What decompress() must return: prefix, then the samples in the asked order.
Bytes expected(const Bytes& data, const WaveletImage& im, const WaveletOptions& o) {
  Bytes out = o.container_prefix;
  Bytes s = data;
  if (o.big_endian_output && im.dtype == DType::u16)
    for (std::size_t i = 0; i + 1 < s.size(); i += 2) std::swap(s[i], s[i + 1]);
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

// Decode `stream` (only its first `bytes` bytes are on the device, in a
// buffer of exactly that size, so that compute-sanitizer sees any read
// past it) with the device API: the output, or the error it threw.
struct GpuResult {
  bool threw = false;
  ErrorCode code{};
  std::string what;
  Bytes out;
};

GpuResult gpu_decode(const uint8_t* stream, std::size_t bytes) {
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

CpuResult cpu_decode(const uint8_t* stream, std::size_t bytes) {
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
void check_case(const Bytes& data, const WaveletImage& im, const WaveletOptions& o, const std::string& what) {
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

// Every damaged or truncated frame is rejected with the CPU decoder's code.
TEST(GpuWavelet, CorruptAndTruncatedFramesAreRejected) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(7);
  std::mt19937_64 rng(seed);
  // u16 RGB noise: shifted low bits; plus a photo (k = 0 groups) and a sparse
  // volume (rle embedded frames).
  std::vector<Bytes> streams;
  {
    const WaveletImage im = image(61, 47, 1, 3, DType::u16);
    streams.push_back(wavelet_compress(noise(im, seed).data(), im));
    const WaveletImage ph = image(90, 70, 1, 1, DType::u8);
    WaveletOptions o;
    o.container_prefix = {'P', '5', '\n'};
    streams.push_back(wavelet_compress(photo(ph, seed).data(), ph, o));
    const WaveletImage vol = image(24, 20, 18, 1, DType::u8);
    streams.push_back(wavelet_compress(sparse(vol, seed).data(), vol));
  }
  // VLEC_GPU_WAVELET_FLIPS: flips per stream (150; fewer under compute-sanitizer).
  const char* env = std::getenv("VLEC_GPU_WAVELET_FLIPS");
  const int flips = env ? std::atoi(env) : 150;
  std::size_t trials = 0, rejected = 0, code_mismatch = 0;
  for (const Bytes& clean : streams) {
    for (int t = 0; t < flips; ++t) {
      Bytes s = clean;
      const std::size_t at = rng() % s.size();
      s[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      const CpuResult c = cpu_decode(s.data(), s.size());
      const GpuResult g = gpu_decode(s.data(), s.size());
      ++trials;
      ASSERT_EQ(g.threw, c.threw) << "flip at byte " << at << ": " << g.what;
      if (g.threw) {
        ++rejected;
        if (g.code != c.code) ++code_mismatch;
        EXPECT_EQ(g.code, c.code) << "flip at byte " << at << ": GPU says " << g.what;
      } else {
        EXPECT_TRUE(g.out == c.out) << "flip at byte " << at;
      }
      // The same with every embedded chunk's checksum checked in the first
      // decode (by default a frame is decoded again with them only when
      // another check fails: wavelet_gpu::deferred_chunk_checks): the same
      // verdict, error and message.
      cuda::wavelet_gpu::deferred_chunk_checks = false;
      const GpuResult checked = gpu_decode(s.data(), s.size());
      cuda::wavelet_gpu::deferred_chunk_checks = true;
      ASSERT_EQ(checked.threw, g.threw) << "flip at byte " << at << ": " << checked.what;
      EXPECT_EQ(checked.code, g.code) << "flip at byte " << at;
      EXPECT_EQ(checked.what, g.what) << "flip at byte " << at;
      if (!g.threw) EXPECT_TRUE(checked.out == g.out) << "flip at byte " << at;
    }
    // Every group's low-bit padding (the bits after its last value): one
    // flipped bit there is corrupt_stream on both, whichever kernel reads
    // the group's values (the scatter, or the inverse for level 1's details).
    const wavelet::ParsedWavelet w = wavelet::parse_wavelet_frame(clean.data(), clean.size(), 0);
    for (const wavelet::Group& gr : w.header.groups) {
      const uint64_t used = gr.samples * gr.shift, bytes = wavelet::low_bits_bytes(gr.samples, gr.shift);
      if (used == 8 * bytes) continue;
      Bytes s = clean;
      const uint64_t bit = used + rng() % (8 * bytes - used);
      s[w.frame.header_area_bytes() + gr.bits_offset + bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      const CpuResult c = cpu_decode(s.data(), s.size());
      const GpuResult g = gpu_decode(s.data(), s.size());
      ++trials;
      ASSERT_TRUE(c.threw);
      ASSERT_TRUE(g.threw) << "low-bit padding bit " << bit;
      ++rejected;
      EXPECT_EQ(g.code, c.code) << "low-bit padding bit " << bit << ": GPU says " << g.what;
    }
    for (std::size_t cut : {std::size_t{0}, std::size_t{7}, std::size_t{48}, std::size_t{100}, clean.size() / 2,
                            clean.size() - 8, clean.size() - 1}) {
      const GpuResult g = gpu_decode(clean.data(), cut);
      const CpuResult c = cpu_decode(clean.data(), cut);
      ++trials;
      ASSERT_TRUE(g.threw) << "cut at " << cut;
      ASSERT_TRUE(c.threw);
      ++rejected;
      EXPECT_EQ(g.code, c.code) << "cut at " << cut << ": GPU says " << g.what;
    }
  }
  std::cout << trials << " damaged frames, " << rejected << " rejected, " << code_mismatch
            << " with another code than the CPU's" << std::endl;
}

// The decoder parses the embedded headers and stages the groups' decodes on
// several threads when they are large (wide codebooks); forced here on small
// frames: the same output, and for damaged frames the same error as on one
// thread (the lowest group's), message included, and the CPU's code.
TEST(GpuWavelet, GroupsPlannedOnSeveralThreads) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(8);
  std::mt19937_64 rng(seed);
  struct Restore {
    uint64_t work = cuda::wavelet_gpu::parallel_group_work;
    ~Restore() { cuda::wavelet_gpu::parallel_group_work = work; }
  } restore;
  const WaveletImage rgb = image(301, 203, 1, 3, DType::u16), grey = image(257, 129, 1, 1, DType::u8);
  const WaveletImage vol = image(24, 20, 18, 1, DType::u8);
  const std::vector<std::pair<Bytes, WaveletImage>> cases = {
      {noise(rgb, seed), rgb}, {photo(grey, seed + 1), grey}, {sparse(vol, seed + 2), vol}};
  cuda::wavelet_gpu::parallel_group_work = 0;
  for (const auto& [data, im] : cases) check_case(data, im, {}, "threaded plan");
  std::size_t trials = 0, rejected = 0;
  for (const auto& [data, im] : cases) {
    const Bytes clean = wavelet_compress(data.data(), im);
    const wavelet::ParsedWavelet w = wavelet::parse_wavelet_frame(clean.data(), clean.size(), 0);
    const uint64_t payload = w.frame.header_area_bytes();
    if (w.header.groups.size() < 2) continue;  // the sparse volume: one group
    for (int t = 0; t < 40; ++t) {
      // Damage two groups' embedded header areas (fixed header, codebook,
      // index). Only there: the CPU decodes group by group, the GPU checks
      // every header before it decodes, so a header error in one group and
      // a payload error in an earlier one are reported differently.
      Bytes s = clean;
      for (int k = 0; k < 2; ++k) {
        const wavelet::Group& g = w.header.groups[rng() % w.header.groups.size()];
        const uint8_t* frame = clean.data() + payload + g.frame_offset;
        const uint64_t area = format::read_fixed_header(frame, format::kFixedHeaderBytes, 0).header_area_bytes();
        const uint64_t at = payload + g.frame_offset + rng() % std::min<uint64_t>(area, g.frame_bytes);
        s[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      }
      cuda::wavelet_gpu::parallel_group_work = 0;
      const GpuResult threaded = gpu_decode(s.data(), s.size());
      cuda::wavelet_gpu::parallel_group_work = restore.work;
      const GpuResult single = gpu_decode(s.data(), s.size());
      const CpuResult c = cpu_decode(s.data(), s.size());
      ++trials;
      ASSERT_EQ(threaded.threw, single.threw) << threaded.what;
      ASSERT_EQ(threaded.threw, c.threw) << threaded.what;
      if (threaded.threw) {
        ++rejected;
        EXPECT_EQ(threaded.what, single.what);
        EXPECT_EQ(threaded.code, c.code) << threaded.what;
      } else {
        EXPECT_TRUE(threaded.out == c.out);
      }
    }
  }
  EXPECT_GE(trials, 80u);
  std::cout << trials << " frames damaged in two groups' headers, " << rejected << " rejected" << std::endl;
}

// The plan's header reads: speculative (the default: the first 4 KiB, then
// each group's fixed header with as much of its area as a small-codebook
// frame has, the larger areas read again), in four rounds, and with one copy
// a group instead of batches: the same output, and for damaged frames the
// same error, message included. The 16-bit noise has codebooks larger than
// the guess, so its groups take the second round.
TEST(GpuWavelet, HeaderReadsSpeculativeOrInRounds) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(9);
  std::mt19937_64 rng(seed);
  namespace wg = cuda::wavelet_gpu;
  struct Restore {
    ~Restore() {
      wg::speculative_header_reads = true, wg::batched_header_reads = true, wg::batched_area_reads = true;
      wg::gathered_header_reads = true;
    }
  } restore;
  auto decode_with = [](const Bytes& s, bool speculative, bool batched, bool areas, bool gathered = false) {
    wg::speculative_header_reads = speculative, wg::batched_header_reads = batched, wg::batched_area_reads = areas;
    wg::gathered_header_reads = gathered;
    GpuResult r = gpu_decode(s.data(), s.size());
    wg::speculative_header_reads = true, wg::batched_header_reads = true, wg::batched_area_reads = true;
    wg::gathered_header_reads = true;
    return r;
  };
  const WaveletImage rgb = image(301, 203, 1, 3, DType::u16), grey = image(1100, 700, 1, 1, DType::u8);
  const WaveletImage vol = image(24, 20, 18, 1, DType::u8);
  const std::vector<std::pair<Bytes, WaveletImage>> cases = {
      {noise(rgb, seed), rgb}, {photo(grey, seed + 1), grey}, {sparse(vol, seed + 2), vol}};
  std::size_t trials = 0, rejected = 0;
  for (const auto& [data, im] : cases) {
    const Bytes clean = wavelet_compress(data.data(), im);
    const wavelet::ParsedWavelet w = wavelet::parse_wavelet_frame(clean.data(), clean.size(), 0);
    const uint64_t payload = w.frame.header_area_bytes();
    for (int t = 0; t < 31; ++t) {
      // t = 0 the clean frame; else one bit flipped in the frame's own header
      // area or in a group's embedded header area.
      Bytes s = clean;
      if (t > 0) {
        uint64_t at = rng() % payload;
        if (t % 2) {
          const wavelet::Group& g = w.header.groups[rng() % w.header.groups.size()];
          const uint64_t area =
              format::read_fixed_header(clean.data() + payload + g.frame_offset, format::kFixedHeaderBytes, 0)
                  .header_area_bytes();
          at = payload + g.frame_offset + rng() % std::min<uint64_t>(area, g.frame_bytes);
        }
        s[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      }
      const GpuResult spec = decode_with(s, true, true, true);
      const GpuResult rounds = decode_with(s, false, true, true);
      const GpuResult single = decode_with(s, true, false, false);
      const GpuResult fixed_batched = decode_with(s, true, true, false);
      // The default: the first 4 KiB and the embedded header areas gathered
      // by a kernel in one round trip; on a shortened frame too (its last
      // group's frame cut, or the group table itself).
      const GpuResult gathered = decode_with(s, true, true, true, true);
      const std::size_t cut = t % 3 == 0 ? rng() % s.size() : s.size();
      const GpuResult gathered_cut = decode_with(Bytes(s.begin(), s.begin() + cut), true, true, true, true);
      const GpuResult copied_cut = decode_with(Bytes(s.begin(), s.begin() + cut), true, true, true);
      ++trials;
      if (t == 0) {
        ASSERT_FALSE(spec.threw) << spec.what;
        EXPECT_TRUE(spec.out == data);
      }
      ASSERT_EQ(gathered_cut.threw, copied_cut.threw) << "cut at " << cut << ": " << gathered_cut.what;
      EXPECT_EQ(gathered_cut.what, copied_cut.what);
      EXPECT_TRUE(gathered_cut.out == copied_cut.out);
      EXPECT_TRUE(cut == s.size() || gathered_cut.threw) << "cut at " << cut;
      for (const GpuResult* r : {&rounds, &single, &fixed_batched, &gathered}) {
        ASSERT_EQ(r->threw, spec.threw) << r->what << " / " << spec.what;
        EXPECT_EQ(r->what, spec.what);
        EXPECT_EQ(r->code, spec.code);
        EXPECT_TRUE(r->out == spec.out);
      }
      rejected += spec.threw;
    }
  }
  std::cout << trials << " frames (clean and damaged headers) read five ways, " << rejected << " rejected"
            << std::endl;
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
