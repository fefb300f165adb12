// tests/test_codebook_gpu.cpp: the GPU codebook builder (cuda/codebook_gpu.*)
// against the CPU's huffman::build_codebook.
//   GpuCodebook.*  skip without a GPU: the kernels' outputs against the CPU
//                  for hundreds of histograms, and timings (with the kernel's
//                  own stage stamps).
// The CPU proofs of the same steps (suite GenerateCl) are in
// test_generate_cl.cpp; the histograms and the comparison in
// codebook_test_util.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "codebook_test_util.hpp"
#include "cuda/generate_cl.hpp"
#include "cuda/warp_tree.hpp"
#include "huffman/codebook.hpp"
#include "test_util.hpp"
#include "vlec/vlec.hpp"

#if defined(VLEC_WITH_CUDA)
#include <cuda_runtime.h>

#include "cuda/codebook_gpu.hpp"
#include "cuda/cuda_check.hpp"
#endif

#if defined(VLEC_WITH_CUDA)
namespace vlec {
namespace {

using huffman::Histogram;
namespace cl = cuda::cl;
using namespace codebook_test;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#define CK(call) check((call), #call)

// Device buffers for capacities up to 65,536, reused from case to case.
class GpuBuilder {
 public:
  GpuBuilder() { CK(cudaStreamCreate(&stream_)); }
  ~GpuBuilder() { cudaStreamDestroy(stream_); }
  void upload(const Histogram& h) {
    cap_ = static_cast<uint32_t>(h.size());
    CK(cudaMemcpy(hist_.get(), h.data(), 8 * h.size(), cudaMemcpyHostToDevice));
    if (cuda::codebook_temp_bytes(cap_) > temp_.size()) temp_.resize(cuda::codebook_temp_bytes(cap_));
  }
  void enqueue(unsigned limit) {
    const cuda::DeviceCodebookOut out{lengths_.get(), entry_.get(), serialized_.get(), info_.get()};
    cuda::build_codebook_device(hist_.get(), cap_, limit, temp_.get(), temp_.size(), out, stream_);
  }
  BuiltCodebook download() {
    CK(cudaStreamSynchronize(stream_));
    BuiltCodebook b;
    b.lengths.resize(cap_);
    b.entry.resize(cap_);
    b.serialized.resize(cuda::codebook_serialized_capacity(cap_));
    CK(cudaMemcpy(b.lengths.data(), lengths_.get(), cap_, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.entry.data(), entry_.get(), 4 * cap_, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.serialized.data(), serialized_.get(), b.serialized.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.info, info_.get(), 16, cudaMemcpyDeviceToHost));
    return b;
  }
  void poison() {  // every output byte must be written
    CK(cudaMemset(lengths_.get(), 0xA5, cap_));
    CK(cudaMemset(entry_.get(), 0xA5, 4 * cap_));
    CK(cudaMemset(serialized_.get(), 0xA5, cuda::codebook_serialized_capacity(cap_)));
    CK(cudaMemset(info_.get(), 0xA5, 16));
  }
  BuiltCodebook build(const Histogram& h, unsigned limit) {
    upload(h);
    poison();
    enqueue(limit);
    CK(cudaGetLastError());
    return download();
  }
  cudaStream_t stream() const { return stream_; }

