// cuda/codebook_sort.cuh: stage 2 of the GPU codebook kernel: the stable
// 8-bit LSD radix sort by (count desc, symbol asc) in shared memory, ranked
// per warp by one ballot a digit bit (match_low_bits), across the warps per
// digit, and across a cluster's blocks by their digit totals; in a cluster
// each block stages its keys in final order first, so that the scatter
// through distributed shared memory writes runs of consecutive slots, and
// counts below 2^48 travel packed with their symbols, one store a key (design
// and timings in codebook_gpu.cu). Included by codebook_gpu.cu alone, hence
// the unnamed namespace.
#pragma once

#include <cstdint>

#include "cuda/codebook_layout.cuh"
#include "cuda/warp_tree.hpp"
#include "cuda/warp_index.cuh"

namespace vlec::cuda {

namespace {

// Stable LSD radix sort of the blocks' S keys each (warp w holds positions
// [w*32*ITEMS, (w+1)*32*ITEMS), item j of lane l position w*32*ITEMS + j*32 + l),
// by count descending, 8 bits a pass. A pass ranks each key within its warp
// (match_low_bits, j-major, lane order), within the block (a scan over the
// warps per digit) and within the cluster (the digit totals of every block),
// and scatters it to its block and slot. `packed`: each key is count << 16 |
// symbol (counts below 2^48), the digits taken above the symbol, and vals is
// neither read nor written.
template <int NT, int ITEMS, bool kCluster>
__device__ void radix_sort_desc(uint64_t* keys, uint16_t* vals, uint32_t* wcnt, uint32_t* tot, uint32_t* off,
                                uint32_t* wsum, uint64_t* stage_k, uint16_t* stage_v, uint32_t* loff, uint32_t* lsum,
                                uint32_t passes, const Peers<kCluster>& peers, bool staged, bool packed,
                                uint64_t* prof) {
  constexpr uint32_t S = NT * ITEMS, NW = NT / 32;
  static_assert(NT >= 256, "one thread per digit");
  static_assert(ITEMS <= 8, "a rank within the warp fits in 8 bits");
  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = uniform_warp_index(), lt = (1u << lane) - 1;
  uint32_t* wc = wcnt + warp * 256;
  for (uint32_t pass = 0; pass < passes; ++pass) {
    uint64_t* pp = pass == 0 ? prof : nullptr;  // the first pass's steps (stamp slots 40..48)
    stamp_cycles(pp, 40);
    const uint32_t shift = 8 * pass + (packed ? 16 : 0);
    uint64_t k[ITEMS];
    uint32_t vd[ITEMS];  // symbol | digit << 16 | rank in the warp << 24
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const uint32_t i = warp * 32 * ITEMS + j * 32 + lane;
      k[j] = keys[i];
      vd[j] = (packed ? 0u : vals[i]) | (255u - static_cast<uint32_t>((k[j] >> shift) & 255u)) << 16;
    }
#pragma unroll
    for (uint32_t e = 0; e < 256; e += 32) wc[e + lane] = 0;
    __syncwarp();
    stamp_cycles(pp, 41);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      // One digit in the whole warp (absent symbols' zero counts: most of a
      // sparse histogram) is one shuffle and one vote; else a ballot a bit.
      const uint32_t dg = (vd[j] >> 16) & 255u, c0 = wc[dg];
      uint32_t same = kFull;
      if (!__all_sync(kFull, dg == __shfl_sync(kFull, dg, 0))) same = match_low_bits<8>(dg);
      vd[j] |= (c0 + __popc(same & lt)) << 24;
      __syncwarp();
      if ((same & lt) == 0) wc[dg] = c0 + __popc(same);
      __syncwarp();
    }
    stamp_cycles(pp, 42);
    __syncthreads();
    stamp_cycles(pp, 43);
    if (tid < 256) {  // per digit: keys in the warps before, and in the block
      uint32_t acc = 0;
#pragma unroll 8
      for (uint32_t w = 0; w < NW; ++w) {
        const uint32_t x = wcnt[w * 256 + tid];
        wcnt[w * 256 + tid] = acc;
        acc += x;
      }
      tot[tid] = acc;
    }
    stamp_cycles(pp, 44);
    peers.sync();
    stamp_cycles(pp, 45);  // every block's totals are out, and every key is in registers
    uint32_t all = 0, below = 0, incl = 0;
    if (tid < 256) {
      uint32_t x[kPeerSlots<kCluster>];
#pragma unroll
      for (uint32_t b = 0; b < kPeerSlots<kCluster>; ++b) x[b] = b < peers.count ? peers.at(tot, b)[tid] : 0;
#pragma unroll
      for (uint32_t b = 0; b < kPeerSlots<kCluster>; ++b) {
        all += x[b];
        below += b < peers.rank ? x[b] : 0;
      }
      incl = warp_incl_scan(all, lane);
      if (lane == 31) wsum[warp] = incl;
    }
    __syncthreads();
    if (tid < 256) {
      uint32_t before = 0;
      for (uint32_t w = 0; w < warp; ++w) before += wsum[w];
      off[tid] = before + incl - all + below;  // the digit's first slot for this block, cluster-wide
    }
    stamp_cycles(pp, 46);
    auto scatter_from_registers = [&] {
      __syncthreads();
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const uint32_t dg = (vd[j] >> 16) & 255u, pos = off[dg] + wc[dg] + (vd[j] >> 24);
        const uint32_t dst = pos / S, slot = pos % S;
        peers.at(keys, dst)[slot] = k[j];
        if (!packed) peers.at(vals, dst)[slot] = static_cast<uint16_t>(vd[j]);
      }
    };
    if constexpr (kCluster) {
      if (staged) {
        // The block's keys in their final order first (shared memory), so that
        // the cluster-wide scatter writes runs of consecutive slots: loff[d] =
        // the block's keys of digits before d.
        uint32_t mine = 0, lincl = 0;
        if (tid < 256) {
          mine = tot[tid];
          lincl = warp_incl_scan(mine, lane);
          if (lane == 31) lsum[warp] = lincl;
        }
        __syncthreads();
        if (tid < 256) {
          uint32_t before = 0;
          for (uint32_t w = 0; w < warp; ++w) before += lsum[w];
          loff[tid] = before + lincl - mine;
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
          const uint32_t dg = (vd[j] >> 16) & 255u, lp = loff[dg] + wc[dg] + (vd[j] >> 24);
          stage_k[lp] = k[j];
          if (!packed) stage_v[lp] = static_cast<uint16_t>(vd[j]);
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
          const uint32_t i = j * NT + tid;
          const uint64_t kk = stage_k[i];
          const uint32_t dg = 255u - static_cast<uint32_t>((kk >> shift) & 255u), pos = off[dg] + (i - loff[dg]);
          peers.at(keys, pos / S)[pos % S] = kk;
          if (!packed) peers.at(vals, pos / S)[pos % S] = stage_v[i];
        }
      } else {
        scatter_from_registers();
      }
    } else {
      scatter_from_registers();
    }
    stamp_cycles(pp, 47);
    peers.sync();
    stamp_cycles(pp, 48);
  }
}

