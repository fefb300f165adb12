// tests/test_gpu_wavelet_encode.cpp: the GPU writer of wavelet frames
// (vlec/device_wavelet.hpp wavelet_compress, cuda/wavelet_encode.cu) against
// the CPU writer, which defines the answer: for many shapes (1x1, odd, 1D,
// 3D, 4097x3, fewer samples than the levels ask for), u8 and u16, 1 to 4
// planes, RCT on and off, every level count from 0 to the most the shape
// allows, photograph-like data, full-range noise (wide alphabets, shifted
// low bits), sparse volumes (run-heavy groups: rle and rle+huffman embedded
// frames), all-equal and extreme images, container prefixes and big-endian
// output, the GPU's frame must equal the CPU's byte for byte, through the
// device API (on a stream of its own) and through vlec::wavelet_compress and
// vlec::compress with the CUDA backend; the GPU-written frames must decode
// on the GPU (and the CPU) to the samples. Argument errors and a too small
// output throw the documented codes. Every case prints its seed. Skips
// without a GPU.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <algorithm>
#include <array>
#include <random>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_encode_kernels.hpp"
#include "cuda/wavelet_kernels.hpp"
#include "test_util.hpp"
#include "vlec/device_wavelet.hpp"
#include "vlec/dwt.hpp"
#include "vlec/wavelet.hpp"
#include "format/frame.hpp"
#include "wavelet/frame_format.hpp"
#include "wavelet/layout.hpp"
#include "wavelet_test_util.hpp"

