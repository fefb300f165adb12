// cuda/generate_cl.hpp: the logic of the GPU codebook builder that must equal
// the CPU's (huffman/codebook.cpp) bit for bit, written once as plain
// __host__ __device__ functions. The kernels of codebook_gpu.cu call them
// between their __syncthreads; generate_cl_host() below calls the same
// functions in the same order, with loops standing in for the threads, and
// checks every shared-memory slot it reads and writes, so the CPU tests
// (tests/test_codebook_gpu.cpp, suite GenerateCl) prove the GPU's tree node by
// node against the two-queue construction, and prove that no thread of a tile
// reads a slot another thread of the same tile writes.
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

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/bits.hpp"

#if defined(__CUDACC__)
#include <cuda_pipeline.h>
#endif

namespace vlec::cuda::cl {

constexpr uint32_t kMaxPhases = 128;   // phase boundaries kept for the depth pass
constexpr uint32_t kMaxDepth = 128;    // = huffman::kMaxTreeDepth
constexpr uint32_t kMaxLen = 24;       // = huffman::kMaxCodeLength
constexpr uint32_t kSlots = kMaxLen + 1;
constexpr uint32_t kCandidates = 4;    // the automatic policy's limits 11, 12, 16, 24

VLEC_HD inline uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
VLEC_HD inline uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

// Sums saturate: the same as the CPU's for every histogram whose total is
// below 2^64 (the documented domain), and the invariants (and so the memory
// safety) survive any other input.
VLEC_HD inline uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? ~uint64_t{0} : a + b; }

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

// The two windows: A(i) = leaf x0+i, B(i) = internal node y0+i.
struct RingView {
  const uint64_t* a;
  uint32_t aoff, amask;
  const uint64_t* b;
  uint32_t boff, bmask;
  VLEC_HD uint64_t A(uint32_t i) const { return a[(aoff + i) & amask]; }
  VLEC_HD uint64_t B(uint32_t i) const { return b[(boff + i) & bmask]; }
};

