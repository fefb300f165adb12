// cuda/codebook_sort_wide.cuh: the cluster's radix sort of packed keys
// (count << 16 | symbol, counts below 2^48) by digits of up to 10 bits, for
// stage 2 of the GPU codebook kernel (codebook_kernel.cuh).
//
// Why: a pass of the 8-bit sort (codebook_sort.cuh) costs a 65,536-symbol
// cluster ~24 k cycles, nearly all of it in steps whose cost does not depend
// on the digit's width (the keys' loads, the barriers, the cluster-wide
// scatter). Uniformly random counts below 2^20 take three 8-bit passes and
// two of 10 bits; counts of 25-30 bits four and three. The digit width is
// b / ceil(b / 10) for counts of b bits, and the kernel takes this sort only
// where it saves a pass.
//
// The 1,024 digits' per-warp counters would not fit beside the staged keys
// as 32-bit words (128 KiB); as 16-bit ones (a warp ranks at most 256 keys,
// a block's offsets stay below S = 8,192) they take 64 KiB, and they live
// where the staged keys go: every thread reads its keys' offsets into
// registers before the block barrier that precedes the staging. The digit
// totals and offsets (1,024 words each) take the 8-bit sort's counters' place.
// Included by codebook_gpu.cu alone, hence the unnamed namespace.
#pragma once

#include <cstdint>

#include "cuda/codebook_layout.cuh"
#include "cuda/warp_index.cuh"

