// tests/test_codebook_gpu.cpp: the GPU codebook builder (cuda/codebook_gpu.*)
// against the CPU's huffman::build_codebook.
//   GpuCodebook.*  skip without a GPU: the kernels' outputs against the CPU
//                  for hundreds of histograms (the timings are in
//                  test_codebook_gpu_timing.cpp).
// The CPU proofs of the same steps (suite GenerateCl) are in
// test_generate_cl.cpp; the histograms and the comparison in
// codebook_test_util.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
#include "gpu_codebook_builder.hpp"

namespace vlec {
namespace {

using huffman::Histogram;
namespace cl = cuda::cl;
using namespace codebook_test;

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

// 1,025 to 2,048 symbols: the 256-thread block of 8 symbols a thread (the
// default) and the 8,192-symbol block give the CPU's codebook, every shape
// and limit, the class's edges included.
TEST(GpuCodebook, MidBlockMatchesCpu) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 27;
  std::printf("GpuCodebook.MidBlockMatchesCpu seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  GpuBuilder gpu;
  for (bool mid : {true, false}) {
    cuda::set_codebook_mid_block(mid);
    for (int it = 0; it < 40 && !HasFatalFailure(); ++it) {
      const uint32_t caps[] = {1025, 1661, 2047, 2048};
      const uint32_t cap = it < 4 ? caps[it] : 1025 + static_cast<uint32_t>(rng() % 1024);
      const int kind = it % kKinds;
      const Histogram h = make_histogram(rng, kind, cap);
      for (unsigned limit : limits_for(rng, h))
        compare_case(gpu, h, limit, std::string(mid ? "mid block" : "8,192 block") + " case " + std::to_string(it) +
                                        " " + kKindNames[kind]);
    }
    Histogram all(2048);  // every symbol present (more than the one-warp tree takes)
    for (uint32_t s = 0; s < 2048; ++s) all[s] = 1 + (rng() % 1000) * (s % 3 + 1);
    compare_case(gpu, all, 0, "all 2,048 present");
    compare_case(gpu, Histogram(2048, 0), 0, "empty");
  }
  cuda::set_codebook_mid_block(true);
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

// The cluster's sort by 10-bit digits (codebook_sort_wide.cuh) and by 8-bit
// ones (set_codebook_wide_digits), over more than one block's worth of
// present symbols (so not gathered into block 0), for largest counts of 9 to
// 48 bits: uniformly random counts, few distinct ones (ties: the symbol
// order decides) and a Laplace shape. The profile's slot 56 says which sort
// ran and how many passes it took.
TEST(GpuCodebook, WideDigitSortMatchesCpu) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 31;
  std::printf("GpuCodebook.WideDigitSortMatchesCpu seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  GpuBuilder gpu;
  cuda::DeviceBuffer<uint64_t> stamps(64);
  cuda::set_codebook_profile(stamps.get());
  int wide_builds = 0;
  // VLEC_WIDE_SORT_QUICK: two builds of three blocks (two and three passes), for compute-sanitizer's racecheck.
  const bool quick = std::getenv("VLEC_WIDE_SORT_QUICK") != nullptr;
  const std::vector<uint32_t> widths = quick ? std::vector<uint32_t>{20, 30}
                                             : std::vector<uint32_t>{9, 10, 16, 17, 19, 20, 24, 25, 28, 30, 33, 40, 41, 45, 48};
  for (uint32_t bits : widths) {
    for (int shape = 0; shape < (quick ? 1 : 3) && !HasFatalFailure(); ++shape) {
      const uint32_t cap = quick ? 20000 : shape == 0 ? 65536 : 16384 + static_cast<uint32_t>(rng() % (65536 - 16384));
      const uint64_t top = (uint64_t{1} << bits) - 1, most = std::min<uint64_t>(top, uint64_t{1} << 46);
      std::vector<uint64_t> values(1 + rng() % 12);
      for (uint64_t& v : values) v = 1 + rng() % most;
      Histogram h(cap, 0);
      for (uint32_t s = 0; s < cap; ++s) {
        if (rng() % 4 == 0) continue;  // holes: a quarter absent, still more than a block's 8,192 present
        h[s] = shape == 0   ? 1 + rng() % most
               : shape == 1 ? values[rng() % values.size()]
                            : 1 + static_cast<uint64_t>(static_cast<double>(most - 1) *
                                                        std::exp(-std::fabs(s - cap / 2.0) / (cap / 16.0)));
      }
      h[rng() % cap] = top;  // the largest count's width is `bits`
      for (bool wide : {true, false}) {
        if (quick && !wide) continue;
        cuda::set_codebook_wide_digits(wide);
        compare_case(gpu, h, 0, "bits " + std::to_string(bits) + " shape " + std::to_string(shape) +
                                    (wide ? " wide digits" : " 8-bit digits"));
        uint64_t digits = 0;
        CK(cudaMemcpy(&digits, stamps.get() + 56, 8, cudaMemcpyDeviceToHost));
        const uint32_t wide_passes = (bits + 9) / 10, narrow_passes = (bits + 7) / 8;
        if (wide && wide_passes < narrow_passes) {
          EXPECT_EQ(digits & 255, wide_passes) << "bits " << bits;
          EXPECT_EQ(digits >> 8 & 255, (bits + wide_passes - 1) / wide_passes) << "bits " << bits;
          ++wide_builds;
        } else {
          EXPECT_EQ(digits, uint64_t{narrow_passes} << 16) << "bits " << bits << (wide ? " wide" : " 8-bit");
        }
      }
    }
  }
  cuda::set_codebook_wide_digits(true);
  cuda::set_codebook_profile(nullptr);
  std::printf("  %d builds by 10-bit digits\n", wide_builds);
  EXPECT_GT(wide_builds, 0);
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
    CapturedBuild captured(gpu);
    gpu.poison();
    captured.launch();
    SCOPED_TRACE("graph, cap " + std::to_string(cap));
    expect_same(gpu.download(), cpu_codebook(h, 0));
  }
}

}  // namespace
}  // namespace vlec
#endif  // VLEC_WITH_CUDA
