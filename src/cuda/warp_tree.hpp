// cuda/warp_tree.hpp: the Huffman tree of a small alphabet (up to
// kWarpTreeMax present symbols) built by ONE warp, GenerateCL's phases
// (generate_cl.hpp) with __syncwarp instead of block barriers, on leaves and
// nodes resident in shared memory. Same tree as the CPU's two-queue loop, node
// for node (the argument is generate_cl.hpp's); warp_tree_host() below runs
// the same steps lane by lane, and tests/test_codebook_gpu.cpp checks it node
// by node against the two-queue construction.
//
// Why one warp: at a few hundred symbols a phase melds a few dozen nodes, so
// what costs is latency, not work. The two-queue loop on one thread pays
// ~135 cycles a merge on the H100 (serial_tree.hpp; ~190 with a branch per
// pick), and a
// block-wide phase pays block barriers and hundreds of threads searching. Here
// a phase is: the threshold t (four broadcast loads), the number of leaves
// <= t (a 32-ary search: one probe a lane, a ballot, ~2 rounds), then the
// merge of those leaves with every unconsumed internal node, 32 merged nodes
// a round: each lane loads one leaf and one node (consecutive, conflict-free),
// finds its element's place in the merge by a binary search over the other
// list's 32 registers (__shfl_sync, six steps), scatters it to a 32-slot
// buffer, and the even lanes add the pairs. No data-dependent branch per node,
// no block barrier; ~22 phases for 256 symbols.
//
// Measured (H100, clock64, bench/results/2026-11-22-h100-codebook-*): that is
// still one warp's chain of dependent instructions, ~5 cycles each: ~850
// cycles a round, ~800 a phase's own steps, 27.8 k cycles for the 256-symbol
// Laplace histogram (the serial loop: 48.3 k). Where phases stay narrow (a
// geometric tail: a pair or two a phase), the serial loop is cheaper, so it
// builds trees of up to kSerialAll symbols and finishes skewed tails
// (hand_to_serial); it starts from any state a phase ends in, which is one the
// two-queue loop passes through.
//
// Leaf-node runs (serial_tree.hpp): where a phase of two pairs or more made
// only leaf + node merges (the steady state of skewed counts: the Laplace
// timing histogram's middle phases, every phase of a geometric tail), the
// warp takes the next merges 32 at a time by a strided scan until one is not
// leaf + node, then phases go on; the serial loop hands over to runs too.
// Measured (H200, bench/results/2026-11-28-h200-session27-leaf-node-runs-*,
// graph medians, runs off -> on): Laplace 256 27.0 -> 23.4 us, 1,024 55.2 ->
// 43.2, the geometric 256 48.4 -> 26.0, 59 skewed symbols 20.6 -> 16.7.
//
// Phase rule (generate_cl.hpp): with x leaves and y nodes consumed and k made,
// t = the sum of the two nodes the two-queue loop takes next; the next a + q
// merged nodes are the a leaves <= t and the q = k - y unconsumed internal
// nodes, leaf first on ties; if a + q is odd the last of them (the leaf if it
// is heavier than the last node, else the node) waits for the next phase.
// Merge place of leaf i: i + #{nodes < leaf}; of node j: j + #{leaves <= node}.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/generate_cl.hpp"
#include "cuda/serial_tree.hpp"