namespace vlec::cuda {

namespace {

constexpr uint32_t kWideDigitBits = 10;
constexpr uint32_t kWideDigits = 1u << kWideDigitBits;

// Passes and digit width of the wide sort for counts of `bits` bits; passes
// == 0 where it would not save a pass over 8-bit digits.
struct WideDigits {
  uint32_t passes, width;
};
__host__ __device__ constexpr WideDigits wide_digits_for(uint32_t bits) {
  const uint32_t wide = (bits + kWideDigitBits - 1) / kWideDigitBits, narrow = (bits + 7) / 8;
  return wide < narrow ? WideDigits{wide, (bits + wide - 1) / wide} : WideDigits{0, 0};
}

// The shared memory the wide sort uses, within the cluster kernel's sort
// region (Smem<NT, ITEMS, true>).
template <class L>
struct WideSortSmem {
  static constexpr std::size_t counters = L::stage_k,  // u16 [NW][kWideDigits], until the staging
      tot = L::wcnt, off = tot + 4 * kWideDigits, loff = off + 4 * kWideDigits, sums = loff + 4 * kWideDigits,
                               end = sums + 4 * 64;
  static_assert(2 * kWideDigits * L::NW <= 8 * L::S, "the counters fit where the staged keys go");
  static_assert(end <= L::stage_k, "the totals and offsets fit below the staged keys");
};

// Stable LSD radix sort of the cluster's keys, S a block (warp w holds
// positions [w*32*ITEMS, (w+1)*32*ITEMS), item j of lane l position
// w*32*ITEMS + j*32 + l), by count descending, `width` bits a pass from bit
// 16 up. The steps of a pass are those of radix_sort_desc's staged cluster
// pass: rank within the warp (match_low_bits), per digit across the warps
// and the cluster's blocks, the block's keys staged in final order, then
// scattered to their blocks in runs.
template <int NT, int ITEMS>
__device__ void radix_sort_desc_wide(uint64_t* keys, unsigned char* smem, uint32_t width, uint32_t passes,
                                     const Peers<true>& peers, uint64_t* prof) {
  using W = WideSortSmem<Smem<NT, ITEMS, true>>;
  constexpr uint32_t S = NT * ITEMS, NW = NT / 32, D = kWideDigits;
  static_assert(NT == D && NW == 32, "one thread a digit, a lane a warp");
  static_assert(S < 65536, "a block's count of a digit fits in 16 bits");
  static_assert(ITEMS <= 8, "a rank within the warp fits in 8 bits, a warp's count in 16");
  uint16_t* const counters = reinterpret_cast<uint16_t*>(smem + W::counters);
  uint32_t* const tot = reinterpret_cast<uint32_t*>(smem + W::tot);
  uint32_t* const off = reinterpret_cast<uint32_t*>(smem + W::off);
  uint32_t* const loff = reinterpret_cast<uint32_t*>(smem + W::loff);
  uint32_t* const sums = reinterpret_cast<uint32_t*>(smem + W::sums);
  uint64_t* const stage_k = reinterpret_cast<uint64_t*>(smem + W::counters);
  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = uniform_warp_index(), lt = (1u << lane) - 1;
  const uint32_t mask = (1u << width) - 1;
  uint16_t* const wc = counters + warp * D;
  for (uint32_t pass = 0; pass < passes; ++pass) {
    uint64_t* pp = pass == 0 ? prof : nullptr;  // the first pass's steps (stamp slots 40..48)
    stamp_cycles(pp, 40);
    const uint32_t shift = 16 + width * pass;
    uint64_t k[ITEMS];
    uint32_t vd[ITEMS];  // digit | (the key's place among its block's keys of that digit) << 16
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      k[j] = keys[warp * 32 * ITEMS + j * 32 + lane];
      vd[j] = mask - static_cast<uint32_t>((k[j] >> shift) & mask);
    }
    uint4* const wz = reinterpret_cast<uint4*>(wc);
#pragma unroll
    for (uint32_t e = lane; e < D / 8; e += 32) wz[e] = make_uint4(0, 0, 0, 0);
    __syncwarp();
    stamp_cycles(pp, 41);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {  // rank within the warp, as radix_sort_desc
      const uint32_t dg = vd[j], c0 = wc[dg];
      uint32_t same = kFull;
      if (!__all_sync(kFull, dg == __shfl_sync(kFull, dg, 0))) same = match_low_bits<kWideDigitBits>(dg);
      vd[j] |= (c0 + __popc(same & lt)) << 16;
      __syncwarp();
      if ((same & lt) == 0) wc[dg] = static_cast<uint16_t>(c0 + __popc(same));
      __syncwarp();
    }
    stamp_cycles(pp, 42);
    __syncthreads();
    stamp_cycles(pp, 43);
    if (tid < D / 2) {  // digits 2 tid and 2 tid + 1 (two 16-bit sums a word, which never carry: a block has
                        // S <= 65,535 keys): the keys in the warps before (exclusive), and in the block
      uint32_t* const pairs = reinterpret_cast<uint32_t*>(counters);
      uint32_t acc = 0;
#pragma unroll 8
      for (uint32_t w = 0; w < NW; ++w) {
        const uint32_t x = pairs[w * (D / 2) + tid];
        pairs[w * (D / 2) + tid] = acc;
        acc += x;
      }
      tot[2 * tid] = acc & 0xFFFFu;
      tot[2 * tid + 1] = acc >> 16;
    }
    stamp_cycles(pp, 44);
    peers.sync();
    stamp_cycles(pp, 45);  // every block's totals are out
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {  // the counters are read here, before the staging overwrites them
      const uint32_t dg = vd[j] & 0xFFFFu;
      vd[j] = dg | (wc[dg] + (vd[j] >> 16)) << 16;
    }
    uint32_t all = 0, below = 0;
    {
      uint32_t x[kMaxClusterBlocks];
#pragma unroll
      for (uint32_t b = 0; b < kMaxClusterBlocks; ++b) x[b] = b < peers.count ? peers.at(tot, b)[tid] : 0;
#pragma unroll
      for (uint32_t b = 0; b < kMaxClusterBlocks; ++b) {
        all += x[b];
        below += b < peers.rank ? x[b] : 0;
      }
    }
    // Two scans over the digits at once: cluster-wide (the digit's first
    // slot for this block) and within the block (where its keys are staged).
    const uint32_t mine = tot[tid], incl = warp_incl_scan(all, lane), lincl = warp_incl_scan(mine, lane);
    if (lane == 31) sums[warp] = incl, sums[32 + warp] = lincl;
    __syncthreads();
    uint32_t before = 0, lbefore = 0;
    for (uint32_t w = 0; w < warp; ++w) before += sums[w], lbefore += sums[32 + w];
    off[tid] = before + incl - all + below;
    loff[tid] = lbefore + lincl - mine;
    stamp_cycles(pp, 46);
    __syncthreads();  // every counter read, every offset written
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const uint32_t dg = vd[j] & 0xFFFFu;
      stage_k[loff[dg] + (vd[j] >> 16)] = k[j];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const uint32_t i = j * NT + tid;
      const uint64_t kk = stage_k[i];
      const uint32_t dg = mask - static_cast<uint32_t>((kk >> shift) & mask), pos = off[dg] + (i - loff[dg]);
      peers.at(keys, pos / S)[pos % S] = kk;
    }
    stamp_cycles(pp, 47);
    peers.sync();
    stamp_cycles(pp, 48);
  }
}

}  // namespace

}  // namespace vlec::cuda