// Packed keys (count << 16 | symbol) back to counts in keys and symbols in
// vals, the block's NT * ITEMS in place; then a barrier.
template <int NT, int ITEMS>
__device__ __forceinline__ void unpack_keys(uint64_t* keys, uint16_t* vals) {
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const uint32_t i = j * NT + threadIdx.x;
    const uint64_t k = keys[i];
    keys[i] = k >> 16;
    vals[i] = static_cast<uint16_t>(k);
  }
  __syncthreads();
}

// A bitonic network over one 64-bit key a thread of the block's NT threads
// (NT a power of two), descending: thread t ends with the key of rank t.
// Strides below 32 are shuffles; larger ones go through `scratch` (NT
// words, two barriers a step). The caller syncs before it reuses scratch.
template <uint32_t NT>
__device__ __forceinline__ uint64_t bitonic_desc(uint64_t k, uint64_t* scratch) {
  static_assert((NT & (NT - 1)) == 0 && NT >= 32, "a power of two, whole warps");
  const uint32_t tid = threadIdx.x;
#pragma unroll
  for (uint32_t size = 2; size <= NT; size <<= 1) {
#pragma unroll
    for (uint32_t stride = size / 2; stride > 0; stride >>= 1) {
      uint64_t other;
      if (stride >= 32) {
        __syncthreads();  // every read of the step before is done
        scratch[tid] = k;
        __syncthreads();
        other = scratch[tid ^ stride];
      } else {
        other = __shfl_xor_sync(kFull, k, static_cast<int>(stride));
      }
      // Blocks of `size` alternate direction (the last one, all NT, descends);
      // the lower of a pair keeps the larger key in a descending block.
      const bool keep_max = ((tid & stride) == 0) == ((tid & size) == 0);
      k = keep_max ? (k > other ? k : other) : (k < other ? k : other);
    }
  }
  return k;
}

// The sort of an alphabet of up to 256 symbols (one key a thread, 256
// threads) whose counts lie below 2^56: the bitonic network over the packed
// key count << 8 | (255 - symbol), descending, so (count desc, symbol asc)
// with no ties. Why: the radix sort above takes a pass (~1.4 k cycles) per
// byte of the largest count, 7 passes at counts of 2^49; the network's 36
// compare-exchange steps are the same for every count, 30 of them within a
// warp by shuffles, 6 across warps through `keys` (two barriers each).
// Leaves the counts in keys[0..256) and the symbols in vals[0..256).
__device__ void bitonic_sort_desc_256(uint64_t* keys, uint16_t* vals) {
  const uint32_t tid = threadIdx.x;
  const uint64_t k = bitonic_desc<256>(keys[tid] << 8 | (255u - (vals[tid] & 255u)), keys);
  __syncthreads();
  keys[tid] = k >> 8;
  vals[tid] = static_cast<uint16_t>(255u - (k & 255u));
  __syncthreads();
}

