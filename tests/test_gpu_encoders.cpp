// tests/test_gpu_encoders.cpp: every GPU Huffman encoder strategy (warp,
// lanes, pavle, reduce_shuffle) against the CPU backend, byte for byte, over the
// generators, sizes, chunk sizes and length limits that stress the chunk
// layout: tiny and partial chunks, one-row chunks, pieces of the pavle and
// reduce_shuffle encoders (32 rows) cut anywhere, K = 4, 2 and 1. Skips
// without a GPU. Every case prints its seed (VLEC_TEST_SEED reproduces it).
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA
#include <random>

#include "cpu/frame_codec.hpp"
#include "cuda/device_codebook.hpp"
#include "cuda/frame_device.hpp"
#include "cuda/huffman_encode.hpp"
#include "gpu_frame_util.hpp"
#include "vlec/device.hpp"

namespace vlec {
namespace {

constexpr cuda::EncodeStrategy kStrategies[] = {cuda::EncodeStrategy::warp, cuda::EncodeStrategy::lanes,
                                                cuda::EncodeStrategy::pavle, cuda::EncodeStrategy::reduce_shuffle};

const char* name(cuda::EncodeStrategy s) {
  return s == cuda::EncodeStrategy::warp    ? "warp"
         : s == cuda::EncodeStrategy::lanes ? "lanes"
         : s == cuda::EncodeStrategy::pavle ? "pavle"
                                            : "reduce_shuffle";
}

// Every encoder: warp, lanes with its boundary fix-up (the default) and with
// the lookahead alone (cuda::encode_boundary_fix_up false), pavle and
// reduce_shuffle. run(strategy, label) runs with each in turn.
template <class Run>
void for_each_encoder(Run&& run) {
  for (cuda::EncodeStrategy s : kStrategies) {
    if (s == cuda::EncodeStrategy::lanes) {
      cuda::encode_boundary_fix_up = false;
      run(s, std::string("lanes (lookahead)"));
      cuda::encode_boundary_fix_up = true;
    }
    run(s, std::string(name(s)));
  }
}

// The frame the GPU writes with `strategy`, from a host-built codebook.
std::vector<uint8_t> gpu_frame(const std::vector<uint8_t>& data, DType t, uint32_t chunk,
                               const huffman::Codebook& book, cuda::EncodeStrategy strategy,
                               uint64_t* status = nullptr, bool whole_table = false) {
  test::GpuFrameOptions o;
  o.strategy = strategy;
  o.status = status;
  o.whole_table = whole_table;
  return test::gpu_encode_frame(data, t, chunk, book, o);
}

std::vector<uint8_t> cpu_frame(const std::vector<uint8_t>& data, DType t, uint32_t chunk, unsigned limit) {
  cpu::FrameParams p;
  p.codec = Codec::huffman;
  p.dtype = t;
  p.chunk_elements = chunk;
  p.max_code_length = limit;
  return cpu::compress_frame(data.data(), data.size() / dtype_bytes(t), p);
}

huffman::Codebook book_of(const std::vector<uint8_t>& data, DType t, unsigned limit) {
  huffman::Histogram hist;
  huffman::accumulate_histogram(data.data(), data.size() / dtype_bytes(t), t, hist);
  return huffman::build_codebook(hist, limit);
}

void expect_same(const std::vector<uint8_t>& gpu, const std::vector<uint8_t>& cpu, const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  ASSERT_TRUE(gpu == cpu) << what << ": first difference at byte "
                          << (std::mismatch(gpu.begin(), gpu.end(), cpu.begin()).first - gpu.begin());
}

// The warp encoder's scratch (no GPU needed): one slot a warp where no warp
// takes a second chunk, two (deferred placement) where warps take more and
// the slots hold two a warp; a grid held below encode_warp_count (a smaller
// GPU) uses one where two do not fit. EveryStrategyMatchesCpuBytes runs both
// ways on the GPU: 1,000,003 symbols in chunks of 128 defer, fewer chunks not.
TEST(WarpEncoderSlots, DeferOnlyWhereTwoSlotsAWarpFit) {
  EXPECT_EQ(cuda::encode_warp_count(1), 8u);
  EXPECT_EQ(cuda::encode_warp_count(4097), cuda::kEncodeWarps);
  EXPECT_EQ(cuda::encode_warp_slot_count(100), 104u);
  EXPECT_EQ(cuda::encode_warp_slot_count(cuda::kEncodeWarps), cuda::kEncodeWarps);
  EXPECT_EQ(cuda::encode_warp_slot_count(cuda::kEncodeWarps + 1), 2 * cuda::kEncodeWarps);
  EXPECT_FALSE(cuda::encode_warp_defers(100, 104));
  EXPECT_FALSE(cuda::encode_warp_defers(cuda::kEncodeWarps, cuda::kEncodeWarps));
  EXPECT_TRUE(cuda::encode_warp_defers(cuda::kEncodeWarps + 1, cuda::kEncodeWarps));
  EXPECT_TRUE(cuda::encode_warp_defers(7813, 4096));  // 1,000,003 symbols in chunks of 128, a full grid
  EXPECT_TRUE(cuda::encode_warp_defers(3000, 1000));  // a small GPU's grid: 2,000 of 3,000 slots
  EXPECT_FALSE(cuda::encode_warp_defers(3000, 2000));  // 4,000 would not fit in 3,000
  for (uint64_t chunks : {1ull, 9ull, 4095ull, 4096ull, 4097ull, 8193ull, 1ull << 20})
    for (uint64_t warps = 8; warps <= cuda::encode_warp_count(chunks); warps += 8)
      ASSERT_LE(warps * (cuda::encode_warp_defers(chunks, warps) ? 2 : 1), cuda::encode_warp_slot_count(chunks))
          << chunks << " chunks, " << warps << " warps";
  EXPECT_EQ(cuda::encode_warp_slot_words(16384, 1), 4096u);
  EXPECT_EQ(cuda::encode_warp_slot_words(100, 2), 64u);  // 200 bytes in whole 128-byte lines
}

// The same through the frame encoder's temp query (no GPU needed): what the
// warp encoder adds over lanes is its slots, and the default strategy picks
// it up to 16,384-element chunks only.
TEST(WarpEncoderSlots, FrameTempHoldsTheSlotsWhereWarpRuns) {
  using S = cuda::EncodeStrategy;
  const auto temp = [](uint64_t n, unsigned width, uint32_t chunk, S s) {
    return cuda::frame_encode_temp_bytes(n, width, chunk, Codec::huffman, cuda::RleStrategy::parle, s);
  };
  const uint64_t gib = uint64_t{1} << 30;
  // 1 GiB of bytes in 65,536 chunks: two 16 KiB slots for each of 4,096 warps.
  EXPECT_EQ(cuda::default_encode_strategy(16384), S::warp);
  EXPECT_EQ(temp(gib, 1, 16384, S::warp) - temp(gib, 1, 16384, S::lanes), 2 * cuda::kEncodeWarps * 16384);
  // u16 in 32,768 chunks of 32 KiB.
  EXPECT_EQ(temp(gib / 2, 2, 16384, S::warp) - temp(gib / 2, 2, 16384, S::lanes), 2 * cuda::kEncodeWarps * 32768);
  // 4,096 chunks: one slot a chunk.
  EXPECT_EQ(temp(4096 * 16384, 1, 16384, S::warp) - temp(4096 * 16384, 1, 16384, S::lanes), 4096u * 16384);
  // The other strategies take none.
  EXPECT_EQ(temp(gib, 1, 16384, S::pavle), temp(gib, 1, 16384, S::lanes));
  EXPECT_EQ(temp(gib, 1, 16384, S::reduce_shuffle), temp(gib, 1, 16384, S::lanes));
  // 65,536-element chunks default to lanes.
  EXPECT_EQ(cuda::default_encode_strategy(65536), S::lanes);
}

TEST(GpuEncoders, EveryStrategyMatchesCpuBytes) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  for (auto [gen, t] : {std::pair{"skewed", DType::u8}, std::pair{"text", DType::u8}, std::pair{"runs", DType::u8},
                        std::pair{"quant1024", DType::u16}, std::pair{"quant65536", DType::u16},
                        std::pair{"quant1024", DType::u32}}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{128}, std::size_t{4097}, std::size_t{65537},
                          std::size_t{1000003}}) {
      const uint64_t seed = test::base_seed() + n;
      const std::vector<uint8_t> data = test::sample(gen, n, t, seed);
      for (uint32_t chunk : {128u, 1024u, 16384u, 65536u}) {
        for (unsigned limit : {0u, 12u, 24u}) {
          const std::string what = std::string(gen) + " " + std::string(to_string(t)) + " n " + std::to_string(n) +
                                   " chunk " + std::to_string(chunk) + " limit " + std::to_string(limit) + " seed " +
                                   std::to_string(seed);
          SCOPED_TRACE(what);
          huffman::Codebook book;
          try {
            book = book_of(data, t, limit);
          } catch (const Error&) {
            continue;  // a limit too short for the alphabet (quant65536 at 12)
          }
          const std::vector<uint8_t> cpu = cpu_frame(data, t, chunk, limit);
          for_each_encoder([&](cuda::EncodeStrategy s, const std::string& label) {
            if (HasFatalFailure()) return;
            SCOPED_TRACE(label);
            expect_same(gpu_frame(data, t, chunk, book, s), cpu, what + " " + label);
          });
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// Codebooks with every maximum length (K = 4, 2, 1 and the thresholds
// T = 32 at L = 8 and 16), built from the data so that the CPU frame uses the
// same one: symbol i drawn with probability ~2^-(i+1), capped at L - 1.
TEST(GpuEncoders, EveryMaxLength) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  for (unsigned L : {1u, 2u, 7u, 8u, 9u, 15u, 16u, 17u, 20u, 24u}) {
    for (DType t : {DType::u8, DType::u16, DType::u32}) {
      const uint64_t seed = test::base_seed() + 1000 * L + static_cast<unsigned>(t);
      std::mt19937_64 rng(seed);
      const std::size_t n = std::size_t{1} << 19;
      const unsigned w = static_cast<unsigned>(dtype_bytes(t));
      std::vector<uint8_t> data(n * w, 0);
      for (std::size_t i = 0; i < n; ++i) {
        uint32_t v = 0;
        while (v + 1 < L + (L > 1) && (rng() & 1)) ++v;  // geometric over 0 .. L (L + 1 symbols)
        if (L > 1 && (rng() & 1023) == 0) v = L;          // rare symbols get long codes
        std::memcpy(data.data() + i * w, &v, w);
      }
      for (uint32_t chunk : {128u, 384u, 4096u, 65536u}) {
        const std::string what = "L " + std::to_string(L) + " " + std::string(to_string(t)) + " chunk " +
                                 std::to_string(chunk) + " seed " + std::to_string(seed);
        SCOPED_TRACE(what);
        const huffman::Codebook book = book_of(data, t, L);
        const std::vector<uint8_t> cpu = cpu_frame(data, t, chunk, L);
        for_each_encoder([&](cuda::EncodeStrategy s, const std::string& label) {
          if (HasFatalFailure()) return;
          expect_same(gpu_frame(data, t, chunk, book, s), cpu, what + " " + label);
        });
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Chunks of the rarest symbols only: u32 chunks of 24-bit codes still code
// (the lane bitstreams of a piece are then at their largest), u8 chunks of
// them are stored raw; large chunks (2^20 and 2^24 elements) and a constant input.
TEST(GpuEncoders, ExtremeChunks) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::base_seed() + 77;
  std::mt19937_64 rng(seed);
  for (DType t : {DType::u8, DType::u16, DType::u32}) {
    const unsigned w = static_cast<unsigned>(dtype_bytes(t));
    const std::size_t n = (std::size_t{1} << 22) + 129;
    std::vector<uint8_t> data(n * w, 0);
    for (std::size_t i = 0; i < n; ++i) {
      uint32_t v = 0;
      if (i < n / 2) {
        while (v < 24 && (rng() & 1)) ++v;  // lengths up to 24
      } else {
        v = 23 + (rng() & 1);  // the two longest codes only
      }
      std::memcpy(data.data() + i * w, &v, w);
    }
    for (uint32_t chunk : {4096u, 65536u, 1u << 20, 1u << 24}) {
      const std::string what = std::string(to_string(t)) + " chunk " + std::to_string(chunk) + " seed " +
                               std::to_string(seed);
      SCOPED_TRACE(what);
      const huffman::Codebook book = book_of(data, t, 24);
      const std::vector<uint8_t> cpu = cpu_frame(data, t, chunk, 24);
      for_each_encoder([&](cuda::EncodeStrategy s, const std::string& label) {
        if (HasFatalFailure()) return;
        expect_same(gpu_frame(data, t, chunk, book, s), cpu, what + " " + label);
      });
      if (HasFatalFailure()) return;
    }
  }
  const std::vector<uint8_t> same(1 << 20, 7);
  const std::vector<uint8_t> noise = test::sample("uniform", 300001, DType::u8, seed);
  for (const std::vector<uint8_t>* d : {&same, &noise})
    for (cuda::EncodeStrategy s : kStrategies)
      expect_same(gpu_frame(*d, DType::u8, 65536, book_of(*d, DType::u8, 0), s), cpu_frame(*d, DType::u8, 65536, 0),
                  std::string(name(s)) + (d == &same ? " constant" : " noise"));
}

// The whole device pipeline with each encoder, and a value outside the
// alphabet (its chunk is stored raw and the element reported).
TEST(GpuEncoders, DevicePipelineEveryEncoder) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  for (device::Encoder e :
       {device::Encoder::warp, device::Encoder::lanes, device::Encoder::pavle, device::Encoder::reduce_shuffle}) {
    for (auto [gen, t] : {std::pair{"skewed", DType::u8}, std::pair{"quant65536", DType::u16},
                          std::pair{"quant1024", DType::u32}}) {
      const std::size_t n = 3000017;
      const uint64_t seed = test::base_seed() + 5;
      std::vector<uint8_t> data = test::sample(gen, n, t, seed);
      const bool bad = t == DType::u32;
      if (bad) {
        const uint32_t big = 70000;
        std::memcpy(data.data() + 4 * 1234567, &big, 4);
      }
      SCOPED_TRACE(std::string(gen) + " encoder " + std::to_string(static_cast<int>(e)) + " seed " +
                   std::to_string(seed));
      device::CompressOptions o;
      o.dtype = t;
      o.encoder = e;
      cuda::DeviceBuffer<uint8_t> in(data.size()), frame(device::compress_capacity(n, o)),
          temp(device::compress_temp_bytes(n, o));
      cuda::DeviceBuffer<uint64_t> out(2);
      CUDA_CHECK(cudaMemcpy(in.get(), data.data(), data.size(), cudaMemcpyHostToDevice));
      device::compress(in.get(), n, frame.get(), frame.size(), out.get(), out.get() + 1, temp.get(), temp.size(),
                       nullptr, o);
      uint64_t r[2];
      CUDA_CHECK(cudaMemcpy(r, out.get(), 16, cudaMemcpyDeviceToHost));
      if (bad) {
        EXPECT_EQ(r[1], 1234567u);
        continue;
      }
      EXPECT_EQ(r[1], ~0ull);
      std::vector<uint8_t> got(std::min<uint64_t>(r[0], frame.size()));
      CUDA_CHECK(cudaMemcpy(got.data(), frame.get(), got.size(), cudaMemcpyDeviceToHost));
      expect_same(got, cpu_frame(data, t, o.chunk_elements, 0), gen);
      EXPECT_EQ(decompress(got.data(), got.size(), {1, Backend::cpu}), data);
    }
  }
}

// A symbol without a code makes every encoder report the first chunk holding
// one, whichever table the lanes kernel reads: alphabet bounds (1 + the
// largest coded symbol) of 1,000 and 1,024 (u16 and u32 codes from shared
// memory alone), 1,025 and 40,000 (shared and global), 200 and 256 for
// bytes (the length table's no-code flag); the codebook's table ending at
// the bound (the host picks the lanes kernel's table) and over the whole
// alphabet (the device picks it). The symbols tried: one absent below the
// bound, the bound itself, 1,024 (the shared table's clamp), the largest
// value of the type. The clean data's frame equals the CPU's.
TEST(GpuEncoders, SymbolWithoutCodeIsReported) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::base_seed() + 91;
  std::mt19937_64 rng(seed);
  constexpr uint32_t kChunk = 16384;
  const std::size_t n = 5 * kChunk + 77;
  for (DType t : {DType::u8, DType::u16, DType::u32}) {
    const unsigned w = static_cast<unsigned>(dtype_bytes(t));
    const std::vector<uint32_t> bounds =
        t == DType::u8 ? std::vector<uint32_t>{200, 256} : std::vector<uint32_t>{1000, 1024, 1025, 40000};
    for (const uint32_t bound : bounds) {
      const uint32_t gap = bound / 2;  // never present
      std::vector<uint32_t> sym(n);
      for (uint32_t& v : sym) {
        v = rng() % 8 == 0 ? static_cast<uint32_t>(rng() % (bound - 1)) : static_cast<uint32_t>(rng() % 24);
        if (v == gap) ++v;
      }
      sym[n / 2] = bound - 1;
      auto pack = [&](const std::vector<uint32_t>& v) {
        std::vector<uint8_t> d(n * w);
        for (std::size_t i = 0; i < n; ++i) std::memcpy(d.data() + i * w, &v[i], w);  // little-endian
        return d;
      };
      const std::vector<uint8_t> clean = pack(sym);
      const huffman::Codebook book = book_of(clean, t, 0);
      ASSERT_EQ(book.alphabet_size, bound);
      const std::string what = std::string(to_string(t)) + " bound " + std::to_string(bound) + " seed " +
                               std::to_string(seed);
      const std::vector<uint8_t> cpu = cpu_frame(clean, t, kChunk, 0);
      const uint64_t type_max = t == DType::u8 ? 0xFFu : t == DType::u16 ? 0xFFFFu : 0xFFFFFFFFu;
      for (const bool whole : {false, true}) {
        for_each_encoder([&](cuda::EncodeStrategy s, const std::string& encoder) {
          if (HasFatalFailure()) return;
          const std::string label = encoder + (whole ? ", whole table" : ", table to the bound");
          uint64_t status = 0;
          expect_same(gpu_frame(clean, t, kChunk, book, s, &status, whole), cpu, what + " " + label);
          EXPECT_EQ(status, 0u) << what << " " << label;
          for (const uint64_t bad : {uint64_t{gap}, uint64_t{bound}, uint64_t{1024}, type_max}) {
            if (bad > type_max || (bad < book.lengths.size() && book.lengths[bad] != 0)) continue;
            std::vector<uint32_t> damaged = sym;
            damaged[3 * kChunk + 123] = static_cast<uint32_t>(bad);
            damaged[4 * kChunk + 5] = static_cast<uint32_t>(bad);
            status = 0;
            gpu_frame(pack(damaged), t, kChunk, book, s, &status, whole);
            EXPECT_EQ(status, 4u) << what << " " << label << ": symbol " << bad << " in chunk 3";
          }
        });
      }
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace vlec
#endif  // VLEC_WITH_CUDA
