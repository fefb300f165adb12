// cuda/generate_cl_tiles.hpp: GenerateCL's phases as tiles of one thread
// block, the steps each thread takes between two barriers (threshold,
// merge-path search, meld, the cursor's advance, the leaf and window fetches),
// then the depth pass and bl_count; __host__ __device__, so that
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
// ~92 phases (more would take a slow, exact fallback for the depths).
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
// A tile writes the nodes K..K+w-1 (w <= min(T, |A|+|B|)/2) and reads nodes
// y0..y0+|B|-1 (q = K - y0 >= |B| unconsumed): their ring slots differ iff
// q + w <= R, the test cl_tile_setup makes. In a resident layout R >= 3m/4 >=
// q + w always (q <= min(K, m-K), |A|+|B| <= m-K), so it never copies.
// Depths: nodes made in phase p are consumed in later phases, so one parallel
// step per phase, last phase first, gives depth[k] = depth[parent[k]] + 1.
// Leaves are never given parents: node k records how many of its two children
// are leaves, and bl_count[depth[k] + 1] += that.
#pragma once

#include <cstdint>
#include <cstring>

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

// The two windows: A(i) = leaf x0+i, B(i) = internal node y0+i. Offsets
// and masks in bytes, so that a slot's address is a shift-add and a mask from
// the ring's base (the search's B(d-1-p) one multiply-add), where slot
// indices scaled after masking cost two more instructions a load on the
// searches' chains.
struct RingView {
  const unsigned char* a;
  uint32_t aoff8, amask8;
  const unsigned char* b;
  uint32_t boff8, bmask8;
  VLEC_HD uint64_t A(uint32_t i) const {
    return *reinterpret_cast<const uint64_t*>(a + ((aoff8 + 8 * i) & amask8));
  }
  VLEC_HD uint64_t B(uint32_t i) const {
    return *reinterpret_cast<const uint64_t*>(b + ((boff8 + 8 * i) & bmask8));
  }
  // B(j - k), with boff8 + 8j hoisted out of a loop over k: one multiply-add.
  VLEC_HD uint64_t B_back(uint32_t j, uint32_t k) const {
    return *reinterpret_cast<const uint64_t*>(b + ((boff8 + 8 * j - 8 * k) & bmask8));
  }
};

// lmask, nmask: ring sizes - 1 (slots), or ~0u for no ring (offsets < 2^29 slots).
VLEC_HD inline RingView cl_view(const Cursor& c, const Tile& v, const uint64_t* leaf, uint32_t lmask,
                                const uint64_t* node, uint32_t nmask, const uint64_t* bx) {
  RingView w;
  w.a = reinterpret_cast<const unsigned char*>(leaf), w.aoff8 = 8 * c.x0, w.amask8 = 8 * lmask;
  if (v.fallback) w.b = reinterpret_cast<const unsigned char*>(bx), w.boff8 = 0, w.bmask8 = ~7u;
  else w.b = reinterpret_cast<const unsigned char*>(node), w.boff8 = 8 * c.y0, w.bmask8 = 8 * nmask;
  return w;
}

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
  // Merge path: x = leaves among the first d merged nodes (a leaf first on
  // ties), the first p in [lo, hi) with A(p) > B(d-1-p), by halving without
  // branches. The tiles are bound by these chains of dependent shared-memory
  // loads, and halving issues the fewest (two loads and two selects a step,
  // where a 4-ary round's six loads and three-way branch cost more per bit).
  uint32_t lo = d > v.nb ? d - v.nb : 0, hi = min_u32(d, v.na);
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    const bool past = w.A(mid) > w.B_back(d - 1, mid);
    hi = past ? mid : hi;
    lo = past ? lo : mid + 1;
  }
  uint32_t x = lo, y = d - lo;
  uint64_t a0 = x < v.na ? w.A(x) : 0, a1 = x + 1 < v.na ? w.A(x + 1) : 0;
  uint64_t b0 = y < v.nb ? w.B(y) : 0, b1 = y + 1 < v.nb ? w.B(y + 1) : 0;
  for (uint32_t o = d; o < d + IPT; o += 2) {
    const bool hasA = x < v.na, hasB = y < v.nb;
    const bool l1 = hasA && (!hasB || a0 <= b0);
    const uint64_t w1 = l1 ? a0 : b0;
    if ((!hasA && !hasB) || w1 > v.t) {  // merged node o is past the end: the phase ends at o
      rep->x_end = x, rep->n_use = o, rep->final_flag = 1;
      return;
    }
    const bool hasA2 = l1 ? x + 1 < v.na : hasA, hasB2 = l1 ? hasB : y + 1 < v.nb;
    const uint64_t ha2 = l1 ? a1 : a0, hb2 = l1 ? b0 : b1;
    const bool l2 = hasA2 && (!hasB2 || ha2 <= hb2);
    const uint64_t w2 = l2 ? ha2 : hb2;
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
      a0 = x < v.na ? w.A(x) : 0;
      a1 = x + 1 < v.na ? w.A(x + 1) : 0;
    } else if (nl == 1) {
      ++x, ++y;
      a0 = a1, b0 = b1;
      a1 = x + 1 < v.na ? w.A(x + 1) : 0;
      b1 = y + 1 < v.nb ? w.B(y + 1) : 0;
    } else {
      y += 2;
      b0 = y < v.nb ? w.B(y) : 0;
      b1 = y + 1 < v.nb ? w.B(y + 1) : 0;
    }
  }
  if (d + IPT == T) rep->x_end = x, rep->n_use = T, rep->final_flag = 0;
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

