// tests/test_codebook_gpu_batch.cpp: many codebooks in one batch
// (cuda::build_codebooks_device, a block a codebook, a launch per block
// shape), each against the CPU's huffman::build_codebook: every shape's
// capacities and their edges, every histogram kind, automatic and fixed
// length limits (some too short: info[0] == 0 there), the 1,025-2,048
// class by either block, outputs poisoned before the build; and the same
// from jobs already on the device in no order (build_codebooks_device_
// unsorted). Skips without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codebook_test_util.hpp"
#include "test_util.hpp"
#include "vlec/vlec.hpp"

#if defined(VLEC_WITH_CUDA)
#include "gpu_codebook_builder.hpp"

namespace vlec {
namespace {

using huffman::Histogram;
using namespace codebook_test;

// One job's device buffers, poisoned.
struct JobBuffers {
  explicit JobBuffers(uint32_t cap)
      : hist(cap), lengths(cap), entry(cap), serialized(cuda::codebook_serialized_capacity(cap)), info(4) {
    CK(cudaMemset(lengths.get(), 0xA5, cap));
    CK(cudaMemset(entry.get(), 0xA5, 4 * std::size_t{cap}));
    CK(cudaMemset(serialized.get(), 0xA5, cuda::codebook_serialized_capacity(cap)));
    CK(cudaMemset(info.get(), 0xA5, 16));
  }
  cuda::DeviceBuffer<uint64_t> hist;
  cuda::DeviceBuffer<uint8_t> lengths;
  cuda::DeviceBuffer<uint32_t> entry;
  cuda::DeviceBuffer<uint8_t> serialized;
  cuda::DeviceBuffer<uint32_t> info;
};

BuiltCodebook download(const JobBuffers& b, uint32_t cap) {
  BuiltCodebook out;
  out.lengths.resize(cap);
  out.entry.resize(cap);
  out.serialized.resize(cuda::codebook_serialized_capacity(cap));
  CK(cudaMemcpy(out.lengths.data(), b.lengths.get(), cap, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(out.entry.data(), b.entry.get(), 4 * std::size_t{cap}, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(out.serialized.data(), b.serialized.get(), out.serialized.size(), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(out.info, b.info.get(), 16, cudaMemcpyDeviceToHost));
  return out;
}

TEST(GpuCodebook, BatchMatchesCpu) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 31;
  std::printf("GpuCodebook.BatchMatchesCpu seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  ASSERT_EQ(cuda::codebook_batch_capacity(), 8192u);
  cudaStream_t stream, other;
  CK(cudaStreamCreate(&stream));
  CK(cudaStreamCreate(&other));
  for (bool mid : {true, false}) {
    cuda::set_codebook_mid_block(mid);
    // Every shape's edges, then random capacities of each shape, in no order.
    std::vector<uint32_t> caps = {1, 2, 255, 256, 257, 1023, 1024, 1025, 2047, 2048, 2049, 8191, 8192};
    for (int i = 0; i < 40; ++i) {
      const uint32_t bound[] = {256, 1024, 2048, 8192};
      caps.push_back(1 + static_cast<uint32_t>(rng() % bound[i % 4]));
    }
    std::vector<Histogram> hists;
    std::vector<unsigned> limits;
    std::vector<std::unique_ptr<JobBuffers>> bufs;
    std::vector<cuda::CodebookJob> jobs;
    for (std::size_t i = 0; i < caps.size(); ++i) {
      const int kind = static_cast<int>(i % kKinds);
      hists.push_back(make_histogram(rng, kind, caps[i]));
      const std::vector<unsigned> choices = limits_for(rng, hists.back());
      limits.push_back(choices[rng() % choices.size()]);
      bufs.push_back(std::make_unique<JobBuffers>(caps[i]));
      JobBuffers& b = *bufs.back();
      CK(cudaMemcpy(b.hist.get(), hists.back().data(), 8 * std::size_t{caps[i]}, cudaMemcpyHostToDevice));
      jobs.push_back({b.hist.get(), caps[i], limits.back(),
                      cuda::DeviceCodebookOut{b.lengths.get(), b.entry.get(), b.serialized.get(), b.info.get()}});
    }
    cuda::DeviceBuffer<uint8_t> d_jobs(cuda::codebook_jobs_bytes(jobs.size()));
    // Each block shape on a stream of its own (mid) or all on one.
    const std::vector<cudaStream_t> streams =
        mid ? std::vector<cudaStream_t>{stream, other} : std::vector<cudaStream_t>{stream};
    cuda::build_codebooks_device(
        jobs, d_jobs.get(), cuda::codebook_jobs_bytes(jobs.size()),
        [&](void* dst, const void* src, std::size_t bytes, cudaStream_t on) {
          CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, on));
        },
        streams);
    CK(cudaStreamSynchronize(stream));
    CK(cudaStreamSynchronize(other));
    for (std::size_t i = 0; i < jobs.size() && !HasFatalFailure(); ++i) {
      SCOPED_TRACE(std::string(mid ? "mid block" : "8,192 block") + ", job " + std::to_string(i) + " cap " +
                   std::to_string(caps[i]) + " kind " + kKindNames[i % kKinds] + " limit " +
                   std::to_string(limits[i]));
      expect_same(download(*bufs[i], caps[i]), cpu_codebook(hists[i], limits[i]));
    }
  }
  cuda::set_codebook_mid_block(true);
  // Above a block's symbols, or too few descriptor bytes: refused before anything is enqueued.
  JobBuffers big(8193);
  cuda::DeviceBuffer<uint8_t> d_jobs(cuda::codebook_jobs_bytes(1));
  const std::vector<cuda::CodebookJob> too_big = {
      {big.hist.get(), 8193, 0, {big.lengths.get(), big.entry.get(), big.serialized.get(), big.info.get()}}};
  auto no_upload = [](void*, const void*, std::size_t, cudaStream_t) { FAIL() << "uploaded a refused batch"; };
  EXPECT_THROW(cuda::build_codebooks_device(too_big, d_jobs.get(), cuda::codebook_jobs_bytes(1), no_upload, {stream}),
               Error);
  std::vector<cuda::CodebookJob> two = too_big;
  two[0].capacity = 100;
  two.push_back(two[0]);
  EXPECT_THROW(cuda::build_codebooks_device(two, d_jobs.get(), cuda::codebook_jobs_bytes(1), no_upload, {stream}),
               Error);
  CK(cudaStreamDestroy(stream));
  CK(cudaStreamDestroy(other));
}

// Jobs written on the device in no order of shape (the wavelet writer's
// candidates' codebooks, cuda/wavelet_candidate_books.hpp): every shape
// launched over all of them, each block taking only its own shape's; the
// empty jobs (capacity 0) leave their outputs untouched.
TEST(GpuCodebook, UnsortedBatchMatchesCpu) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 37;
  std::printf("GpuCodebook.UnsortedBatchMatchesCpu seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  cudaStream_t streams[4];
  for (cudaStream_t& s : streams) CK(cudaStreamCreate(&s));
  for (bool mid : {true, false}) {
    cuda::set_codebook_mid_block(mid);
    std::vector<uint32_t> caps = {8192, 0, 1, 1025, 256, 2048, 0, 257, 8191, 1024, 2049, 2};
    for (int i = 0; i < 30; ++i) {
      const uint32_t bound[] = {256, 1024, 2048, 8192};
      caps.push_back(i % 7 == 3 ? 0 : 1 + static_cast<uint32_t>(rng() % bound[rng() % 4]));
    }
    std::vector<Histogram> hists(caps.size());
    std::vector<unsigned> limits(caps.size(), 0);
    std::vector<std::unique_ptr<JobBuffers>> bufs;
    std::vector<cuda::CodebookJob> jobs;
    for (std::size_t i = 0; i < caps.size(); ++i) {
      const uint32_t room = caps[i] ? caps[i] : 64;  // an empty job's outputs, to see them untouched
      bufs.push_back(std::make_unique<JobBuffers>(room));
      JobBuffers& b = *bufs.back();
      if (caps[i]) {
        hists[i] = make_histogram(rng, static_cast<int>(i % kKinds), caps[i]);
        const std::vector<unsigned> choices = limits_for(rng, hists[i]);
        limits[i] = choices[rng() % choices.size()];
        CK(cudaMemcpy(b.hist.get(), hists[i].data(), 8 * std::size_t{caps[i]}, cudaMemcpyHostToDevice));
      }
      jobs.push_back({b.hist.get(), caps[i], limits[i],
                      cuda::DeviceCodebookOut{b.lengths.get(), b.entry.get(), b.serialized.get(), b.info.get()}});
    }
    cuda::DeviceBuffer<uint8_t> d_jobs(cuda::codebook_jobs_bytes(jobs.size()));
    CK(cudaMemcpy(d_jobs.get(), jobs.data(), jobs.size() * sizeof(cuda::CodebookJob), cudaMemcpyHostToDevice));
    // The shapes on four streams (mid) or all on one; every stream after the upload.
    const std::vector<cudaStream_t> on = mid ? std::vector<cudaStream_t>(streams, streams + 4)
                                             : std::vector<cudaStream_t>{streams[0]};
    cuda::build_codebooks_device_unsorted(reinterpret_cast<const cuda::CodebookJob*>(d_jobs.get()), jobs.size(), on);
    CK(cudaDeviceSynchronize());
    for (std::size_t i = 0; i < jobs.size() && !HasFatalFailure(); ++i) {
      SCOPED_TRACE(std::string(mid ? "mid block" : "8,192 block") + ", job " + std::to_string(i) + " cap " +
                   std::to_string(caps[i]) + " limit " + std::to_string(limits[i]));
      if (caps[i]) {
        expect_same(download(*bufs[i], caps[i]), cpu_codebook(hists[i], limits[i]));
      } else {
        const BuiltCodebook untouched = download(*bufs[i], 64);
        for (int w = 0; w < 4; ++w) EXPECT_EQ(untouched.info[w], 0xA5A5A5A5u);
        for (uint32_t e : untouched.entry) EXPECT_EQ(e, 0xA5A5A5A5u);
      }
    }
  }
  cuda::set_codebook_mid_block(true);
  for (cudaStream_t& s : streams) CK(cudaStreamDestroy(s));
}

}  // namespace
}  // namespace vlec
#endif
