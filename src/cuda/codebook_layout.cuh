// cuda/codebook_layout.cuh: what every stage of the GPU codebook kernel
// (codebook_kernel.cuh) shares: the capacities and ring sizes, the plan, the
// temporary storage of the cluster kernel, the dynamic shared-memory layout (a
// union over the stages, so that 8,192 symbols fit one block), the blocks that
// share the work (a cluster through distributed shared memory, or one block),
// warp reductions and the diagnostic stamps. Included by codebook_gpu.cu alone
// (one translation unit, no relocatable device code), hence the unnamed
// namespace, as when all of it was one file.
#pragma once

#include <cooperative_groups.h>
#include <cstddef>
#include <cstdint>

#include "cuda/generate_cl.hpp"

namespace vlec::cuda {

namespace {

namespace cg = cooperative_groups;
using namespace cl;

constexpr uint32_t kFull = 0xFFFFFFFFu;
constexpr uint32_t kMaxCapacity = 65536;
constexpr uint32_t kSmallCapacity = 1024;   // 256 threads, resident
constexpr uint32_t kMidCapacity = 2048;     // 256 threads, 8 symbols each (44 KiB of shared memory)
constexpr uint32_t kBlockCapacity = 8192;   // symbols of a 1024-thread block
constexpr uint32_t kMaxClusterBlocks = kMaxCapacity / kBlockCapacity;
constexpr uint32_t kIpt = 4;                // merged nodes per thread of a tile
constexpr uint32_t kStreamLeafRing = 8192;  // = 2 tiles of 1024 x 4
constexpr uint32_t kStreamNodeRing = 16384;
constexpr uint32_t kGroupSlot = kSlots;     // per-block totals: [1..24] lengths, [25] present groups,
constexpr uint32_t kAlphaSlot = kSlots + 1;  // [26] 1 + the last symbol with a code
constexpr uint32_t kWc2Stride = 33;         // words a row of the post stage's per-length counts (32 + 1: no bank conflicts in its scans)

struct Plan {
  uint32_t m, error, ncand;
  uint32_t valid[kCandidates];
  uint32_t bound[kCandidates][kSlots];  // codes of length <= l under each candidate
};

// Temporary storage of the cluster kernel (global memory).
struct Temp {
  uint64_t* keys;    // sorted counts, descending
  uint16_t* ranked;  // symbol of each rank
  uint64_t* inner;   // node weights
  uint16_t* parent;  // parent per node
  uint16_t* rank_of; // rank of each symbol (the sort's inverse)
};

constexpr std::size_t align16(std::size_t v) { return (v + 15) / 16 * 16; }
constexpr std::size_t max_sz(std::size_t a, std::size_t b) { return a > b ? a : b; }

// Dynamic shared memory of a block (offsets in bytes). The sort's keys and
// symbols stay put in the resident layout (the leaves and the post stage
// read them); everything else is a union over the stages.
template <int NT, int ITEMS, bool kCluster>
struct Smem {
  static constexpr uint32_t S = NT * ITEMS, NW = NT / 32, T = NT * kIpt;
  static constexpr uint32_t LR = kCluster ? kStreamLeafRing : S, R = kCluster ? kStreamNodeRing : S;
  // the sort
  static constexpr std::size_t keys = 0, vals = 8 * S, wcnt = align16(vals + 2 * S), tot = wcnt + 4 * 256 * NW,
                               off = tot + 4 * 256, wsum = off + 4 * 256, stage_k = align16(wsum + 4 * 32),
                               stage_v = stage_k + 8 * S, loff = stage_v + 2 * S, lsum = loff + 4 * 256,
                               sort_end = kCluster ? lsum + 4 * 32 : stage_k;
  static constexpr std::size_t base = kCluster ? 0 : wcnt;
  // generate_cl: resident (leaves = keys) or streaming
  static constexpr std::size_t leaf = base, node = kCluster ? leaf + 8 * LR : base, bx = node + 8 * R,
                               parent = bx + (kCluster ? 8 * T : 0), kids = parent + (kCluster ? 0 : 2 * S),
                               depth = kids + (kCluster ? 0 : S), cl_end = depth + (kCluster ? 0 : S);
  // streaming: the depths' bounds (parents), and block 0's ranks copied back
  // from global memory for the post stage meanwhile (both alias the rings)
  static constexpr std::size_t parent_sh = 0, rank_keys = parent_sh + 2 * kMaxCapacity, rank_syms = rank_keys + 8 * S,
                               depth_end = kCluster ? rank_syms + 2 * S : 0;
  // the post stage
  // fields: blocks of 8,192 symbols stage their serialized length fields (at
  // most S fields of 5 bits, from a word boundary: S * 5 / 32 + 2 words);
  // smaller blocks OR them into global memory (codebook_kernel.cuh, stage 5)
  static constexpr bool staged_fields = S >= 8192;
  static constexpr std::size_t lens = base, wc2 = align16(lens + S), gf = wc2 + 4 * kWc2Stride * NW * ITEMS,
                               fields = align16(gf + 4 * 2 * NW * ITEMS),
                               fields_words = staged_fields ? S * 5 / 32 + 2 : 0,
                               post_end = fields + 4 * fields_words;
  // cluster, stages 4 and 5: this block's symbols' ranks (tmp.rank_of, copied
  // by cp.async while stage 4 runs), where the sort's counters were: above
  // the post stage's arrays, below block 0's ranks copied back
  static constexpr std::size_t rank_sh = wcnt;
  static constexpr std::size_t total =
      max_sz(max_sz(sort_end, cl_end), max_sz(depth_end, post_end));
  static_assert(!kCluster || (post_end <= rank_sh && rank_sh + 2 * S <= rank_keys && rank_sh % 16 == 0),
                "the ranks' copy overlaps a live array");
  static_assert(kCluster || R * 4 >= S * 3, "resident node ring too small");
  static_assert(!kCluster || LR >= 2 * T, "leaf ring too small");
};

// Blocks whose shared memory a loop over the peers reads (unrolled, guarded).
template <bool kCluster>
constexpr uint32_t kPeerSlots = kCluster ? kMaxClusterBlocks : 1;

// The blocks that share the work: a cluster, or one block on its own.
template <bool kCluster>
struct Peers {
  uint32_t rank = 0, count = 1;
  template <class T>
  __device__ __forceinline__ T* at(T* p, uint32_t b) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (kCluster) return cg::this_cluster().map_shared_rank(p, static_cast<int>(b));
#endif
    return p;
  }
  __device__ __forceinline__ void sync() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (kCluster) {
      cg::this_cluster().sync();
      return;
    }
#endif
    __syncthreads();
  }
};