namespace vlec {
namespace {

using Bytes = std::vector<uint8_t>;
using cuda::DeviceBuffer;
using test::expected;
using test::image;
using test::name;
using test::noise;
using test::photo;
using test::seed_for;
using test::sparse;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

// The GPU writer through the device API, on a stream of its own, with the
// samples and the frame in buffers of exactly their size.
Bytes gpu_encode(const Bytes& data, const WaveletImage& im, const WaveletOptions& o) {
  DeviceBuffer<uint8_t> d_samples(data.size());
  CUDA_CHECK(cudaMemcpy(d_samples.get(), data.data(), data.size(), cudaMemcpyHostToDevice));
  const std::size_t capacity = device::wavelet_compress_capacity(im, o.container_prefix.size());
  EXPECT_EQ(capacity, wavelet_compress_bound(im, o.container_prefix.size()));
  DeviceBuffer<uint8_t> d_frame(capacity), d_temp(device::wavelet_compress_temp_bytes(im, o));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::size_t n = 0;
  try {
    n = device::wavelet_compress(d_samples.get(), im, d_frame.get(), capacity, d_temp.get(), d_temp.size(), s, o);
    CUDA_CHECK(cudaStreamSynchronize(s));
  } catch (...) {
    cudaStreamDestroy(s);
    throw;
  }
  CUDA_CHECK(cudaStreamDestroy(s));
  Bytes out(n);
  CUDA_CHECK(cudaMemcpy(out.data(), d_frame.get(), n, cudaMemcpyDeviceToHost));
  return out;
}

// Index of the first differing byte, or -1.
long long first_difference(const Bytes& a, const Bytes& b) {
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (a[i] != b[i]) return static_cast<long long>(i);
  return a.size() == b.size() ? -1 : static_cast<long long>(std::min(a.size(), b.size()));
}

// One image: the GPU's frame equals the CPU's; it decodes on the GPU and the
// CPU to the samples. `host_api` also writes it through vlec::wavelet_compress.
void check_case(const Bytes& data, const WaveletImage& im, WaveletOptions o, const std::string& what,
                bool host_api = false) {
  SCOPED_TRACE(what + " " + name(im) + " levels " + std::to_string(o.levels) + (o.colour_transform ? " rct" : "") +
               (o.big_endian_output ? " be" : "") + " prefix " + std::to_string(o.container_prefix.size()));
  o.backend = Backend::cpu;
  const Bytes cpu = wavelet_compress(data.data(), im, o);
  const Bytes gpu = gpu_encode(data, im, o);
  ASSERT_EQ(first_difference(gpu, cpu), -1) << "GPU frame of " << gpu.size() << " bytes, CPU frame of " << cpu.size();
  if (host_api) {
    o.backend = Backend::cuda;
    EXPECT_TRUE(wavelet_compress(data.data(), im, o) == cpu);
    Bytes into(wavelet_compress_bound(im, o.container_prefix.size()));
    into.resize(wavelet_compress(data.data(), im, into.data(), into.size(), o));
    EXPECT_TRUE(into == cpu);
  }
  const Bytes want = expected(data, im, o);
  DecompressOptions d;
  d.backend = Backend::cuda;
  EXPECT_TRUE(decompress(gpu.data(), gpu.size(), d) == want);
  d.backend = Backend::cpu;
  EXPECT_TRUE(decompress(gpu.data(), gpu.size(), d) == want);
}

unsigned max_levels(const WaveletImage& im) {
  return wavelet::effective_levels(DwtShape{im.width, im.height, im.depth}, kDwtMaxLevels);
}

TEST(GpuWaveletEncode, ShapesTypesPlanesLevels) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(51);
  const std::vector<std::array<std::size_t, 3>> shapes = {
      {1, 1, 1},  {2, 1, 1},   {1, 9, 1},  {7, 5, 1},   {33, 17, 1}, {64, 64, 1}, {100, 1, 1},
      {1000, 1, 1}, {4097, 3, 1}, {3, 4097, 1}, {17, 9, 5}, {16, 16, 16}, {5, 1, 7}, {129, 67, 1}, {1, 1, 300}};
  std::size_t cases = 0;
  for (std::size_t si = 0; si < shapes.size(); ++si)
    for (DType t : {DType::u8, DType::u16})
      for (unsigned planes = 1; planes <= 4; ++planes) {
        const WaveletImage im = image(shapes[si][0], shapes[si][1], shapes[si][2], planes, t);
        const unsigned top = max_levels(im);
        const Bytes data = photo(im, seed + 100 * si + 10 * planes + static_cast<unsigned>(t));
        for (unsigned levels : {0u, 1u, 2u, top, top + 3}) {  // top + 3: more than the shape allows (clamped)
          WaveletOptions o;
          o.levels = levels;
          o.colour_transform = (planes + levels) % 2 == 1;
          check_case(data, im, o, "photo", si % 5 == 0 && levels == 0);
          ++cases;
        }
      }
  std::cout << cases << " frames written on the GPU" << std::endl;
}

TEST(GpuWaveletEncode, EveryLevelCount) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(52);
  const WaveletImage im = image(67, 45, 1, 3, DType::u16);
  const Bytes data = photo(im, seed, 4.0);
  // The histogram kernel's blocks at a tile each (a short list: the
  // default) and at 8 tiles each, several boxes a block.
  for (bool by_list : {true, false}) {
    cuda::wavelet_gpu::histogram_tiles_by_list = by_list;
    for (unsigned levels = 0; levels <= 8; ++levels) {
      WaveletOptions o;
      o.levels = levels;
      check_case(data, im, o, by_list ? "every level" : "every level, 8 histogram tiles a block");
    }
  }
  cuda::wavelet_gpu::histogram_tiles_by_list = true;
}

