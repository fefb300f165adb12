// tests/test_gpu_payload_copy.cpp: the GPU wavelet writer's payload copies
// (cuda/wavelet_payload_copy.hpp), by vlec's own kernel and by
// cub::DeviceMemcpy::Batched, against the same pieces placed on the host.
// The pieces are what the writer's copies meet: frames and low bits of any
// length (0, 1, 15, 16, 17 bytes and tens of KiB) starting at any byte of
// their source, laid one after the other from a destination at any byte;
// nothing outside them may be written. Both the early copies (the table
// from sizes on the device) and the late ones (a host layout) are checked.
// Every case prints its seed. Skips without a GPU.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/wavelet_payload_copy.hpp"
#include "test_util.hpp"
#include "wavelet/frame_format.hpp"

namespace vlec {
namespace {

using cuda::DeviceBuffer;
using test::seed_for;
namespace wg = cuda::wavelet_gpu;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

struct Piece {
  std::size_t at;     // source offset in the source buffer
  std::size_t bytes;
};

// Group g: a frame piece and a low-bits piece (low bytes 0: none).
struct Case {
  std::vector<Piece> frames, lows;
  std::size_t out_at;  // the payload's offset in the output buffer
};

Case random_case(std::mt19937_64& rng, std::size_t groups, std::size_t source_bytes) {
  static const std::size_t kSizes[] = {0, 1, 3, 15, 16, 17, 31, 33, 100, 4096, 4099, 65536 + 7, 200000};
  Case c;
  c.out_at = rng() % 64;
  auto size = [&] { return rng() % 3 == 0 ? kSizes[rng() % std::size(kSizes)] : rng() % 3000; };
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t fb = std::max<std::size_t>(1, size()), lb = rng() % 2 ? size() : 0;
    c.frames.push_back({rng() % (source_bytes - fb), fb});
    c.lows.push_back({lb ? rng() % (source_bytes - lb) : 0, lb});
  }
  return c;
}

// The output as the copies must leave it: `fill` everywhere, the payload's
// pieces one after the other from out_at.
std::vector<uint8_t> expected(const Case& c, const std::vector<uint8_t>& src, std::size_t out_bytes, uint8_t fill) {
  std::vector<uint8_t> out(out_bytes, fill);
  std::size_t at = c.out_at;
  for (std::size_t g = 0; g < c.frames.size(); ++g)
    for (const Piece& p : {c.frames[g], c.lows[g]}) {
      std::memcpy(out.data() + at, src.data() + p.at, p.bytes);
      at += p.bytes;
    }
  return out;
}

TEST(GpuPayloadCopy, PiecesAtAnyByteByHandAndByCub) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(71);
  std::mt19937_64 rng(seed);
  const std::size_t source_bytes = 1 << 20;
  std::vector<uint8_t> src(source_bytes);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  DeviceBuffer<uint8_t> d_src(source_bytes);
  CUDA_CHECK(cudaMemcpy(d_src.get(), src.data(), source_bytes, cudaMemcpyHostToDevice));
  const std::size_t max_groups = 40;
  DeviceBuffer<uint64_t> d_table(3 * 2 * max_groups), d_sizes(2 * max_groups);
  const std::size_t copy_temp = 1 << 20;  // (cub's temp for 80 pieces is far less)
  DeviceBuffer<uint8_t> d_temp(copy_temp);
  int cases = 0;
  for (std::size_t groups : {1, 2, 7, 40})
    for (int round = 0; round < 4; ++round) {
      const Case c = random_case(rng, groups, source_bytes);
      std::size_t payload = 0;
      std::vector<wg::PayloadCopies::Group> pieces;
      std::vector<wavelet::Group> layout(groups);
      std::vector<uint64_t> sizes(2 * groups);
      for (std::size_t g = 0; g < groups; ++g) {
        pieces.push_back({d_src.get() + c.frames[g].at, d_src.get() + c.lows[g].at, c.lows[g].bytes});
        layout[g].frame_offset = payload;
        layout[g].frame_bytes = c.frames[g].bytes;
        layout[g].bits_offset = payload + c.frames[g].bytes;
        payload += c.frames[g].bytes + c.lows[g].bytes;
        sizes[2 * g] = c.frames[g].bytes;
        sizes[2 * g + 1] = ~0ull;  // the coder's status: done
      }
      CUDA_CHECK(cudaMemcpy(d_sizes.get(), sizes.data(), 8 * sizes.size(), cudaMemcpyHostToDevice));
      const std::size_t out_bytes = c.out_at + payload + 64;
      const wg::PayloadCopies copies(pieces, d_table.get(), d_temp.get(), copy_temp);
      for (bool hand : {true, false})
        for (bool early : {true, false}) {
          const uint8_t fill = static_cast<uint8_t>(rng());
          const std::vector<uint8_t> want = expected(c, src, out_bytes, fill);
          DeviceBuffer<uint8_t> d_out(out_bytes);
          CUDA_CHECK(cudaMemset(d_out.get(), fill, out_bytes));
          wg::hand_payload_copy = hand;
          if (early)  // the header area is the out_at bytes before the payload
            copies.enqueue_early(c.out_at, out_bytes, d_out.get(), d_sizes.get(), nullptr);
          else
            copies.enqueue_late(d_out.get() + c.out_at, layout, nullptr);
          wg::hand_payload_copy = true;
          std::vector<uint8_t> got(out_bytes);
          CUDA_CHECK(cudaMemcpy(got.data(), d_out.get(), out_bytes, cudaMemcpyDeviceToHost));
          std::size_t diff = 0;
          while (diff < out_bytes && got[diff] == want[diff]) ++diff;
          EXPECT_EQ(diff, out_bytes) << groups << " groups, round " << round << (hand ? ", by hand" : ", by cub")
                                     << (early ? ", early" : ", late") << ": first difference at byte " << diff
                                     << " of " << out_bytes << " (payload from " << c.out_at << ")";
          ++cases;
        }
    }
  std::cout << cases << " payloads copied" << std::endl;
}

