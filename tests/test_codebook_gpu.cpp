// tests/test_codebook_gpu.cpp: the GPU codebook builder (cuda/codebook_gpu.*)
// against the CPU's huffman::build_codebook.
//   GenerateCl.*   run everywhere (no GPU): the host emulation of the GPU's
//                  phase loop (cuda/generate_cl.hpp, the same functions the
//                  kernels call) builds the same tree as the two-queue loop,
//                  node by node, for every thread/tile shape and both data
//                  layouts (resident; streaming, with rings small enough to
//                  wrap and to copy fallback windows all the time), and no
//                  thread reads a shared slot that another thread of its tile
//                  writes or fetches; the batched limiter equals the CPU's; and
//                  the device pipeline's data flow, replayed on the host with
//                  the shared helpers, gives the CPU's lengths, encode entries
//                  and serialized bytes.
//   GpuCodebook.*  skip without a GPU: the kernels' outputs against the CPU
//                  for hundreds of histograms, and timings (with the kernel's
//                  own stage stamps).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "cuda/generate_cl.hpp"
#include "cuda/warp_tree.hpp"
#include "huffman/chunk_codec.hpp"
#include "huffman/codebook.hpp"
#include "test_util.hpp"
#include "vlec/error.hpp"
#include "vlec/vlec.hpp"

#if defined(VLEC_WITH_CUDA)
#include <cuda_runtime.h>

#include "cuda/codebook_gpu.hpp"
#include "cuda/cuda_check.hpp"
#endif