// The embedded frames in one batch (the default) or a group at a time on
// the side streams, enqueued from a host thread per side stream or from the
// calling thread alone, on 8, 3 or 1 side streams,
// with histograms from the statistics (the default) or counted over the
// symbols, with the subband tops taken by the transform (the default) or by
// their own pass, with the codebooks built beside the symbols kernel (the
// default) or with the frames, in one launch a block shape (the default) or
// a launch each, with the checksum and level 1's histograms
// beside the coarser levels (the default) or in order, with every
// candidate's codebook built behind the shift rule (the default; counted)
// or only the narrower ones, or each group's after the decisions, write
// the same frame: three planes at six levels, each group with its own
// frame temp.
TEST(GpuWaveletEncode, FramesEnqueuedFromOneThreadOrMany) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(58);
  const WaveletImage im = image(301, 203, 1, 3, DType::u16);
  const Bytes data = photo(im, seed, 2.0);
  namespace wg = cuda::wavelet_gpu;
  const unsigned streams = wg::encode_side_streams;
  struct Setting {
    bool threaded;
    unsigned side;
    bool given_histograms, tops_in_transform, early_books, overlapped;
  };
  for (const Setting& c :
       {Setting{true, streams, true, true, true, true}, Setting{false, streams, true, true, true, true},
        Setting{true, 3, true, false, true, true}, Setting{true, 1, false, true, true, false},
        Setting{true, streams, true, true, false, false}}) {
    wg::threaded_frame_enqueue = c.threaded;
    wg::encode_side_streams = c.side;
    wg::histograms_from_statistics = c.given_histograms;
    wg::tops_in_transform = c.tops_in_transform;
    wg::codebooks_beside_symbols = c.early_books;
    wg::overlapped_statistics = c.overlapped;
    WaveletOptions o;
    o.levels = 6;
    check_case(data, im, o,
               std::string(c.threaded ? "a thread per side stream, " : "one thread, ") + std::to_string(c.side) +
                   " side streams, histograms " + (c.given_histograms ? "from the statistics" : "counted") +
                   ", tops " + (c.tops_in_transform ? "in the transform" : "by their own pass") + ", codebooks " +
                   (c.early_books ? "beside the symbols" : "with the frames") +
                   (c.overlapped ? ", statistics beside the coarser levels" : ", statistics in order"));
  }
  // The defaults again: each case below changes one setting from them.
  // (Until session 37 the last setting above stayed, so the cases below
  // ran with the codebooks built with the frames and the statistics in
  // order, not the variants of the defaults they name.)
  const auto loop_defaults = [&] {
    wg::threaded_frame_enqueue = true;
    wg::encode_side_streams = streams;
    wg::histograms_from_statistics = true;
    wg::tops_in_transform = true;
    wg::codebooks_beside_symbols = true;
    wg::overlapped_statistics = true;
  };
  loop_defaults();
  wg::batched_frames = false;  // a frame a group on the side streams, from one thread or many
  for (bool threaded : {true, false}) {
    wg::threaded_frame_enqueue = threaded;
    WaveletOptions o;
    o.levels = 6;
    check_case(data, im, o, std::string("a frame a group, ") + (threaded ? "a thread per side stream" : "one thread"));
  }
  wg::batched_frames = true;
  wg::threaded_frame_enqueue = true;
  wg::early_histogram_levels = 1;  // level 1 alone counted beside the coarser levels
  {
    WaveletOptions o;
    o.levels = 6;
    check_case(data, im, o, "level 1's histograms alone beside the coarser levels");
  }
  wg::early_histogram_levels = 2;
  wg::transform_chain_first = false;  // the levels on the caller's stream, the histograms at the side streams' priority
  {
    WaveletOptions o;
    o.levels = 6;
    check_case(data, im, o, "the transform's levels on the caller's stream");
  }
  wg::transform_chain_first = true;
  cuda::side_streams_high_priority = false;  // side streams at the default priority
  {
    WaveletOptions o;
    o.levels = 6;
    check_case(data, im, o, "side streams at the default priority");
  }
  cuda::side_streams_high_priority = true;
  wg::shift_rule_behind_statistics = false;  // the shift rule after a host wait for the statistics
  {
    WaveletOptions o;
    o.levels = 6;
    check_case(data, im, o, "shift rule enqueued after a wait for the statistics");
  }
  wg::shift_rule_behind_statistics = true;
  // The codebooks built after the decisions: from histograms derived after
  // the symbols kernel's launch (the default then) or ahead of it, in one
  // launch a block shape (the default then) or a launch each.
  wg::codebooks_behind_shift_rule = false;
  {
    WaveletOptions o;
    o.levels = 6;
    check_case(data, im, o, "codebooks after the decisions");
    wg::EncodePhases ph;
    wg::encode_phases = &ph;
    (void)gpu_encode(data, im, o);
    wg::encode_phases = nullptr;
    EXPECT_EQ(ph.candidate_book_groups, 0u);
  }
  wg::histograms_after_symbols_launch = false;  // the codebooks' histograms ahead of the symbols kernel
  {
    WaveletOptions o;
    o.levels = 6;
    check_case(data, im, o, "codebooks' histograms ahead of the symbols kernel");
  }
  wg::histograms_after_symbols_launch = true;
  wg::batched_codebooks = false;  // a launch a codebook, on the side streams
  for (bool threaded : {true, false}) {
    wg::threaded_frame_enqueue = threaded;
    WaveletOptions o;
    o.levels = 6;
    check_case(data, im, o, std::string("a codebook launch a group, ") + (threaded ? "threaded" : "one thread"));
  }
  wg::threaded_frame_enqueue = true;
  wg::batched_codebooks = true;
  wg::codebooks_behind_shift_rule = true;
  wg::late_samples_checksum = false;  // the samples checksum beside the transform (read with the frames' sizes)
  for (bool big_endian : {false, true}) {
    WaveletOptions o;
    o.levels = 6;
    o.big_endian_output = big_endian;
    check_case(data, im, o, "samples checksum beside the transform");
  }
  wg::late_samples_checksum = true;
  {
    WaveletOptions o;  // the default (after the transform), byte-swapped samples hashed from the symbols' region
    o.levels = 6;
    o.big_endian_output = true;
    check_case(data, im, o, "samples checksum after the transform, big-endian output");
  }
  wg::dwt_tuning.tops_six_blocks = false;  // the 5/3 kernel taking the tops at any register count
  {
    WaveletOptions o;
    o.levels = 6;
    check_case(data, im, o, "5/3 with tops at any register count");
  }
  wg::dwt_tuning.tops_six_blocks = true;
  wg::early_payload_copies = false;  // the payload copied after the wait for the frames' sizes
  for (bool big_endian : {false, true}) {
    WaveletOptions o;
    o.levels = 6;
    o.big_endian_output = big_endian;
    o.container_prefix = {'P', '5', '\n'};
    check_case(data, im, o, "payload copied after the wait");
  }
  wg::early_payload_copies = true;
  loop_defaults();
  // Every group's codebook from its candidate's, built behind the shift rule
  // (the default), then those of up to the smallest group's alphabet alone
  // (the others' built after the decisions, beside them): the groups so
  // coded are counted against the CPU frame's alphabets, so that a silent
  // fallback to the codebooks built after the decisions fails here.
  WaveletOptions o;
  o.levels = 6;
  o.backend = Backend::cpu;
  const Bytes cpu = wavelet_compress(data.data(), im, o);
  const wavelet::ParsedWavelet pw = wavelet::parse_wavelet_frame(cpu.data(), cpu.size(), 0);
  std::vector<uint32_t> alphabets;
  for (const wavelet::Group& g : pw.header.groups) {
    const format::ParsedFrame f = format::parse_frame(pw.payload + g.frame_offset, g.frame_bytes, 0);
    ASSERT_EQ(f.header.codec, Codec::huffman);
    alphabets.push_back(f.codebooks[0].alphabet_size);
  }
  const uint32_t least = *std::min_element(alphabets.begin(), alphabets.end());
  ASSERT_LT(least, *std::max_element(alphabets.begin(), alphabets.end())) << "groups of one alphabet size";
  ASSERT_LE(*std::max_element(alphabets.begin(), alphabets.end()), 8192u);
  for (uint32_t max_alphabet : {~0u, least}) {
    wg::candidate_books_max_alphabet = max_alphabet;
    wg::EncodePhases ph;
    wg::encode_phases = &ph;
    const Bytes gpu = gpu_encode(data, im, o);
    wg::encode_phases = nullptr;
    EXPECT_EQ(first_difference(gpu, cpu), -1);
    unsigned want = 0;
    for (uint32_t a : alphabets) want += a <= max_alphabet;
    EXPECT_EQ(ph.groups, alphabets.size());
    EXPECT_EQ(ph.candidate_book_groups, want) << "groups coded with their candidate's codebook, of alphabets up to "
                                              << max_alphabet;
    std::printf("candidates' codebooks of up to %u symbols: %u of %u groups\n", max_alphabet,
                ph.candidate_book_groups, ph.groups);
  }
  wg::candidate_books_max_alphabet = ~0u;
}

