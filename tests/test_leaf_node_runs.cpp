// tests/test_leaf_node_runs.cpp: the one-warp tree's leaf-node runs
// (cuda/serial_tree.hpp) and the cluster kernel's length of a rank
// (cuda/codebook_limit.hpp, len_of_rank_probes) proved on the CPU (suite
// GenerateCl, no GPU): the host replay of the runs lane by lane builds the
// two-queue tree node by node. The kernels themselves: test_codebook_gpu.cpp
// (GpuCodebook.LeafNodeRunsMatchCpu).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "codebook_test_util.hpp"
#include "cuda/generate_cl.hpp"
#include "cuda/warp_tree.hpp"
#include "huffman/codebook.hpp"
#include "test_util.hpp"

namespace vlec {
namespace {

using huffman::Histogram;
namespace cl = cuda::cl;
using namespace codebook_test;

// Leaf-node runs (serial_tree.hpp) where they matter: geometric counts of
// random ratio, scale and jitter (the two-queue loop merges the lightest leaf
// with the oldest node, q nodes waiting, for long stretches), in 64-bit and
// 32-bit weights, handed over after 1, 2 or 3 leaf-node merges, against the
// two-queue tree node by node; both after the warp's phases and with the
// whole tree serial.
TEST(GenerateCl, LeafNodeRunsOnGeometricCounts) {
  const uint64_t seed = test::base_seed() + 27;
  std::printf("GenerateCl.LeafNodeRunsOnGeometricCounts seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  uint64_t merges = 0, by_runs = 0, narrow_cases = 0;
  for (int it = 0; it < 3000; ++it) {
    const double ratio = 0.5 + 0.49 * std::uniform_real_distribution<double>(0, 1)(rng);
    const double scale = std::ldexp(1.0, 8 + static_cast<int>(rng() % 47));  // totals below 2^62
    // No flat tail: the smallest geometric term is still >= 1.
    const double longest = std::min<double>(cl::kWarpTreeMax, std::log(scale) / -std::log(ratio));
    const uint32_t m = 2 + static_cast<uint32_t>(rng() % static_cast<uint64_t>(std::max(1.0, longest - 1)));
    const uint64_t jitter = 1 + rng() % 16;
    std::vector<uint64_t> desc(m);
    for (uint32_t s = 0; s < m; ++s)
      desc[s] = 1 + static_cast<uint64_t>(scale * std::pow(ratio, s)) + rng() % jitter;
    std::sort(desc.rbegin(), desc.rend());
    SCOPED_TRACE(::testing::Message() << "case " << it << " m " << m << " ratio " << ratio << " scale " << scale);
    const TwoQueueTree ref = two_queue_tree(desc);
    Histogram h(desc.begin(), desc.end());
    const huffman::LengthCounts want = huffman::huffman_length_counts(h);
    const bool narrow = total_below_2_32(desc);
    narrow_cases += narrow;
    for (uint32_t run_after : {1u, 2u, 3u}) {
      for (uint32_t serial_all : {cl::kSerialAll, cl::kWarpTreeMax}) {
        SCOPED_TRACE(::testing::Message() << "run_after " << run_after << " serial_all " << serial_all);
        for (int w = 0; w < (narrow ? 2 : 1); ++w) {
          cl::ClTrace tr;
          const auto bl = w ? cl::warp_tree_host<uint32_t>(desc, tr, serial_all, run_after)
                            : cl::warp_tree_host(desc, tr, serial_all, run_after);
          ASSERT_FALSE(tr.hazard);
          ASSERT_TRUE(std::equal(bl.begin(), bl.end(), want.begin()));
          ASSERT_EQ(tr.inner_w, ref.inner_w);
          ASSERT_EQ(tr.leafkids, ref.leafkids);
          ASSERT_TRUE(std::equal(ref.parent.begin(), ref.parent.end() - 1, tr.parent.begin()));
          merges += m - 1, by_runs += tr.run_merges;
        }
      }
    }
  }
  std::printf("  %llu merges, %llu of them by leaf-node runs; %llu cases also in 32-bit weights\n",
              static_cast<unsigned long long>(merges), static_cast<unsigned long long>(by_runs),
              static_cast<unsigned long long>(narrow_cases));
  EXPECT_GT(by_runs, merges / 2);  // geometric tails are mostly leaf-node merges
  EXPECT_GT(narrow_cases, 0u);
}

// The length of a rank by probes (the cluster kernel's stage 5) equals the
// binary search, on every rank of random length counts of 1 to 24 lengths.
TEST(GenerateCl, LengthOfRankByProbes) {
  const uint64_t seed = test::base_seed() + 31;
  std::printf("GenerateCl.LengthOfRankByProbes seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  uint64_t checked = 0;
  for (int it = 0; it < 2000; ++it) {
    uint32_t bound[cl::kSlots] = {};
    const uint32_t top = 1 + static_cast<uint32_t>(rng() % cl::kMaxLen);
    for (uint32_t l = 1; l < cl::kSlots; ++l)
      bound[l] = bound[l - 1] + (l <= top && rng() % 3 ? static_cast<uint32_t>(rng() % (it % 2 ? 5 : 3000)) : 0);
    for (uint32_t r = 0; r <= bound[cl::kMaxLen] + 2; ++r, ++checked)
      ASSERT_EQ(cl::len_of_rank_probes(bound, r), cl::len_of_rank(bound, r)) << "case " << it << " rank " << r;
  }
  EXPECT_GT(checked, 100000u);
}

// A thread's run of consecutive ranks (the codebook kernel's stage 4:
// lens_of_ranks, by the first and last rank's probes and a pass over the
// bounds between them) equals the binary search rank by rank, for runs of 8,
// 4 and 1 starting anywhere up to and past the last code.
template <uint32_t N>
void check_runs_of_ranks(std::mt19937_64& rng, uint64_t& checked) {
  for (int it = 0; it < 1000; ++it) {
    uint32_t bound[cl::kSlots] = {};
    const uint32_t top = 1 + static_cast<uint32_t>(rng() % cl::kMaxLen);
    for (uint32_t l = 1; l < cl::kSlots; ++l)
      bound[l] = bound[l - 1] + (l <= top && rng() % 3 ? static_cast<uint32_t>(rng() % (it % 2 ? 5 : 300)) : 0);
    for (uint32_t r0 = 0; r0 <= bound[cl::kMaxLen] + N; ++r0) {
      uint32_t len[N];
      cl::lens_of_ranks(bound, r0, len);
      for (uint32_t i = 0; i < N; ++i, ++checked)
        ASSERT_EQ(len[i], cl::len_of_rank(bound, r0 + i)) << "case " << it << " ranks from " << r0 << " + " << i;
    }
  }
}

TEST(GenerateCl, LengthsOfARunOfRanks) {
  const uint64_t seed = test::base_seed() + 32;
  std::printf("GenerateCl.LengthsOfARunOfRanks seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  uint64_t checked = 0;
  check_runs_of_ranks<8>(rng, checked);
  check_runs_of_ranks<4>(rng, checked);
  check_runs_of_ranks<1>(rng, checked);
  EXPECT_GT(checked, 100000u);
}

}  // namespace
}  // namespace vlec