 private:
  static constexpr uint32_t kCap = 65536;
  cuda::DeviceBuffer<uint64_t> hist_{kCap};
  cuda::DeviceBuffer<uint8_t> lengths_{kCap}, serialized_{cuda::codebook_serialized_capacity(kCap)};
  cuda::DeviceBuffer<uint32_t> entry_{kCap}, info_{4};
  cuda::DeviceBuffer<uint8_t> temp_;
  uint32_t cap_ = 0;
  cudaStream_t stream_ = nullptr;
};

void compare_case(GpuBuilder& gpu, const Histogram& h, unsigned limit, const std::string& what) {
  if (::testing::Test::HasFatalFailure()) return;  // one failure is enough to read
  SCOPED_TRACE(what + " cap " + std::to_string(h.size()) + " limit " + std::to_string(limit));
  expect_same(gpu.build(h, limit), cpu_codebook(h, limit));
}

TEST(GpuCodebook, MatchesCpuOnRandomHistograms) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 21;
  std::printf("GpuCodebook.MatchesCpuOnRandomHistograms seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  GpuBuilder gpu;
  const uint32_t fixed_caps[] = {1, 2, 255, 256, 257, 1023, 1024, 1025, 4096, 65535, 65536};
  for (int it = 0; it < 400; ++it) {
    const int kind = it % kKinds;
    const uint32_t cap = it < 11 * 3 ? fixed_caps[it % 11] : random_capacity(rng, it % 3 ? 65536 : 1024);
    const Histogram h = make_histogram(rng, kind, cap);
    for (unsigned limit : limits_for(rng, h)) {
      compare_case(gpu, h, limit, "case " + std::to_string(it) + " " + kKindNames[kind]);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(GpuCodebook, EdgeCases) {
  REQUIRE_GPU();
  GpuBuilder gpu;
  for (uint32_t cap : {1u, 2u, 256u, 1000u, 1024u, 1025u, 5000u, 65536u}) {
    compare_case(gpu, Histogram(cap, 0), 0, "empty");
    for (uint32_t s : {0u, cap / 2, cap - 1}) {
      Histogram one(cap, 0);
      one[s] = 12345;
      for (unsigned limit : {0u, 1u, 24u}) compare_case(gpu, one, limit, "single symbol " + std::to_string(s));
      if (cap < 2) continue;
      Histogram two = one;
      two[(s + 1) % cap] = s % 2 ? 12345 : 1;
      for (unsigned limit : {0u, 1u, 11u}) compare_case(gpu, two, limit, "two symbols");
    }
    if (HasFatalFailure()) return;
  }
  std::mt19937_64 rng(test::base_seed() + 22);
  for (int kind : {1, 3, 4, 6, 7}) {  // every symbol of the largest alphabet present
    Histogram h = make_histogram(rng, kind, 65536);
    for (uint64_t& c : h) c = std::max<uint64_t>(c, 1);
    for (unsigned limit : {0u, 16u, 17u, 24u}) compare_case(gpu, h, limit, std::string("all present ") + kKindNames[kind]);
    compare_case(gpu, h, 15, "limit too short");
  }
  for (uint32_t cap : {256u, 1024u, 8192u, 65536u}) {  // counts near 2^32 (a 4 GiB input), many ties
    Histogram h(cap);
    for (uint64_t& c : h) c = (uint64_t{1} << 32) - 1 - rng() % 8;
    compare_case(gpu, h, 0, "near 2^32");
    for (uint32_t s = 0; s < cap; s += 3) h[s] = 0;
    compare_case(gpu, h, 0, "near 2^32 with holes");
  }
  for (uint32_t cap : {100u, 1024u, 3000u, 65536u}) {  // deep trees: Fibonacci counts, every limit
    const Histogram h = make_histogram(rng, 4, cap);
    for (unsigned limit = 0; limit <= 24; ++limit) compare_case(gpu, h, limit, "fibonacci");
  }
}

// The cluster's radix sort both ways: keys ordered in shared memory before
// the cluster-wide scatter (the default), and scattered straight from registers.
TEST(GpuCodebook, ClusterSortVariantsMatchCpu) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 25;
  std::printf("GpuCodebook.ClusterSortVariantsMatchCpu seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  GpuBuilder gpu;
  for (bool staged : {false, true}) {
    cuda::set_codebook_staged_sort(staged);
    for (int it = 0; it < 30 && !HasFatalFailure(); ++it) {
      const int kind = it % kKinds;
      const uint32_t cap = it % 3 ? 8193 + static_cast<uint32_t>(rng() % (65536 - 8192)) : 65536;
      const Histogram h = make_histogram(rng, kind, cap);
      compare_case(gpu, h, 0, std::string(staged ? "staged" : "from registers") + " case " + std::to_string(it) + " " +
                                  kKindNames[kind]);
    }
  }
  cuda::set_codebook_staged_sort(true);
}

// Leaf-node runs (serial_tree.hpp) on the device: geometric counts of random
// ratio and scale (so that the one-warp tree's serial loop hands long
// stretches to the runs), scattered over the alphabet, in 64-bit and 32-bit
// weights, with the whole tree serial and after the phases, handed over after
// 1 and 2 leaf-node merges and never.
TEST(GpuCodebook, LeafNodeRunsMatchCpu) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 28;
  std::printf("GpuCodebook.LeafNodeRunsMatchCpu seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  GpuBuilder gpu;
  uint64_t by_runs = 0;
  for (int it = 0; it < 120 && !HasFatalFailure(); ++it) {
    const uint32_t cap = it % 2 ? 256 : 1024;
    const double ratio = 0.55 + 0.44 * std::uniform_real_distribution<double>(0, 1)(rng);
    const double scale = std::ldexp(1.0, it % 3 ? 20 + static_cast<int>(rng() % 11) : 40 + static_cast<int>(rng() % 15));
    Histogram h(cap, 0);
    const uint32_t m = 2 + static_cast<uint32_t>(rng() % (cap - 1));
    for (uint32_t s = 0; s < m; ++s) h[rng() % cap] = 1 + static_cast<uint64_t>(scale * std::pow(ratio, s)) + rng() % 5;
    const std::vector<uint64_t> desc = keys_desc(h);
    for (uint32_t serial_all : {cl::kSerialAll, cl::kWarpTreeMax}) {
      cuda::set_codebook_serial_all(serial_all);
      for (uint32_t after : {1u, cl::kRunAfter, cl::kNoRuns}) {
        cuda::set_codebook_leaf_node_runs(after);
        cl::ClTrace tr;
        cl::warp_tree_host(desc, tr, serial_all, after);
        by_runs += tr.run_merges;
        compare_case(gpu, h, 0, "case " + std::to_string(it) + " ratio " + std::to_string(ratio) + " serial_all " +
                                    std::to_string(serial_all) + " runs after " + std::to_string(after));
      }
    }
  }
  cuda::set_codebook_serial_all(cl::kSerialAll);
  cuda::set_codebook_leaf_node_runs(cl::kRunAfter);
  std::printf("  %llu merges by leaf-node runs (host replay of the same builds)\n",
              static_cast<unsigned long long>(by_runs));
  EXPECT_GT(by_runs, 0u);
}

// Alphabets of up to 256 symbols sorted by the bitonic network and by the
// radix sort (set_codebook_sort_network): counts of every magnitude up to
// 2^56 and past it (the radix sort then, either way), many ties (the symbol
// order decides), holes, every capacity from 1 to 256.
TEST(GpuCodebook, SortNetworkMatchesCpu) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 29;
  std::printf("GpuCodebook.SortNetworkMatchesCpu seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  GpuBuilder gpu;
  for (int it = 0; it < 300 && !HasFatalFailure(); ++it) {
    const uint32_t cap = it < 256 ? static_cast<uint32_t>(it) + 1 : 256;
    const int bits = static_cast<int>(rng() % 60) + 1;  // the largest count's width: 1 .. 60 bits
    const uint64_t top = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    const uint32_t distinct = 1 + static_cast<uint32_t>(rng() % 8);  // few distinct counts: ties
    std::vector<uint64_t> values(distinct);
    for (uint64_t& v : values) v = 1 + rng() % top;
    Histogram h(cap, 0);
    for (uint64_t& c : h) c = rng() % 5 == 0 ? 0 : it % 2 ? values[rng() % distinct] : 1 + rng() % top;
    for (bool network : {true, false}) {
      cuda::set_codebook_sort_network(network);
      compare_case(gpu, h, 0, "case " + std::to_string(it) + " bits " + std::to_string(bits) +
                                  (network ? " network" : " radix"));
    }
  }
  cuda::set_codebook_sort_network(true);
}

// Few present symbols of a wide alphabet (the cluster kernel's one-warp tree,
// codebook_kernel.cuh): up to 1,024 present among 8,193 to 65,536, scattered
// or packed at either end, counts small, above 2^32 and near 2^64 (64-bit and
// 32-bit weights), and 1,025 present (the tiles again).
TEST(GpuCodebook, FewSymbolsOfAWideAlphabet) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 30;
  std::printf("GpuCodebook.FewSymbolsOfAWideAlphabet seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  GpuBuilder gpu;
  // Up to 8,192 present symbols whose counts lie below 2^48 are gathered
  // into block 0 and sorted there (gather_present_to_block0: up to
  // kWarpTreeMax by the network, then the one-warp tree; more by block 0's
  // radix sort, then the resident tiles); the last 40 cases take the
  // cluster's radix sort instead.
  for (int it = 0; it < 160 && !HasFatalFailure(); ++it) {
    cuda::set_codebook_sort_network(it < 120);
    const uint32_t cap = it % 4 ? 8193 + static_cast<uint32_t>(rng() % (65536 - 8192)) : 65536;
    const uint32_t present = it % 10 == 9   ? cl::kWarpTreeMax + 1
                             : it % 10 == 8 ? cl::kWarpTreeMax
                             : it % 10 == 7 ? std::min<uint32_t>(cap, it % 20 == 7 ? 8192 : 8193)
                             : it % 10 == 6 ? cl::kWarpTreeMax + 1 + static_cast<uint32_t>(rng() % (8192 - cl::kWarpTreeMax))
                                            : 1 + static_cast<uint32_t>(rng() % cl::kWarpTreeMax);
    const int kind = it % kKinds;
    const Histogram shape = make_histogram(rng, kind, present);
    Histogram h(cap, 0);
    const uint32_t where = it % 3;  // scattered, the first symbols, the last symbols
    for (uint32_t i = 0; i < present; ++i) {
      const uint64_t c = std::max<uint64_t>(shape[i], 1);
      const uint32_t s = where == 0 ? static_cast<uint32_t>(rng() % cap) : where == 1 ? i : cap - 1 - i;
      const uint64_t most = ~uint64_t{0} / (2 * present);  // totals below 2^63: the CPU's domain
      h[s] = it % 7 == 3 && c <= most >> 20 ? c << 20 : it % 7 == 5 ? most - rng() % 1000 : std::min(c, most);
    }
    compare_case(gpu, h, it % 5 == 0 ? 24 : 0,
                 "case " + std::to_string(it) + " " + kKindNames[kind] + " present " + std::to_string(present) +
                     (it < 120 ? "" : " radix sort"));
  }
  cuda::set_codebook_sort_network(true);
}

// No host synchronisation or host round trip: the builder captures into a graph.
TEST(GpuCodebook, CapturesIntoAGraph) {
  REQUIRE_GPU();
  std::mt19937_64 rng(test::base_seed() + 23);
  GpuBuilder gpu;
  for (uint32_t cap : {256u, 65536u}) {
    const Histogram h = make_histogram(rng, 6, cap);
    gpu.upload(h);
    gpu.enqueue(0);  // first-call host setup (CUB's query, the shared-memory attribute) outside the capture
    CK(cudaStreamSynchronize(gpu.stream()));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(gpu.stream(), cudaStreamCaptureModeRelaxed));
    gpu.enqueue(0);
    CK(cudaStreamEndCapture(gpu.stream(), &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    gpu.poison();
    CK(cudaGraphLaunch(exec, gpu.stream()));
    SCOPED_TRACE("graph, cap " + std::to_string(cap));
    expect_same(gpu.download(), cpu_codebook(h, 0));
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

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
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(gpu.stream(), cudaStreamCaptureModeRelaxed));
  gpu.enqueue(0);
  CK(cudaStreamEndCapture(gpu.stream(), &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  const float graphed = median_us(gpu, [&] { CK(cudaGraphLaunch(exec, gpu.stream())); });
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
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
