// cuda/serial_tree.hpp: the narrow end of the one-warp Huffman tree
// (warp_tree.hpp): the CPU's two-queue loop on one thread's chain of
// instructions (serial_tree), and the leaf-node runs that let the whole warp
// take 32 of its merges at once where the counts are skewed.
//
// Why runs: on skewed counts (a geometric tail) the two-queue loop settles
// into merging the lightest leaf with the oldest internal node, merge after
// merge, with the internal queue's length q constant (a "leaf-node run").
// There each new node is node[k + i] = leaf[x + i] + node[y + i], and
// node[y + i] for i >= q is itself made in the run: the run's weights are q
// interleaved prefix sums of the leaves, which a warp computes with a strided
// scan (log2(32 / q) shuffles). Every lane then checks that its merge really
// is leaf + node by the loop's own rule (heads compared as the loop compares
// them), a ballot finds the first merge that is not, and the lanes before it
// store their nodes. A round costs about what two or three serial merges do
// (the loop: ~135 cycles a merge in 32-bit weights, ~250 in 64-bit), and
// takes up to 32. The serial loop hands over after kRunAfter leaf-node merges
// in a row and takes back the merge that ends a run.
//
// The tree is the two-queue loop's node for node: a run stores only merges
// the loop would make, in its order, with its sums (saturating sums are
// associative, so the scan's order of additions does not matter).
// tests/test_leaf_node_runs.cpp replays it lane by lane (leaf_node_run_host).
#pragma once

#include <cstdint>

#include "cuda/generate_cl_base.hpp"

