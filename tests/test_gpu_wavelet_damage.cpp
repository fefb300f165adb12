// tests/test_gpu_wavelet_damage.cpp: the GPU decoder of wavelet frames
// against damaged and truncated frames, which must throw the CPU decoder's
// error code and never crash (the device run also runs the first test under
// compute-sanitizer), and the decoder's plan on several threads and its
// header reads done several ways, which must give the same output, and for
// damaged frames the same error, message included. Every case prints its
// seed. Skips without a GPU. (Split from test_gpu_wavelet.cpp.)
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/wavelet_kernels.hpp"
#include "format/frame.hpp"
#include "gpu_wavelet_test_util.hpp"
#include "test_util.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/frame_format.hpp"
#include "wavelet/layout.hpp"
#include "wavelet_test_util.hpp"

namespace vlec {
namespace {

using test::Bytes;
using test::check_case;
using test::cpu_decode;
using test::CpuResult;
using test::gpu_decode;
using test::GpuResult;
using test::seed_for;

using test::image;
using test::noise;
using test::photo;
using test::sparse;

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