TEST(GpuWaveletEncode, NoiseWideAlphabetsPrefixesAndByteOrder) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(53);
  for (unsigned planes : {1u, 2u, 3u, 4u})
    for (DType t : {DType::u8, DType::u16}) {
      const WaveletImage im = image(211, 73, 1, planes, t);
      const Bytes data = noise(im, seed + planes);
      for (std::size_t prefix : {0, 1, 13, 16}) {
        WaveletOptions o;
        for (std::size_t i = 0; i < prefix; ++i) o.container_prefix.push_back(static_cast<uint8_t>('A' + i));
        o.big_endian_output = t == DType::u16 && prefix % 2 == 1;
        o.colour_transform = prefix != 16;
        check_case(data, im, o, "noise", prefix == 13);
      }
    }
  // 16-bit photographs with strong noise: symbols above 255, shifts above 0.
  for (double sigma : {20.0, 200.0}) {
    const WaveletImage im = image(300, 211, 1, 1, DType::u16);
    check_case(photo(im, seed + static_cast<uint64_t>(sigma), sigma), im, {}, "u16 noisy photo");
  }
}

// Run-heavy groups: with speculative Huffman frames (the default) they are
// coded as Huffman first and again in their own codec; without, only once.
TEST(GpuWaveletEncode, SparseVolumesAndExtremes) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(54);
  namespace wg = cuda::wavelet_gpu;
  for (DType t : {DType::u8, DType::u16}) {
    for (unsigned planes : {1u, 2u}) {
      const WaveletImage vol = image(48, 40, 36, planes, t);
      {  // the case this test is for: some group's embedded frame is not Huffman
        WaveletOptions o;
        o.backend = Backend::cpu;
        const Bytes cpu = wavelet_compress(sparse(vol, seed + planes).data(), vol, o);
        const wavelet::ParsedWavelet pw = wavelet::parse_wavelet_frame(cpu.data(), cpu.size(), 0);
        unsigned others = 0;
        for (const wavelet::Group& g : pw.header.groups)
          if (g.frame_bytes)
            others += format::read_fixed_header(pw.payload + g.frame_offset, g.frame_bytes, 0).codec != Codec::huffman;
        EXPECT_GT(others, 0u) << "no run-heavy group in the sparse volume";
      }
      for (bool speculative : {true, false}) {
        wg::speculative_huffman_frames = speculative;
        check_case(sparse(vol, seed + planes), vol, {},
                   speculative ? "sparse volume, speculative Huffman frames" : "sparse volume, codecs first",
                   planes == 1 && speculative);
      }
      wg::speculative_huffman_frames = true;
    }
    const WaveletImage im = image(97, 31, 1, 3, t);
    Bytes top(im.samples() * dtype_bytes(t), 0xFF), board(top.size()), zero(top.size(), 0);
    for (std::size_t i = 0; i < board.size(); ++i) {
      const std::size_t pixel = i / dtype_bytes(t) / 3;
      board[i] = (pixel % 97 + pixel / 97) % 2 ? 0xFF : 0;
    }
    check_case(top, im, {}, "all max");
    check_case(board, im, {}, "extremes");
    check_case(zero, im, {}, "all zero");
  }
}