VLEC_HD inline RingView cl_view(const Cursor& c, const Tile& v, const uint64_t* leaf, uint32_t lmask,
                                const uint64_t* node, uint32_t nmask, const uint64_t* bx) {
  RingView w;
  w.a = leaf, w.aoff = c.x0, w.amask = lmask;
  if (v.fallback) w.b = bx, w.boff = 0, w.bmask = ~0u;
  else w.b = node, w.boff = c.y0, w.bmask = nmask;
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
  // ties), the first p in [lo, hi) with A(p) > B(d-1-p). Three probes a round
  // (their six loads in flight together), then halving.
  uint32_t lo = d > v.nb ? d - v.nb : 0, hi = min_u32(d, v.na);
  while (hi - lo >= 4) {
    const uint32_t q = (hi - lo) / 4, p1 = lo + q, p2 = p1 + q, p3 = p2 + q;
    const uint64_t a1 = w.A(p1), a2 = w.A(p2), a3 = w.A(p3);
    const uint64_t b1 = w.B(d - 1 - p1), b2 = w.B(d - 1 - p2), b3 = w.B(d - 1 - p3);
    if (a1 > b1) hi = p1;
    else if (a2 > b2) lo = p1 + 1, hi = p2;
    else if (a3 > b3) lo = p2 + 1, hi = p3;
    else lo = p3 + 1;
  }
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (w.A(mid) <= w.B(d - 1 - mid)) lo = mid + 1;
    else hi = mid;
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

// q = a / b for the limiter (b < 2^25): on the GPU a double estimate, corrected.
VLEC_HD inline uint64_t div_small(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  if (a < (uint64_t{1} << 52)) {
    uint64_t q = static_cast<uint64_t>(static_cast<double>(a) / static_cast<double>(b));
    while (q * b > a) --q;
    while ((q + 1) * b <= a) ++q;
    return q;
  }
#endif
  return a / b;
}

// huffman::limit_length_counts with its Kraft loop batched: the loop always
// splits the deepest leaf above `limit`, so the leaf it starts on is wholly
// pushed down to `limit` (2^(limit-d) - 1 rounds, net one code moved from
// level d to `limit`) before another is touched. O(limit) steps, same result.
// longest: the deepest l with bl[l] != 0 (0: none).
// The Kraft loop of limit_counts once the codes longer than `limit` sit at
// `limit` (c[1..limit], u64): removes `excess` units of 2^-limit.
VLEC_HD inline void limit_excess(uint64_t* c, uint32_t limit, uint64_t excess) {
  uint32_t d = limit - 1;
  while (excess > 0) {
    while (d >= 1 && c[d] == 0) --d;
    if (d == 0) {  // nothing left to split (cannot happen when 2^limit >= symbols)
      c[limit] -= excess;
      break;
    }
    const uint64_t unit = (uint64_t{1} << (limit - d)) - 1;
    uint64_t n = div_small(excess, unit);
    if (n > c[d]) n = c[d];
    if (n) {
      c[d] -= n;
      c[limit] += n;
      excess -= n * unit;
    } else {  // part of one leaf: split it and go on one level down
      c[limit] -= 1;
      c[d] -= 1;
      c[d + 1] += 2;
      excess -= 1;
      ++d;
    }
  }
}

VLEC_HD inline void limit_counts(const uint32_t* bl, uint32_t longest, uint32_t limit, uint32_t* out) {
  uint64_t c[kSlots] = {};
  const uint32_t top = min_u32(longest, limit);
  for (uint32_t l = 1; l <= top; ++l) c[l] = bl[l];
  if (longest > limit) {
    uint64_t over = 0;
    for (uint32_t l = limit + 1; l <= longest; ++l) over += bl[l];
    c[limit] += over;
    uint64_t kraft = 0;
    for (uint32_t l = 1; l <= limit; ++l) kraft += c[l] << (limit - l);
    if (kraft > (uint64_t{1} << limit)) limit_excess(c, limit, kraft - (uint64_t{1} << limit));
  }
  out[0] = 0;
  for (uint32_t l = 1; l <= kMaxLen; ++l) out[l] = l <= limit ? static_cast<uint32_t>(c[l]) : 0;
}

VLEC_HD inline void limit_counts(const uint32_t* bl, uint32_t limit, uint32_t* out) {
  uint32_t longest = 0;
  for (uint32_t l = 1; l <= kMaxDepth; ++l)
    if (bl[l]) longest = l;
  limit_counts(bl, longest, limit, out);
}

// The automatic policy's candidate c (docs/FORMAT.md §4.3), in the CPU's order.
VLEC_HD inline uint32_t auto_limit(uint32_t c) { return c == 0 ? 11 : c == 1 ? 12 : c == 2 ? 16 : 24; }

// bound[l] = codes of length <= l. The length of rank r: the least l with r < bound[l] (0: none).
VLEC_HD inline uint32_t len_of_rank(const uint32_t* bound, uint32_t r) {
  if (r >= bound[kMaxLen]) return 0;
  uint32_t lo = 1, hi = kMaxLen;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (r < bound[mid]) hi = mid; else lo = mid + 1;
  }
  return lo;
}

// Lengths of ranks r0..r0+N-1 (consecutive, so non-decreasing): two searches,
// then a walk only where a length boundary falls inside the run.
template <uint32_t N>
VLEC_HD inline void lens_of_ranks(const uint32_t* bound, uint32_t r0, uint32_t (&len)[N]) {
  if constexpr (N == 1) {  // one search, not two of the same rank
    len[0] = len_of_rank(bound, r0);
    return;
  }
  uint32_t l = len_of_rank(bound, r0);
  const uint32_t last = len_of_rank(bound, r0 + N - 1);
  for (uint32_t i = 0; i < N; ++i) {
    if (l != last)
      while (l != 0 && r0 + i >= bound[l]) l = l < kMaxLen ? l + 1 : 0;
    len[i] = l;
  }
}

// The candidate build_codebook keeps: a fixed limit is candidate 0; otherwise the
// first valid one within B24 + B24/512 (u64 arithmetic, as on the CPU), else 24.
VLEC_HD inline uint32_t choose_candidate(uint32_t ncand, const uint32_t* valid, const uint64_t* bits) {
  if (ncand == 1) return 0;
  const uint64_t base = bits[kCandidates - 1], bound = base + base / 512;
  for (uint32_t c = 0; c < kCandidates; ++c)
    if (valid[c] && bits[c] <= bound) return c;
  return kCandidates - 1;
}

// DEFLATE's first code of each length (docs/FORMAT.md §4.4); cnt[0] is 0.
VLEC_HD inline void canonical_next(const uint32_t* cnt, uint32_t* next) {
  uint32_t code = 0;
  next[0] = 0;
  for (uint32_t l = 1; l <= kMaxLen; ++l) {
    code = (code + (l >= 2 ? cnt[l - 1] : 0)) << 1;
    next[l] = code;
  }
}

