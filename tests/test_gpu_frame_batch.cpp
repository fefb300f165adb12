// tests/test_gpu_frame_batch.cpp: many Huffman frames written in one batch
// (cuda::encode_frames_device, the wavelet writer's embedded frames) against
// the CPU backend, byte for byte: u8 and u16 frames side by side, K = 4, 2
// and 1, tables in shared memory and over the whole alphabet, frames of one
// element and of thousands of chunks, an incompressible frame that falls back
// to raw, an empty frame, every element equal; every frame into a poisoned
// buffer, with its size and report. Arguments the batch cannot take are
// refused before anything is enqueued. Skips without a GPU; prints its seed.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA
#include <memory>

#include "cuda/cuda_check.hpp"
#include "cuda/device_codebook.hpp"
#include "cuda/frame_device.hpp"
#include "cuda/host_staging.hpp"
#include "huffman/codebook.hpp"

namespace vlec {
namespace {

struct Case {
  const char* gen;
  DType type;
  std::size_t n;
  uint32_t chunk;
  unsigned limit;
  bool whole_table;  // the codebook's table over the type's whole alphabet
};

// One frame of the batch and what it needs on the device.
struct Frame {
  Case c;
  uint64_t seed = 0;
  std::vector<uint8_t> data;
  std::unique_ptr<cuda::UploadedCodebook> book;
  cuda::DeviceBuffer<uint8_t> in, frame, temp;
  cuda::DeviceBuffer<uint64_t> out;  // [0] the frame's size, [1] the report
  std::size_t capacity = 0;
};

huffman::Codebook book_of(const std::vector<uint8_t>& data, DType t, unsigned limit) {
  huffman::Histogram hist;
  huffman::accumulate_histogram(data.data(), data.size() / dtype_bytes(t), t, hist);
  return huffman::build_codebook(hist, limit);
}

cuda::FrameBatchItem prepare(Frame& f) {
  const unsigned w = static_cast<unsigned>(dtype_bytes(f.c.type));
  // "constant": every element 7 (one symbol, its code one bit long).
  f.data = std::string(f.c.gen) == "constant" ? test::convert(std::vector<uint8_t>(f.c.n, 7), 1, w)
                                               : test::sample(f.c.gen, f.c.n, f.c.type, f.seed);
  f.book = std::make_unique<cuda::UploadedCodebook>(book_of(f.data, f.c.type, f.c.limit), f.c.type);
  f.in.resize(std::max<std::size_t>(f.data.size(), 16));
  if (!f.data.empty()) CUDA_CHECK(cudaMemcpy(f.in.get(), f.data.data(), f.data.size(), cudaMemcpyHostToDevice));
  f.capacity = cuda::frame_encode_capacity(f.c.n, w, f.c.chunk);
  f.frame.resize(f.capacity);
  CUDA_CHECK(cudaMemset(f.frame.get(), 0xA5, f.capacity));  // poison: every byte of the frame must be written
  f.out.resize(2);
  CUDA_CHECK(cudaMemset(f.out.get(), 0x5A, 16));
  f.temp.resize(cuda::frame_encode_temp_bytes(f.c.n, w, f.c.chunk));
  cuda::FrameBatchItem item;
  cuda::FrameEncodeArgs& a = item.args;
  a.in = f.in.get();
  a.elements = f.c.n;
  a.dtype = f.c.type;
  a.chunk_elements = f.c.chunk;
  a.book = f.book->view(f.c.whole_table);
  a.frame = f.frame.get();
  a.frame_capacity = f.capacity;
  a.frame_bytes = f.out.get();
  a.error = f.out.get() + 1;
  a.strategy = cuda::EncodeStrategy::warp;
  item.temp = f.temp.get();
  item.temp_bytes = f.temp.size();
  return item;
}

std::string describe(const Frame& f) {
  return std::string(f.c.gen) + " " + std::string(to_string(f.c.type)) + " n " + std::to_string(f.c.n) + " chunk " +
         std::to_string(f.c.chunk) + " limit " + std::to_string(f.c.limit) +
         (f.c.whole_table ? " whole table" : "") + " seed " + std::to_string(f.seed);
}

// Writes the cases as one batch and checks every frame against the CPU's.
void check_batch(const std::vector<Case>& cases, uint64_t seed) {
  std::vector<Frame> frames(cases.size());
  std::vector<cuda::FrameBatchItem> items;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    frames[i].c = cases[i];
    frames[i].seed = seed + i;
    items.push_back(prepare(frames[i]));
  }
  cuda::DeviceBuffer<uint8_t> batch(cuda::frame_batch_bytes(items.size()));
  cuda::HostWrites writes;
  cuda::encode_frames_device(items, batch.get(), batch.size(), writes, 0);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (Frame& f : frames) {
    const std::string what = describe(f);
    SCOPED_TRACE(what);
    uint64_t out[2] = {};
    CUDA_CHECK(cudaMemcpy(out, f.out.get(), 16, cudaMemcpyDeviceToHost));
    EXPECT_EQ(out[1], ~0ull) << what << ": the report";
    const std::vector<uint8_t> cpu = test::cpu_frame(f.data, f.c.type, f.c.chunk, Codec::huffman, f.c.limit);
    ASSERT_EQ(out[0], cpu.size()) << what;
    std::vector<uint8_t> gpu(cpu.size());
    CUDA_CHECK(cudaMemcpy(gpu.data(), f.frame.get(), gpu.size(), cudaMemcpyDeviceToHost));
    ASSERT_TRUE(gpu == cpu) << what << ": first difference at byte "
                            << (std::mismatch(gpu.begin(), gpu.end(), cpu.begin()).first - gpu.begin());
  }
}

TEST(GpuFrameBatch, EveryFrameAsTheCpuWritesIt) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::seed_for(71);
  // u8 and u16 frames in one batch (two grids), K = 4 (limit 8 on bytes), 2
  // and 1 (limit 24 on 65,536 bins), shared and whole tables, one element,
  // partial chunks, more chunks than a layout block zeroes in one pass, an
  // incompressible frame (stored raw), an empty frame, every element equal.
  check_batch({{"skewed", DType::u8, 1000003, 16384, 0, false},
               {"skewed", DType::u8, 1, 16384, 0, false},
               {"text", DType::u8, 4097, 128, 8, false},
               {"quant1024", DType::u16, 65537, 16384, 0, false},
               {"quant1024", DType::u16, 31, 1024, 12, true},
               {"quant65536", DType::u16, 1000003, 128, 24, false},
               {"uniform", DType::u8, 70000, 1024, 0, false},
               {"quant65536", DType::u16, 200000, 16384, 0, true},
               {"skewed", DType::u16, 129, 128, 0, false},
               {"runs", DType::u8, 0, 16384, 0, false},
               {"constant", DType::u8, 1 << 20, 16384, 0, false},
               {"constant", DType::u16, 70001, 1024, 0, true}},
              seed);
}