// Boxes above 65,536 coefficients take the GPU histogram (shared counters
// for up to 8,192 bins, global atomics above); tiles straddle rows and boxes.
TEST(GpuWaveletEncode, LargeImages) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(55);
  const WaveletImage im = image(2048, 1531, 1, 1, DType::u16);
  check_case(photo(im, seed, 3.0), im, {}, "large", true);
  check_case(noise(im, seed + 1), im, {}, "large noise");
  const WaveletImage rgb = image(1023, 767, 1, 3, DType::u8);
  check_case(photo(rgb, seed + 2), rgb, {}, "large rgb");
  const WaveletImage vol = image(97, 130, 60, 1, DType::u16);
  check_case(sparse(vol, seed + 3), vol, {}, "sparse volume");
  check_case(photo(vol, seed + 4, 5.0), vol, {}, "volume");
}

// The symbols kernel's straight path for whole tiles inside one row of
// their box, against the walk of every tile, its blocks taking 4 tiles (the
// default), 1 or 3 (runs of a box's tiles, blocks spanning boxes and
// groups): images 4,096 wide (level 0's
// box and level 1's four have rows of whole 2,048-value tiles) and 4,100
// wide (no box has), smooth and noisy (low bits below the symbols), u8 and
// u16, one plane and three (RCT), a container prefix (a frame's symbols
// start anywhere), and at several level counts so that groups merge boxes
// whose first symbols sit at any group index (the path then needs the
// tile's first symbol at a multiple of 4 and falls back otherwise).
TEST(GpuWaveletEncode, SymbolsOfWholeRowTiles) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(61);
  std::size_t cases = 0;
  for (std::size_t width : {4096, 4100})
    for (DType t : {DType::u8, DType::u16})
      for (unsigned planes : {1u, 3u}) {
        const WaveletImage im = image(width, 21, 1, planes, t);
        const Bytes smooth = photo(im, seed + width + 10 * planes + static_cast<unsigned>(t), 2.0);
        const Bytes rough = noise(im, seed + 7 * width + planes + static_cast<unsigned>(t));
        for (unsigned levels : {0u, 1u, 3u}) {
          WaveletOptions o;
          o.levels = levels;
          o.colour_transform = planes == 3;
          if (levels == 1) o.container_prefix = {1, 2, 3};
          for (bool row_tiles : {true, false})
            for (unsigned block_tiles : {4u, 1u, 3u}) {
              cuda::wavelet_gpu::symbols_row_tiles = row_tiles;
              cuda::wavelet_gpu::symbols_block_tiles = block_tiles;
              const std::string how = std::string(row_tiles ? "row tiles straight" : "every tile walked") + ", " +
                                      std::to_string(block_tiles) + " tiles a block";
              check_case(smooth, im, o, "smooth, " + how);
              check_case(rough, im, o, "noise, " + how);
              cases += 2;
            }
          cuda::wavelet_gpu::symbols_row_tiles = true;
          cuda::wavelet_gpu::symbols_block_tiles = 4;
        }
      }
  std::cout << cases << " frames written on the GPU" << std::endl;
}

