// cuda/generate_cl_block.cuh: generate_cl for one thread block of the GPU
// codebook kernel: generate_cl_tiles.hpp's steps, each tile one parallel step
// and one __syncthreads, on the resident layout (one block, everything in
// shared memory) or the streaming one (a cluster: leaves through a cp.async
// ring, node weights in a ring and in global memory; the rings in planes of
// 32-bit words), then bl_count from the depths' bounds (one warp). nvcc only;
// generate_cl_host.hpp replays the same steps on the host.
#pragma once

#include <cstdint>

#include "cuda/generate_cl_base.hpp"
#include "cuda/generate_cl_counts.hpp"
#include "cuda/generate_cl_tiles.hpp"
#include "cuda/serial_tree.hpp"
#include "cuda/warp_index.cuh"

namespace vlec::cuda::cl {

#if defined(__CUDACC__)
struct ClShared {
  uint32_t bl[kMaxDepth + 2];
  uint32_t bound[kMaxDepth];  // B_d: the first internal node of depth <= d (cl_depth_bounds)
  Report rep[2];
  uint32_t longest;
};

// Where a block's generate_cl keeps its data (see the layouts above).
struct ClArgs {
  uint32_t m;
  uint32_t x32;               // leaves below 2^32 (narrow tiles, generate_cl_tiles.hpp)
  const uint64_t* keys_desc;  // streaming: the sorted counts in global memory
  uint64_t* leaf;             // streaming: the leaf ring; resident: the leaves, increasing
  uint64_t* node;             // node ring (shared)
  uint64_t* bx;               // streaming: the fallback window (T slots, shared)
  // streaming: leaf, node and bx are planes of words (RingView<4>), low words then high
  uint64_t* inner_w;          // streaming: every node's weight (global)
  uint16_t* parent;           // resident: shared; streaming: global
  uint8_t* leafkids;          // resident: shared (the one-warp tree's bl_count); streaming: unused
  uint16_t* parent_sh;        // streaming: shared copy for the depth pass (aliases the rings)
  uint8_t* depth;             // shared
  uint64_t* prof = nullptr;   // diagnostics (codebook_gpu.hpp, set_codebook_profile): the stage's cycles
  uint32_t warp_tail = kWarpTailNodes;  // cl_warp_tail's bound (set_codebook_warp_tail, for timing)
  uint32_t run_after = kRunAfter;       // serial_tree.hpp's hand-over to leaf-node runs (set_codebook_leaf_node_runs)
};

template <bool kStream>
struct DeviceSink {
  uint64_t* node;  // kStream: two planes of R words
  uint32_t nmask;
  uint64_t* inner_w;
  uint16_t* parent;
  // The leaf children are not kept: bl_count comes from the depths and parents (cl_blcount_runs_thread).
  __device__ __forceinline__ void made(uint32_t k, uint64_t w, uint32_t) {
    if constexpr (kStream) {
      uint32_t* lo = reinterpret_cast<uint32_t*>(node) + (k & nmask);
      lo[0] = static_cast<uint32_t>(w), lo[nmask + 1] = static_cast<uint32_t>(w >> 32);
      inner_w[k] = w;
    } else {
      node[k & nmask] = w;
    }
  }
  // A node whose ring slot a later node of the same pair step takes (streaming only).
  __device__ __forceinline__ void made_global(uint32_t k, uint64_t w) {
    if constexpr (kStream) inner_w[k] = w;
  }
  __device__ __forceinline__ void consumed(uint32_t y, uint32_t k) { parent[y] = static_cast<uint16_t>(k); }
};

// generate_cl for one block of NT threads: generate_cl_host's loop, each tile
// one parallel step and one barrier. Leaves bl_count in sh.bl and the longest
// length in sh.longest. LR, R: ring sizes (powers of two; resident: LR >= m,
// R >= 3m/4, and no fallback window).
// after_tiles(tid): streaming layout, every thread once the rings are dead
// (shared memory from parent_sh + 2m on is free): cp.async copies of the
// caller's, committed as their own group (the caller waits for it).
struct NoCopies {
  __device__ void operator()(uint32_t) const {}
};
template <int NT, int IPT, uint32_t LR, uint32_t R, bool kStream, class AfterTiles = NoCopies>
__device__ void generate_cl_block(const ClArgs& g, ClShared& sh, const AfterTiles& after_tiles = AfterTiles{}) {
  constexpr uint32_t T = NT * IPT;
  static_assert(!kStream || LR >= 2 * T, "the leaf ring must hold two tiles");
  const uint32_t tid = threadIdx.x, m = g.m;
  for (uint32_t l = tid; l < kMaxDepth + 2; l += NT) sh.bl[l] = 0;
  if (tid == 0) sh.longest = 0;
  if (m <= 1) {
    __syncthreads();
    if (m == 1 && tid == 0) sh.bl[1] = 1, sh.longest = 1;
    __syncthreads();
    return;
  }
  uint32_t xl = m;  // leaves fetched so far
  if (kStream) {
    xl = min_u32(m, LR);
    cl_fetch_leaves_thread<true>(tid, NT, g.keys_desc, m, 0, xl, g.leaf, LR - 1);
    __pipeline_commit();
    __pipeline_wait_prior(0);
  }
  __syncthreads();
  DeviceSink<kStream> sink{g.node, R - 1, g.inner_w, g.parent};
  Cursor cur;
  cur.x32 = g.x32;
  // Diagnostics: thread 0's cycles in the tiles, and every thread's own tile
  // work (merge) and barrier waits summed, the largest of each kept.
  // Also each tile's slowest thread's own work, summed over the tiles, thread
  // 0's setup between a barrier and its merge, and the largest wait for the
  // leaves' copies summed (a triple buffer: a tile's maxima are read after its
  // barrier, and the buffer two tiles ahead is cleared then).
  __shared__ unsigned long long s_prof[3], s_tmax[3];
  const bool prof = g.prof != nullptr;
  uint64_t own = 0, waited = 0, copies = 0, slow = 0, setup = 0, t_loop = prof ? clock64() : 0;
  uint64_t fallbacks = 0, fallback_cycles = 0;  // tiles whose B window came from global memory, and their copies' cycles
  if (prof && tid < 3) s_prof[tid] = 0, s_tmax[tid] = 0;
  if (prof) __syncthreads();
  uint64_t pair_steps = 0, pair_cycles = 0;  // pair phases' steps (the warp's tail one) and thread 0's cycles in them
  // Node k from the node ring (valid while at most R nodes were made after
  // it), or from global memory (streaming only).
  const auto ring_node = [&](uint32_t k) -> uint64_t {
    if constexpr (kStream) {
      const uint32_t* lo = reinterpret_cast<const uint32_t*>(g.node) + (k & (R - 1));
      return lo[0] | uint64_t{lo[R]} << 32;
    } else {
      return g.node[k & (R - 1)];
    }
  };
  const auto global_node = [&](uint32_t k) -> uint64_t { return g.inner_w[k]; };
  while (cur.k_start + 1 < m) {
    const uint64_t t_top = prof ? clock64() : 0;
    if (cl_pair_phase(cur, m)) {  // no leaf left: the phase in one step
      const bool tail = cl_warp_tail(cur, R, g.warp_tail);  // then every phase left, by warp 0
      if (tail) {
        if (tid < 32) {
          Cursor c = cur;
          while (c.k_start + 1 < m) {
            cl_pairs_thread<8>(tid, 32, c, R, ring_node, sink);
            __syncwarp();
            cl_advance_pairs(c);
          }
        }
      } else if (!kStream || cl_pairs_from_ring(cur, R)) {
        cl_pairs_thread<8>(tid, NT, cur, R, ring_node, sink);
      } else {
        cl_pairs_thread<8>(tid, NT, cur, R, global_node, sink);
      }
      if (prof && tid == 0) s_tmax[(cur.tile + 2) % 3] = 0;  // as a tile clears it (diagnostics)
      __syncthreads();
      const uint32_t steps = cur.tile + 1;  // (the tiles' count: the tail is one step)
      do cl_advance_pairs(cur);
      while (tail && cur.k_start + 1 < m);
      cur.tile = steps;
      if (prof) ++pair_steps, pair_cycles += clock64() - t_top;
      continue;
    }
    Tile v = cl_tile_setup(cur, T, m, R);
    if (kStream) {
      if (v.fallback) {
        const uint64_t t_fb = prof ? clock64() : 0;
        cl_fetch_window_thread<true>(tid, NT, g.inner_w, cur.y0, v.nb, g.bx, T);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        if (prof) ++fallbacks, fallback_cycles += clock64() - t_fb;
      }
      const uint32_t to = min_u32(m, cur.x0 + LR);  // one tile ahead: slots of leaves < x0 only
      cl_fetch_leaves_thread<true>(tid, NT, g.keys_desc, m, xl, to, g.leaf, LR - 1);
      __pipeline_commit();
      xl = to;
    } else if (v.fallback) {
      __trap();  // cannot happen in a resident layout (R >= 3m/4)
    }
    const auto w = cl_view<kStream ? 4 : 8>(cur, v, g.leaf, kStream ? LR - 1 : ~0u, g.node, R - 1, g.bx, T);
    const uint64_t t0 = prof ? clock64() : 0;
    cl_merge_thread<IPT>(tid, T, cur, v, w, sink, &sh.rep[cur.tile & 1]);  // sets v.t on a phase's first tile
    const uint64_t tm = prof ? clock64() : 0;
    if (kStream) __pipeline_wait_prior(0);
    const uint64_t t1 = prof ? clock64() : 0;
    if (prof) atomicMax(&s_tmax[cur.tile % 3], static_cast<unsigned long long>(t1 - t0));
    __syncthreads();
    if (prof) {
      own += t1 - t0, waited += clock64() - t1, copies += t1 - tm, setup += t0 - t_top;
      if (tid == 0) slow += s_tmax[cur.tile % 3], s_tmax[(cur.tile + 2) % 3] = 0;
    }
    cl_advance(cur, v, sh.rep[cur.tile & 1]);
  }
  __syncthreads();
  if (prof) {
    atomicMax(&s_prof[0], static_cast<unsigned long long>(own));
    atomicMax(&s_prof[1], static_cast<unsigned long long>(waited));
    atomicMax(&s_prof[2], static_cast<unsigned long long>(copies));
  }
  const uint64_t t_depth = prof ? clock64() : 0;
  const uint16_t* parent = g.parent;
  if (kStream) {  // the parents, 16 bytes a copy, into shared memory (the rings are dead)
    const uint32_t chunks = (2 * (m - 1) + 15) / 16;
    for (uint32_t i = tid; i < chunks; i += NT)
      __pipeline_memcpy_async(reinterpret_cast<uint4*>(g.parent_sh) + i, reinterpret_cast<const uint4*>(g.parent) + i,
                              16);
    __pipeline_commit();
    after_tiles(tid);  // the caller's own copies, in flight during the depths' bounds
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    parent = g.parent_sh;
  }
  // The depths' bounds (one warp's chain of searches), then bl_count from them.
  uint32_t D = 0;
  const bool warp0 = uniform_warp_index() == 0;  // (warp-uniform to the compiler: no convergence tests in the chain)
  if (warp0) {
    D = cl_depth_bounds(m - 1, parent, sh.bound, tid);
    __syncwarp();
  }
  const uint64_t t_count = prof ? clock64() : 0;
  if (warp0) cl_blcount_bounds(tid, 32, m, D, sh.bound, parent, sh.bl, &sh.longest);
  __syncthreads();
  // [0] tiles, [1] largest own tile work, [2] largest barrier wait, [3] depth bounds, [4] bl_count, [5] tiles done
  if (prof && tid == 0) {
    g.prof[0] = t_depth - t_loop;
    g.prof[1] = s_prof[0];
    g.prof[2] = s_prof[1];
    g.prof[3] = t_count - t_depth;
    g.prof[4] = clock64() - t_count;
    g.prof[5] = cur.tile;
    g.prof[6] = slow;      // [6] each tile's slowest own work, summed
    g.prof[7] = setup;     // [7] thread 0's setup before its merges
    g.prof[-1] = s_prof[2];  // (slot 31) the largest wait for the leaves' copies, summed
    g.prof[20] = fallbacks;        // (slot 52) tiles whose B window was copied from global memory
    g.prof[21] = fallback_cycles;  // (slot 53) thread 0's cycles in those copies and their barrier
    g.prof[22] = pair_steps;       // (slot 54) pair phases' steps, the warp's tail one (among the tiles done, [5])
    g.prof[23] = pair_cycles;      // (slot 55) thread 0's cycles in them, barrier included
  }
}

#endif  // __CUDACC__

}  // namespace vlec::cuda::cl