// Many small frames (a wavelet frame's groups at 512^2 are a few dozen),
// all of one type and table: one grid, blocks found by the binary search.
TEST(GpuFrameBatch, ManySmallFrames) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::seed_for(72);
  std::vector<Case> cases;
  for (std::size_t i = 0; i < 48; ++i)
    cases.push_back({i % 3 ? "quant1024" : "skewed", DType::u16, 1 + 3001 * i, 16384, 0, false});
  check_batch(cases, seed);
}

// What the batch cannot take is refused with an error, before any launch.
TEST(GpuFrameBatch, RefusesWhatItCannotTake) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::seed_for(73);
  for (int bad = 0; bad < 4; ++bad) {
    Frame f;
    f.c = {"skewed", bad == 0 ? DType::u32 : DType::u8, 5000, 1024, 0, false};
    f.seed = seed;
    std::vector<cuda::FrameBatchItem> items{prepare(f)};
    if (bad == 1) items[0].args.strategy = cuda::EncodeStrategy::lanes;
    if (bad == 2) items[0].temp_bytes -= 1;
    cuda::DeviceBuffer<uint8_t> batch(cuda::frame_batch_bytes(1));
    cuda::HostWrites writes;
    EXPECT_THROW(cuda::encode_frames_device(items, batch.get(), bad == 3 ? 8 : batch.size(), writes, 0), Error)
        << "case " << bad;
  }
  CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
}  // namespace vlec
#endif  // VLEC_WITH_CUDA