// A flat 16-bit image with sparse full-range spikes: level 1's boxes are
// wide (their tops need ~65,536 bins) and nearly every value falls in bin 0,
// so the wide histogram's 16-bit shared counters reach a chunk's whole
// 32,768 values (their limit: the counters are flushed every chunk); the
// images are large enough (6.5 M values) that blocks of that kernel take
// more than one chunk, and wide enough (level 1's boxes 4,096 and 4,097
// values a row) that it counts pairs of tiles of one row with 16-byte loads
// where a row's start is aligned (every row of the first; every other row
// of the second, whose odd width leaves the rest to the tile-by-tile path).
TEST(GpuWaveletEncode, WideHistogramsOfOneBin) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(59);
  std::mt19937_64 rng(seed);
  for (std::size_t width : {8192, 8194}) {
    const WaveletImage im = image(width, 800, 1, 1, DType::u16);
    Bytes data(im.samples() * 2);
    for (std::size_t i = 0; i < im.samples(); ++i) {
      const uint16_t v = rng() % 600 == 0 ? static_cast<uint16_t>(rng()) : 1000;
      data[2 * i] = static_cast<uint8_t>(v), data[2 * i + 1] = static_cast<uint8_t>(v >> 8);
    }
    for (bool tile_pairs : {true, false}) {  // two tiles of a row at once, or tile by tile
      cuda::wavelet_gpu::wide_histogram_tile_pairs = tile_pairs;
      check_case(data, im, {}, tile_pairs ? "flat with spikes" : "flat with spikes, tile by tile");
    }
    cuda::wavelet_gpu::wide_histogram_tile_pairs = true;
  }
}

