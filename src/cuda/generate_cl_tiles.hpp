// cuda/generate_cl_tiles.hpp: GenerateCL's phases as tiles of one thread
// block, the steps each thread takes between two barriers (threshold,
// merge-path search, meld, the cursor's advance, the leaf and window fetches),
// (bl_count: generate_cl_counts.hpp); __host__ __device__, so that
// generate_cl_block.cuh runs them on the GPU and generate_cl_host.hpp runs the
// very same code on the host with every shared slot checked. Why the tiles
// make the two-queue loop's tree, node for node:
//
// generate_cl (Tian et al., "Revisiting Huffman Coding", §IV-B, Algorithm 1
// GenerateCL, after Ostadzadeh et al.). Leaves are the present counts in
// increasing order (leaf x = keys_desc[m-1-x]); internal node k is the k-th
// made. The CPU's two-queue loop consumes S = the merge of the leaf queue and
// the internal queue, a leaf first on equal weight (a leaf taken while the
// internal queue is empty also precedes, in that merge, the node it goes into,
// as counts are > 0), and makes node k = S[2k] + S[2k+1]; so S is
// non-decreasing and so are the internal weights. One phase, from any state
// the two-queue loop passes through (x0 leaves and y0 nodes consumed, K made,
// x0 + y0 = 2K):
//   1. t = the sum of the two nodes the two-queue loop takes next: the heads,
//      picked by its own rule. t is the weight of node K.
//   2. Every unconsumed node of weight <= t precedes, in S, every node not yet
//      made (those weigh >= t, node K being t; a leaf wins ties; an existing
//      internal node precedes them by queue order), and every unconsumed
//      internal node weighs <= t (<= node K). So the next P elements of S are
//      exactly M = the merge of the leaves <= t and all unconsumed internal
//      nodes, leaf first on ties (Tian's lines 9-18: his "< t" selection and
//      ParMerge, with the tie rule made exact).
//   3. Meld M's pairs (Tian's lines 20-23): node K+j = M[2j] + M[2j+1], the very
//      nodes the two-queue loop makes next. If P is odd, M's last (largest)
//      node is not consumed (our form of Tian's lines 15-17, which keep the
//      melded count even): it stays at the head of its queue, so the state is
//      again one the two-queue loop passes through (x0 + y0 = 2K).
// The heads are in M, so P >= 2 and every phase makes progress. Thresholds grow
// like Fibonacci numbers (t_{p+2} >= t_{p+1} + t_p: after a phase every node
// but the held-back one weighs >= t_p), so a total below 2^64 takes at most
// ~92 phases (nothing depends on that bound: bl_count below needs no phases).
//
// Tiles. A phase's merge runs in tiles of T = threads x IPT merged nodes. The
// tile's windows are the next T leaves (A) and the next T nodes of the phase's
// internal queue (B, nodes y0..k_start-1); as B <= t, the merged nodes <= t
// come first in merge(A, B), so a tile needs no count of the leaves <= t:
// thread i takes merged nodes [i*IPT, i*IPT + IPT), finds where they start by a
// merge-path search (only threads whose first node can be <= t search: one
// load of A tells the others they are past the end), and melds its pairs from
// two-deep heads in registers, stopping at the first node > t. The thread that
// stops (or, if all T nodes are <= t, the last thread) reports how many leaves
// and nodes the tile took and whether the phase ended; a held-back odd node is
// simply not taken. One __syncthreads per tile; the report is double-buffered.
// Where the data lives (the kernels pick one of two layouts):
//   resident  every leaf (ascending) and every node weight in shared memory;
//   streaming leaves in a ring of LR >= 2T slots (leaf x at x mod LR), refilled
//             with cp.async one tile ahead, so a tile never waits for them;
//             node weights in a ring of R slots (node k at k mod R) and in
//             global memory; a tile whose internal queue the ring cannot hold
//             (q + w > R below) copies its B window from global memory first.
//             Each ring is two planes of 32-bit words (low, high), so that a
//             tile whose threshold is below 2^32 - 1 reads low words alone
//             (NarrowReads below): half the shared-memory wavefronts a load.
// A tile writes the nodes K..K+w-1 (w <= min(T, |A|+|B|)/2) and reads nodes
// y0..y0+|B|-1 (q = K - y0 >= |B| unconsumed): their ring slots differ iff
// q + w <= R, the test cl_tile_setup makes. In a resident layout R >= 3m/4 >=
// q + w always (q <= min(K, m-K), |A|+|B| <= m-K), so it never copies.
// Depths: leaves are never given parents, and no depth is stored per node:
// the parents alone give bl_count (cl_depth_bounds, cl_blcount_bounds in
// generate_cl_counts.hpp).
#pragma once

