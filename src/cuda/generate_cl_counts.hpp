// cuda/generate_cl_counts.hpp: bl_count (the leaves at each code length)
// from the tree GenerateCL built, __host__ __device__ like the tiles: for
// the block tiles from the parents alone (the depths' bounds: one warp's
// chain of 32-ary searches, no depth per node), for the one-warp tree
// (warp_tree.hpp) from every node's depth and leaf children.
#pragma once

#include <cstdint>
#include <cstring>

#include "cuda/generate_cl_base.hpp"

namespace vlec::cuda::cl {

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

// The one-warp tree's bl_count (warp_tree.hpp, which has every depth):
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

// bl_count without a depth per node (generate_cl_block, after the tiles).
// Depth does not increase with k (parents do not decrease, and each node's
// depth is its parent's + 1), so the nodes of depth <= d are a suffix
// [B_d, n) of the n internal nodes: B_0 = the root n - 1, and B_d (d >= 1) is
// the first k with parent[k] >= B_{d-1}, one search over the parents. The
// nodes of depth d, [B_d, B_{d-1}), hold E_{d-1} - E_d leaf children, where
// E_d = L(B_d - 1), L(k) the leaves among the children of nodes 0..k: 2(k +
// 1) less the internal nodes whose parent is <= k, one more search (E_{-1} =
// m, E = 0 at B = 0). So a tree of depth D costs D dependent searches of one
// warp, each a few 32-ary rounds, and D + 1 independent ones, where a depth
// pass (one barrier a phase) and a pass over every node's leaf children took
// 35 k cycles (~18 us) at 65,536 symbols (22 k now, the parents' copy
// included). Depths from kMaxDepth - 1 on share the last length slot (as
// min(depth + 1, kMaxDepth) did), which also bounds the chain.

// The first k in [lo, hi) with parent[k] >= target (hi if none; parents do
// not decrease), by 32-ary rounds: probe i (lane i on the GPU) reads the last
// node of the i-th of 32 equal parts; the first part whose probe holds the
// target brackets the answer. Four rounds for 65,536 nodes.
VLEC_HD inline uint32_t cl_probe(uint32_t lo, uint32_t step, uint32_t i) { return lo + i * step + step - 1; }

VLEC_HD inline uint32_t cl_first_parent_at_least(const uint16_t* parent, uint32_t lo, uint32_t hi, uint32_t target,
                                                 uint32_t lane) {
  while (lo < hi) {
    const uint32_t step = (hi - lo + 31) / 32;
#if defined(__CUDA_ARCH__)
    const uint32_t mine = cl_probe(lo, step, lane);
    const uint32_t hit = __ballot_sync(0xFFFFFFFFu, mine >= hi || parent[mine] >= target);
    const uint32_t i = hit ? static_cast<uint32_t>(__ffs(hit)) - 1 : 32;
#else
    (void)lane;
    uint32_t i = 0;
    while (i < 32 && !(cl_probe(lo, step, i) >= hi || parent[cl_probe(lo, step, i)] >= target)) ++i;
#endif
    if (i == 32) return hi;  // every probe below the target: the last part's last node too
    const uint32_t q = cl_probe(lo, step, i);
    lo += i * step;
    hi = q < hi ? q : hi;    // parent[q] >= target: the answer is at most q
  }
  return lo;
}

// L(k): the leaves among the children of internal nodes 0..k (k < n).
VLEC_HD inline uint32_t cl_leaves_through(uint32_t k, uint32_t n_inner, const uint16_t* parent) {
  uint32_t lo = 0, hi = n_inner - 1;  // the root (n_inner - 1) has no parent
  while (lo < hi) {                   // the first y with parent[y] > k
    const uint32_t mid = (lo + hi) / 2;
    const bool past = parent[mid] > k;
    hi = past ? mid : hi;
    lo = past ? lo : mid + 1;
  }
  return 2 * (k + 1) - lo;
}

// One warp (lane 0..31; the host runs lane 0 alone, nlanes = 1): B_0.. into
// bound[] (kMaxDepth entries), ending at the first B_D = 0 (forced at D =
// kMaxDepth - 1). Returns D.
VLEC_HD inline uint32_t cl_depth_bounds(uint32_t n_inner, const uint16_t* parent, uint32_t* bound, uint32_t lane) {
  uint32_t b = n_inner - 1, run = 1, d = 0;  // run: the nodes of depth d
  if (lane == 0) bound[0] = b;
  while (b > 0 && d + 1 < kMaxDepth - 1) {
    // Each node of depth d has at most two internal children, so B_{d+1} >=
    // B_d - 2 run: the search starts there (a round or two near the root
    // and in the deep, thin levels, where all of [0, B_d) took four).
    const uint32_t lo = b > 2 * run ? b - 2 * run : 0;
    const uint32_t next = cl_first_parent_at_least(parent, lo, b, b, lane);
    run = b - next, b = next;
    ++d;
    if (lane == 0) bound[d] = b;
  }
  if (b > 0) {  // depths >= kMaxDepth - 1: one slot
    ++d;
    if (lane == 0) bound[d] = 0;
  }
  return d;
}

// bl[min(d + 1, kMaxDepth)] += E_{d-1} - E_d for d = 0..D, over lanes lane,
// lane + nlanes, ...; the sums wrap to the exact counts. *longest: node 0
// joins two leaves and lies at depth D.
VLEC_HD inline void cl_blcount_bounds(uint32_t lane, uint32_t nlanes, uint32_t m, uint32_t D, const uint32_t* bound,
                                      const uint16_t* parent, uint32_t* bl, uint32_t* longest) {
  const uint32_t n_inner = m - 1;
  for (uint32_t d = lane; d <= D; d += nlanes) {
    const uint32_t prev = d == 0 ? m : bound[d - 1] ? cl_leaves_through(bound[d - 1] - 1, n_inner, parent) : 0;
    const uint32_t here = bound[d] ? cl_leaves_through(bound[d] - 1, n_inner, parent) : 0;
    cl_add(&bl[min_u32(d + 1, kMaxDepth)], prev - here);
  }
  if (lane == 0) cl_max(longest, min_u32(D + 1, kMaxDepth));
}

}  // namespace vlec::cuda::cl
