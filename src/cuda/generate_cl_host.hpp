// cuda/generate_cl_host.hpp: generate_cl_block's steps (generate_cl_block.cuh)
// emulated on the host, thread by thread in the block's order, on rings that
// check every slot read and written: the CPU tests (suite GenerateCl) compare
// the tree node by node with the two-queue loop and fail on any read of a
// slot that another thread of the same tile writes or fetches. Host compilers
// only (the tests); nvcc sees nothing here.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "cuda/generate_cl_base.hpp"
#include "cuda/generate_cl_counts.hpp"
#include "cuda/generate_cl_tiles.hpp"

namespace vlec::cuda::cl {

#if !defined(__CUDACC__)

struct ClTrace {                     // the tree generate_cl built, for the tests
  std::vector<uint16_t> parent;      // per internal node (root: unset)
  std::vector<uint8_t> leafkids;     // per internal node: leaf children (0..2)
  std::vector<uint64_t> inner_w;     // per internal node: weight
  std::vector<uint8_t> depth;
  uint32_t phases = 0, tiles = 0;
  uint32_t fallback_tiles = 0;       // tiles that copied their B window from global memory
  uint32_t narrow_tiles = 0;         // tiles whose threshold is below 2^32 - 1 (32-bit reads)
  uint32_t depth_bounds = 0;         // depths of internal nodes (cl_depth_bounds' chain, D + 1)
  uint32_t max_queue = 0;            // the most unconsumed internal nodes at a tile start
  uint32_t pair_phases = 0;          // phases melded in pairs (cl_pair_phase)
  uint32_t pair_steps = 0;           // the block steps they took (counted in tiles too)
  uint32_t global_pair_phases = 0;   // of the pair phases, the ones that read their nodes from global memory
  uint32_t tail_phases = 0;          // of the pair phases, the ones one warp melded (cl_warp_tail; one step in all)
  uint32_t serial_from = ~0u;        // warp_tree_host: the node the serial loop took over at (~0u: none)
  uint32_t run_merges = 0;           // warp_tree_host: of the serial loop's merges, those leaf-node runs made
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
  bool planes = false;  // the streaming layout (RingView<4>: narrow tiles)
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
  uint64_t B_back(uint32_t j, uint32_t k) const { return B(j - k); }
  // A narrow tile's reads (low words): the value must be below 2^32, or the read is not exact.
  uint32_t low(uint64_t v) const {
    if (v >> 32) *h->hazard = true;
    return static_cast<uint32_t>(v);
  }
  bool narrow_reads() const { return h->planes; }  // as RingView: the streaming layout's planes
  uint32_t A32(uint32_t i) const { return low(A(i)); }
  uint32_t B32(uint32_t i) const { return low(B(i)); }
  uint32_t B32_back(uint32_t j, uint32_t k) const { return low(B(j - k)); }
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
  void made_global(uint32_t k, uint64_t w) {  // the global copy alone (a pair step's node past the ring)
    if (k >= tr->inner_w.size()) {
      *h->hazard = true;
      return;
    }
    tr->inner_w[k] = w;
    tr->leafkids[k] = 0;
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
  h.lr = lr, h.r = r, h.hazard = &tr.hazard, h.planes = stream;
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
  Cursor cur;
  while (cur.x32 < m && keys_desc[m - 1 - cur.x32] >> 32 == 0) ++cur.x32;  // the leaves below 2^32
  HostSink sink{&h, &tr};
  // A pair phase's node reads: node k from the ring (CheckedView::B from
  // node 0, with its checks), or the global copy (a node made before this step).
  auto ring_node = [&](uint32_t k) -> uint64_t { return CheckedView{&h, cur.x0, 0, false}.B(k); };
  auto global_node = [&](uint32_t k) -> uint64_t {
    if (!stream || k >= cur.k_start) tr.hazard = true;  // the resident layout has no global copy
    return k < tr.inner_w.size() ? tr.inner_w[k] : 0;
  };
  while (cur.k_start + 1 < m) {
    h.tile = cur.tile + 1;
    if (cl_pair_phase(cur, m) && cl_warp_tail(cur, r, kWarpTailNodes)) {  // generate_cl_block's tail: one warp, a step a phase
      while (cur.k_start + 1 < m) {
        h.tile = cur.tile + 1;
        if (!cl_pairs_from_ring(cur, r)) tr.hazard = true;  // the tail reads the ring alone
        for (uint32_t lane = 0; lane < 32; ++lane) cl_pairs_thread<8>(lane, 32, cur, r, ring_node, sink);
        // __syncwarp
        cl_advance_pairs(cur);
        ++tr.pair_phases, ++tr.tail_phases;
        if (tr.hazard) return {};
      }
      ++tr.tiles, ++tr.pair_steps;  // one block step
      break;
    }
    if (cl_pair_phase(cur, m)) {  // generate_cl_block's pair phase: one step
      const bool in_ring = !stream || cl_pairs_from_ring(cur, r);
      if (!in_ring) ++tr.global_pair_phases;
      for (uint32_t tid = 0; tid < nt; ++tid) {
        if (in_ring) cl_pairs_thread<8>(tid, nt, cur, r, ring_node, sink);
        else cl_pairs_thread<8>(tid, nt, cur, r, global_node, sink);
      }
      // __syncthreads
      cl_advance_pairs(cur);
      ++tr.tiles, ++tr.pair_phases, ++tr.pair_steps;
      if (tr.hazard) return {};
      continue;
    }
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
    tr.narrow_tiles += stream && v.t < kNarrowBelow;
    // __syncthreads
    cl_advance(cur, v, rep);
    ++tr.tiles;
    if (tr.hazard) return {};
  }
  tr.phases = cur.phase;
  // Every node's depth, sequentially (the reference), then the GPU's bounds
  // (one warp, emulated by lane 0 alone) checked against it, and bl_count from them.
  const uint32_t n = m - 1, root = n - 1;
  std::vector<uint32_t> depth(n, 0);
  for (uint32_t k = root; k-- > 0;) depth[k] = depth[tr.parent[k]] + 1;
  for (uint32_t k = 0; k < n; ++k) tr.depth[k] = static_cast<uint8_t>(min_u32(depth[k], 255));
  std::array<uint32_t, kMaxDepth> bound{};
  const uint32_t D = cl_depth_bounds(n, tr.parent.data(), bound.data(), 0);
  if (bound[D] != 0) tr.hazard = true;
  for (uint32_t d = 0; d <= D; ++d) {  // the nodes of depth d, [B_d, B_{d-1}); the last run holds every deeper one
    const uint32_t from = bound[d], to = d ? bound[d - 1] : n;
    if (from >= to) tr.hazard = true;
    for (uint32_t k = from; k < to && k < n; ++k)
      if (d < kMaxDepth - 1 ? depth[k] != d : depth[k] < d) tr.hazard = true;
  }
  tr.depth_bounds = D + 1;
  uint32_t longest = 0;
  cl_blcount_bounds(0, 1, m, D, bound.data(), tr.parent.data(), bl.data(), &longest);
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