#include <cstdint>

#include "cuda/generate_cl_base.hpp"

#if defined(__CUDACC__)
#include <cuda_pipeline.h>
#endif

namespace vlec::cuda::cl {

// Where the construction stands; every thread of the block holds the same copy.
struct Cursor {
  uint32_t x0 = 0;         // leaves consumed
  uint32_t y0 = 0;         // internal nodes consumed
  uint32_t k_start = 0;    // internal nodes made before this phase
  uint32_t tile_base = 0;  // nodes of this phase's merge melded so far (even)
  uint32_t phase = 0;
  uint32_t tile = 0;       // tiles done (the report buffer's parity)
  uint64_t t = 0;          // this phase's threshold
  uint32_t x32 = 0;        // leaves below 2^32 (the leaves increase: a prefix)
};

// What one thread of a tile tells the others.
struct Report {
  uint32_t x_end;  // leaves the tile consumed
  uint32_t n_use;  // merged nodes it melded (even)
  uint32_t final_flag;  // the phase ended
};

// One tile as every thread sees it.
struct Tile {
  uint32_t na = 0, nb = 0;  // leaves and internal nodes in the windows
  uint32_t K = 0;           // the node its first pair makes
  bool fallback = false;    // B comes from the copied window, not the node ring
  uint64_t t = 0;
};

VLEC_HD inline Tile cl_tile_setup(const Cursor& c, uint32_t T, uint32_t m, uint32_t R) {
  Tile v;
  v.na = min_u32(T, m - c.x0);
  v.nb = min_u32(T, c.k_start - c.y0);
  v.K = c.k_start + c.tile_base / 2;
  const uint64_t q = v.K - c.y0, w = min_u32(T, v.na + v.nb) / 2;
  v.fallback = v.nb > 0 && q + w > R;
  v.t = c.t;
  return v;
}

// The two windows: A(i) = leaf x0+i, B(i) = internal node y0+i, each slot a
// low and a high 32-bit word. kStride = 8: one u64 array (the resident
// layout; hi = lo + 4 bytes); kStride = 4: two planes of words (the streaming
// layout's rings), so that a narrow tile (below) reads one word a slot.
// Offsets and masks in bytes, so that a slot's address is a shift-add and a
// mask from the ring's base (the search's B(d-1-p) one multiply-add), where
// slot indices scaled after masking cost two more instructions a load on the
// searches' chains.
template <uint32_t kStride>
struct RingView {
  const unsigned char* a;   // low words (kStride = 8: the u64 values)
  const unsigned char* ah;  // high words
  uint32_t aoff, amask;
  const unsigned char* b;
  const unsigned char* bh;
  uint32_t boff, bmask;
  // Narrow tiles (below) on planes only: in one u64 array a word load meets
  // as many bank conflicts as the u64 load (lanes 16 bytes apart either way).
  VLEC_HD static constexpr bool narrow_reads() { return kStride == 4; }
  VLEC_HD static uint64_t full(const unsigned char* lo, const unsigned char* hi, uint32_t off) {
    if constexpr (kStride == 8) return *reinterpret_cast<const uint64_t*>(lo + off);
    return *reinterpret_cast<const uint32_t*>(lo + off) |
           uint64_t{*reinterpret_cast<const uint32_t*>(hi + off)} << 32;
  }
  VLEC_HD uint64_t A(uint32_t i) const { return full(a, ah, (aoff + kStride * i) & amask); }
  VLEC_HD uint64_t B(uint32_t i) const { return full(b, bh, (boff + kStride * i) & bmask); }
  // The low words alone (a narrow tile's reads; exact where the value is below 2^32).
  VLEC_HD uint32_t A32(uint32_t i) const {
    return *reinterpret_cast<const uint32_t*>(a + ((aoff + kStride * i) & amask));
  }
  VLEC_HD uint32_t B32(uint32_t i) const {
    return *reinterpret_cast<const uint32_t*>(b + ((boff + kStride * i) & bmask));
  }
  // B(j - k), with boff + kStride*j hoisted out of a loop over k: one multiply-add.
  VLEC_HD uint64_t B_back(uint32_t j, uint32_t k) const {
    return full(b, bh, (boff + kStride * j - kStride * k) & bmask);
  }
  VLEC_HD uint32_t B32_back(uint32_t j, uint32_t k) const {
    return *reinterpret_cast<const uint32_t*>(b + ((boff + kStride * j - kStride * k) & bmask));
  }
};

// lmask, nmask: ring sizes - 1 (slots), or ~0u for no ring (offsets < 2^29
// slots). kStride = 4: leaf, node and bx are planes of words, the high words
// lr, r and T words after the low ones.
template <uint32_t kStride>
VLEC_HD inline RingView<kStride> cl_view(const Cursor& c, const Tile& v, const void* leaf, uint32_t lmask,
                                         const void* node, uint32_t nmask, const void* bx, uint32_t T) {
  RingView<kStride> w;
  // The high words: 4 bytes on in one u64 array, a plane of `words` on in planes.
  auto high = [](const unsigned char* lo, uint32_t words) { return lo + (kStride == 8 ? 4 : 4 * words); };
  w.a = static_cast<const unsigned char*>(leaf), w.aoff = kStride * c.x0, w.amask = kStride * lmask;
  w.ah = high(w.a, lmask + 1);
  if (v.fallback) {
    w.b = static_cast<const unsigned char*>(bx), w.boff = 0, w.bmask = ~(kStride - 1);
    w.bh = high(w.b, T);
  } else {
    w.b = static_cast<const unsigned char*>(node), w.boff = kStride * c.y0, w.bmask = kStride * nmask;
    w.bh = high(w.b, nmask + 1);
  }
  return w;
}

// A tile's reads: every value in full (Wide), or the low words alone (Narrow,
// for a threshold t < 2^32 - 1). Why a narrow tile is exact: every window B
// node weighs <= t < 2^32 (step 2 above), so its low word is the weight; the
// leaves below x32 (the leaves under 2^32, a prefix: they increase) likewise;
// a leaf at or past x32 weighs > t, so a narrow tile sees the A window end
// there (na32), which changes no merge step: such a leaf would stop the merge
// (> t) exactly where the end of A does. Half the bytes a load, so a warp's
// search loads (lanes two slots apart) take half the shared-memory wavefronts.
template <class V>
struct WideReads {
  using Val = uint64_t;
  const V& w;
  VLEC_HD Val A(uint32_t i) const { return w.A(i); }
  VLEC_HD Val B(uint32_t i) const { return w.B(i); }
  VLEC_HD Val B_back(uint32_t j, uint32_t k) const { return w.B_back(j, k); }
};
template <class V>
struct NarrowReads {
  using Val = uint32_t;
  const V& w;
  VLEC_HD Val A(uint32_t i) const { return w.A32(i); }
  VLEC_HD Val B(uint32_t i) const { return w.B32(i); }
  VLEC_HD Val B_back(uint32_t j, uint32_t k) const { return w.B32_back(j, k); }
};
constexpr uint64_t kNarrowBelow = 0xFFFFFFFFull;  // thresholds below this take narrow reads

// The first tile of a phase: t = the sum of the two nodes the two-queue loop
// takes next, picked from the heads by its rule (four independent loads).
template <class V>
VLEC_HD inline uint64_t cl_threshold(const Tile& v, const V& w) {
  const uint64_t a0 = v.na > 0 ? w.A(0) : 0, a1 = v.na > 1 ? w.A(1) : 0;
  const uint64_t b0 = v.nb > 0 ? w.B(0) : 0, b1 = v.nb > 1 ? w.B(1) : 0;
  uint32_t ia = 0, ib = 0;
  uint64_t t = 0;
  for (int pick = 0; pick < 2; ++pick) {
    const uint64_t ha = ia ? a1 : a0, hb = ib ? b1 : b0;
    if (ia < v.na && (ib >= v.nb || ha <= hb)) t = sat_add(t, ha), ++ia;
    else t = sat_add(t, hb), ++ib;
  }
  return t;
}

// The part of cl_merge_thread after the threshold: the merge-path search
// and the meld of one thread's pairs, on the A window's first na leaves.
template <uint32_t IPT, class R, class S>
VLEC_HD inline void cl_meld(uint32_t d, uint32_t T, const Cursor& c, const Tile& v, uint32_t na, const R& w, S& sink,
                            Report* rep) {
  using Val = typename R::Val;
  // Merge path: x = leaves among the first d merged nodes (a leaf first on
  // ties), the first p in [lo, hi) with A(p) > B(d-1-p), by halving without
  // branches. The tiles are bound by these chains of dependent shared-memory
  // loads, and halving issues the fewest (two loads and two selects a step,
  // where a 4-ary round's six loads and three-way branch cost more per bit).
  uint32_t lo = d > v.nb ? d - v.nb : 0, hi = min_u32(d, na);
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    const bool past = w.A(mid) > w.B_back(d - 1, mid);
    hi = past ? mid : hi;
    lo = past ? lo : mid + 1;
  }
  uint32_t x = lo, y = d - lo;
  Val a0 = x < na ? w.A(x) : 0, a1 = x + 1 < na ? w.A(x + 1) : 0;
  Val b0 = y < v.nb ? w.B(y) : 0, b1 = y + 1 < v.nb ? w.B(y + 1) : 0;
  for (uint32_t o = d; o < d + IPT; o += 2) {
    const bool hasA = x < na, hasB = y < v.nb;
    const bool l1 = hasA && (!hasB || a0 <= b0);
    const Val w1 = l1 ? a0 : b0;
    if ((!hasA && !hasB) || w1 > v.t) {  // merged node o is past the end: the phase ends at o
      rep->x_end = x, rep->n_use = o, rep->final_flag = 1;
      return;
    }
    const bool hasA2 = l1 ? x + 1 < na : hasA, hasB2 = l1 ? hasB : y + 1 < v.nb;
    const Val ha2 = l1 ? a1 : a0, hb2 = l1 ? b0 : b1;
    const bool l2 = hasA2 && (!hasB2 || ha2 <= hb2);
    const Val w2 = l2 ? ha2 : hb2;
    if ((!hasA2 && !hasB2) || w2 > v.t) {  // node o is the last <= t: held back, not consumed
      rep->x_end = x, rep->n_use = o, rep->final_flag = 1;
      return;
    }
    const uint32_t node = v.K + o / 2, nl = uint32_t{l1} + uint32_t{l2};
    sink.made(node, sat_add(w1, w2), nl);
    if (nl < 2) sink.consumed(c.y0 + y, node);
    if (nl == 0) sink.consumed(c.y0 + y + 1, node);
    if (nl == 2) {
      x += 2;
      a0 = x < na ? w.A(x) : 0;
      a1 = x + 1 < na ? w.A(x + 1) : 0;
    } else if (nl == 1) {
      ++x, ++y;
      a0 = a1, b0 = b1;
      a1 = x + 1 < na ? w.A(x + 1) : 0;
      b1 = y + 1 < v.nb ? w.B(y + 1) : 0;
    } else {
      y += 2;
      b0 = y < v.nb ? w.B(y) : 0;
      b1 = y + 1 < v.nb ? w.B(y + 1) : 0;
    }
  }
  if (d + IPT == T) rep->x_end = x, rep->n_use = T, rep->final_flag = 0;
}