namespace vlec {
namespace {

using huffman::Histogram;
namespace cl = cuda::cl;

// ---- histograms --------------------------------------------------------------

constexpr int kKinds = 10;
const char* const kKindNames[kKinds] = {"random", "all-equal", "small-set", "near-2^40", "fibonacci",
                                        "powers-of-2", "skewed", "huge-random", "sparse", "geometric-tail"};

Histogram make_histogram(std::mt19937_64& rng, int kind, uint32_t cap) {
  Histogram h(cap, 0);
  const uint64_t eq = 1 + rng() % 1000;
  const uint64_t set[3] = {1 + rng() % 5, 1 + rng() % 50, 1 + rng() % 500};
  const double width = 1.0 + static_cast<double>(cap) / (4 + rng() % 60);
  for (uint32_t s = 0; s < cap; ++s) {
    uint64_t& c = h[s];
    switch (kind) {
      case 0: c = rng() % 1000; break;
      case 1: c = eq; break;
      case 2: c = set[rng() % 3]; break;
      case 3: c = (uint64_t{1} << 40) - rng() % 4096; break;
      case 4: c = 0; break;
      case 5: c = uint64_t{1} << (rng() % 24); break;
      case 6: c = 1 + static_cast<uint64_t>(1e7 * std::exp(-std::fabs(s - cap / 2.0) / width)); break;
      case 7: c = 1 + rng() % (uint64_t{1} << 40); break;
      case 8: c = rng() % 97 == 0 ? 1 + rng() % 100000 : 0; break;
      default: c = 1 + static_cast<uint64_t>(1e12 * std::exp(-static_cast<double>(s) / (1 + rng() % 40))); break;
    }
  }
  if (kind == 4) {  // Fibonacci counts on random symbols: the deepest trees, the limiter at work
    uint64_t a = 1, b = 1;
    for (uint32_t i = 0; i < std::min<uint32_t>(cap, 80 + rng() % 10); ++i) {
      h[rng() % cap] = a;
      const uint64_t c = a + b;
      a = b;
      b = c;
    }
    for (uint32_t s = 0; s < cap; ++s)
      if (!h[s] && rng() % 4 == 0) h[s] = 1 + rng() % 3;
  }
  if (kind != 1 && kind != 3 && rng() % 4 == 0)  // holes
    for (uint32_t s = 0; s < cap; ++s)
      if (rng() % 3 == 0) h[s] = 0;
  return h;
}

uint32_t random_capacity(std::mt19937_64& rng, uint32_t max_cap) {
  const double lg = std::log2(static_cast<double>(max_cap));
  return std::max<uint32_t>(1, std::min<uint32_t>(max_cap, static_cast<uint32_t>(std::exp2(lg * (rng() % 10001) / 10000.0))));
}

// GpuCodebook.Timing's histogram: quantization-code-like, Laplace around the
// middle, every symbol present.
Histogram timing_histogram(uint32_t cap) {
  Histogram h(cap);
  for (uint32_t s = 0; s < cap; ++s)
    h[s] = 1 + static_cast<uint64_t>(4e6 * std::exp(-std::fabs(s - cap / 2.0) / (cap / 24.0)));
  return h;
}

// The present counts in rank order (count desc, symbol asc).
std::vector<uint64_t> keys_desc(const Histogram& h) {
  std::vector<uint64_t> k;
  for (uint32_t s : huffman::rank_symbols(h)) k.push_back(h[s]);
  return k;
}

// The two-queue loop of huffman_length_counts, keeping its tree.
struct TwoQueueTree {
  std::vector<uint16_t> parent;
  std::vector<uint8_t> leafkids;
  std::vector<uint64_t> inner_w;
};
TwoQueueTree two_queue_tree(const std::vector<uint64_t>& desc) {
  const std::size_t m = desc.size();
  TwoQueueTree t;
  if (m < 2) return t;
  std::vector<uint64_t> leaf(desc.rbegin(), desc.rend());
  t.parent.assign(m - 1, 0xFFFF);
  t.leafkids.assign(m - 1, 0);
  t.inner_w.assign(m - 1, 0);
  std::size_t li = 0, ii = 0;
  for (std::size_t k = 0; k + 1 < m; ++k) {
    uint64_t sum = 0;
    for (int pick = 0; pick < 2; ++pick) {
      if (li < m && (ii >= k || leaf[li] <= t.inner_w[ii])) {
        sum += leaf[li++];
        ++t.leafkids[k];
      } else {
        sum += t.inner_w[ii];
        t.parent[ii++] = static_cast<uint16_t>(k);
      }
    }
    t.inner_w[k] = sum;
  }
  return t;
}

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
  for (int it = 0; it < 20000; ++it) {
    const int kind = it % kKinds;
    const uint32_t cap = random_capacity(rng, it % 1000 == 999 ? 65536 : it % 50 == 0 ? 4096 : 600);
    const Histogram h = make_histogram(rng, kind, cap);
    const std::vector<uint64_t> desc = keys_desc(h);
    const huffman::LengthCounts want = huffman::huffman_length_counts(h);
    const TwoQueueTree ref = two_queue_tree(desc);
    for (const Shape& shape : kShapes) {
      if (shape.threads < 16 && desc.size() > 5000) continue;  // slow, and no different
      if (shape.threads >= 256 && it % (shape.threads / 128) != 0) continue;  // the wide shapes on a subset
      cl::ClTrace tr;
      const auto bl = cl::generate_cl_host(desc, shape.threads, shape.items, shape.leaf_ring, shape.node_ring, &tr);
      SCOPED_TRACE(::testing::Message() << "case " << it << " " << kKindNames[kind] << " cap " << cap << " m "
                                        << desc.size() << " shape " << shape.threads << "x" << shape.items
                                        << " rings " << shape.leaf_ring << "/" << shape.node_ring);
      ASSERT_FALSE(tr.hazard);
      ASSERT_TRUE(std::equal(bl.begin(), bl.end(), want.begin()));
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
}

// Whether the counts total below 2^32 (the warp tree then runs in 32-bit weights).
bool total_below_2_32(const std::vector<uint64_t>& counts) {
  uint64_t total = 0;
  for (uint64_t c : counts) {
    if (c >= (uint64_t{1} << 32) - total) return false;
    total += c;
  }
  return true;
}

// The small-alphabet path of the GPU kernel (warp_tree.hpp: one warp's
// phases, the depths, the length counts), replayed lane by lane, against the
// CPU's tree node by node, up to the largest alphabet it takes.
TEST(GenerateCl, WarpTreeMatchesTwoQueue) {
  const uint64_t seed = test::base_seed() + 13;
  std::printf("GenerateCl.WarpTreeMatchesTwoQueue seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  uint32_t most_phases = 0, narrow_cases = 0, serial_cases = 0;
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
    if (it % 97 == 1) continue;
    const TwoQueueTree ref = two_queue_tree(desc);
    ASSERT_EQ(tr.inner_w, ref.inner_w);
    ASSERT_EQ(tr.leafkids, ref.leafkids);
    ASSERT_TRUE(std::equal(ref.parent.begin(), ref.parent.end() - 1, tr.parent.begin()));  // all but the root
    if (total_below_2_32(desc)) {  // the kernel's 32-bit weights: the same tree
      cl::ClTrace narrow;
      const auto bl32 = cl::warp_tree_host<uint32_t>(desc, narrow);
      ASSERT_FALSE(narrow.hazard);
      ASSERT_EQ(bl32, bl);
      ASSERT_EQ(narrow.inner_w, ref.inner_w);
      ASSERT_EQ(narrow.leafkids, ref.leafkids);
      ASSERT_EQ(narrow.parent, tr.parent);
      ++narrow_cases;
    }
  }
  std::printf("  %u cases also in 32-bit weights, %u finished by the serial loop\n", narrow_cases, serial_cases);
  std::printf("  most phases: %u\n", most_phases);
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
    if (total_below_2_32(desc)) {
      cl::ClTrace narrow;
      ASSERT_EQ(cl::warp_tree_host<uint32_t>(desc, narrow), bl);
      ASSERT_FALSE(narrow.hazard);
      ASSERT_EQ(narrow.inner_w, ref.inner_w);
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
      std::printf("  %-15s %6u symbols: %3u phases, %4u tiles, %3u copied windows, queue <= %5u\n",
                  kKindNames[kind], cap, tr.phases, tr.tiles, tr.fallback_tiles, tr.max_queue);
      EXPECT_FALSE(tr.hazard);
      worst = std::max(worst, tr.phases);
    }
  }
  for (uint32_t cap : {256u, 1024u, 8192u, 65536u}) {
    cl::ClTrace tr;
    if (cap <= 8192) cl::generate_cl_host(keys_desc(timing_histogram(cap)), cap <= 1024 ? 256 : 1024, 4, &tr);
    else cl::generate_cl_host(keys_desc(timing_histogram(cap)), 1024, 4, 8192, 16384, &tr);
    std::printf("  %-15s %6u symbols: %3u phases, %4u tiles, %3u copied windows, queue <= %5u\n", "timing", cap,
                tr.phases, tr.tiles, tr.fallback_tiles, tr.max_queue);
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
struct BuiltCodebook {
  std::vector<uint8_t> lengths;
  std::vector<uint32_t> entry;
  std::vector<uint8_t> serialized;  // serialized-capacity bytes
  uint32_t info[4] = {};
};

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

// The CPU's answer in the device's output form; info[0] == 0 where the CPU throws.
BuiltCodebook cpu_codebook(const Histogram& h, unsigned limit) {
  const uint32_t cap = static_cast<uint32_t>(h.size());
  BuiltCodebook out;
  out.lengths.assign(cap, 0);
  out.entry.assign(cap, 0);
  out.serialized.assign(cl::serialized_capacity(cap), 0);
  const std::vector<uint32_t> ranked = huffman::rank_symbols(h);
  out.info[3] = static_cast<uint32_t>(ranked.size());
  huffman::Codebook book;
  try {
    book = huffman::build_codebook(h, limit);
  } catch (const Error&) {
    return out;
  }
  const huffman::EncodeTable table = huffman::make_encode_table(book, DType::u16);
  for (uint32_t s = 0; s < cap; ++s) {
    out.lengths[s] = s < book.alphabet_size ? book.lengths[s] : 0;
    out.entry[s] = table.entry[s];
  }
  const std::vector<uint8_t> bytes = huffman::serialize_codebook(book);
  std::copy(bytes.begin(), bytes.end(), out.serialized.begin());
  out.info[0] = static_cast<uint32_t>(bytes.size());
  out.info[1] = book.max_length;
  out.info[2] = book.alphabet_size;
  return out;
}

void expect_same(const BuiltCodebook& got, const BuiltCodebook& want) {
  ASSERT_EQ(got.info[0], want.info[0]) << "serialized size";
  ASSERT_EQ(got.info[1], want.info[1]) << "max length";
  ASSERT_EQ(got.info[2], want.info[2]) << "alphabet size";
  ASSERT_EQ(got.info[3], want.info[3]) << "present symbols";
  for (std::size_t s = 0; s < want.lengths.size(); ++s) {
    ASSERT_EQ(got.lengths[s], want.lengths[s]) << "length of symbol " << s;
    ASSERT_EQ(got.entry[s], want.entry[s]) << "encode entry of symbol " << s;
  }
  for (std::size_t i = 0; i < want.serialized.size(); ++i)
    ASSERT_EQ(got.serialized[i], want.serialized[i]) << "serialized byte " << i;
}

// Limits to try: automatic, the candidates, and ones the tree forces to act.
std::vector<unsigned> limits_for(std::mt19937_64& rng, const Histogram& h) {
  const huffman::LengthCounts bl = huffman::huffman_length_counts(h);
  unsigned longest = 0, m = 0, need = 1;
  for (unsigned l = 1; l <= huffman::kMaxTreeDepth; ++l)
    if (bl[l]) longest = l, m += bl[l];
  while ((1u << need) < m) ++need;
  std::vector<unsigned> out{0, 11 + static_cast<unsigned>(rng() % 2), rng() % 2 ? 16u : 24u};
  if (longest > need) out.push_back(need + static_cast<unsigned>(rng() % std::min(longest - need, 25u - need)));
  out.push_back(need);
  if (need > 1 && rng() % 4 == 0) out.push_back(need - 1);  // too short: the CPU throws, the GPU reports info[0] == 0
  for (unsigned& l : out) l = std::min(l, huffman::kMaxCodeLength);
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

#if defined(VLEC_WITH_CUDA)
namespace vlec {
namespace {

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
void time_codebook(GpuBuilder& gpu, const Histogram& h, const char* what) {
  const uint32_t cap = static_cast<uint32_t>(h.size());
  gpu.upload(h);
  const float direct = median_us(gpu, [&] { gpu.enqueue(0); });
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
  if (cap <= 8192 && desc.size() <= cl::kWarpTreeMax) cl::warp_tree_host(desc, tr);
  else if (cap <= 8192) cl::generate_cl_host(desc, 1024, 4, &tr);
  else cl::generate_cl_host(desc, 1024, 4, 8192, 16384, &tr);
  const uint32_t serial = tr.serial_from == ~0u ? 0 : static_cast<uint32_t>(desc.size()) - 1 - tr.serial_from;
  std::printf("GpuCodebook timing: %5u symbols %-10s (%2u phases, %2u tiles, %3u serial merges): median %7.1f us "
              "enqueued, %7.1f us as a graph\n",
              cap, what, tr.phases, tr.tiles, serial, direct, graphed);
  cuda::DeviceBuffer<uint64_t> stamps(32);
  CK(cudaMemset(stamps.get(), 0, 32 * sizeof(uint64_t)));
  cuda::set_codebook_profile(stamps.get());
  gpu.enqueue(0);
  cuda::set_codebook_profile(nullptr);
  uint64_t st[32];
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
  }
  for (uint32_t cap : {256u, 65536u}) {  // harder shapes: uniform random counts, and every count equal
    Histogram h = make_histogram(rng, 7, cap);
    for (uint64_t& c : h) c = 1 + c % 1000000;
    time_codebook(gpu, h, "random");
    time_codebook(gpu, Histogram(cap, 4096), "all-equal");
  }
  cuda::set_codebook_staged_sort(false);  // the cluster's sort scattering straight from registers
  time_codebook(gpu, timing_histogram(65536), "laplace/rs");
  cuda::set_codebook_staged_sort(true);
}

}  // namespace
}  // namespace vlec
#endif  // VLEC_WITH_CUDA
