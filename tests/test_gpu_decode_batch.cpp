// tests/test_gpu_decode_batch.cpp: many Huffman frames decoded with one
// launch per kernel shape (cuda/huffman_decode.hpp, stage_huffman_decode_batch),
// as the wavelet decoder decodes its groups: frames of every symbol width,
// of K = 4, 2 and 1 (code length limits 8, 16 and 24), with and without the
// pair table and long codes, frames with raw chunks, an empty frame and
// frames of one partial chunk, all in one batch; each frame's output must be
// the CPU writer's input, and a damaged frame must fail alone, with the
// status the one-frame decoder reports. Skips without a GPU.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <cstring>
#include <string>
#include <vector>

#include "cpu/frame_codec.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/frame_decode.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/huffman_decode.hpp"
#include "format/frame.hpp"
#include "test_util.hpp"

namespace vlec {
namespace {

using cuda::DeviceBuffer;

struct Case {
  const char* gen;
  DType type;
  std::size_t elements;
  uint32_t chunk;
  unsigned limit;
};

// One frame on the device: its payload, output and decode temp.
struct DeviceFrame {
  std::vector<uint8_t> data, frame;
  format::ParsedFrame parsed;
  DeviceBuffer<uint8_t> payload, out, temp;
};

std::vector<DeviceFrame> make_frames(const std::vector<Case>& cases, uint64_t seed) {
  std::vector<DeviceFrame> frames(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    DeviceFrame& f = frames[i];
    f.data = test::sample(c.gen, c.elements, c.type, seed + i);
    cpu::FrameParams p;
    p.codec = Codec::huffman;
    p.dtype = c.type;
    p.chunk_elements = c.chunk;
    p.max_code_length = c.limit;
    f.frame = cpu::compress_frame(f.data.data(), c.elements, p);
    f.parsed = format::parse_frame(f.frame.data(), f.frame.size(), 0);
    const uint64_t payload = f.parsed.header.frame_bytes - f.parsed.header.header_area_bytes();
    f.payload.resize(std::max<uint64_t>(payload, 1));
    if (payload) CUDA_CHECK(cudaMemcpy(f.payload.get(), f.parsed.payload, payload, cudaMemcpyHostToDevice));
    f.out.resize(std::max<std::size_t>(f.data.size(), 1));
    CUDA_CHECK(cudaMemset(f.out.get(), 0xA5, f.out.size()));  // poison: every byte must be written
    f.temp.resize(std::max<std::size_t>(cuda::frame_decode_temp_bytes(f.parsed), 1));
  }
  return frames;
}

// Stage every frame, decode them as one batch on `streams`, wait; returns the launches.
cuda::HuffmanDecodeBatch decode_batch(std::vector<DeviceFrame>& frames, const std::vector<cudaStream_t>& streams) {
  cuda::HostWrites writes;
  std::vector<cuda::HuffmanDecodeArgs> args;
  for (DeviceFrame& f : frames)
    args.push_back(cuda::prepare_frame_decode(f.parsed, f.payload.get(), f.out.get(), f.temp.get(), f.temp.size(),
                                              streams[0], &writes));
  DeviceBuffer<uint8_t> scratch(cuda::huffman_decode_batch_bytes(args.size()));
  const cuda::HuffmanDecodeBatch batch =
      cuda::stage_huffman_decode_batch(args, scratch.get(), scratch.size(), streams[0], writes);
  CUDA_CHECK(cudaStreamSynchronize(streams[0]));  // the uploads before the other streams' launches
  for (std::size_t i = 0; i < batch.launches.size(); ++i)
    cuda::launch_huffman_decode_batch(batch.launches[i], streams[i % streams.size()]);
  CUDA_CHECK(cudaDeviceSynchronize());
  return batch;
}

TEST(GpuDecodeBatch, EveryShapeInOneBatch) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::base_seed() + 71;
  std::printf("GpuDecodeBatch.EveryShapeInOneBatch seed %llu\n", static_cast<unsigned long long>(seed));
  const std::vector<Case> cases = {
      {"skewed", DType::u8, 1000003, 16384, 0},       // K = 2, pairs, long codes
      {"skewed", DType::u8, 70001, 65536, 8},         // K = 4
      {"skewed", DType::u8, 300007, 4096, 24},        // K = 1
      {"text", DType::u8, 200003, 16384, 0},          // K = 2, 11 bits: no long codes
      {"uniform", DType::u8, 100000, 16384, 0},       // raw chunks
      {"quant1024", DType::u16, 500009, 16384, 0},    // u16, K = 2 without pairs, rare long codes
      {"quant1024", DType::u16, 400009, 16384, 9},    // u16, K = 2, limit 9
      {"quant65536", DType::u16, 700001, 16384, 24},  // u16, K = 1, long codes, second level
      {"quant65536", DType::u16, 300001, 16384, 16},  // u16, K = 2 without pairs, the 13-bit single table
      {"quant1024", DType::u32, 200001, 16384, 0},    // u32
      {"skewed", DType::u8, 0, 16384, 0},             // empty
      {"skewed", DType::u8, 77, 16384, 0},            // one partial chunk
      {"quant1024", DType::u16, 129, 128, 0},         // one row and one symbol
  };
  std::vector<DeviceFrame> frames = make_frames(cases, seed);
  cudaStream_t s1, s2;
  CUDA_CHECK(cudaStreamCreate(&s1));
  CUDA_CHECK(cudaStreamCreate(&s2));
  const cuda::HuffmanDecodeBatch batch = decode_batch(frames, {s1, s2});
  // The shapes the cases are there for.
  auto has = [&](unsigned width, unsigned K, bool pairs, bool wide) {
    for (const auto& l : batch.launches)
      if (l.shape.width == width && l.shape.K == K && l.shape.pairs == pairs && l.shape.wide_single == wide) return true;
    return false;
  };
  EXPECT_TRUE(has(1, 2, true, false));
  EXPECT_TRUE(has(1, 4, true, false) || has(1, 4, false, false));
  EXPECT_TRUE(has(2, 2, false, true));
  EXPECT_TRUE(has(2, 2, false, false));
  EXPECT_TRUE(has(2, 1, false, false));
  for (std::size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i) + " " + cases[i].gen + " limit " + std::to_string(cases[i].limit));
    std::vector<uint8_t> back(frames[i].data.size());
    if (!back.empty()) CUDA_CHECK(cudaMemcpy(back.data(), frames[i].out.get(), back.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(back, frames[i].data);
    EXPECT_NO_THROW(cuda::check_frame_decode(frames[i].parsed, frames[i].temp.get()));
  }
  CUDA_CHECK(cudaStreamDestroy(s1));
  CUDA_CHECK(cudaStreamDestroy(s2));
}

TEST(GpuDecodeBatch, DamagedFrameFailsAlone) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::base_seed() + 72;
  const std::vector<Case> cases = {{"skewed", DType::u8, 300007, 16384, 0},
                                   {"skewed", DType::u8, 300007, 16384, 0},
                                   {"quant1024", DType::u16, 200003, 16384, 0}};
  std::vector<DeviceFrame> frames = make_frames(cases, seed);
  // Flip a payload bit in the middle chunk of frame 1.
  const format::ParsedFrame& p = frames[1].parsed;
  const uint64_t at = p.offsets[p.offsets.size() / 2] + 5;
  uint8_t byte = 0;
  CUDA_CHECK(cudaMemcpy(&byte, frames[1].payload.get() + at, 1, cudaMemcpyDeviceToHost));
  byte ^= 0x10;
  CUDA_CHECK(cudaMemcpy(frames[1].payload.get() + at, &byte, 1, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreate(&s));
  decode_batch(frames, {s});
  EXPECT_NO_THROW(cuda::check_frame_decode(frames[0].parsed, frames[0].temp.get()));
  EXPECT_NO_THROW(cuda::check_frame_decode(frames[2].parsed, frames[2].temp.get()));
  std::string batched, single;
  try {
    cuda::check_frame_decode(frames[1].parsed, frames[1].temp.get());
  } catch (const Error& e) {
    batched = e.what();
  }
  EXPECT_FALSE(batched.empty());
  // The one-frame decoder reports the same.
  cuda::decode_frame_device(frames[1].parsed, frames[1].payload.get(), frames[1].out.get(), frames[1].temp.get(),
                            frames[1].temp.size(), s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  try {
    cuda::check_frame_decode(frames[1].parsed, frames[1].temp.get());
  } catch (const Error& e) {
    single = e.what();
  }
  EXPECT_EQ(batched, single);
  CUDA_CHECK(cudaStreamDestroy(s));
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