// Thread `tid` of a tile: merged nodes [tid*IPT, tid*IPT + IPT) of merge(A, B)
// that are <= t, melded in pairs. On a phase's first tile it sets v.t (every
// thread computes the same). sink.made(k, weight, leaf children) for each node
// it makes, sink.consumed(y, k) for each internal node y it gives the parent
// k. The thread where the nodes <= t end, or the last thread if all T are,
// writes *rep.
template <uint32_t IPT, class V, class S>
VLEC_HD inline void cl_merge_thread(uint32_t tid, uint32_t T, const Cursor& c, Tile& v, const V& w, S& sink,
                                    Report* rep) {
  static_assert(IPT >= 2 && IPT % 2 == 0, "pairs");
  const uint32_t d = tid * IPT;
  // Past the end: among the first d merged nodes are leaves 0..j-1 (j = d-nb),
  // so if leaf j-1 is > t (or missing) fewer than d nodes are <= t. Its load
  // goes out with the threshold's.
  const uint32_t j = d > v.nb ? d - v.nb : 0;
  const uint64_t aj = j >= 1 && j <= v.na ? w.A(j - 1) : 0;
  if (c.tile_base == 0) v.t = cl_threshold(v, w);
  if (j > v.na || (j >= 1 && aj > v.t)) return;
  if (w.narrow_reads() && v.t < kNarrowBelow) {  // block-uniform
    const uint32_t na32 = min_u32(v.na, c.x32 > c.x0 ? c.x32 - c.x0 : 0);
    cl_meld<IPT>(d, T, c, v, na32, NarrowReads<V>{w}, sink, rep);
  } else {
    cl_meld<IPT>(d, T, c, v, v.na, WideReads<V>{w}, sink, rep);
  }
}