// The lanes whose v equals this lane's (v < 2^kBits), as __match_any_sync
// gives it, by one ballot a bit: a fixed ~3 instructions a bit, where
// MATCH.ANY's cost grows with the distinct values in the warp (the sort's
// rank of 8-bit digits took ~15 k cycles a pass on diverse counts with it,
// ~7.5 k with ballots; uniform warps, the absent symbols of sparse
// histograms, take the sort's one-vote path instead:
// bench/results/2026-11-26-h100-session11-*-codebook.log).
template <int kBits>
__device__ __forceinline__ uint32_t match_low_bits(uint32_t v) {
  uint32_t m = kFull;
#pragma unroll
  for (int b = 0; b < kBits; ++b) {
    const bool set = (v >> b) & 1u;
    const uint32_t bal = __ballot_sync(kFull, set);
    m &= set ? bal : ~bal;
  }
  return m;
}

__device__ __forceinline__ uint64_t warp_sum64(uint64_t v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}

__device__ __forceinline__ uint64_t warp_max64(uint64_t v) {
  for (int o = 16; o > 0; o >>= 1) {
    const uint64_t w = __shfl_xor_sync(kFull, v, o);
    v = w > v ? w : v;
  }
  return v;
}

__device__ __forceinline__ uint32_t warp_incl_scan(uint32_t v, uint32_t lane) {
  for (uint32_t o = 1; o < 32; o <<= 1) {
    const uint32_t n = __shfl_up_sync(kFull, v, o);
    if (lane >= o) v += n;
  }
  return v;
}

constexpr int kStampSlots = 16;

// Diagnostics (codebook_gpu.hpp): %globaltimer and clock64 of block 0's thread 0.
__device__ __forceinline__ void stamp(uint64_t* st, int i) {
  if (st != nullptr && threadIdx.x == 0 && blockIdx.x == 0) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    st[i] = t;
    st[kStampSlots + i] = static_cast<uint64_t>(clock64());
  }
}

// Diagnostics: clock64 of block 0's thread 0 in d_stamps[slot] (the sort's
// first pass: slots 40..48, codebook_gpu.hpp).
__device__ __forceinline__ void stamp_cycles(uint64_t* st, int slot) {
  if (st != nullptr && threadIdx.x == 0 && blockIdx.x == 0) st[slot] = static_cast<uint64_t>(clock64());
}

}  // namespace

}  // namespace vlec::cuda
