// cuda/generate_cl.hpp: the logic of the GPU codebook builder that must equal
// the CPU's (huffman/codebook.cpp) bit for bit, written once as plain
// __host__ __device__ functions. The kernels of codebook_gpu.cu call them
// between their __syncthreads; generate_cl_host() below calls the same
// functions in the same order, with loops standing in for the threads, so
// the CPU tests (tests/test_codebook_gpu.cpp, suite GenerateCl) prove the
// GPU's tree node by node against the two-queue construction.
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
// A phase's merge runs in tiles of T = threads x items merged nodes: a tile
// copies up to T leaves and T internal nodes to shared memory; each thread
// finds where its `items` nodes start by a merge-path search (run in lockstep
// with the search for the number of leaves <= t, so the two chains of shared
// loads overlap) and melds its pairs in registers; the thread with the tile's
// last node reports how many leaves it took. A tile that uses all T continues
// the phase from there (the merge path makes it exact).
// Depths: nodes made in phase p are consumed in later phases, so one parallel
// step per phase, last phase first, gives depth[k] = depth[parent[k]] + 1.
// Leaves are never given parents: node k records how many of its two children
// are leaves, and bl_count[depth[k] + 1] += that.
#pragma once

#include <array>
#include <cstdint>
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

// Where the construction stands; every thread of the block holds the same copy.
struct Cursor {
  uint32_t x0 = 0;         // leaves consumed
  uint32_t y0 = 0;         // internal nodes consumed
  uint32_t k_start = 0;    // internal nodes made before this phase
  uint32_t tile_base = 0;  // nodes of this phase's merge melded so far
  uint32_t phase = 0;
  uint64_t t = 0;          // this phase's threshold
};

// One tile of a phase, as every thread computes it from the shared chunks.
struct Tile {
  uint32_t na = 0, nb = 0;  // leaves (<= t) and internal nodes of the chunks that take part
  uint32_t n_use = 0;       // merged nodes melded by this tile (even)
  bool final = false;       // the phase ends with this tile
  uint64_t t = 0;
};

// Sums saturate: the same as the CPU's for every histogram whose total is
// below 2^64 (the documented domain), and the invariants (and so the memory
// safety) survive any other input.
VLEC_HD inline uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? ~uint64_t{0} : a + b; }

// Two binary searches in lockstep, so their shared-memory loads overlap:
//   *na = number of elements <= t in the sorted a[0..n_a);
//   *x  = merge path: how many of the first d outputs of merge(a, b) come from
//         a, where a[x] goes first if a[x] <= b[y] (a leaf wins ties).
// As b[] <= t < a[*na..], the merge's first *na + n_b outputs do not depend on
// the a[] beyond *na, so *x is exact for every d <= *na + n_b.
VLEC_HD inline void search_tile(const uint64_t* a, uint32_t n_a, const uint64_t* b, uint32_t n_b, uint64_t t,
                                uint32_t d, uint32_t* na, uint32_t* x) {
  uint32_t clo = 0, chi = n_a;
  uint32_t plo = d > n_b ? d - n_b : 0, phi = d < n_a ? d : n_a;
  while (clo < chi || plo < phi) {
    if (clo < chi) {
      const uint32_t mid = (clo + chi) / 2;
      if (a[mid] <= t) clo = mid + 1; else chi = mid;
    }
    if (plo < phi) {
      const uint32_t mid = (plo + phi) / 2;
      if (a[mid] <= b[d - 1 - mid]) plo = mid + 1; else phi = mid;
    }
  }
  *na = clo;
  *x = plo;
}

