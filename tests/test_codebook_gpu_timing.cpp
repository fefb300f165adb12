// tests/test_codebook_gpu_timing.cpp: GpuCodebook.Timing, the GPU codebook
// builder's times for 256 to 65,536 symbols and the shapes that matter
// (Laplace, skewed, geometric, uniformly random, all equal, few present
// symbols of a wide alphabet), each with the kernel's own stage stamps and
// its output checked against the CPU. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "codebook_test_util.hpp"
#include "cuda/generate_cl.hpp"
#include "cuda/warp_tree.hpp"
#include "huffman/codebook.hpp"
#include "test_util.hpp"
#include "vlec/vlec.hpp"

#if defined(VLEC_WITH_CUDA)
#include "gpu_codebook_builder.hpp"

namespace vlec {
namespace {

using namespace codebook_test;  // (Histogram, cl)

// Realistic skewed counts, every symbol present; median of 20 after warm-up,
// enqueued directly (what a caller sees) and replayed as a CUDA graph (GPU time).
float median_us(GpuBuilder& gpu, const std::function<void()>& enqueue) {
  cudaEvent_t start, stop;
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) enqueue();
  std::vector<float> us;
  for (int i = 0; i < 20; ++i) {
    CK(cudaEventRecord(start, gpu.stream()));
    enqueue();
    CK(cudaEventRecord(stop, gpu.stream()));
    CK(cudaEventSynchronize(stop));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, start, stop));
    us.push_back(1000 * ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(us.begin(), us.end());
  return us[10];
}

// One histogram: the median as enqueued and as a graph, then block 0's stage
// stamps (codebook_gpu.hpp) of one more build, and the output checked.
void time_codebook(GpuBuilder& gpu, const Histogram& h, const char* what, uint32_t serial_all = cl::kSerialAll,
                   uint32_t run_after = cl::kRunAfter) {
  const uint32_t cap = static_cast<uint32_t>(h.size());
  gpu.upload(h);
  const float direct = median_us(gpu, [&] { gpu.enqueue(0); });
  // Ten builds enqueued back to back, per build: what a pipeline that
  // enqueues the codebook behind other work sees, where the single build
  // above starts on an idle GPU and waits for its own launch.
  constexpr int kBatch = 10;
  const float batched = median_us(gpu, [&] {
                          for (int i = 0; i < kBatch; ++i) gpu.enqueue(0);
                        }) / kBatch;
  expect_same(gpu.download(), cpu_codebook(h, 0));
  const float graphed = [&] {
    CapturedBuild captured(gpu);
    return median_us(gpu, [&] { captured.launch(); });
  }();
  const std::vector<uint64_t> desc = keys_desc(h);
  cl::ClTrace tr;
  if (desc.size() <= cl::kWarpTreeMax) cl::warp_tree_host(desc, tr, serial_all, run_after);
  else if (cap <= 8192) cl::generate_cl_host(desc, 1024, 4, &tr);
  else cl::generate_cl_host(desc, 1024, 4, 8192, 16384, &tr);
  const uint32_t serial = tr.serial_from == ~0u ? 0 : static_cast<uint32_t>(desc.size()) - 1 - tr.serial_from;
  std::printf("GpuCodebook timing: %5u symbols %-10s (%2u phases, %2u tiles, %3u serial merges, %3u by runs): median "
              "%7.1f us enqueued, %7.1f us as a graph, %7.1f us a build back to back\n",
              cap, what, tr.phases, tr.tiles, serial, tr.run_merges, direct, graphed, batched);
  cuda::DeviceBuffer<uint64_t> stamps(64);
  CK(cudaMemset(stamps.get(), 0, 64 * sizeof(uint64_t)));
  cuda::set_codebook_profile(stamps.get());
  gpu.enqueue(0);
  cuda::set_codebook_profile(nullptr);
  uint64_t st[64];
  CK(cudaStreamSynchronize(gpu.stream()));
  CK(cudaMemcpy(st, stamps.get(), sizeof st, cudaMemcpyDeviceToHost));
  const char* names[] = {"counts", "sort", "leaves", "tree", "plan", "lengths", "codes"};
  std::printf("  stages (ns / cycles):");
  for (int i = 1; i < 8; ++i)
    std::printf(" %s %llu/%llu", names[i - 1], static_cast<unsigned long long>(st[i] - st[i - 1]),
                static_cast<unsigned long long>(st[16 + i] - st[16 + i - 1]));
  std::printf("; total %llu ns\n", static_cast<unsigned long long>(st[7] - st[0]));
  // Inside the last two stages (cycles): lengths = ranks + choice + scatter, codes = count + scan + write.
  std::printf("  lengths: ranks %llu choice %llu scatter %llu; codes: count %llu scan %llu write %llu\n",
              static_cast<unsigned long long>(st[24] - st[21]), static_cast<unsigned long long>(st[25] - st[24]),
              static_cast<unsigned long long>(st[22] - st[25]), static_cast<unsigned long long>(st[26] - st[22]),
              static_cast<unsigned long long>(st[27] - st[26]), static_cast<unsigned long long>(st[23] - st[27]));
  if (st[51])  // inside "ranks": block 0 thread 0's loads arrived, every candidate's lengths, the sums
    std::printf("  ranks: loads %llu lengths %llu sums %llu\n", static_cast<unsigned long long>(st[50] - st[21]),
                static_cast<unsigned long long>(st[51] - st[50]), static_cast<unsigned long long>(st[24] - st[51]));
  if (st[37])  // the block tiles' tree (cycles)
    std::printf("  tree: %llu tiles %llu (largest own work %llu, largest barrier wait %llu), depths %llu, bl_count %llu\n",
                static_cast<unsigned long long>(st[37]), static_cast<unsigned long long>(st[32]),
                static_cast<unsigned long long>(st[33]), static_cast<unsigned long long>(st[34]),
                static_cast<unsigned long long>(st[35]), static_cast<unsigned long long>(st[36]));
  if (st[37])
    std::printf("  fallback tiles (B window from global memory): %llu, thread 0's cycles in them %llu; pair phases "
                "(one step each, among the tiles) %llu, thread 0's cycles in them %llu\n",
                static_cast<unsigned long long>(st[52]), static_cast<unsigned long long>(st[53]),
                static_cast<unsigned long long>(st[54]), static_cast<unsigned long long>(st[55]));
  if (st[38])
    std::printf("  tiles: each tile's slowest own work summed %llu, thread 0's setup %llu, largest copy wait %llu\n",
                static_cast<unsigned long long>(st[38]), static_cast<unsigned long long>(st[39]),
                static_cast<unsigned long long>(st[31]));
  if (st[48]) {  // the sort's first pass (cycles)
    const char* steps[] = {"load", "rank", "barrier", "totals", "cluster", "offsets", "scatter", "cluster"};
    std::printf("  sort pass 1:");
    for (int i = 41; i <= 48; ++i)
      std::printf(" %s %llu", steps[i - 41], static_cast<unsigned long long>(st[i] - st[i - 1]));
    if (st[56] & 255)
      std::printf("; %llu passes of %llu-bit digits", static_cast<unsigned long long>(st[56] & 255),
                  static_cast<unsigned long long>(st[56] >> 8 & 255));
    else
      std::printf("; %llu passes of 8-bit digits", static_cast<unsigned long long>(st[56] >> 16));
    std::printf("\n");
  }
  expect_same(gpu.download(), cpu_codebook(h, 0));
  ::testing::Test::RecordProperty(std::string("graph_median_us_") + what + "_" + std::to_string(cap),
                                  std::to_string(graphed));
}

TEST(GpuCodebook, Timing) {
  REQUIRE_GPU();
  GpuBuilder gpu;
  for (uint32_t cap : {256u, 1024u, 8192u, 65536u}) time_codebook(gpu, timing_histogram(cap), "laplace");
  // 1,025-2,048 symbols: the 256-thread block of 8 symbols a thread, and the 8,192-symbol block.
  for (uint32_t cap : {1661u, 2048u}) time_codebook(gpu, timing_histogram(cap), "laplace");
  cuda::set_codebook_mid_block(false);
  for (uint32_t cap : {1661u, 2048u}) time_codebook(gpu, timing_histogram(cap), "laplace/8192");
  cuda::set_codebook_mid_block(true);
  std::mt19937_64 rng(test::base_seed() + 24);
  {  // skewed trees (a pair or two a phase): the serial loop's share (warp_tree.hpp, hand_to_serial)
    Histogram geo(256), few(256, 0);
    for (uint32_t s = 0; s < 256; ++s) geo[s] = 1 + static_cast<uint64_t>(1e15 * std::pow(0.88, s)) + s % 7;
    for (uint32_t s = 0; s < 59; ++s) few[s] = 1 + static_cast<uint64_t>(3e8 * std::pow(0.7, s));
    time_codebook(gpu, geo, "geometric");
    time_codebook(gpu, few, "59-skewed");
    // The same without leaf-node runs (serial_tree.hpp): the serial loop makes every merge after the phases.
    cuda::set_codebook_leaf_node_runs(cl::kNoRuns);
    time_codebook(gpu, geo, "geometric/n", cl::kSerialAll, cl::kNoRuns);
    time_codebook(gpu, few, "59-skew/n", cl::kSerialAll, cl::kNoRuns);
    for (uint32_t cap : {256u, 1024u}) time_codebook(gpu, timing_histogram(cap), "laplace/n", cl::kSerialAll, cl::kNoRuns);
    cuda::set_codebook_leaf_node_runs(cl::kRunAfter);
    cuda::set_codebook_sort_network(false);  // 256 symbols by the radix sort
    time_codebook(gpu, timing_histogram(256), "laplace/rx");
    time_codebook(gpu, geo, "geometric/rx");
    time_codebook(gpu, few, "59-skew/rx");
    cuda::set_codebook_sort_network(true);
    cuda::set_codebook_leaf_node_runs(cl::kRunAfter);
    for (uint32_t after : {1u, 4u}) {  // handed to runs after other streaks
      cuda::set_codebook_leaf_node_runs(after);
      const std::string a = "/r" + std::to_string(after);
      time_codebook(gpu, geo, ("geometric" + a).c_str(), cl::kSerialAll, after);
      time_codebook(gpu, few, ("59-skewed" + a).c_str(), cl::kSerialAll, after);
    }
    cuda::set_codebook_leaf_node_runs(cl::kRunAfter);
  }
  {  // a u16 device pipeline's codebook (65,536-symbol capacity) over the 1,024 bins quant1024 uses
    Histogram wide(65536, 0);
    const Histogram narrow = timing_histogram(1024);
    std::copy(narrow.begin(), narrow.end(), wide.begin());
    time_codebook(gpu, wide, "1024-of-64K");
    Histogram few(65536, 0);  // 42 bins: what 1 GiB of quant1024 uses
    const Histogram bins42 = timing_histogram(42);
    std::copy(bins42.begin(), bins42.end(), few.begin() + 491);
    time_codebook(gpu, few, "42-of-64K");
    Histogram wider(65536, 0);  // ~2,500 bins: what 1 GiB of quant65536 uses
    const Histogram bins = timing_histogram(2560);
    std::copy(bins.begin(), bins.end(), wider.begin() + 30000);
    time_codebook(gpu, wider, "2560-of-64K");
    cuda::set_codebook_sort_network(false);  // the cluster's radix sort of every symbol
    time_codebook(gpu, wide, "1024-of-64K/rx");
    time_codebook(gpu, wider, "2560-of-64K/rx");
    cuda::set_codebook_sort_network(true);
  }
  Histogram random;  // the 65,536-symbol one, timed again below
  for (uint32_t cap : {256u, 65536u}) {  // harder shapes: uniform random counts, and every count equal
    Histogram h = make_histogram(rng, 7, cap);
    for (uint64_t& c : h) c = 1 + c % 1000000;
    time_codebook(gpu, h, "random");
    time_codebook(gpu, Histogram(cap, 4096), "all-equal");
    random = std::move(h);
  }
  // The warp's tail from other bounds than the default (0: every pair phase a block step).
  for (uint32_t tail : {0u, 2048u}) {
    cuda::set_codebook_warp_tail(tail);
    const std::string t = "/w" + std::to_string(tail);
    time_codebook(gpu, timing_histogram(8192), ("laplace" + t).c_str());
    time_codebook(gpu, timing_histogram(65536), ("laplace" + t).c_str());
    time_codebook(gpu, random, ("random" + t).c_str());
    time_codebook(gpu, Histogram(65536, 4096), ("equal" + t).c_str());
  }
  cuda::set_codebook_warp_tail(cl::kWarpTailNodes);
  cuda::set_codebook_wide_digits(false);  // the cluster's sort by 8-bit digits alone (codebook_sort_wide.cuh)
  time_codebook(gpu, timing_histogram(65536), "laplace/8");
  time_codebook(gpu, random, "random/8");
  cuda::set_codebook_wide_digits(true);
  cuda::set_codebook_staged_sort(false);  // the cluster's sort scattering straight from registers
  time_codebook(gpu, timing_histogram(65536), "laplace/rs");
  cuda::set_codebook_staged_sort(true);
  // The whole tree by one thread's two-queue loop (serial_tree) up to 1,024 present symbols.
  cuda::set_codebook_serial_all(cl::kWarpTreeMax);
  std::mt19937_64 rng2(test::base_seed() + 24);
  for (uint32_t cap : {256u, 1024u}) time_codebook(gpu, timing_histogram(cap), "laplace/s", cl::kWarpTreeMax);
  {
    Histogram geo(256), few(256, 0);
    for (uint32_t s = 0; s < 256; ++s) geo[s] = 1 + static_cast<uint64_t>(1e15 * std::pow(0.88, s)) + s % 7;
    for (uint32_t s = 0; s < 59; ++s) few[s] = 1 + static_cast<uint64_t>(3e8 * std::pow(0.7, s));
    time_codebook(gpu, geo, "geometric/s", cl::kWarpTreeMax);
    time_codebook(gpu, few, "59-skew/s", cl::kWarpTreeMax);
  }
  {
    Histogram h = make_histogram(rng2, 7, 256);
    for (uint64_t& c : h) c = 1 + c % 1000000;
    time_codebook(gpu, h, "random/s", cl::kWarpTreeMax);
    time_codebook(gpu, Histogram(256, 4096), "equal/s", cl::kWarpTreeMax);
  }
  cuda::set_codebook_serial_all(cl::kSerialAll);
}

}  // namespace
}  // namespace vlec
#endif  // VLEC_WITH_CUDA