// After the tile's barrier, every thread: the tile's report moves the cursor.
// Returns true when a phase ended.
VLEC_HD inline bool cl_advance(Cursor& c, const Tile& v, const Report& r) {
  c.x0 += r.x_end;
  c.y0 += r.n_use - r.x_end;
  c.tile_base += r.n_use;
  c.t = v.t;
  ++c.tile;
  if (!r.final_flag) return false;
  c.k_start += c.tile_base / 2;
  c.tile_base = 0;
  ++c.phase;
  return true;
}

// Pair phases. Once the leaves run out, a phase's merge is its whole
// internal queue (step 2 above: every unconsumed node is <= t), melded in
// order: node k_start + j = B(2j) + B(2j+1), the last node held back if the
// queue is odd. Every thread knows where it ends, so the phase is one step
// with no search, no threshold and no report, whatever its size: the tiles
// would take ceil(P / T) steps, and a phase of more nodes than the node ring
// holds would copy every tile's window from global memory first (random
// counts of 65,536 symbols: the last 14 of 31 phases, 18 tiles and 10 of the
// 11 copied windows before). A phase with leaves left, all heavier than the
// two smallest nodes together, is one too, but telling it apart costs three
// loads by every thread at every phase's start: 9 k cycles more than it
// saved on the Laplace histogram of 65,536 symbols (12 such phases, H100).
VLEC_HD inline bool cl_pair_phase(const Cursor& c, uint32_t m) {
  return c.tile_base == 0 && c.x0 == m && c.k_start - c.y0 >= 2;
}