// Copy the tile's chunks (T = nt * IPT nodes each): leaves x0.. in increasing
// weight and internal nodes y0..k_start. On the GPU, from global memory, with
// cp.async (all of a thread's copies in flight at once, no registers);
// otherwise all loads are issued before any store.
template <uint32_t IPT, bool kGlobalSource>
VLEC_HD inline void cl_load_thread(uint32_t tid, uint32_t nt, const uint64_t* keys_desc, uint32_t m,
                                   const uint64_t* inner_w, const Cursor& c, uint64_t* A, uint64_t* B) {
  const uint32_t T = nt * IPT, na = min_u32(T, m - c.x0), nb = min_u32(T, c.k_start - c.y0);
#if defined(__CUDA_ARCH__)
  if constexpr (kGlobalSource) {
    for (uint32_t k = 0; k < IPT; ++k) {
      const uint32_t i = tid + k * nt;
      if (i < na) __pipeline_memcpy_async(A + i, keys_desc + (m - 1 - (c.x0 + i)), sizeof(uint64_t));
      if (i < nb) __pipeline_memcpy_async(B + i, inner_w + c.y0 + i, sizeof(uint64_t));
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
  } else
#endif
  {
    uint64_t a[IPT], b[IPT];
    for (uint32_t k = 0; k < IPT; ++k) {
      const uint32_t i = tid + k * nt;
      a[k] = i < na ? keys_desc[m - 1 - (c.x0 + i)] : 0;
      b[k] = i < nb ? inner_w[c.y0 + i] : 0;
    }
    for (uint32_t k = 0; k < IPT; ++k) {
      const uint32_t i = tid + k * nt;
      if (i < na) A[i] = a[k];
      if (i < nb) B[i] = b[k];
    }
  }
}

// What the tile merges, as thread `tid` (first merged node d = tid * ipt)
// sees it, and its merge-path start *x. On a phase's first tile, t is the sum
// of the two nodes the two-queue loop takes next (from the chunks' heads).
VLEC_HD inline Tile cl_tile(const Cursor& c, uint32_t T, uint32_t m, const uint64_t* A, const uint64_t* B,
                            uint32_t d, uint32_t* x) {
  const uint32_t na_avail = min_u32(T, m - c.x0), nb_avail = min_u32(T, c.k_start - c.y0);
  Tile v;
  v.t = c.t;
  if (c.tile_base == 0) {
    uint32_t a = 0, b = 0;
    uint64_t t = 0;
    for (int pick = 0; pick < 2; ++pick) {
      if (a < na_avail && (b >= nb_avail || A[a] <= B[b])) t = sat_add(t, A[a++]);
      else t = sat_add(t, B[b++]);
    }
    v.t = t;
  }
  v.nb = nb_avail;
  search_tile(A, na_avail, B, nb_avail, v.t, min_u32(d, na_avail + nb_avail), &v.na, x);
  const uint32_t avail = v.na + v.nb;
  v.final = avail < T;  // both chunks hold all that is left of the phase
  v.n_use = v.final ? (avail & ~1u) : T;
  return v;
}

// Thread `tid` melds merged nodes [tid*ipt, tid*ipt + ipt) of the tile (ipt even),
// from merge-path start x: parent of each internal node it consumes, weight and
// leaf-children count of each node it makes. The thread holding the tile's
// last node writes the number of leaves the tile consumed to *x_end.
VLEC_HD inline void cl_merge_thread(uint32_t tid, uint32_t ipt, const Cursor& c, const Tile& v, uint32_t x,
                                    const uint64_t* A, const uint64_t* B, uint64_t* inner_w, uint8_t* leafkids,
                                    uint16_t* parent, uint32_t* x_end) {
  const uint32_t d = tid * ipt;
  if (d >= v.n_use) return;
  uint32_t y = d - x;
  const uint32_t end = min_u32(d + ipt, v.n_use);
  uint64_t first = 0;
  uint32_t leaves = 0;
  for (uint32_t o = d; o < end; ++o) {
    const uint32_t node = c.k_start + (c.tile_base + o) / 2;
    uint64_t w;
    if (x < v.na && (y >= v.nb || A[x] <= B[y])) {
      w = A[x++];
      ++leaves;
    } else {
      w = B[y];
      parent[c.y0 + y] = static_cast<uint16_t>(node);
      ++y;
    }
    if (o & 1) {
      inner_w[node] = sat_add(first, w);
      leafkids[node] = static_cast<uint8_t>(leaves);
      leaves = 0;
    } else {
      first = w;
    }
  }
  if (end == v.n_use) *x_end = x;
}

VLEC_HD inline void cl_advance(Cursor& c, const Tile& v, uint32_t x_end) {
  c.x0 += x_end;
  c.y0 += v.n_use - x_end;
  c.tile_base += v.n_use;
  c.t = v.t;
  if (v.final) {
    c.k_start += c.tile_base / 2;
    c.tile_base = 0;
    ++c.phase;
  }
}

// Depth of the nodes made in one phase [lo, hi); their parents are deeper in time.
VLEC_HD inline void cl_depth_thread(uint32_t tid, uint32_t nt, uint32_t lo, uint32_t hi, uint32_t root,
                                    const uint16_t* parent, uint8_t* depth) {
  for (uint32_t k = lo + tid; k < hi; k += nt)
    depth[k] = k == root ? 0 : static_cast<uint8_t>(depth[parent[k]] + 1);
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

// bl[depth[k] + 1] += leafkids[k] over a contiguous run of nodes per thread.
// Depth does not increase with k (parents are monotone in k), so a thread
// flushes a handful of runs, not one atomic per node. leafkids is read 16
// bytes at a time, all loads of a batch issued before they are used.
VLEC_HD inline void cl_blcount_thread(uint32_t tid, uint32_t nt, uint32_t n_inner, const uint8_t* depth,
                                      const uint8_t* leafkids, uint32_t* bl) {
  constexpr uint32_t kBatch = 16;
  const uint32_t per = (n_inner + nt - 1) / nt, lo = tid * per, hi = min_u32(lo + per, n_inner);
  uint32_t run = 0, acc = 0;
  for (uint32_t k0 = lo; k0 < hi; k0 += kBatch) {
    uint8_t kids[kBatch];
    for (uint32_t j = 0; j < kBatch; ++j) kids[j] = k0 + j < hi ? leafkids[k0 + j] : 0;
    for (uint32_t j = 0; j < kBatch && k0 + j < hi; ++j) {
      const uint32_t l = min_u32(depth[k0 + j] + 1u, kMaxDepth);
      if (l != run) {
        if (acc) cl_add(&bl[run], acc);
        run = l;
        acc = 0;
      }
      acc += kids[j];
    }
  }
  if (acc) cl_add(&bl[run], acc);
}

// huffman::limit_length_counts with its Kraft loop batched: the loop always
// splits the deepest leaf above `limit`, so the leaf it starts on is wholly
// pushed down to `limit` (2^(limit-d) - 1 rounds, net one code moved from
// level d to `limit`) before another is touched. O(limit) steps, same result.
VLEC_HD inline void limit_counts(const uint32_t* bl, uint32_t limit, uint32_t* out) {
  uint64_t c[kSlots] = {};
  uint32_t longest = 0;
  for (uint32_t l = 1; l <= kMaxDepth; ++l)
    if (bl[l]) longest = l;
  for (uint32_t l = 1; l <= limit; ++l) c[l] = bl[l];
  if (longest > limit) {
    for (uint32_t l = limit + 1; l <= kMaxDepth; ++l) c[limit] += bl[l];
    uint64_t kraft = 0;
    for (uint32_t l = 1; l <= limit; ++l) kraft += c[l] << (limit - l);
    uint64_t excess = kraft > (uint64_t{1} << limit) ? kraft - (uint64_t{1} << limit) : 0;
    uint32_t d = limit - 1;
    while (excess > 0) {
      while (d >= 1 && c[d] == 0) --d;
      if (d == 0) {  // nothing left to split (cannot happen when 2^limit >= symbols)
        c[limit] -= excess;
        break;
      }
      const uint64_t unit = (uint64_t{1} << (limit - d)) - 1;
      uint64_t n = excess / unit;
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
  out[0] = 0;
  for (uint32_t l = 1; l <= kMaxLen; ++l) out[l] = l <= limit ? static_cast<uint32_t>(c[l]) : 0;
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
  uint32_t x_end;
};

// generate_cl for one block of NT threads: generate_cl_host's loop, each step
// a parallel step between barriers. Leaves bl_count in sh.bl. keys_desc and
// inner_w are in global memory (kGlobalSource) or shared memory.
template <int NT, int IPT, bool kGlobalSource>
__device__ void generate_cl_block(const uint64_t* keys_desc, uint32_t m, uint64_t* inner_w, uint8_t* leafkids,
                                  uint16_t* parent, uint64_t* A, uint64_t* B, uint8_t* depth, ClShared& sh) {
  constexpr uint32_t T = NT * IPT;
  const uint32_t tid = threadIdx.x;
  for (uint32_t l = tid; l < kMaxDepth + 2; l += NT) sh.bl[l] = 0;
  if (tid == 0) sh.phase_start[0] = 0;
  __syncthreads();
  if (m <= 1) {
    if (m == 1 && tid == 0) sh.bl[1] = 1;
    __syncthreads();
    return;
  }
  Cursor cur;
  while (cur.k_start + 1 < m) {
    cl_load_thread<IPT, kGlobalSource>(tid, NT, keys_desc, m, inner_w, cur, A, B);
    __syncthreads();
    uint32_t x;
    const Tile v = cl_tile(cur, T, m, A, B, tid * IPT, &x);
    cl_merge_thread(tid, IPT, cur, v, x, A, B, inner_w, leafkids, parent, &sh.x_end);
    __syncthreads();
    cl_advance(cur, v, v.n_use ? sh.x_end : 0);
    if (v.final && tid == 0 && cur.phase <= kMaxPhases) sh.phase_start[cur.phase] = cur.k_start;
  }
  __syncthreads();
  const uint32_t root = m - 2;
  if (cur.phase <= kMaxPhases) {
    for (uint32_t p = cur.phase; p-- > 0;) {
      cl_depth_thread(tid, NT, sh.phase_start[p], sh.phase_start[p + 1], root, parent, depth);
      __syncthreads();
    }
  } else {
    if (tid == 0) cl_depth_sequential(root, parent, depth);
    __syncthreads();
  }
  cl_blcount_thread(tid, NT, m - 1, depth, leafkids, sh.bl);
  __syncthreads();
}

#endif  // __CUDACC__

// ---- host emulation ------------------------------------------------------

struct ClTrace {                     // the tree generate_cl built, for the tests
  std::vector<uint16_t> parent;      // per internal node (root: unset)
  std::vector<uint8_t> leafkids;     // per internal node: leaf children (0..2)
  std::vector<uint64_t> inner_w;     // per internal node: weight
  std::vector<uint8_t> depth;
  uint32_t phases = 0, tiles = 0;
};

// generate_cl on the host with `nt` threads of IPT merged nodes each (IPT
// even): the GPU block's steps (generate_cl_block above), in its
// order, each thread's part in turn. keys_desc: the m present counts,
// descending. Returns bl_count.
template <uint32_t IPT>
std::array<uint32_t, kMaxDepth + 1> generate_cl_host(const std::vector<uint64_t>& keys_desc, uint32_t nt,
                                                    ClTrace* trace = nullptr) {
  std::array<uint32_t, kMaxDepth + 1> bl{};
  const uint32_t m = static_cast<uint32_t>(keys_desc.size()), T = nt * IPT;
  ClTrace local;
  ClTrace& tr = trace ? *trace : local;
  tr = ClTrace{};
  if (m <= 1) {
    if (m == 1) bl[1] = 1;
    return bl;
  }
  tr.parent.assign(m - 1, 0xFFFF);
  tr.leafkids.assign(m - 1, 0);
  tr.inner_w.assign(m - 1, 0);
  tr.depth.assign(m - 1, 0);
  std::vector<uint64_t> A(T), B(T);
  std::vector<uint32_t> phase_start(kMaxPhases + 2, 0);
  Cursor cur;
  uint32_t x_end_slot = 0xDEAD;
  while (cur.k_start + 1 < m) {
    for (uint32_t tid = 0; tid < nt; ++tid)
      cl_load_thread<IPT, false>(tid, nt, keys_desc.data(), m, tr.inner_w.data(), cur, A.data(), B.data());
    // __syncthreads
    Tile v;
    for (uint32_t tid = 0; tid < nt; ++tid) {
      uint32_t x = 0;
      const Tile mine = cl_tile(cur, T, m, A.data(), B.data(), tid * IPT, &x);
      if (tid == 0) v = mine;
      if (mine.t != v.t || mine.na != v.na || mine.n_use != v.n_use || mine.final != v.final) return {};  // cannot happen
      cl_merge_thread(tid, IPT, cur, mine, x, A.data(), B.data(), tr.inner_w.data(), tr.leafkids.data(),
                      tr.parent.data(), &x_end_slot);
    }
    // __syncthreads
    cl_advance(cur, v, v.n_use ? x_end_slot : 0);
    if (v.final && cur.phase <= kMaxPhases) phase_start[cur.phase] = cur.k_start;
    ++tr.tiles;
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
  for (uint32_t tid = 0; tid < nt; ++tid) cl_blcount_thread(tid, nt, m - 1, tr.depth.data(), tr.leafkids.data(), bl.data());
  return bl;
}

inline std::array<uint32_t, kMaxDepth + 1> generate_cl_host(const std::vector<uint64_t>& keys_desc, uint32_t nt,
                                                           uint32_t ipt, ClTrace* trace = nullptr) {
  return ipt == 2 ? generate_cl_host<2>(keys_desc, nt, trace) : ipt == 4 ? generate_cl_host<4>(keys_desc, nt, trace)
                                                                          : generate_cl_host<8>(keys_desc, nt, trace);
}

}  // namespace vlec::cuda::cl