// Serialization (docs/FORMAT.md §4.1): g = ceil(n/16) presence flags from bit 0
// of the stream (byte 8), then 16 fields of `fbits` bits per present group.
VLEC_HD inline uint32_t field_bits(uint32_t max_length) { return max_length <= 15 ? 4 : 5; }
VLEC_HD inline uint32_t group_count(uint32_t n) { return (n + 15) / 16; }
VLEC_HD inline uint64_t field_bit(uint32_t groups, uint32_t present_before, uint32_t s, uint32_t fbits) {
  return groups + uint64_t{present_before} * 16 * fbits + (s & 15u) * fbits;
}
VLEC_HD inline uint32_t serialized_bytes(uint32_t n, uint32_t present_groups, uint32_t fbits) {
  if (n == 0) return 8;
  const uint64_t bits = group_count(n) + uint64_t{present_groups} * 16 * fbits;
  return static_cast<uint32_t>((8 + (bits + 7) / 8 + 3) / 4 * 4);
}

// Bytes of the serialized codebook of any histogram of `capacity` symbols.
VLEC_HD inline uint32_t serialized_capacity(uint32_t capacity) {
  const uint32_t g = group_count(capacity);
  return serialized_bytes(capacity, g, 5);
}

// ---- the GPU block ---------------------------------------------------------

#if defined(__CUDACC__)
struct ClShared {
  uint32_t bl[kMaxDepth + 2];
  uint32_t phase_start[kMaxPhases + 2];
  Report rep[2];
  uint32_t longest;
};

// Where a block's generate_cl keeps its data (see the layouts above).
struct ClArgs {
  uint32_t m;
  const uint64_t* keys_desc;  // streaming: the sorted counts in global memory
  uint64_t* leaf;             // streaming: the leaf ring; resident: the leaves, increasing
  uint64_t* node;             // node ring (shared)
  uint64_t* bx;               // streaming: the fallback window (T slots, shared)
  uint64_t* inner_w;          // streaming: every node's weight (global)
  uint16_t* parent;           // resident: shared; streaming: global
  uint8_t* leafkids;          // resident: shared; streaming: global
  uint16_t* parent_sh;        // streaming: shared copy for the depth pass (aliases the rings)
  uint8_t* depth;             // shared
};

template <bool kStream>
struct DeviceSink {
  uint64_t* node;
  uint32_t nmask;
  uint64_t* inner_w;
  uint8_t* leafkids;
  uint16_t* parent;
  __device__ __forceinline__ void made(uint32_t k, uint64_t w, uint32_t leaves) {
    node[k & nmask] = w;
    if (kStream) inner_w[k] = w;
    leafkids[k] = static_cast<uint8_t>(leaves);
  }
  __device__ __forceinline__ void consumed(uint32_t y, uint32_t k) { parent[y] = static_cast<uint16_t>(k); }
};