// Thread `tid` of `nt`: pairs j = tid, tid + nt, ... of a pair phase, kBatch
// pairs' loads issued before their stores (node(y) may read global memory,
// which the stores could alias for all the compiler knows). A step that
// makes more nodes than the ring of R slots holds puts only the last R in
// it (sink.made_global for the others): two nodes of one step in one slot
// would race, and the older could stay.
template <uint32_t kBatch, class NodeAt, class S>
VLEC_HD inline void cl_pairs_thread(uint32_t tid, uint32_t nt, const Cursor& c, uint32_t R, const NodeAt& node,
                                    S& sink) {
  const uint32_t pairs = (c.k_start - c.y0) / 2;
  const uint32_t ring_from = pairs > R ? c.k_start + pairs - R : 0;
  for (uint32_t j0 = tid; j0 < pairs; j0 += nt * kBatch) {
    uint64_t lo[kBatch], hi[kBatch];
    for (uint32_t i = 0; i < kBatch; ++i) {
      const uint32_t j = j0 + i * nt;
      lo[i] = j < pairs ? node(c.y0 + 2 * j) : 0;
      hi[i] = j < pairs ? node(c.y0 + 2 * j + 1) : 0;
    }
    for (uint32_t i = 0; i < kBatch; ++i) {
      const uint32_t j = j0 + i * nt;
      if (j >= pairs) break;
      const uint32_t k = c.k_start + j;
      if (k >= ring_from) sink.made(k, sat_add(lo[i], hi[i]), 0);
      else sink.made_global(k, sat_add(lo[i], hi[i]));
      sink.consumed(c.y0 + 2 * j, k);
      sink.consumed(c.y0 + 2 * j + 1, k);
    }
  }
}

// After a pair phase's barrier, every thread. (c.t is left: a phase's first
// tile sets its own threshold.)
VLEC_HD inline void cl_advance_pairs(Cursor& c) {
  const uint32_t pairs = (c.k_start - c.y0) / 2;
  c.y0 += 2 * pairs;
  c.k_start += pairs;
  ++c.tile;
  ++c.phase;
}