// Photographs whose level-1 boxes are 4,096 and 4,097 values a row (level
// 2's 2,048 and 2,049): the histogram kernels' tiles lie inside rows, their
// starts aligned in every row of the first image and in every other row of
// the second.
TEST(GpuWaveletEncode, WidePhotographs) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(61);
  for (std::size_t width : {8192, 8194}) {
    const WaveletImage im = image(width, 300, 1, 1, DType::u8);  // tops below 8,192: shared counters
    const Bytes data = photo(im, seed + width, 3.0);
    WaveletOptions o;
    o.levels = 3;
    check_case(data, im, o, "wide photograph");
  }
}

TEST(GpuWaveletEncode, GenericCompressWithTheCudaBackend) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(56);
  const WaveletImage im = image(5003, 1, 1, 1, DType::u16);
  const Bytes data = photo(im, seed, 6.0);
  CompressOptions o;
  o.codec = CodecChoice::wavelet;
  o.dtype = DType::u16;
  o.backend = Backend::cpu;
  const Bytes cpu = compress(data.data(), data.size(), o);
  o.backend = Backend::cuda;
  const Bytes gpu = compress(data.data(), data.size(), o);
  EXPECT_EQ(first_difference(gpu, cpu), -1);
  DecompressOptions d;
  d.backend = Backend::cuda;
  EXPECT_TRUE(decompress(gpu.data(), gpu.size(), d) == data);
}

TEST(GpuWaveletEncode, ErrorsAreThrown) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(57);
  const WaveletImage im = image(40, 30, 1, 3, DType::u8);
  const Bytes data = photo(im, seed);
  DeviceBuffer<uint8_t> d_samples(data.size() + 16), d_frame(wavelet_compress_bound(im, 0)),
      d_temp(device::wavelet_compress_temp_bytes(im));
  CUDA_CHECK(cudaMemcpy(d_samples.get(), data.data(), data.size(), cudaMemcpyHostToDevice));
  auto code_of = [&](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode{};
  };
  // Too small an output: output_too_small (the CPU frame's size minus one),
  // with the output untouched (the payload's early copies, enqueued before
  // the frames' sizes are known, see that it would not fit and copy nothing).
  WaveletOptions o;
  o.backend = Backend::cpu;
  const std::size_t need = wavelet_compress(data.data(), im, o).size();
  for (const bool early : {true, false}) {
    cuda::wavelet_gpu::early_payload_copies = early;
    CUDA_CHECK(cudaMemset(d_frame.get(), 0xA5, d_frame.size()));
    EXPECT_EQ(code_of([&] {
                device::wavelet_compress(d_samples.get(), im, d_frame.get(), need - 1, d_temp.get(), d_temp.size(),
                                         nullptr);
              }),
              ErrorCode::output_too_small);
    CUDA_CHECK(cudaDeviceSynchronize());
    Bytes after(d_frame.size());
    CUDA_CHECK(cudaMemcpy(after.data(), d_frame.get(), after.size(), cudaMemcpyDeviceToHost));
    EXPECT_TRUE(std::all_of(after.begin(), after.end(), [](uint8_t b) { return b == 0xA5; }))
        << "an output too small was written to" << (early ? " (early copies)" : "");
  }
  cuda::wavelet_gpu::early_payload_copies = true;
  EXPECT_EQ(device::wavelet_compress(d_samples.get(), im, d_frame.get(), need, d_temp.get(), d_temp.size(), nullptr),
            need);
  EXPECT_EQ(code_of([&] {
              device::wavelet_compress(d_samples.get() + 1, im, d_frame.get(), d_frame.size(), d_temp.get(),
                                       d_temp.size(), nullptr);
            }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(code_of([&] {
              device::wavelet_compress(d_samples.get(), im, d_frame.get(), d_frame.size(), d_temp.get(),
                                       d_temp.size() - 1, nullptr);
            }),
            ErrorCode::invalid_argument);
  WaveletOptions be;
  be.big_endian_output = true;  // u8 samples: invalid, as on the CPU
  EXPECT_EQ(code_of([&] { device::wavelet_compress_temp_bytes(im, be); }), ErrorCode::invalid_argument);
  WaveletImage five = im;
  five.planes = 5;
  EXPECT_EQ(code_of([&] { device::wavelet_compress_temp_bytes(five, {}); }), ErrorCode::invalid_argument);
  CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