// generate_cl for one block of NT threads: generate_cl_host's loop, each tile
// one parallel step and one barrier. Leaves bl_count in sh.bl and the longest
// length in sh.longest. LR, R: ring sizes (powers of two; resident: LR >= m,
// R >= 3m/4, and no fallback window).
template <int NT, int IPT, uint32_t LR, uint32_t R, bool kStream>
__device__ void generate_cl_block(const ClArgs& g, ClShared& sh) {
  constexpr uint32_t T = NT * IPT;
  static_assert(!kStream || LR >= 2 * T, "the leaf ring must hold two tiles");
  const uint32_t tid = threadIdx.x, m = g.m;
  for (uint32_t l = tid; l < kMaxDepth + 2; l += NT) sh.bl[l] = 0;
  if (tid == 0) sh.phase_start[0] = 0, sh.longest = 0;
  if (m <= 1) {
    __syncthreads();
    if (m == 1 && tid == 0) sh.bl[1] = 1, sh.longest = 1;
    __syncthreads();
    return;
  }
  uint32_t xl = m;  // leaves fetched so far
  if (kStream) {
    xl = min_u32(m, LR);
    cl_fetch_leaves_thread(tid, NT, g.keys_desc, m, 0, xl, g.leaf, LR - 1);
    __pipeline_commit();
    __pipeline_wait_prior(0);
  }
  __syncthreads();
  DeviceSink<kStream> sink{g.node, R - 1, g.inner_w, g.leafkids, g.parent};
  Cursor cur;
  while (cur.k_start + 1 < m) {
    Tile v = cl_tile_setup(cur, T, m, R);
    if (kStream) {
      if (v.fallback) {
        cl_fetch_window_thread(tid, NT, g.inner_w, cur.y0, v.nb, g.bx);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
      }
      const uint32_t to = min_u32(m, cur.x0 + LR);  // one tile ahead: slots of leaves < x0 only
      cl_fetch_leaves_thread(tid, NT, g.keys_desc, m, xl, to, g.leaf, LR - 1);
      __pipeline_commit();
      xl = to;
    } else if (v.fallback) {
      __trap();  // cannot happen in a resident layout (R >= 3m/4)
    }
    const RingView w = cl_view(cur, v, g.leaf, kStream ? LR - 1 : ~0u, g.node, R - 1, g.bx);
    cl_merge_thread<IPT>(tid, T, cur, v, w, sink, &sh.rep[cur.tile & 1]);  // sets v.t on a phase's first tile
    if (kStream) __pipeline_wait_prior(0);
    __syncthreads();
    if (cl_advance(cur, v, sh.rep[(cur.tile) & 1]) && tid == 0 && cur.phase <= kMaxPhases)
      sh.phase_start[cur.phase] = cur.k_start;
  }
  __syncthreads();
  const uint16_t* parent = g.parent;
  if (kStream) {  // the parents, 16 bytes a copy, into shared memory (the rings are dead)
    const uint32_t chunks = (2 * (m - 1) + 15) / 16;
    for (uint32_t i = tid; i < chunks; i += NT)
      __pipeline_memcpy_async(reinterpret_cast<uint4*>(g.parent_sh) + i, reinterpret_cast<const uint4*>(g.parent) + i,
                              16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    parent = g.parent_sh;
  }
  const uint32_t root = m - 2;
  if (cur.phase <= kMaxPhases) {
    uint32_t p = cur.phase;
    // The last phases (near the root) are small: warp 0 alone, one barrier for all.
    uint32_t q = p;
    while (q > 0 && sh.phase_start[q] - sh.phase_start[q - 1] <= 32) --q;
    if (q < p) {
      if (tid < 32) {
        for (uint32_t r = p; r-- > q;) {
          cl_depth_thread(tid, 32, sh.phase_start[r], sh.phase_start[r + 1], root, parent, g.depth);
          __syncwarp();
        }
      }
      __syncthreads();
      p = q;
    }
    for (; p-- > 0;) {
      cl_depth_thread(tid, NT, sh.phase_start[p], sh.phase_start[p + 1], root, parent, g.depth);
      __syncthreads();
    }
  } else {
    if (tid == 0) cl_depth_sequential(root, parent, g.depth);
    __syncthreads();
  }
  cl_blcount_thread(tid, NT, m - 1, g.depth, g.leafkids, sh.bl, &sh.longest);
  __syncthreads();
}

#endif  // __CUDACC__

// ---- host emulation (host compilers only: the tests) ---------------------

#if !defined(__CUDACC__)

struct ClTrace {                     // the tree generate_cl built, for the tests
  std::vector<uint16_t> parent;      // per internal node (root: unset)
  std::vector<uint8_t> leafkids;     // per internal node: leaf children (0..2)
  std::vector<uint64_t> inner_w;     // per internal node: weight
  std::vector<uint8_t> depth;
  uint32_t phases = 0, tiles = 0;
  uint32_t fallback_tiles = 0;       // tiles that copied their B window from global memory
  uint32_t max_queue = 0;            // the most unconsumed internal nodes at a tile start
  uint32_t serial_from = ~0u;        // warp_tree_host: the node the serial loop took over at (~0u: none)
  bool hazard = false;               // a slot read or written against the rules (see below)
};

// The shared-memory rings of one emulated block, with the checks: every slot
// read holds the leaf or node the reader expects, none is read in the tile
// that fetches or rewrites it, and none is rewritten in a tile that read it.
struct HostRings {
  uint32_t lr = 0, r = 0, tile = 0;  // tile: 1 + the tile being emulated
  std::vector<uint64_t> leaf, node, bx;
  std::vector<int64_t> leaf_holder, node_holder, bx_holder;
  std::vector<uint32_t> leaf_fetched, leaf_read, node_written, node_read;
  bool* hazard = nullptr;
};

struct CheckedView {
  HostRings* h;
  uint32_t x0, y0;
  bool fallback;
  uint64_t A(uint32_t i) const {
    const uint32_t s = (x0 + i) & (h->lr - 1);
    if (h->leaf_holder[s] != int64_t{x0} + i || h->leaf_fetched[s] == h->tile) *h->hazard = true;
    h->leaf_read[s] = h->tile;
    return h->leaf[s];
  }
  uint64_t B(uint32_t i) const {
    if (fallback) {
      if (i >= h->bx.size() || h->bx_holder[i] != int64_t{y0} + i) *h->hazard = true;
      return i < h->bx.size() ? h->bx[i] : 0;
    }
    const uint32_t s = (y0 + i) & (h->r - 1);
    if (h->node_holder[s] != int64_t{y0} + i || h->node_written[s] == h->tile) *h->hazard = true;
    h->node_read[s] = h->tile;
    return h->node[s];
  }
};

struct HostSink {
  HostRings* h;
  ClTrace* tr;
  void made(uint32_t k, uint64_t w, uint32_t leaves) {
    const uint32_t s = k & (h->r - 1);
    if (h->node_read[s] == h->tile || k >= tr->inner_w.size()) *h->hazard = true;
    if (k >= tr->inner_w.size()) return;
    h->node[s] = w, h->node_holder[s] = k, h->node_written[s] = h->tile;
    tr->inner_w[k] = w;  // the global copy
    tr->leafkids[k] = static_cast<uint8_t>(leaves);
  }
  void consumed(uint32_t y, uint32_t k) {
    if (y >= tr->parent.size()) *h->hazard = true;
    else tr->parent[y] = static_cast<uint16_t>(k);
  }
};

// generate_cl on the host with `nt` threads of IPT merged nodes each (IPT
// even), a leaf ring of `lr` slots and a node ring of `r` (powers of two;
// lr >= 2T, or lr >= m for the resident layout, where it is filled once): the
// GPU block's steps (generate_cl_block above), in its order, each thread's
// part in turn. keys_desc: the m present counts, descending. Returns bl_count.
// lr == 0: the resident layout (both rings as small as m allows).
template <uint32_t IPT>
std::array<uint32_t, kMaxDepth + 1> generate_cl_host(const std::vector<uint64_t>& keys_desc, uint32_t nt, uint32_t lr,
                                                    uint32_t r, ClTrace* trace = nullptr) {
  std::array<uint32_t, kMaxDepth + 1> bl{};
  const uint32_t m = static_cast<uint32_t>(keys_desc.size()), T = nt * IPT;
  ClTrace local;
  ClTrace& tr = trace ? *trace : local;
  tr = ClTrace{};
  if (m <= 1) {
    if (m == 1) bl[1] = 1;
    return bl;
  }
  const bool stream = lr != 0;
  if (!stream) {
    for (lr = 1; lr < m;) lr <<= 1;
    for (r = 1; 4 * uint64_t{r} < 3 * uint64_t{m};) r <<= 1;  // R >= 3m/4
  }
  if ((lr & (lr - 1)) || (r & (r - 1)) || (stream && lr < 2 * T)) {
    tr.hazard = true;  // not a valid shape
    return {};
  }
  const uint32_t padded = (m - 1 + 15) / 16 * 16;  // whole 16-byte blocks, as on the GPU
  tr.parent.assign(m - 1, 0xFFFF);
  tr.leafkids.assign(padded, 0);
  tr.inner_w.assign(m - 1, 0);
  tr.depth.assign(padded, 0);
  HostRings h;
  h.lr = lr, h.r = r, h.hazard = &tr.hazard;
  h.leaf.assign(lr, 0), h.leaf_holder.assign(lr, -1), h.leaf_fetched.assign(lr, 0), h.leaf_read.assign(lr, 0);
  h.node.assign(r, 0), h.node_holder.assign(r, -1), h.node_written.assign(r, 0), h.node_read.assign(r, 0);
  h.bx.assign(T, 0), h.bx_holder.assign(T, -1);
  auto fetch = [&](uint32_t from, uint32_t to) {  // cl_fetch_leaves_thread of every thread
    for (uint32_t tid = 0; tid < nt; ++tid) cl_fetch_leaves_thread(tid, nt, keys_desc.data(), m, from, to, h.leaf.data(), lr - 1);
    for (uint32_t x = from; x < to; ++x) {
      const uint32_t s = x & (lr - 1);
      if (h.leaf_read[s] == h.tile && h.tile) tr.hazard = true;
      h.leaf_holder[s] = x, h.leaf_fetched[s] = h.tile;
    }
  };
  uint32_t xl = min_u32(m, lr);
  fetch(0, xl);
  // __syncthreads
  std::vector<uint32_t> phase_start(kMaxPhases + 2, 0);
  Cursor cur;
  HostSink sink{&h, &tr};
  while (cur.k_start + 1 < m) {
    h.tile = cur.tile + 1;
    Tile v = cl_tile_setup(cur, T, m, r);
    tr.max_queue = max_u32(tr.max_queue, v.K - cur.y0);
    if (v.fallback) {
      if (!stream) tr.hazard = true;  // the resident layout has no window to copy into
      ++tr.fallback_tiles;
      for (uint32_t tid = 0; tid < nt; ++tid) cl_fetch_window_thread(tid, nt, tr.inner_w.data(), cur.y0, v.nb, h.bx.data());
      for (uint32_t i = 0; i < T; ++i) h.bx_holder[i] = i < v.nb ? int64_t{cur.y0} + i : -1;
      // __syncthreads
    }
    if (stream) {
      const uint32_t to = min_u32(m, cur.x0 + lr);
      fetch(xl, to);
      xl = to;
    }
    const CheckedView w{&h, cur.x0, cur.y0, v.fallback};
    Report rep{};
    uint32_t reporters = 0;
    const Tile shared_v = v;
    for (uint32_t tid = 0; tid < nt; ++tid) {
      Report mine{~0u, ~0u, ~0u};
      Tile mine_v = shared_v;  // each thread's own copy; all compute the same threshold
      cl_merge_thread<IPT>(tid, T, cur, mine_v, w, sink, &mine);
      if (tid == 0) v = mine_v;
      if (mine_v.t != v.t) tr.hazard = true;
      if (mine.x_end != ~0u || mine.n_use != ~0u || mine.final_flag != ~0u) ++reporters, rep = mine;
    }
    if (reporters != 1 || rep.n_use > T || rep.n_use % 2 || rep.x_end > rep.n_use) {
      tr.hazard = true;
      return {};
    }
    // __syncthreads
    if (cl_advance(cur, v, rep) && cur.phase <= kMaxPhases) phase_start[cur.phase] = cur.k_start;
    ++tr.tiles;
    if (tr.hazard) return {};
  }
  tr.phases = cur.phase;
  const uint32_t root = m - 2;
  if (cur.phase <= kMaxPhases) {
    for (uint32_t p = cur.phase; p-- > 0;)
      for (uint32_t tid = 0; tid < nt; ++tid)
        cl_depth_thread(tid, nt, phase_start[p], phase_start[p + 1], root, tr.parent.data(), tr.depth.data());
  } else {
    cl_depth_sequential(root, tr.parent.data(), tr.depth.data());
  }
  uint32_t longest = 0;
  for (uint32_t tid = 0; tid < nt; ++tid)
    cl_blcount_thread(tid, nt, m - 1, tr.depth.data(), tr.leafkids.data(), bl.data(), &longest);
  for (uint32_t l = 1; l <= kMaxDepth; ++l)
    if (bl[l] && l > longest) tr.hazard = true;  // longest must be exact
  if (longest && !bl[longest]) tr.hazard = true;
  tr.leafkids.resize(m - 1);
  tr.depth.resize(m - 1);
  return bl;
}

inline std::array<uint32_t, kMaxDepth + 1> generate_cl_host(const std::vector<uint64_t>& keys_desc, uint32_t nt,
                                                           uint32_t ipt, uint32_t lr, uint32_t r,
                                                           ClTrace* trace = nullptr) {
  return ipt == 2    ? generate_cl_host<2>(keys_desc, nt, lr, r, trace)
         : ipt == 4  ? generate_cl_host<4>(keys_desc, nt, lr, r, trace)
         : ipt == 8  ? generate_cl_host<8>(keys_desc, nt, lr, r, trace)
         : ipt == 16 ? generate_cl_host<16>(keys_desc, nt, lr, r, trace)
                     : generate_cl_host<32>(keys_desc, nt, lr, r, trace);
}

// The resident layout (every leaf and node in shared memory).
inline std::array<uint32_t, kMaxDepth + 1> generate_cl_host(const std::vector<uint64_t>& keys_desc, uint32_t nt,
                                                           uint32_t ipt, ClTrace* trace = nullptr) {
  return generate_cl_host(keys_desc, nt, ipt, 0, 0, trace);
}

#endif  // !__CUDACC__

}  // namespace vlec::cuda::cl