// Where a pair phase reads its nodes: the node ring, if no slot it writes
// (k_start .. k_start + P/2 - 1) is one it reads (y0 .. k_start - 1), i.e.
// P + P/2 <= R; else global memory (streaming layout; a resident ring always
// holds it, R >= 3m/4 and P <= m/2).
VLEC_HD inline bool cl_pairs_from_ring(const Cursor& c, uint32_t R) {
  const uint64_t P = c.k_start - c.y0;
  return P + P / 2 <= R;
}

// The tail. Once a pair phase has at most kWarpTailNodes nodes, every phase
// after it is a pair phase with about half as many (P' = ceil(P/2)), all
// from the ring (P + P/2 <= R holds for each): one warp melds them all,
// phase after phase with __syncwarp between, and the block waits once.
// H100, graph medians against every pair phase a block step (bound 0;
// `-session24-warp-tail-codebook.log`): 1.5-2 us less from a bound of 256 to
// 2,048 (random counts of 65,536 symbols 210.1 -> 208.6 us, all equal 110.2
// -> 108.4, Laplace 8,192 90.3 -> 88.3). A phase costs the warp about what
// it cost the block (~1 k cycles), not the few hundred its loads and stores
// would take; why was not found (no fence in the SASS of either).
constexpr uint32_t kWarpTailNodes = 512;
VLEC_HD inline bool cl_warp_tail(const Cursor& c, uint32_t R, uint32_t bound) {
  return c.k_start - c.y0 <= bound && cl_pairs_from_ring(c, R);
}

// Streaming layout: leaves [from, to) into the leaf ring (cp.async on the GPU;
// the caller commits and waits). kPlanes: the ring is two planes of words
// (RingView<4>), lmask + 1 words apart; each value goes in two 4-byte copies.
template <bool kPlanes = false>
VLEC_HD inline void cl_fetch_leaves_thread(uint32_t tid, uint32_t nt, const uint64_t* keys_desc, uint32_t m,
                                           uint32_t from, uint32_t to, uint64_t* ring, uint32_t lmask) {
  for (uint32_t x = from + tid; x < to; x += nt) {
    const uint64_t* src = keys_desc + (m - 1 - x);
#if defined(__CUDA_ARCH__)
    if constexpr (kPlanes) {
      uint32_t* lo = reinterpret_cast<uint32_t*>(ring) + (x & lmask);
      __pipeline_memcpy_async(lo, reinterpret_cast<const uint32_t*>(src), 4);
      __pipeline_memcpy_async(lo + lmask + 1, reinterpret_cast<const uint32_t*>(src) + 1, 4);
    } else {
      __pipeline_memcpy_async(ring + (x & lmask), src, sizeof(uint64_t));
    }
#else
    if constexpr (kPlanes) {
      uint32_t* lo = reinterpret_cast<uint32_t*>(ring) + (x & lmask);
      lo[0] = static_cast<uint32_t>(*src), lo[lmask + 1] = static_cast<uint32_t>(*src >> 32);
    } else {
      ring[x & lmask] = *src;
    }
#endif
  }
}

// Streaming layout, a fallback tile: internal nodes y0..y0+nb-1 from global
// memory (kPlanes: into two planes of words, `words` apart).
template <bool kPlanes = false>
VLEC_HD inline void cl_fetch_window_thread(uint32_t tid, uint32_t nt, const uint64_t* inner_w, uint32_t y0,
                                           uint32_t nb, uint64_t* bx, uint32_t words = 0) {
  for (uint32_t i = tid; i < nb; i += nt) {
#if defined(__CUDA_ARCH__)
    if constexpr (kPlanes) {
      uint32_t* lo = reinterpret_cast<uint32_t*>(bx) + i;
      __pipeline_memcpy_async(lo, reinterpret_cast<const uint32_t*>(inner_w + y0 + i), 4);
      __pipeline_memcpy_async(lo + words, reinterpret_cast<const uint32_t*>(inner_w + y0 + i) + 1, 4);
    } else {
      __pipeline_memcpy_async(bx + i, inner_w + y0 + i, sizeof(uint64_t));
    }
#else
    if constexpr (kPlanes) {
      uint32_t* lo = reinterpret_cast<uint32_t*>(bx) + i;
      lo[0] = static_cast<uint32_t>(inner_w[y0 + i]), lo[words] = static_cast<uint32_t>(inner_w[y0 + i] >> 32);
    } else {
      bx[i] = inner_w[y0 + i];
    }
#endif
  }
}

}  // namespace vlec::cuda::cl
