// tests/test_generate_cl.cpp: the GPU codebook builder's steps proved on the
// CPU (suite GenerateCl, runs everywhere, no GPU): the host emulation of the
// GPU's phase loop (cuda/generate_cl.hpp, the same functions the kernels call)
// builds the same tree as the two-queue loop, node by node, for every
// thread/tile shape and both data layouts (resident; streaming, with rings
// small enough to wrap and to copy fallback windows all the time), and no
// thread reads a shared slot that another thread of its tile writes or
// fetches; the one-warp tree (cuda/warp_tree.hpp) likewise; the batched
// limiter equals the CPU's; and the device pipeline's data flow, replayed on
// the host with the shared helpers, gives the CPU's lengths, encode entries
// and serialized bytes. The kernels themselves: test_codebook_gpu.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <numeric>
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

// ---- GenerateCl: CPU proofs ---------------------------------------------------

// Thread-block shapes: threads, merged nodes per thread, leaf ring, node ring
// (0: the resident layout). The streaming shapes with tiny rings wrap around
// and copy fallback windows all the time; the last ones are the kernels'.
struct Shape {
  uint32_t threads, items, leaf_ring, node_ring;
};
const Shape kShapes[] = {{1, 2, 0, 0},     {2, 2, 0, 0},       {3, 2, 0, 0},        {5, 4, 0, 0},
                         {256, 4, 0, 0},   {1024, 4, 0, 0},    {1, 2, 4, 2},        {2, 2, 8, 4},
                         {3, 2, 16, 8},    {5, 4, 64, 16},     {8, 4, 64, 64},      {4, 8, 128, 32},
                         {256, 4, 2048, 1024}, {1024, 4, 8192, 16384}, {32, 32, 0, 0},
                         {64, 16, 2048, 512},  {256, 16, 8192, 16384},  {128, 32, 8192, 16384}};