namespace vlec::cuda::cl {

// Present symbols up to which the resident kernels build the tree here
// (above, the block-wide tiles of generate_cl_block: a warp merges 32 nodes a
// round, a block ~4,096 a tile; at 1,024 symbols the two cost about the same,
// 72 k and 69 k cycles measured).
constexpr uint32_t kWarpTreeMax = 1024;

// The last of the phase's merged nodes when their count is odd: true if it is
// the leaf (heavier than the last internal node; a leaf precedes on ties).
VLEC_HD inline bool holdback_is_leaf(uint32_t a, uint32_t q, uint64_t last_leaf, uint64_t last_node) {
  return a > 0 && (q == 0 || last_leaf > last_node);
}

// The threshold from the four heads (generate_cl.hpp's cl_threshold on values
// already in registers): the sum of the two nodes the two-queue loop takes next.
template <class W>
VLEC_HD inline W heads_threshold(uint32_t na, uint32_t nb, W a0, W a1, W b0, W b1) {
  uint32_t ia = 0, ib = 0;
  W t = 0;
  for (int pick = 0; pick < 2; ++pick) {
    const W ha = ia ? a1 : a0, hb = ib ? b1 : b0;
    if (ia < na && (ib >= nb || ha <= hb)) t = sat_add_w<W>(t, ha), ++ia;
    else t = sat_add_w<W>(t, hb), ++ib;
  }
  return t;
}

// When the serial loop builds the tree (measured on the H100: ~135 cycles a
// merge serially, ~1.2 k cycles a warp phase; with every tree of up to 1,024
// symbols serial, the Laplace 256 took 36.7 us against 27.7 with the phases,
// bench/results/2026-11-26-h100-session9-serial-tree-codebook.log). Skewed counts make phases of
// one or two pairs (a geometric tail: about one phase a symbol), flat counts
// few large phases, and uniform random counts a few small phases first, then
// large ones. So: up to kSerialAll present symbols the serial loop does it
// all; above, the warp hands over after kSerialRun phases in a row of fewer
// than kSerialPairs pairs if at most kSerialRest merges remain (a skewed
// tail: the serial cost stays at most that of the whole tree of 256
// symbols), or after any such phase once at most kSerialTail merges remain.
constexpr uint32_t kSerialAll = 128;
constexpr uint32_t kSerialPairs = 6;
constexpr uint32_t kSerialRun = 6;
constexpr uint32_t kSerialRest = 256;
constexpr uint32_t kSerialTail = 16;

// After a phase that made `pairs` nodes (k made in all): updates the run of
// small phases and says whether the serial loop takes over now.
VLEC_HD inline bool hand_to_serial(uint32_t pairs, uint32_t m, uint32_t k, uint32_t& run) {
  const bool small = pairs < kSerialPairs;
  run = small ? run + 1 : 0;
  const uint32_t rest = m - 1 - k;
  return k + 1 < m && small && (rest <= kSerialTail || (run >= kSerialRun && rest <= kSerialRest));
}

#if defined(__CUDACC__)
#include "cuda/warp_index.cuh"

// Warp-wide: how many of leaf[0..n) (ascending) are <= t. 32-ary search: the
// answer r is kept in [lo, hi]; lane l probes the last leaf of the l-th of 32
// blocks of `step`, and the ballot's popcount is how many blocks lie wholly <= t.
template <class W>
__device__ __forceinline__ uint32_t warp_count_le(const uint64_t* leaf, uint32_t n, W t, uint32_t lane) {
  uint32_t lo = 0, hi = n;
  while (hi > lo) {
    const uint32_t step = (hi - lo + 31) / 32;
    const uint32_t p = lo + (lane + 1) * step - 1;
    const bool le = p < hi && static_cast<W>(leaf[p]) <= t;
    const uint32_t c = __popc(__ballot_sync(0xFFFFFFFFu, le));
    lo += c * step;
    hi = min_u32(hi, lo + step - 1);
  }
  return lo;
}

// Warp-wide (every lane of the warp calls it): #{j < n : v_j < key} (strict)
// or #{j < n : v_j <= key}, where lane j holds v_j, ascending over j < n <= 32.
template <bool kStrict, class W>
__device__ __forceinline__ uint32_t warp_rank(W v, uint32_t n, W key) {
  uint32_t r = 0;
#pragma unroll
  for (uint32_t s = 32; s >= 1; s >>= 1) {
    const uint32_t j = r + s - 1;
    const W p = __shfl_sync(0xFFFFFFFFu, v, static_cast<int>(j & 31));
    if (j < n && (kStrict ? p < key : p <= key)) r += s;
  }
  return r;
}

// The tree, by warp 0 of the block (all 32 lanes; the caller syncs the block
// after). leaf: the m >= 2 weights, ascending; node: internal weights (node k
// at k & nmask; nmask + 1 >= 3m/4, so a phase never overwrites a node it
// reads); parent[y] = the node that consumes node y; leafkids[k] = leaf
// children of node k; mw, mt: 32-slot scratch. Weights are computed in W
// (see sat_add_w). Returns the number of phases.
// A phase starts with one load a lane: the next 32 leaves and the next 32
// unconsumed nodes. The heads (threshold), the count of leaves <= t (a
// ballot; a search only past 32), the held-back node and the first round's
// merge all come from those registers, so a phase of up to 32 merged nodes
// (most of them at a few hundred symbols) touches shared memory twice.
template <class W>
__device__ inline uint32_t warp_tree(uint32_t m, const uint64_t* leaf, uint64_t* node, uint32_t nmask,
                                     uint16_t* parent, uint8_t* leafkids, W* mw, uint8_t* mt, uint32_t serial_all,
                                     uint32_t run_after) {
  constexpr uint32_t kAll = 0xFFFFFFFFu;
  const uint32_t lane = threadIdx.x & 31;
  uint32_t x = 0, y = 0, k = 0, phase = 0, run = 0;
  // The serial loop runs in every lane alike (same loads, same stores), so
  // the state needs no broadcast when a leaf-node run takes over.
  auto serial_rest = [&]() {
    serial_tree_with_runs<W>(m, leaf, node, nmask, parent, leafkids, x, y, k, run_after,
                             [&](uint32_t rx, uint32_t ry, uint32_t rk) {
                               return leaf_node_run<W>(m, leaf, node, nmask, parent, leafkids, rx, ry, rk, lane);
                             });
    __syncwarp();
  };
  if (m <= serial_all) {
    serial_rest();
    return 0;
  }
  while (k + 1 < m) {
    const uint32_t na = m - x, nq = k - y;
    W av = lane < na ? static_cast<W>(leaf[x + lane]) : 0, bv = lane < nq ? static_cast<W>(node[(y + lane) & nmask]) : 0;
    // 1. The threshold, by the two-queue loop's own rule.
    const W a0 = __shfl_sync(kAll, av, 0), a1 = __shfl_sync(kAll, av, 1);
    const W b0 = __shfl_sync(kAll, bv, 0), b1 = __shfl_sync(kAll, bv, 1);
    const W t = heads_threshold<W>(na, nq, a0, a1, b0, b1);
    // 2. The phase's merged nodes: leaves <= t and every unconsumed node, an odd one held back.
    uint32_t a = __popc(__ballot_sync(kAll, lane < na && av <= t)), q = nq;
    if (a == 32) a += warp_count_le<W>(leaf + x + 32, na - 32, t, lane);
    if ((a + q) & 1) {
      const W sa = __shfl_sync(kAll, av, (a - 1) & 31), sb = __shfl_sync(kAll, bv, (q - 1) & 31);
      const W la = a == 0 ? 0 : a <= 32 ? sa : static_cast<W>(leaf[x + a - 1]);
      const W lb = q == 0 ? 0 : q <= 32 ? sb : static_cast<W>(node[(k - 1) & nmask]);
      if (holdback_is_leaf(a, q, la, lb)) --a;
      else --q;
    }
    // 3. Meld them in pairs, 32 merged nodes a round (the first round's from the registers).
    const uint32_t xe = x + a, ye = y + q;
    bool mixed = false;  // a pair of the phase that is not one leaf and one node
    for (bool first = true; x < xe || y < ye; first = false) {
      const uint32_t nav = min_u32(32, xe - x), nbv = min_u32(32, ye - y), nout = min_u32(32, xe - x + ye - y);
      if (!first) {
        av = lane < nav ? static_cast<W>(leaf[x + lane]) : 0;
        bv = lane < nbv ? static_cast<W>(node[(y + lane) & nmask]) : 0;
      }
      const uint32_t pa = lane + warp_rank<true>(bv, nbv, av);   // nodes lighter than my leaf go first
      const uint32_t pb = lane + warp_rank<false>(av, nav, bv);  // leaves as heavy as my node go first
      const bool oa = lane < nav && pa < nout, ob = lane < nbv && pb < nout;
      if (oa) mw[pa] = av, mt[pa] = 1;
      if (ob) {
        mw[pb] = bv, mt[pb] = 0;
        parent[y + lane] = static_cast<uint16_t>(k + pb / 2);
      }
      const uint32_t ca = __popc(__ballot_sync(kAll, oa));
      __syncwarp();
      const W w0 = lane < nout ? mw[lane] : 0;
      const uint32_t t0 = lane < nout ? mt[lane] : 0;
      const W w1 = __shfl_down_sync(kAll, w0, 1);
      const uint32_t t1 = __shfl_down_sync(kAll, t0, 1);
      if ((lane & 1) == 0 && lane < nout) {
        node[(k + lane / 2) & nmask] = sat_add_w<W>(w0, w1);
        leafkids[k + lane / 2] = static_cast<uint8_t>(t0 + t1);
      }
      mixed = mixed || __any_sync(kAll, (lane & 1) == 0 && lane < nout && t0 + t1 != 1);
      __syncwarp();
      x += ca;
      y += nout - ca;
      k += nout / 2;
    }
    ++phase;
    if (leaf_node_phase(mixed, (a + q) / 2, run_after))  // runs, while they last
      runs_while_whole(m, x, y, k, [&](uint32_t rx, uint32_t ry, uint32_t rk) {
        return leaf_node_run<W>(m, leaf, node, nmask, parent, leafkids, rx, ry, rk, lane);
      });
    if (hand_to_serial((a + q) / 2, m, k, run)) {  // warp-uniform
      serial_rest();
      break;
    }
  }
  __syncwarp();
  return phase;
}

// Depths of the m - 1 internal nodes (root m - 2) from their parents, by
// pointer jumping over the whole block: depth[k] is the distance from k to
// anc[k] (parent[] is rewritten as anc[]: nothing reads it afterwards), and
// each round doubles the hop, ~log2(tree depth) rounds of two barriers.
// kPer: nodes a thread, >= (m - 1) / NT.
template <int NT, uint32_t kPer>
__device__ void depth_by_jumping(uint32_t m, uint16_t* parent, uint8_t* depth) {
  const uint32_t tid = threadIdx.x, root = m - 2;
  for (uint32_t k = tid; k <= root; k += NT) {
    depth[k] = k == root ? 0 : 1;
    if (k == root) parent[k] = static_cast<uint16_t>(root);
  }
  __syncthreads();
  for (bool more = true; more;) {
    uint32_t nd[kPer], na[kPer];
#pragma unroll
    for (uint32_t i = 0; i < kPer; ++i) {
      const uint32_t k = tid + i * NT;
      if (k <= root) {
        const uint32_t a = parent[k];
        nd[i] = depth[k] + depth[a];
        na[i] = parent[a];
      }
    }
    __syncthreads();
    bool mine = false;
#pragma unroll
    for (uint32_t i = 0; i < kPer; ++i) {
      const uint32_t k = tid + i * NT;
      if (k <= root) {
        depth[k] = static_cast<uint8_t>(nd[i]);
        parent[k] = static_cast<uint16_t>(na[i]);
        mine = mine || na[i] != root;
      }
    }
    more = __syncthreads_or(mine);
  }
}

// The whole tree stage of a resident block for m <= kWarpTreeMax present
// symbols: warp 0 builds the tree (in 32-bit weights when the counts total
// below 2^32: fewer instructions on its dependent chain), every thread takes
// part in the depths and the length counts. Leaves bl_count in sh.bl and the
// longest length in sh.longest, like generate_cl_block. nmask: the node
// array's mask (its size, a power of two, is >= 3m/4).
template <int NT>
__device__ void warp_tree_block(const ClArgs& g, uint32_t nmask, bool narrow, uint32_t serial_all, ClShared& sh) {
  __shared__ uint64_t mw[32];
  __shared__ uint8_t mt[32];
  const uint32_t tid = threadIdx.x, m = g.m;
  for (uint32_t l = tid; l < kMaxDepth + 2; l += NT) sh.bl[l] = 0;
  if (tid == 0) sh.longest = 0;
  __syncthreads();
  if (m <= 1) {
    if (m == 1 && tid == 0) sh.bl[1] = 1, sh.longest = 1;
    __syncthreads();
    return;
  }
  if (uniform_warp_index() == 0) {  // (warp-uniform to the compiler: no convergence tests in the tree)
    if (narrow)
      warp_tree<uint32_t>(m, g.leaf, g.node, nmask, g.parent, g.leafkids, reinterpret_cast<uint32_t*>(mw), mt, serial_all,
                          g.run_after);
    else
      warp_tree<uint64_t>(m, g.leaf, g.node, nmask, g.parent, g.leafkids, mw, mt, serial_all, g.run_after);
  }
  __syncthreads();
  depth_by_jumping<NT, (kWarpTreeMax + NT - 1) / NT>(m, g.parent, g.depth);
  cl_blcount_thread(tid, NT, m - 1, g.depth, g.leafkids, sh.bl, &sh.longest);
  __syncthreads();
}

#endif  // __CUDACC__

#if !defined(__CUDACC__)

// warp_tree_block on the host, lane by lane and thread by thread, for the
// tests, in weight type W (uint32_t requires counts totalling below 2^32, as
// the kernel does). Fills `tr` like generate_cl_host (parent, leafkids,
// inner_w, depth, phases) and returns bl_count; tr.hazard is set if a ballot
// is not a prefix of the lanes, two lanes of a round claim one merge slot,
// or a slot stays empty.
template <class W = uint64_t>
std::array<uint32_t, kMaxDepth + 1> warp_tree_host(const std::vector<uint64_t>& keys_desc, ClTrace& tr,
                                                    uint32_t serial_all = kSerialAll, uint32_t run_after = kRunAfter) {
  std::array<uint32_t, kMaxDepth + 1> bl{};
  const uint32_t m = static_cast<uint32_t>(keys_desc.size());
  tr = ClTrace{};
  if (m <= 1) {
    if (m == 1) bl[1] = 1;
    return bl;
  }
  // Shared memory holds u64 weights; the warp reads them as W.
  const std::vector<uint64_t> leaf64(keys_desc.rbegin(), keys_desc.rend());
  std::vector<uint64_t> node64(m - 1, 0);
  auto leaf = [&](uint32_t i) { return static_cast<W>(leaf64[i]); };
  auto node = [&](uint32_t i) { return static_cast<W>(node64[i]); };
  const uint32_t padded = (m - 1 + 15) / 16 * 16;
  tr.parent.assign(m - 1, 0xFFFF);
  tr.leafkids.assign(padded, 0);
  tr.inner_w.assign(m - 1, 0);
  tr.depth.assign(padded, 0);
  auto rank = [](const W* v, uint32_t n, W key, bool strict) {  // warp_rank's binary lifting
    uint32_t r = 0;
    for (uint32_t s = 32; s >= 1; s >>= 1) {
      const uint32_t j = r + s - 1;
      const W p = v[j & 31];
      if (j < n && (strict ? p < key : p <= key)) r += s;
    }
    return r;
  };
  uint32_t x = 0, y = 0, k = 0, phase = 0, run = 0;
  auto serial_rest = [&]() {  // warp_tree's serial_rest
    tr.run_merges += serial_tree_with_runs<W>(
        m, leaf64.data(), node64.data(), ~0u, tr.parent.data(), tr.leafkids.data(), x, y, k, run_after,
        [&](uint32_t rx, uint32_t ry, uint32_t rk) {
          return leaf_node_run_host<W>(m, leaf64.data(), node64.data(), ~0u, tr.parent.data(), tr.leafkids.data(), rx,
                                       ry, rk);
        });
    tr.serial_from = k;
    k = m - 1;
  };
  if (m <= serial_all) serial_rest();
  while (k + 1 < m) {
    const uint32_t na = m - x, nq = k - y;
    const W t = heads_threshold<W>(na, nq, na > 0 ? leaf(x) : 0, na > 1 ? leaf(x + 1) : 0, nq > 0 ? node(y) : 0,
                                   nq > 1 ? node(y + 1) : 0);
    uint32_t first = 0;  // the ballot over the first 32 leaves
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const bool le = lane < na && leaf(x + lane) <= t;
      if (le && first != lane) tr.hazard = true;  // must be a prefix of the lanes
      first += le;
    }
    uint32_t lo = 0, hi = first == 32 ? na - 32 : 0;  // warp_count_le past the first 32
    while (hi > lo) {
      const uint32_t step = (hi - lo + 31) / 32;
      uint32_t c = 0;
      bool prefix = true;
      for (uint32_t lane = 0; lane < 32; ++lane) {
        const uint32_t p = lo + (lane + 1) * step - 1;
        const bool le = p < hi && leaf(x + 32 + p) <= t;
        if (le && !prefix) tr.hazard = true;
        prefix = prefix && le;
        c += le;
      }
      lo += c * step;
      hi = min_u32(hi, lo + step - 1);
    }
    uint32_t a = lo + first, q = nq;
    if ((a + q) & 1) {
      const W la = a > 0 ? leaf(x + a - 1) : 0, lb = q > 0 ? node(k - 1) : 0;
      if (holdback_is_leaf(a, q, la, lb)) --a;
      else --q;
    }
    const uint32_t xe = x + a, ye = y + q;
    bool mixed = false;
    while (x < xe || y < ye) {
      const uint32_t nav = min_u32(32, xe - x), nbv = min_u32(32, ye - y), nout = min_u32(32, xe - x + ye - y);
      W av[32], bv[32], mw[32];
      uint32_t mt[32], filled[32] = {}, ca = 0;
      for (uint32_t lane = 0; lane < 32; ++lane) {
        av[lane] = lane < nav ? leaf(x + lane) : 0;
        bv[lane] = lane < nbv ? node(y + lane) : 0;
      }
      for (uint32_t lane = 0; lane < 32; ++lane) {
        const uint32_t pa = lane + rank(bv, nbv, av[lane], true), pb = lane + rank(av, nav, bv[lane], false);
        if (lane < nav && pa < nout) mw[pa] = av[lane], mt[pa] = 1, ++filled[pa], ++ca;
        if (lane < nbv && pb < nout) {
          mw[pb] = bv[lane], mt[pb] = 0, ++filled[pb];
          tr.parent[y + lane] = static_cast<uint16_t>(k + pb / 2);
        }
      }
      for (uint32_t o = 0; o < nout; ++o)
        if (filled[o] != 1) tr.hazard = true;
      if (tr.hazard) return {};
      for (uint32_t o = 0; o + 1 < nout; o += 2) {
        node64[k + o / 2] = sat_add_w<W>(mw[o], mw[o + 1]);
        tr.leafkids[k + o / 2] = static_cast<uint8_t>(mt[o] + mt[o + 1]);
        mixed = mixed || mt[o] + mt[o + 1] != 1;
      }
      x += ca;
      y += nout - ca;
      k += nout / 2;
    }
    ++phase;
    if (leaf_node_phase(mixed, (a + q) / 2, run_after))
      tr.run_merges += runs_while_whole(m, x, y, k, [&](uint32_t rx, uint32_t ry, uint32_t rk) {
        return leaf_node_run_host<W>(m, leaf64.data(), node64.data(), ~0u, tr.parent.data(), tr.leafkids.data(), rx,
                                     ry, rk);
      });
    if (hand_to_serial((a + q) / 2, m, k, run)) {
      serial_rest();
      break;
    }
  }
  tr.inner_w = node64;
  tr.phases = phase;
  // depth_by_jumping: every node reads (parent, depths), then every node writes.
  const uint32_t root = m - 2;
  std::vector<uint16_t> anc(tr.parent.begin(), tr.parent.end());
  for (uint32_t i = 0; i <= root; ++i) tr.depth[i] = i == root ? 0 : 1;
  anc[root] = static_cast<uint16_t>(root);
  for (bool more = true; more;) {
    std::vector<uint32_t> nd(root + 1), na(root + 1);
    for (uint32_t i = 0; i <= root; ++i) {
      if (anc[i] > root) {  // a node nobody consumed: not a tree
        tr.hazard = true;
        return {};
      }
      nd[i] = tr.depth[i] + tr.depth[anc[i]];
      na[i] = anc[anc[i]];
    }
    more = false;
    for (uint32_t i = 0; i <= root; ++i) {
      tr.depth[i] = static_cast<uint8_t>(nd[i]);
      anc[i] = static_cast<uint16_t>(na[i]);
      more = more || na[i] != root;
    }
  }
  uint32_t longest = 0;
  for (uint32_t tid = 0; tid < 256; ++tid)
    cl_blcount_thread(tid, 256, m - 1, tr.depth.data(), tr.leafkids.data(), bl.data(), &longest);
  tr.leafkids.resize(m - 1);
  tr.depth.resize(m - 1);
  return bl;
}

#endif  // !__CUDACC__

}  // namespace vlec::cuda::cl