namespace vlec::cuda::cl {

// Saturating sums in the warp tree's weight type W (uint32_t when the counts
// total below 2^32, where they equal plain sums; else uint64_t).
template <class W>
VLEC_HD inline W sat_add_w(W a, W b) {
  return a + b < a ? static_cast<W>(~W{0}) : static_cast<W>(a + b);
}

// Leaf-node merges in a row after which the serial loop hands the tree to a
// leaf-node run (~0u: never).
constexpr uint32_t kRunAfter = 2;
constexpr uint32_t kNoRuns = ~0u;
// A phase of the one-warp tree (warp_tree.hpp) whose pairs were all one leaf
// and one node, at least this many, hands the tree to leaf-node runs while
// they take whole rounds (then the phases go on).
constexpr uint32_t kRunPairs = 2;

// The rest of the tree by the CPU's own two-queue loop on one thread, from a
// state the loop passes through (x leaves and y nodes consumed, k made: the
// state after any phase). leaf: the m weights, ascending; node: internal
// weights (node k at k & nmask); parent[y] = the node that consumes node y;
// leafkids[k] = leaf children. Weights are read and summed in W. Returns with
// the state advanced, when the tree is done or after stop_after leaf-node
// merges in a row.
//
// Why it is short: a single thread's time is its chain of dependent
// instructions, so a merge decides both picks at once and branches nowhere.
// The first two entries of each queue decide the merge (the leaf wins ties):
// two leaves if the second leaf is <= the first node, two nodes if the second
// node is < the first leaf, else one of each; the three possible sums are
// formed beside the compares and one is selected. Each queue's next four
// entries wait in registers (a window) and shift by what the merge took; the
// two entries that enter a window are loaded a merge before any compare reads
// them, so no compare waits on shared memory. Measured on the H100: ~135
// cycles a merge (the pick-by-pick loop with branches took ~190); what is
// left is the loop's ~75 instructions a merge on one thread.
//
// Window invariant, at the start of each merge: l_j = leaf[x + j] where
// x + j < m, n_j = node[y + j] where y + j < k (other entries are unused).
// The node made here is the window's entry only where its position is y' or
// y' + 1; entries 2 and 3 are loaded after it is stored.
template <class W>
VLEC_HD inline void serial_tree(uint32_t m, const uint64_t* leaf, uint64_t* node, uint32_t nmask, uint16_t* parent,
                                uint8_t* leafkids, uint32_t& x_io, uint32_t& y_io, uint32_t& k_io,
                                uint32_t stop_after = kNoRuns) {
  uint32_t x = x_io, y = y_io, k = k_io;
  if (k + 1 >= m) return;
  const uint32_t last = m - 1;
  auto leaf_at = [&](uint32_t i) { return static_cast<W>(leaf[min_u32(i, last)]); };
  auto node_at = [&](uint32_t i, uint32_t made) { return static_cast<W>(node[min_u32(i, made) & nmask]); };
  W l0 = leaf_at(x), l1 = leaf_at(x + 1), l2 = leaf_at(x + 2), l3 = leaf_at(x + 3);
  W n0 = 0, n1 = 0, n2 = 0, n3 = 0;
  if (y < k) n0 = node_at(y, k - 1);
  if (y + 1 < k) n1 = node_at(y + 1, k - 1);
  if (y + 2 < k) n2 = node_at(y + 2, k - 1);
  if (y + 3 < k) n3 = node_at(y + 3, k - 1);
  for (uint32_t streak = 0; k + 1 < m;) {
    const bool hl0 = x < m, hl1 = x + 1 < m, hn0 = y < k, hn1 = y + 1 < k;
    const bool first_leaf = hl0 && (!hn0 || l0 <= n0);
    const bool two_leaves = first_leaf && hl1 && (!hn0 || l1 <= n0);
    const bool two_nodes = !first_leaf && hn1 && (!hl0 || n1 < l0);
    const uint32_t dx = two_leaves ? 2u : two_nodes ? 0u : 1u, dy = 2 - dx;
    const W sum_ll = sat_add_w<W>(l0, l1), sum_ln = sat_add_w<W>(l0, n0), sum_nn = sat_add_w<W>(n0, n1);
    const W sum = two_leaves ? sum_ll : two_nodes ? sum_nn : sum_ln;
    node[k & nmask] = sum;
    leafkids[k] = static_cast<uint8_t>(dx);
    if (dy >= 1) parent[y] = static_cast<uint16_t>(k);
    if (dy == 2) parent[y + 1] = static_cast<uint16_t>(k);
    // Shift the windows; node k sits at position k.
    const uint32_t yn = y + dy;
    const W m0 = dy == 0 ? n0 : dy == 1 ? n1 : n2, m1 = dy == 0 ? n1 : dy == 1 ? n2 : n3;
    n0 = yn == k ? sum : m0;
    n1 = yn + 1 == k ? sum : m1;
    n2 = node_at(yn + 2, k);
    n3 = node_at(yn + 3, k);
    const W k0 = dx == 0 ? l0 : dx == 1 ? l1 : l2, k1 = dx == 0 ? l1 : dx == 1 ? l2 : l3;
    x += dx;
    y = yn;
    ++k;
    l0 = k0, l1 = k1;
    l2 = leaf_at(x + 2);
    l3 = leaf_at(x + 3);
    streak = dx == 1 ? streak + 1 : 0;
    if (streak >= stop_after) break;
  }
  x_io = x, y_io = y, k_io = k;
}

// Merge i of a leaf-node run, as the two-queue loop decides it: with leaf
// heads l0, l1 (l1 present if has_l1), node heads n0, n1 (n1 present if
// has_n1; n0 always is), the loop takes one leaf and one node unless both
// leaves are <= n0 (two leaves; the leaf wins ties) or both nodes are < l0.
template <class W>
VLEC_HD inline bool is_leaf_node_merge(bool has_l0, bool has_l1, bool has_n1, W l0, W l1, W n0, W n1) {
  if (!has_l0) return false;
  return l0 <= n0 ? !(has_l1 && l1 <= n0) : !(has_n1 && n1 < l0);
}

// A phase of the one-warp tree hands the tree to leaf-node runs (kRunPairs).
VLEC_HD inline bool leaf_node_phase(bool mixed, uint32_t pairs, uint32_t run_after) {
  return !mixed && pairs >= kRunPairs && run_after != kNoRuns;
}

// Leaf-node runs from state (x, y, k) while each takes a whole round of 32
// merges; run(x, y, k) makes one run's merges and returns how many (0..32).
// Advances the state; returns the merges made.
template <class Run>
VLEC_HD inline uint32_t runs_while_whole(uint32_t m, uint32_t& x, uint32_t& y, uint32_t& k, Run&& run) {
  uint32_t made = 0;
  while (k + 1 < m) {
    const uint32_t r = run(x, y, k);
    x += r, y += r, k += r, made += r;
    if (r < 32) break;
  }
  return made;
}

// The serial loop with leaf-node runs: serial merges until kRunAfter (here
// run_after) leaf-node merges in a row, then runs while they take whole
// rounds, then the serial loop again from the merge that ended the run.
// run as for runs_while_whole. Returns the merges the runs made.
template <class W, class Run>
VLEC_HD inline uint32_t serial_tree_with_runs(uint32_t m, const uint64_t* leaf, uint64_t* node, uint32_t nmask,
                                              uint16_t* parent, uint8_t* leafkids, uint32_t x, uint32_t y, uint32_t k,
                                              uint32_t run_after, Run&& run) {
  uint32_t by_runs = 0;
  while (k + 1 < m) {
    serial_tree<W>(m, leaf, node, nmask, parent, leafkids, x, y, k, run_after);
    by_runs += runs_while_whole(m, x, y, k, run);  // (stopped on a streak: at least one node waits, k > y)
  }
  return by_runs;
}

#if defined(__CUDACC__)

// One leaf-node run by the whole warp (every lane calls it, with the same
// state; at least one unconsumed node, k > y). Lane i takes merge i: its
// weight by the strided scan, its heads (a node made earlier in the run comes
// from lane i - q by a shuffle), its check. Returns r, the merges made: the
// lanes before the first check that fails store node k + i.
template <class W>
__device__ inline uint32_t leaf_node_run(uint32_t m, const uint64_t* leaf, uint64_t* node, uint32_t nmask,
                                         uint16_t* parent, uint8_t* leafkids, uint32_t x, uint32_t y, uint32_t k,
                                         uint32_t lane) {
  constexpr uint32_t kAll = 0xFFFFFFFFu;
  __syncwarp();  // the serial loop's stores (made by every lane alike) before the loads below
  const uint32_t q = k - y, last = m - 1, i = lane;
  const W l0 = static_cast<W>(leaf[min_u32(x + i, last)]), l1 = static_cast<W>(leaf[min_u32(x + i + 1, last)]);
  const W e0 = i < q ? static_cast<W>(node[(y + i) & nmask]) : 0;
  const W e1 = i + 1 < q ? static_cast<W>(node[(y + i + 1) & nmask]) : 0;
  W v = i < q ? sat_add_w<W>(l0, e0) : l0;  // node k + i = leaf x + i + node y + i, and node y + i = k + i - q
  for (uint32_t d = q; d < 32; d *= 2) {
    const W t = __shfl_up_sync(kAll, v, d);
    if (i >= d) v = sat_add_w<W>(v, t);
  }
  const W from_run0 = __shfl_sync(kAll, v, static_cast<int>((i - q) & 31));
  const W from_run1 = __shfl_sync(kAll, v, static_cast<int>((i + 1 - q) & 31));
  const W n0 = i < q ? e0 : from_run0, n1 = i + 1 < q ? e1 : from_run1;
  const bool ok = is_leaf_node_merge<W>(x + i < m, x + i + 1 < m, q >= 2, l0, l1, n0, n1);
  const uint32_t bad = ~__ballot_sync(kAll, ok);
  const uint32_t r = bad ? __ffs(bad) - 1 : 32;
  if (i < r) {  // every load above is consumed by the ballot: no store overtakes a load of another lane
    node[(k + i) & nmask] = v;
    leafkids[k + i] = 1;
    parent[y + i] = static_cast<uint16_t>(k + i);
  }
  __syncwarp();
  return r;
}

#else

// leaf_node_run on the host, lane by lane, for the tests (the same loads,
// scan steps, shuffles and checks).
template <class W>
uint32_t leaf_node_run_host(uint32_t m, const uint64_t* leaf, uint64_t* node, uint32_t nmask, uint16_t* parent,
                            uint8_t* leafkids, uint32_t x, uint32_t y, uint32_t k) {
  const uint32_t q = k - y, last = m - 1;
  W l0[32], l1[32], e0[32], e1[32], v[32];
  for (uint32_t i = 0; i < 32; ++i) {
    l0[i] = static_cast<W>(leaf[min_u32(x + i, last)]);
    l1[i] = static_cast<W>(leaf[min_u32(x + i + 1, last)]);
    e0[i] = i < q ? static_cast<W>(node[(y + i) & nmask]) : 0;
    e1[i] = i + 1 < q ? static_cast<W>(node[(y + i + 1) & nmask]) : 0;
    v[i] = i < q ? sat_add_w<W>(l0[i], e0[i]) : l0[i];
  }
  for (uint32_t d = q; d < 32; d *= 2) {
    W t[32];
    for (uint32_t i = 0; i < 32; ++i) t[i] = i >= d ? v[i - d] : v[i];  // __shfl_up_sync
    for (uint32_t i = 0; i < 32; ++i)
      if (i >= d) v[i] = sat_add_w<W>(v[i], t[i]);
  }
  uint32_t r = 32;
  for (uint32_t i = 0; i < 32 && r == 32; ++i) {
    const W n0 = i < q ? e0[i] : v[(i - q) & 31], n1 = i + 1 < q ? e1[i] : v[(i + 1 - q) & 31];
    if (!is_leaf_node_merge<W>(x + i < m, x + i + 1 < m, q >= 2, l0[i], l1[i], n0, n1)) r = i;
  }
  for (uint32_t i = 0; i < r; ++i) {
    node[(k + i) & nmask] = v[i];
    leafkids[k + i] = 1;
    parent[y + i] = static_cast<uint16_t>(k + i);
  }
  return r;
}

#endif

}  // namespace vlec::cuda::cl