TEST(GenerateCl, TreeMatchesTwoQueueNodeByNode) {
  const uint64_t seed = test::base_seed() + 11;
  std::printf("GenerateCl.TreeMatchesTwoQueueNodeByNode seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  uint64_t narrow_tiles = 0, wide_tiles = 0, pair_phases = 0, global_pair_phases = 0, tail_phases = 0;
  // Then every kind at 65,536 symbols on the wide shapes (the kernels' among
  // them): pair phases of thousands of nodes, from the block's ring.
  constexpr int kRandomCases = 20000;
  for (int it = 0; it < kRandomCases + kKinds; ++it) {
    const bool full = it >= kRandomCases;
    const int kind = it % kKinds;
    const uint32_t cap = full ? 65536 : random_capacity(rng, it % 1000 == 999 ? 65536 : it % 50 == 0 ? 4096 : 600);
    const Histogram h = make_histogram(rng, kind, cap);
    const std::vector<uint64_t> desc = keys_desc(h);
    const huffman::LengthCounts want = huffman::huffman_length_counts(h);
    const TwoQueueTree ref = two_queue_tree(desc);
    for (const Shape& shape : kShapes) {
      if (full && shape.threads < 256) continue;
      if (shape.threads < 16 && desc.size() > 5000) continue;  // slow, and no different
      if (!full && shape.threads >= 256 && it % (shape.threads / 128) != 0) continue;  // the wide shapes on a subset
      cl::ClTrace tr;
      const auto bl = cl::generate_cl_host(desc, shape.threads, shape.items, shape.leaf_ring, shape.node_ring, &tr);
      SCOPED_TRACE(::testing::Message() << "case " << it << " " << kKindNames[kind] << " cap " << cap << " m "
                                        << desc.size() << " shape " << shape.threads << "x" << shape.items
                                        << " rings " << shape.leaf_ring << "/" << shape.node_ring);
      ASSERT_FALSE(tr.hazard);
      ASSERT_TRUE(std::equal(bl.begin(), bl.end(), want.begin()));
      narrow_tiles += tr.narrow_tiles, wide_tiles += tr.tiles - tr.pair_steps - tr.narrow_tiles;
      pair_phases += tr.pair_phases, global_pair_phases += tr.global_pair_phases, tail_phases += tr.tail_phases;
      if (desc.size() < 2) continue;
      if (shape.leaf_ring == 0) {
        ASSERT_EQ(tr.fallback_tiles, 0u);
      }
      ASSERT_EQ(tr.inner_w, ref.inner_w);
      ASSERT_EQ(tr.leafkids, ref.leafkids);
      ASSERT_TRUE(std::equal(ref.parent.begin(), ref.parent.end() - 1, tr.parent.begin()));  // all but the root
      ASSERT_LE(tr.phases, cl::kMaxPhases);
    }
  }
  // Both kinds of tile ran (narrow: 32-bit reads below a threshold of 2^32 - 1),
  // and pair phases both from the ring and from global memory.
  std::printf("  %llu narrow tiles, %llu wide, %llu pair phases (%llu from global memory, %llu by one warp)\n",
              static_cast<unsigned long long>(narrow_tiles), static_cast<unsigned long long>(wide_tiles),
              static_cast<unsigned long long>(pair_phases), static_cast<unsigned long long>(global_pair_phases),
              static_cast<unsigned long long>(tail_phases));
  EXPECT_GT(narrow_tiles, 0u);
  EXPECT_GT(wide_tiles, 0u);
  EXPECT_GT(global_pair_phases, 0u);
  EXPECT_GT(tail_phases, 0u);
  EXPECT_GT(pair_phases, global_pair_phases + tail_phases);  // some from the ring by the block
}

// The small-alphabet path of the GPU kernel (warp_tree.hpp: one warp's
// phases, the depths, the length counts), replayed lane by lane, against the
// CPU's tree node by node, up to the largest alphabet it takes.
TEST(GenerateCl, WarpTreeMatchesTwoQueue) {
  const uint64_t seed = test::base_seed() + 13;
  std::printf("GenerateCl.WarpTreeMatchesTwoQueue seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  uint32_t most_phases = 0, narrow_cases = 0, serial_cases = 0;
  uint64_t run_merges = 0, phase_runs = 0;
  for (int it = 0; it < 20000; ++it) {
    const int kind = it % kKinds;
    Histogram h = make_histogram(rng, kind, random_capacity(rng, it % 4 ? 300 : cl::kWarpTreeMax));
    if (it % 97 == 1)  // counts near the top of u64: saturating sums, deep Fibonacci-like trees
      for (uint64_t& c : h) c = c ? ~uint64_t{0} - rng() % 1000 : 0;
    const std::vector<uint64_t> desc = keys_desc(h);
    const uint32_t m = static_cast<uint32_t>(desc.size());
    SCOPED_TRACE(::testing::Message() << "case " << it << " " << kKindNames[kind] << " m " << m);
    cl::ClTrace tr;
    const auto bl = cl::warp_tree_host(desc, tr);
    ASSERT_FALSE(tr.hazard);
    if (it % 97 != 1) {  // the CPU's construction assumes a total below 2^64
      const huffman::LengthCounts want = huffman::huffman_length_counts(h);
      ASSERT_TRUE(std::equal(bl.begin(), bl.end(), want.begin()));
    }
    if (m < 2) continue;
    most_phases = std::max(most_phases, tr.phases);
    serial_cases += tr.serial_from != ~0u;
    phase_runs += tr.run_merges;
    if (it % 97 == 1) continue;
    const TwoQueueTree ref = two_queue_tree(desc);
    ASSERT_EQ(tr.inner_w, ref.inner_w);
    ASSERT_EQ(tr.leafkids, ref.leafkids);
    ASSERT_TRUE(std::equal(ref.parent.begin(), ref.parent.end() - 1, tr.parent.begin()));  // all but the root
    // The whole tree by the serial loop (as set_codebook_serial_all allows),
    // with leaf-node runs after 1 and 2 leaf-node merges in a row, and without
    // (as set_codebook_leaf_node_runs allows): the same tree.
    for (uint32_t run_after : {1u, cl::kRunAfter, cl::kNoRuns}) {
      SCOPED_TRACE(::testing::Message() << "run_after " << run_after);
      cl::ClTrace whole;
      ASSERT_EQ(cl::warp_tree_host(desc, whole, cl::kWarpTreeMax, run_after), bl);
      ASSERT_EQ(whole.serial_from, 0u);
      ASSERT_EQ(whole.inner_w, ref.inner_w);
      ASSERT_EQ(whole.leafkids, ref.leafkids);
      ASSERT_EQ(whole.parent, tr.parent);
      if (run_after == cl::kNoRuns) ASSERT_EQ(whole.run_merges, 0u);
      run_merges += whole.run_merges;
    }
    if (total_below_2_32(desc)) {  // the kernel's 32-bit weights: the same tree
      cl::ClTrace narrow, whole;
      const auto bl32 = cl::warp_tree_host<uint32_t>(desc, narrow);
      ASSERT_FALSE(narrow.hazard);
      ASSERT_EQ(bl32, bl);
      ASSERT_EQ(narrow.inner_w, ref.inner_w);
      ASSERT_EQ(narrow.leafkids, ref.leafkids);
      ASSERT_EQ(narrow.parent, tr.parent);
      ASSERT_EQ(cl::warp_tree_host<uint32_t>(desc, whole, cl::kWarpTreeMax), bl);
      ASSERT_EQ(whole.inner_w, ref.inner_w);
      ASSERT_EQ(whole.leafkids, ref.leafkids);
      ASSERT_EQ(whole.parent, tr.parent);
      ++narrow_cases;
    }
  }
  std::printf("  %u cases also in 32-bit weights, %u finished by the serial loop; merges by leaf-node runs: %llu "
              "(phases and serial loop), %llu (serial loop alone)\n",
              narrow_cases, serial_cases, static_cast<unsigned long long>(phase_runs),
              static_cast<unsigned long long>(run_merges));
  std::printf("  most phases: %u\n", most_phases);
  EXPECT_GT(phase_runs, 0u);
  EXPECT_GT(run_merges, 0u);
}

// Hand-made shapes: two symbols, all equal, every count 1 up to the largest
// warp-tree alphabet, and the Fibonacci counts that make the deepest tree.
TEST(GenerateCl, WarpTreeEdgeShapes) {
  std::vector<std::vector<uint64_t>> cases = {{7, 7}, {1, 1}, {5, 1}, {3, 2, 1}, {1, 1, 1}};
  for (uint32_t m : {31u, 32u, 33u, 63u, 64u, 65u, 255u, 256u, 257u, cl::kWarpTreeMax}) {
    cases.push_back(std::vector<uint64_t>(m, 1));
    cases.push_back(std::vector<uint64_t>(m, uint64_t{1} << 40));
    std::vector<uint64_t> fib;
    for (uint64_t a = 1, b = 1; fib.size() < m; ) {
      fib.push_back(a);
      const uint64_t c = a + b < a ? b : a + b;  // past 2^64 (m > 90): the last count repeats
      a = b;
      b = c;
    }
    std::reverse(fib.begin(), fib.end());
    cases.push_back(fib);
  }
  for (const auto& desc : cases) {
    SCOPED_TRACE(::testing::Message() << "m " << desc.size() << " first " << desc.front());
    ASSERT_TRUE(std::is_sorted(desc.rbegin(), desc.rend()));
    cl::ClTrace tr;
    const auto bl = cl::warp_tree_host(desc, tr);
    ASSERT_FALSE(tr.hazard);
    uint64_t total = 0;
    bool fits = true;
    for (uint64_t c : desc) fits = fits && total + c >= total, total += c;
    if (!fits) continue;  // beyond the CPU's domain: only the hazard checks apply
    Histogram h(desc.begin(), desc.end());
    const huffman::LengthCounts want = huffman::huffman_length_counts(h);
    ASSERT_TRUE(std::equal(bl.begin(), bl.end(), want.begin()));
    const TwoQueueTree ref = two_queue_tree(desc);
    ASSERT_EQ(tr.inner_w, ref.inner_w);
    ASSERT_EQ(tr.leafkids, ref.leafkids);
    cl::ClTrace whole;  // the whole tree by the serial loop
    ASSERT_EQ(cl::warp_tree_host(desc, whole, cl::kWarpTreeMax), bl);
    ASSERT_EQ(whole.inner_w, ref.inner_w);
    ASSERT_EQ(whole.leafkids, ref.leafkids);
    if (total_below_2_32(desc)) {
      cl::ClTrace narrow, whole32;
      ASSERT_EQ(cl::warp_tree_host<uint32_t>(desc, narrow), bl);
      ASSERT_FALSE(narrow.hazard);
      ASSERT_EQ(narrow.inner_w, ref.inner_w);
      ASSERT_EQ(cl::warp_tree_host<uint32_t>(desc, whole32, cl::kWarpTreeMax), bl);
      ASSERT_EQ(whole32.inner_w, ref.inner_w);
      ASSERT_EQ(whole32.leafkids, ref.leafkids);
    }
  }
}

TEST(GenerateCl, PhaseCountsStaySmall) {
  std::mt19937_64 rng(test::base_seed() + 12);
  uint32_t worst = 0;
  for (int kind = 0; kind < kKinds; ++kind) {
    for (uint32_t cap : {256u, 8192u, 65536u}) {
      const Histogram h = make_histogram(rng, kind, cap);
      cl::ClTrace tr;
      if (cap <= 8192) {
        cl::generate_cl_host(keys_desc(h), cap <= 1024 ? 256 : 1024, 4, &tr);  // the resident kernels
      } else {
        cl::generate_cl_host(keys_desc(h), 1024, 4, 8192, 16384, &tr);  // the cluster kernel
      }
      std::printf("  %-15s %6u symbols: %3u phases, %4u steps (%4u narrow, %3u pair phases in %3u), %3u copied "
                  "windows, queue <= %5u\n",
                  kKindNames[kind], cap, tr.phases, tr.tiles, tr.narrow_tiles, tr.pair_phases, tr.pair_steps,
                  tr.fallback_tiles, tr.max_queue);
      EXPECT_FALSE(tr.hazard);
      worst = std::max(worst, tr.phases);
    }
  }
  for (uint32_t cap : {256u, 1024u, 8192u, 65536u}) {
    cl::ClTrace tr;
    if (cap <= 8192) cl::generate_cl_host(keys_desc(timing_histogram(cap)), cap <= 1024 ? 256 : 1024, 4, &tr);
    else cl::generate_cl_host(keys_desc(timing_histogram(cap)), 1024, 4, 8192, 16384, &tr);
    std::printf("  %-15s %6u symbols: %3u phases, %4u steps (%4u narrow, %3u pair phases in %3u), %3u copied "
                "windows, queue <= %5u\n",
                "timing", cap, tr.phases, tr.tiles, tr.narrow_tiles, tr.pair_phases, tr.pair_steps, tr.fallback_tiles,
                tr.max_queue);
    EXPECT_FALSE(tr.hazard);
  }
  // The deepest tree 64-bit counts allow: Fibonacci weights up to the 2^64 total.
  std::vector<uint64_t> fib;
  for (uint64_t a = 1, b = 1, total = 0; total + a >= total && total + a < (uint64_t{1} << 63);) {
    fib.push_back(a);
    total += a;
    const uint64_t c = a + b;
    a = b;
    b = c;
  }
  std::reverse(fib.begin(), fib.end());
  cl::ClTrace tr;
  const auto bl = cl::generate_cl_host(fib, 1024, 4, &tr);
  Histogram h(fib.begin(), fib.end());
  const huffman::LengthCounts want = huffman::huffman_length_counts(h);
  EXPECT_TRUE(std::equal(bl.begin(), bl.end(), want.begin()));
  std::printf("  fibonacci-2^63 %6zu symbols: %3u phases\n", fib.size(), tr.phases);
  EXPECT_LE(std::max(worst, tr.phases), cl::kMaxPhases);
}

// A random complete prefix code of `symbols` codes: split random leaves.
huffman::LengthCounts random_complete_counts(std::mt19937_64& rng, uint32_t symbols) {
  std::vector<uint32_t> depth{0};
  while (depth.size() < symbols) {
    const std::size_t i = rng() % 4 ? depth.size() - 1 - rng() % std::min<std::size_t>(depth.size(), 3) : rng() % depth.size();
    if (depth[i] >= huffman::kMaxTreeDepth) continue;
    ++depth[i];
    depth.push_back(depth[i]);
  }
  huffman::LengthCounts c{};
  for (uint32_t d : depth) ++c[std::max<uint32_t>(d, 1)];
  return c;
}

TEST(GenerateCl, LimiterMatchesCpu) {
  const uint64_t seed = test::base_seed() + 13;
  std::printf("GenerateCl.LimiterMatchesCpu seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int it = 0; it < 6000; ++it) {
    huffman::LengthCounts bl;
    if (it % 2) {
      bl = huffman::huffman_length_counts(make_histogram(rng, it % kKinds, random_capacity(rng, 20000)));
    } else {
      bl = random_complete_counts(rng, 1 + static_cast<uint32_t>(random_capacity(rng, 65536)));
    }
    const uint64_t m = std::accumulate(bl.begin(), bl.end(), uint64_t{0});
    for (unsigned limit = 1; limit <= huffman::kMaxCodeLength; ++limit) {
      if ((uint64_t{1} << limit) < m) continue;
      const huffman::LengthCounts want = huffman::limit_length_counts(bl, limit);
      uint32_t got[cl::kSlots];
      cl::limit_counts(bl.data(), limit, got);
      for (unsigned l = 1; l <= huffman::kMaxTreeDepth; ++l)
        ASSERT_EQ(l < cl::kSlots ? got[l] : 0u, want[l]) << "case " << it << " limit " << limit << " length " << l;
    }
  }
}

// What the device computes, replayed on the host with the shared helpers.
BuiltCodebook emulate_device(const Histogram& h, unsigned limit) {
  const uint32_t cap = static_cast<uint32_t>(h.size());
  std::vector<uint32_t> ranked(cap);
  std::iota(ranked.begin(), ranked.end(), 0u);
  std::stable_sort(ranked.begin(), ranked.end(), [&](uint32_t a, uint32_t b) { return h[a] > h[b]; });
  uint32_t m = 0;
  while (m < cap && h[ranked[m]]) ++m;
  const bool error = limit && (uint64_t{1} << limit) < m;
  std::vector<uint64_t> desc(m);
  for (uint32_t r = 0; r < m; ++r) desc[r] = h[ranked[r]];
  std::array<uint32_t, cl::kMaxDepth + 1> bl{};
  cl::ClTrace tr;
  if (!error) {  // the kernels' paths: one warp, resident tiles up to 8,192 symbols, streaming tiles above
    if (cap <= 8192 && m <= cl::kWarpTreeMax)
      bl = total_below_2_32(desc) ? cl::warp_tree_host<uint32_t>(desc, tr) : cl::warp_tree_host(desc, tr);
    else if (cap <= 8192) bl = cl::generate_cl_host(desc, 1024, 4, &tr);
    else bl = cl::generate_cl_host(desc, 1024, 4, 8192, 16384, &tr);
  }
  EXPECT_FALSE(tr.hazard);
  uint32_t longest = 0;
  for (uint32_t l = 1; l <= cl::kMaxDepth; ++l)
    if (bl[l]) longest = l;
  const uint32_t ncand = limit ? 1 : cl::kCandidates;
  uint32_t valid[cl::kCandidates] = {}, bound[cl::kCandidates][cl::kSlots] = {};
  uint64_t bits[cl::kCandidates] = {};
  for (uint32_t c = 0; c < ncand; ++c) {
    const uint32_t L = limit ? limit : cl::auto_limit(c);
    valid[c] = !error && (uint64_t{1} << L) >= m;
    uint32_t counts[cl::kSlots] = {};
    if (valid[c]) cl::limit_counts(bl.data(), longest, L, counts);
    for (uint32_t l = 0, acc = 0; l < cl::kSlots; ++l) bound[c][l] = acc += counts[l];
    for (uint32_t r0 = 0; r0 < m && valid[c]; r0 += 8) {  // a thread's run of ranks
      uint32_t len[8];
      cl::lens_of_ranks(bound[c], r0, len);
      for (uint32_t j = 0; j < 8 && r0 + j < cap; ++j) {
        EXPECT_EQ(len[j], cl::len_of_rank(bound[c], r0 + j));
        if (r0 + j < m) bits[c] += desc[r0 + j] * len[j];
      }
    }
  }
  const uint32_t choice = cl::choose_candidate(ncand, valid, bits);
  uint32_t cnt[cl::kSlots] = {}, next[cl::kSlots], L = 0;
  for (uint32_t l = 1; l < cl::kSlots; ++l)
    if ((cnt[l] = bound[choice][l] - bound[choice][l - 1])) L = l;
  cl::canonical_next(cnt, next);
  BuiltCodebook out;
  out.lengths.assign(cap, 0);
  for (uint32_t r = 0; r < m; ++r) out.lengths[ranked[r]] = static_cast<uint8_t>(cl::len_of_rank(bound[choice], r));
  uint32_t n = 0;
  for (uint32_t s = 0; s < cap; ++s)
    if (out.lengths[s]) n = s + 1;
  out.entry.assign(cap, 0);
  std::vector<uint32_t> words(cl::serialized_capacity(cap) / 4, 0), seen(cl::kSlots, 0);
  const uint32_t fbits = cl::field_bits(L), groups = cl::group_count(n);
  uint32_t present = 0;
  for (uint32_t g = 0; g < groups; ++g) {
    bool any = false;
    for (uint32_t s = 16 * g; s < 16 * g + 16 && s < cap; ++s) {
      const uint32_t l = out.lengths[s];
      if (!l) continue;
      any = true;
      out.entry[s] = (l << 24) | reverse_bits(next[l] + seen[l]++, l);
      const uint64_t bit = 64 + cl::field_bit(groups, present, s, fbits);
      words[bit / 32] |= l << (bit % 32);
      if (bit % 32 + fbits > 32) words[bit / 32 + 1] |= l >> (32 - bit % 32);
    }
    if (any) words[2 + g / 32] |= 1u << (g % 32), ++present;
  }
  words[0] = error ? 0 : n;
  words[1] = n && !error ? (L | fbits << 8) : 0;
  out.serialized.resize(4 * words.size());
  std::memcpy(out.serialized.data(), words.data(), out.serialized.size());
  out.info[0] = error ? 0 : cl::serialized_bytes(n, present, fbits);
  out.info[1] = n && !error ? L : 0;
  out.info[2] = error ? 0 : n;
  out.info[3] = m;
  return out;
}

TEST(GenerateCl, PipelineEmulationMatchesCpu) {
  const uint64_t seed = test::base_seed() + 14;
  std::printf("GenerateCl.PipelineEmulationMatchesCpu seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int it = 0; it < 600; ++it) {
    const int kind = it % kKinds;
    const uint32_t cap = it == 0 ? 65536 : random_capacity(rng, it % 20 == 0 ? 65536 : 3000);
    const Histogram h = make_histogram(rng, kind, cap);
    for (unsigned limit : limits_for(rng, h)) {
      SCOPED_TRACE(::testing::Message() << "case " << it << " " << kKindNames[kind] << " cap " << cap << " limit "
                                        << limit);
      expect_same(emulate_device(h, limit), cpu_codebook(h, limit));
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace vlec