// Few present symbols of a wide alphabet (a u16 pipeline's 65,536-symbol
// codebook over quantization codes: 1,024 bins, or the ~2,500 a 1 GiB of
// quant65536 uses), instead of the cluster's radix sort of every symbol,
// most of them absent (43 k cycles for quant1024's bins): each block sends
// its present symbols' keys, count << 16 | symbol with counts below 2^48, to
// block 0 in symbol order (a scan of the present flags), and stores the rank
// 0xFFFF for its absent ones; block 0 sorts the m <= S keys by (count desc,
// symbol asc): up to kWarpTreeMax by the bitonic network, more by its own
// radix sort (stable, so symbols ascend among equal counts), and stores each
// present symbol's rank, and the count and symbol of each rank (tmp.rank_of,
// tmp.keys, tmp.ranked). Block 0 ends with the counts descending in
// keys[0..m) and their symbols in vals[0..m), as after the cluster's sort.
// An absent symbol's rank is never ranked among the present: stage 4 reads
// ranks below m alone, and stage 5 gives a rank at or above m no length
// (len_of_rank_probes). `scratch`: ITEMS * NT / 32 words of shared memory,
// `sort`: block 0's radix sort (called by all its threads).
template <int NT, int ITEMS, bool kCluster, class Sort>
__device__ void gather_present_to_block0(uint64_t* keys, uint16_t* vals, uint64_t* pool_sh, uint32_t* scratch,
                                         uint32_t cap, uint32_t m, uint32_t before, const Temp& tmp,
                                         const Peers<kCluster>& peers, const Sort& sort) {
  static_assert(NT >= kWarpTreeMax, "one thread a present symbol in block 0's network");
  constexpr uint32_t S = NT * ITEMS, NW = NT / 32;
  static_assert(ITEMS * NW <= 32 * 8, "one warp scans the present flags' counts, 8 a lane");
  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid / 32, lt = (1u << lane) - 1, bS = peers.rank * S;
  uint32_t present[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {  // symbol bS + j * NT + tid: in symbol order j-major, then by warp
    present[j] = __ballot_sync(kFull, keys[j * NT + tid] != 0);  // (0 at and above cap)
    if (lane == 0) scratch[j * NW + warp] = __popc(present[j]);
  }
  __syncthreads();
  if (warp == 0) {  // exclusive scan of the ITEMS * NW counts, in symbol order
    uint32_t c[8], sum = 0;
#pragma unroll
    for (int e = 0; e < 8; ++e) c[e] = 8 * lane + e < ITEMS * NW ? scratch[8 * lane + e] : 0, sum += c[e];
    uint32_t at = warp_incl_scan(sum, lane) - sum;
#pragma unroll
    for (int e = 0; e < 8; ++e)
      if (8 * lane + e < ITEMS * NW) scratch[8 * lane + e] = at, at += c[e];
  }
  __syncthreads();
  uint64_t* pool = peers.at(pool_sh, 0);
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const uint32_t i = j * NT + tid, s = bS + i;
    if (present[j] >> lane & 1)
      pool[before + scratch[j * NW + warp] + __popc(present[j] & lt)] = keys[i] << 16 | s;
    else if (s < cap)
      tmp.rank_of[s] = 0xFFFFu;
  }
  peers.sync();
  if (peers.rank != 0) return;
  if (m <= kWarpTreeMax) {  // the network: key count << 16 | (65535 - symbol), no ties
    const uint64_t k0 = tid < m ? pool_sh[tid] ^ 0xFFFFu : 0;
    const uint64_t k = bitonic_desc<NT>(k0, keys) ^ 0xFFFFu;
    __syncthreads();
    keys[tid] = k >> 16;
    vals[tid] = static_cast<uint16_t>(k);
    __syncthreads();
  } else {  // in symbol order, so that the stable radix sort keeps symbols ascending among equal counts
    for (uint32_t i = tid; i < S; i += NT) keys[i] = i < m ? pool_sh[i] : 0;
    __syncthreads();
    sort();
    unpack_keys<NT, ITEMS>(keys, vals);
  }
  for (uint32_t r = tid; r < m; r += NT) {
    const uint16_t sym = vals[r];
    tmp.keys[r] = keys[r], tmp.ranked[r] = sym, tmp.rank_of[sym] = static_cast<uint16_t>(r);
  }
}

}  // namespace

}  // namespace vlec::cuda