// A coder's failure (status not done) or a payload past the output's
// capacity: the early copies write nothing (the writer reports the error
// after its wait).
TEST(GpuPayloadCopy, NothingWrittenWhenAFrameFailedOrDoesNotFit) {
  REQUIRE_GPU();
  const uint64_t seed = seed_for(72);
  std::mt19937_64 rng(seed);
  const std::size_t source_bytes = 1 << 16;
  DeviceBuffer<uint8_t> d_src(source_bytes);
  CUDA_CHECK(cudaMemset(d_src.get(), 0xab, source_bytes));
  DeviceBuffer<uint64_t> d_table(3 * 4), d_sizes(4);
  DeviceBuffer<uint8_t> d_temp(1 << 16);
  const std::vector<wg::PayloadCopies::Group> pieces = {{d_src.get() + 3, d_src.get() + 100, 77},
                                                        {d_src.get() + 9, nullptr, 0}};
  const wg::PayloadCopies copies(pieces, d_table.get(), d_temp.get(), 1 << 16);
  for (bool hand : {true, false})
    for (int how = 0; how < 2; ++how) {
      const uint64_t frame0 = 1000 + rng() % 1000;
      const std::vector<uint64_t> sizes = {frame0, ~0ull, 500, how == 0 ? 7ull : ~0ull};  // how 0: group 1 failed
      CUDA_CHECK(cudaMemcpy(d_sizes.get(), sizes.data(), 8 * sizes.size(), cudaMemcpyHostToDevice));
      const std::size_t out_bytes = 4096, capacity = how == 0 ? out_bytes : 1000;  // how 1: does not fit
      DeviceBuffer<uint8_t> d_out(out_bytes);
      CUDA_CHECK(cudaMemset(d_out.get(), 0x11, out_bytes));
      wg::hand_payload_copy = hand;
      copies.enqueue_early(5, capacity, d_out.get(), d_sizes.get(), nullptr);
      wg::hand_payload_copy = true;
      std::vector<uint8_t> got(out_bytes);
      CUDA_CHECK(cudaMemcpy(got.data(), d_out.get(), out_bytes, cudaMemcpyDeviceToHost));
      EXPECT_EQ(std::count(got.begin(), got.end(), uint8_t{0x11}), static_cast<std::ptrdiff_t>(out_bytes))
          << (hand ? "by hand" : "by cub") << (how == 0 ? ", a failed coder" : ", past the capacity");
    }
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