// Streaming layout: leaves [from, to) into the leaf ring (cp.async on the GPU;
// the caller commits and waits).
VLEC_HD inline void cl_fetch_leaves_thread(uint32_t tid, uint32_t nt, const uint64_t* keys_desc, uint32_t m,
                                           uint32_t from, uint32_t to, uint64_t* ring, uint32_t lmask) {
  for (uint32_t x = from + tid; x < to; x += nt) {
#if defined(__CUDA_ARCH__)
    __pipeline_memcpy_async(ring + (x & lmask), keys_desc + (m - 1 - x), sizeof(uint64_t));
#else
    ring[x & lmask] = keys_desc[m - 1 - x];
#endif
  }
}

// Streaming layout, a fallback tile: internal nodes y0..y0+nb-1 from global memory.
VLEC_HD inline void cl_fetch_window_thread(uint32_t tid, uint32_t nt, const uint64_t* inner_w, uint32_t y0,
                                           uint32_t nb, uint64_t* bx) {
  for (uint32_t i = tid; i < nb; i += nt) {
#if defined(__CUDA_ARCH__)
    __pipeline_memcpy_async(bx + i, inner_w + y0 + i, sizeof(uint64_t));
#else
    bx[i] = inner_w[y0 + i];
#endif
  }
}

// Depth of the nodes made in one phase [lo, hi); their parents are deeper in
// time (made in later phases, whose depths are final). Four nodes a round,
// their loads issued together.
VLEC_HD inline void cl_depth_thread(uint32_t tid, uint32_t nt, uint32_t lo, uint32_t hi, uint32_t root,
                                    const uint16_t* parent, uint8_t* depth) {
  constexpr uint32_t kRound = 4;
  for (uint32_t k0 = lo + tid; k0 < hi; k0 += kRound * nt) {
    uint32_t p[kRound], dp[kRound];
    for (uint32_t i = 0; i < kRound; ++i) {
      const uint32_t k = k0 + i * nt;
      p[i] = k < hi && k != root ? parent[k] : root;
    }
    for (uint32_t i = 0; i < kRound; ++i) dp[i] = k0 + i * nt < hi && k0 + i * nt != root ? depth[p[i]] + 1u : 0u;
    for (uint32_t i = 0; i < kRound; ++i)
      if (k0 + i * nt < hi) depth[k0 + i * nt] = static_cast<uint8_t>(dp[i]);
  }
}

// The exact fallback for a tree of more than kMaxPhases phases (a total >= 2^64).
VLEC_HD inline void cl_depth_sequential(uint32_t root, const uint16_t* parent, uint8_t* depth) {
  depth[root] = 0;
  for (uint32_t k = root; k-- > 0;) depth[k] = static_cast<uint8_t>(depth[parent[k]] + 1);
}

VLEC_HD inline void cl_add(uint32_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  atomicAdd(p, v);
#else
  *p += v;
#endif
}

VLEC_HD inline void cl_max(uint32_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  atomicMax(p, v);
#else
  if (v > *p) *p = v;
#endif
}

// 16 bytes from a 16-aligned address as four words (one vector load on the GPU).
VLEC_HD inline void load16(const uint8_t* p, uint32_t* w) {
#if defined(__CUDA_ARCH__)
  const uint4 q = *reinterpret_cast<const uint4*>(p);
  w[0] = q.x, w[1] = q.y, w[2] = q.z, w[3] = q.w;
#else
  std::memcpy(w, p, 16);
#endif
}

// bl[depth[k] + 1] += leafkids[k] over a run of nodes per thread, 16-aligned
// so that depth and leafkids are read 16 bytes at a time, every load of a
// batch of 64 nodes issued before any is used (the arrays hold whole 16-byte
// blocks). *longest = the longest code length with a leaf. Depth does not
// increase with k (parents are monotone in k), so a thread flushes a handful
// of runs, not one atomic per node.
VLEC_HD inline void cl_blcount_thread(uint32_t tid, uint32_t nt, uint32_t n_inner, const uint8_t* depth,
                                      const uint8_t* leafkids, uint32_t* bl, uint32_t* longest) {
  constexpr uint32_t kBatch = 64;
  const uint32_t per = ((n_inner + nt - 1) / nt + 15) / 16 * 16;
  const uint32_t lo = min_u32(tid * per, n_inner), hi = min_u32(lo + per, n_inner);
  uint32_t run = 0, acc = 0, top = 0;
  for (uint32_t g0 = lo; g0 < hi; g0 += kBatch) {
    uint32_t kw[kBatch / 4], dw[kBatch / 4];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (uint32_t b = 0; b < kBatch / 16; ++b) {
      if (g0 + 16 * b < hi) {
        load16(leafkids + g0 + 16 * b, kw + 4 * b);
        load16(depth + g0 + 16 * b, dw + 4 * b);
      } else {
        for (uint32_t i = 0; i < 4; ++i) kw[4 * b + i] = 0, dw[4 * b + i] = 0;
      }
    }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (uint32_t j = 0; j < kBatch; ++j) {
      if (g0 + j < hi) {
        const uint32_t kids = (kw[j / 4] >> (8 * (j % 4))) & 255u, dep = (dw[j / 4] >> (8 * (j % 4))) & 255u;
        const uint32_t l = min_u32(dep + 1, kMaxDepth);
        if (l != run) {
          if (acc) cl_add(&bl[run], acc), top = max_u32(top, run);
          run = l;
          acc = 0;
        }
        acc += kids;
      }
    }
  }
  if (acc) cl_add(&bl[run], acc), top = max_u32(top, run);
  if (top) cl_max(longest, top);
}

}  // namespace vlec::cuda::cl
