// cuda/codebook_kernel.cuh: the GPU codebook kernel, one launch per codebook
// (the design, and where the time goes, at the top of codebook_gpu.cu): the
// counts, the sort (codebook_sort.cuh), the tree (warp_tree.hpp or
// generate_cl_block.cuh), the candidates' limited counts (the plan), the
// choice, and the canonical codes written out serialized. Included by
// codebook_gpu.cu alone (one translation unit, no relocatable device code),
// hence the unnamed namespace.
//
// Kernel stages (codebook_kernel<NT, ITEMS, kCluster>; block b of the
// cluster owns symbols and ranks [bS, bS + S)):
//   1. counts into shared memory; cluster-wide largest count and present m
//      (and, in one block, whether the counts total below 2^32).
//   2. radix sort by (count desc, symbol asc): block b ends up holding ranks
//      [bS, bS + S) (keys and symbols). Up to 256 symbols: a bitonic
//      network; a cluster's at most S present symbols: gathered into block
//      0 and sorted there, up to 1,024 by the network (gather_present_to_block0).
//   3. the tree on block 0: warp_tree_block (m <= kWarpTreeMax, in a
//      cluster too: every present symbol is among block 0's ranks) or
//      generate_cl (generate_cl.hpp): resident layout (the leaves are the
//      sorted keys, reversed in place) for one block, streaming layout
//      (sorted keys through global memory, node weights and parents in
//      global memory, parents copied back for the depths' bounds) for a
//      cluster. Then bl_count, and the three candidates' limited counts
//      (codebook_plan.cuh). Meanwhile a cluster's other blocks invert the
//      sort (each symbol's rank, tmp.rank_of).
//   4. per rank: each candidate's length and coded bits; every block sums
//      every block's bits and picks the same candidate; one block scatters
//      the lengths to its symbols (a cluster's blocks copy their symbols'
//      ranks in by cp.async instead).
//   5. per symbol: lengths out (a cluster's from the symbol's rank); per
//      length, codes before each warp (a scan
//      over ITEMS x warps, then over the blocks before); canonical codes,
//      encode entries and the serialized fields (OR-ed in with atomics over a
//      zeroed stream); block 0 writes the header.
// Resources (ptxas, sm_90, CUDA 13): <256,1> 54 registers, <256,4> 64,
// <1024,8> 64 and 44 bytes of spills (12 before lens_of_ranks' pass); cluster <1024,8> 64 registers and 154
// bytes of spills (keys held across a sort pass's cluster barrier; 104
// before the gathered sorts, 130 before the wide-digit sort). Shared
// memory: 12.6 / 22 / 176 / 224 KiB dynamic + 2.1 KiB static (the cluster
// kernel's 224 KiB leave ~0.9 KiB of the 227 KiB a block may have).
#pragma once

#include <cooperative_groups.h>
#include <cstdint>

#include "cuda/codebook_gpu.hpp"
#include "cuda/codebook_layout.cuh"
#include "cuda/codebook_plan.cuh"
#include "cuda/codebook_sort.cuh"
#include "cuda/codebook_sort_wide.cuh"
#include "cuda/generate_cl.hpp"
#include "cuda/warp_index.cuh"
#include "cuda/warp_tree.hpp"

namespace vlec::cuda {

namespace {

// ---- the kernel ---------------------------------------------------------------

// The codebook of one histogram, by the calling block (or cluster): the
// body of codebook_kernel (one codebook a launch) and of
// codebook_batch_kernel (a block a codebook).
template <int NT, int ITEMS, bool kCluster>
__device__ __forceinline__ void codebook_body(const uint64_t* hist, uint32_t cap, uint32_t fixed_limit,
                                              const DeviceCodebookOut& out, const Temp& tmp, uint64_t* stamps,
                                              uint32_t staged_sort, uint32_t serial_all, uint32_t warp_tail,
                                              uint32_t run_after, uint32_t sort_network, uint32_t wide_digits) {
  using L = Smem<NT, ITEMS, kCluster>;
  constexpr uint32_t S = L::S, NW = L::NW;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ ClShared cls;
  __shared__ Plan plan;
  __shared__ unsigned long long s_max, s_total, s_bits[kCandidates];
  __shared__ uint32_t s_nz, s_m, s_x32, s_passes, s_wide, s_choice, s_maxlen, s_alpha, s_groups, s_n, s_before;
  __shared__ uint32_t s_next[kSlots], s_btot[32], s_base[32];
  uint64_t* keys = reinterpret_cast<uint64_t*>(smem + L::keys);
  uint16_t* vals = reinterpret_cast<uint16_t*>(smem + L::vals);
  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = uniform_warp_index(), lt = (1u << lane) - 1;
  Peers<kCluster> peers;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (kCluster) peers.rank = cg::this_cluster().block_rank(), peers.count = cg::this_cluster().num_blocks();
#else
  if constexpr (kCluster) __trap();  // clusters need sm_90
#endif
  const uint32_t bS = peers.rank * S;
  stamp(stamps, 0);

  // 1. Counts in symbol order; the largest count and the present symbols, cluster-wide.
  if (tid == 0) s_max = 0, s_nz = 0, s_alpha = 0, s_total = 0;
  for (uint32_t c = tid; c < kCandidates; c += NT) s_bits[c] = 0;
  uint64_t mx = 0, sum = 0;
  uint32_t nz = 0;  // present symbols, + those of 2^32 or more << 16 (a block's: below 2^14 each)
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const uint32_t i = j * NT + tid, sym = bS + i;
    const uint64_t c = sym < cap ? hist[sym] : 0;
    keys[i] = c;
    vals[i] = static_cast<uint16_t>(sym);
    mx = c > mx ? c : mx;
    nz += (c != 0) + ((c >> 32 != 0) << 16);
    sum = sat_add(sum, c);
  }
  __syncthreads();
  mx = warp_max64(mx);
  for (int o = 16; o > 0; o >>= 1) nz += __shfl_xor_sync(kFull, nz, o);
  if constexpr (!kCluster) add_warp_total(sum, lane, &s_total);  // is the total below 2^32 (warp_tree_block)?
  if (lane == 0) {
    if (mx) atomicMax(&s_max, static_cast<unsigned long long>(mx));
    if (nz) atomicAdd(&s_nz, nz);
  }
  peers.sync();
  if (tid == 0) {
    uint64_t all_max = 0;
    uint32_t all_nz = 0, all_big = 0, before = 0;
#pragma unroll
    for (uint32_t b = 0; b < kPeerSlots<kCluster>; ++b) {  // every block's loads in flight together
      const uint64_t x = b < peers.count ? *peers.at(&s_max, b) : 0;
      all_max = x > all_max ? x : all_max;
      const uint32_t z = b < peers.count ? *peers.at(&s_nz, b) : 0;
      all_nz += z & 0xFFFFu, all_big += z >> 16;
      before += b < peers.rank ? z & 0xFFFFu : 0u;
    }
    s_m = all_nz;
    s_before = before;
    s_x32 = all_nz - all_big;
    const uint32_t bits = 64 - __clzll(static_cast<long long>(all_max));
    const WideDigits wd = wide_digits_for(bits);
    s_passes = (bits + 7) / 8;
    s_wide = wd.passes | wd.width << 8;
  }
  __syncthreads();
  const uint32_t m = s_m;
  const bool error = fixed_limit != 0 && (uint64_t{1} << fixed_limit) < m;
  stamp(stamps, 1);

  // 2. Sort: block b holds ranks [bS, bS + S). Counts below 2^48 travel with
  // their symbols in one word (count << 16 | symbol): one store a key in the
  // cluster's scatter, not two.
  // Up to 256 symbols whose counts lie below 2^56: the bitonic network
  // (codebook_sort.cuh) instead, the same order.
  // A cluster's few present symbols (at most one block's S, counts below
  // 2^48): gathered into block 0 and sorted there (gather_present_to_block0),
  // the absent ones left unsorted.
  constexpr bool kNetwork = NT == 256 && ITEMS == 1 && !kCluster;
  const bool network = kNetwork && sort_network != 0 && s_passes <= 7;
  const bool gathered = kCluster && sort_network != 0 && m <= S && s_passes <= 6;
  const bool packed_keys = !network && !gathered && s_passes <= 6;
  if (network) bitonic_sort_desc_256(keys, vals);
  if constexpr (kCluster) {
    if (gathered) {
      const auto block0_sort = [&] {  // block 0's own radix sort of its S keys (packed)
        radix_sort_desc<NT, ITEMS, false>(keys, vals, reinterpret_cast<uint32_t*>(smem + L::wcnt),
                                          reinterpret_cast<uint32_t*>(smem + L::tot),
                                          reinterpret_cast<uint32_t*>(smem + L::off),
                                          reinterpret_cast<uint32_t*>(smem + L::wsum), nullptr, nullptr, nullptr,
                                          nullptr, s_passes, Peers<false>{}, false, true, nullptr);
      };
      gather_present_to_block0<NT, ITEMS>(keys, vals, reinterpret_cast<uint64_t*>(smem + L::stage_k),
                                          reinterpret_cast<uint32_t*>(smem + L::tot), cap, m, s_before, tmp, peers,
                                          block0_sort);
    }
  }
  if (packed_keys) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const uint32_t i = j * NT + tid;
      keys[i] = keys[i] << 16 | vals[i];
    }
    __syncthreads();
  }
  // 10-bit digits where they save a pass (codebook_sort_wide.cuh).
  const bool wide = kCluster && packed_keys && wide_digits != 0 && (s_wide & 255u) != 0;
  if (stamps != nullptr && tid == 0 && peers.rank == 0) stamps[56] = wide ? s_wide : s_passes << 16;
  if constexpr (kCluster) {
    if (wide) radix_sort_desc_wide<NT, ITEMS>(keys, smem, s_wide >> 8, s_wide & 255u, peers, stamps);
  }
  if (!network && !gathered && !wide)
    radix_sort_desc<NT, ITEMS, kCluster>(keys, vals, reinterpret_cast<uint32_t*>(smem + L::wcnt),
                                       reinterpret_cast<uint32_t*>(smem + L::tot),
                                       reinterpret_cast<uint32_t*>(smem + L::off),
                                       reinterpret_cast<uint32_t*>(smem + L::wsum),
                                       reinterpret_cast<uint64_t*>(smem + L::stage_k),
                                       reinterpret_cast<uint16_t*>(smem + L::stage_v),
                                       reinterpret_cast<uint32_t*>(smem + L::loff),
                                       reinterpret_cast<uint32_t*>(smem + L::lsum), s_passes, peers,
                                       staged_sort != 0, packed_keys, stamps);
  if (packed_keys) unpack_keys<NT, ITEMS>(keys, vals);  // each block its own ranks (after a cluster barrier)
  stamp(stamps, 2);

  // 3. The tree (block 0) and the plan.
  ClArgs g{};
  g.warp_tail = warp_tail;
  g.run_after = run_after;
  g.m = m;
  g.x32 = s_x32;
  g.prof = stamps != nullptr && peers.rank == 0 ? stamps + 32 : nullptr;  // stamp slots 32..37
  if constexpr (kCluster) {
    if (!gathered) {  // (gathered: block 0 stored its present ranks, no other block has one)
      for (uint32_t i = tid; i < S; i += NT)
        if (bS + i < cap) tmp.keys[bS + i] = keys[i], tmp.ranked[bS + i] = vals[i];
      peers.sync();
    }
    g.keys_desc = tmp.keys;
    g.leaf = reinterpret_cast<uint64_t*>(smem + L::leaf);
    g.node = reinterpret_cast<uint64_t*>(smem + L::node);
    g.bx = reinterpret_cast<uint64_t*>(smem + L::bx);
    g.inner_w = tmp.inner;
    g.parent = tmp.parent;
    g.parent_sh = reinterpret_cast<uint16_t*>(smem + L::parent_sh);
  } else {
    resident_tree_args<NT, L>(g, keys, m, smem);
  }
  stamp(stamps, 3);
  // Block 0's own ranks (keys and symbols) for stage 4: the tree overwrites
  // the sort's copy, so they come back from global memory into free shared
  // memory while warp 0 finds the depths' bounds (other blocks keep theirs).
  uint64_t* rank_keys = reinterpret_cast<uint64_t*>(smem + L::rank_keys);
  uint16_t* rank_syms = reinterpret_cast<uint16_t*>(smem + L::rank_syms);
  const auto copy_ranks = [&](uint32_t t) {
    for (uint32_t i = t; i < S / 2; i += NT)
      __pipeline_memcpy_async(reinterpret_cast<uint4*>(rank_keys) + i, reinterpret_cast<const uint4*>(tmp.keys) + i,
                              16);
    for (uint32_t i = t; i < S / 8; i += NT)
      __pipeline_memcpy_async(reinterpret_cast<uint4*>(rank_syms) + i, reinterpret_cast<const uint4*>(tmp.ranked) + i,
                              16);
  };
  bool ranks_copied = false;  // block-uniform
  if (peers.rank == 0) {
    if (!error) {
      if constexpr (kCluster) {
        if (m <= kWarpTreeMax) {
          // Few present symbols of a wide alphabet (a u16 pipeline's 65,536-symbol
          // codebook over 1,024 quantization bins): all of them are among block
          // 0's ranks, so the one-warp tree of the resident kernels builds the
          // tree (warp_tree.hpp: 93.6 k -> ~50 k cycles for quant1024's bins),
          // on the leaves reversed in place, its node ring and arrays in the
          // streaming rings' space. Stage 4 then reads block 0's ranks from
          // global memory (ranks_copied stays false).
          uint64_t sum = 0;
          for (uint32_t i = tid; i < m; i += NT) sum = sat_add(sum, keys[i]);
          add_warp_total(sum, lane, &s_total);
          __syncthreads();  // every key read before the reversal moves it (racecheck found the race)
          reverse_keys<NT>(keys, m);
          __syncthreads();
          static_assert(L::R >= kWarpTreeMax && 8 * L::T >= 4 * kWarpTreeMax, "the one-warp tree's arrays fit");
          g.leaf = keys;
          g.node = reinterpret_cast<uint64_t*>(smem + L::node);
          g.parent = reinterpret_cast<uint16_t*>(smem + L::bx);
          g.leafkids = smem + L::bx + 2 * kWarpTreeMax;
          g.depth = smem + L::bx + 3 * kWarpTreeMax;
          warp_tree_block<NT>(g, kWarpTreeMax - 1, s_total < (uint64_t{1} << 32), serial_all, cls);
        } else if (gathered) {
          // At most S present symbols, all of them block 0's ranks (sorted in
          // shared memory): the resident layout of the one-block kernel, whose
          // arrays fit the cluster kernel's shared memory (its rings are not
          // needed); stage 4 reads block 0's ranks from global memory.
          using LR = Smem<NT, ITEMS, false>;
          static_assert(LR::total <= L::total && LR::keys == L::keys && LR::vals == L::vals,
                        "the resident layout fits the cluster kernel's");
          resident_tree_args<NT, LR>(g, keys, m, smem);
          generate_cl_block<NT, kIpt, LR::LR, LR::R, false>(g, cls);
        } else {
          generate_cl_block<NT, kIpt, L::LR, L::R, kCluster>(g, cls, copy_ranks);
          ranks_copied = m > 1;  // generate_cl_block ran its tiles
        }
      } else if (m <= kWarpTreeMax) {
        warp_tree_block<NT>(g, L::R - 1, s_total < (uint64_t{1} << 32), serial_all, cls);
      } else if constexpr (S > kWarpTreeMax) {
        generate_cl_block<NT, kIpt, L::LR, L::R, kCluster>(g, cls);
      }
    }
    stamp(stamps, 4);
    plan_candidates(m, fixed_limit, error, cls, plan);
  } else if constexpr (kCluster) {
    // While block 0 builds the tree, the other blocks invert the sort: each
    // symbol's rank, by symbol (tmp.rank_of; their own ranks from shared
    // memory, block 0's shared among them from global memory). Stage 5 then
    // finds a symbol's length from its rank where the cluster scattered
    // every length to its symbol's block (~12 k cycles at 65,536 random
    // counts) and waited for it. (Gathered, the ranks are stored already.)
    if (!gathered) {
      for (uint32_t i = tid; i < S; i += NT)
        if (bS + i < cap) tmp.rank_of[vals[i]] = static_cast<uint16_t>(bS + i);
      for (uint32_t i = (peers.rank - 1) * NT + tid; i < S && i < cap; i += (peers.count - 1) * NT)
        tmp.rank_of[tmp.ranked[i]] = static_cast<uint16_t>(i);
    }
  }
  if constexpr (kCluster) __pipeline_wait_prior(0);  // the ranks' copies (the barrier below publishes them)
  peers.sync();
  if (peers.rank != 0) {  // the plan, from block 0
    const uint32_t* src = reinterpret_cast<const uint32_t*>(peers.at(&plan, 0));
    uint32_t* dst = reinterpret_cast<uint32_t*>(&plan);
    for (uint32_t i = tid; i < sizeof(Plan) / 4; i += NT) dst[i] = src[i];
    __syncthreads();
  }
  stamp(stamps, 5);
  uint16_t* rank_sh = reinterpret_cast<uint16_t*>(smem + L::rank_sh);
  if constexpr (kCluster) {  // this block's symbols' ranks, for stage 5, loading while stage 4 works
    const uint32_t pieces = min_u32(S / 8, (cap - bS + 7) / 8);  // (2 * cap is rounded up to 256 bytes)
    for (uint32_t i = tid; i < pieces; i += NT)
      __pipeline_memcpy_async(reinterpret_cast<uint4*>(rank_sh) + i,
                              reinterpret_cast<const uint4*>(tmp.rank_of + bS) + i, 16);
    __pipeline_commit();
  }

  // 4. Per rank: every candidate's lengths and coded bits; the choice; lengths to their symbols' blocks.
  const uint32_t r0 = bS + tid * ITEMS;
  uint64_t key[ITEMS];
  uint32_t sym[ITEMS], packed[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const uint32_t r = r0 + j;
    if constexpr (kCluster) {
      if (peers.rank != 0 || ranks_copied) {  // this block's ranks in shared memory (r - bS = tid * ITEMS + j)
        key[j] = r < m ? (peers.rank ? keys : rank_keys)[tid * ITEMS + j] : 0;
        sym[j] = r < cap ? (peers.rank ? vals : rank_syms)[tid * ITEMS + j] : 0;
      } else {
        key[j] = r < m ? tmp.keys[r] : 0;
        sym[j] = r < cap ? tmp.ranked[r] : 0;
      }
    } else {
      key[j] = r < m ? keys[m - 1 - r] : 0;
      sym[j] = vals[r];
    }
    packed[j] = 0;
  }
  if (stamps != nullptr && tid == 0) {  // diagnostics: slot 50 once this thread's ranks have arrived
    asm volatile("" ::"l"(key[ITEMS - 1]), "r"(sym[ITEMS - 1]));
    stamp_cycles(stamps, 50);
  }
  uint64_t cbits[kCandidates];
  // Ranks at or above m have no length (bound[kMaxLen] = m): a thread whose
  // first rank is one skips the searches (most threads of a wide alphabet
  // with few present symbols).
  const bool has_ranks = r0 < m;
#pragma unroll
  for (uint32_t c = 0; c < kCandidates; ++c) {
    uint64_t bits = 0;
    if (plan.valid[c] && has_ranks) {
      uint32_t len[ITEMS];
      lens_of_ranks(plan.bound[c], r0, len);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) packed[j] |= len[j] << (5 * c), bits += key[j] * len[j];
    }
    cbits[c] = bits;
  }
  if (stamps != nullptr && tid == 0) {  // slot 51: lengths of every candidate
    asm volatile("" ::"l"(cbits[0]), "l"(cbits[kCandidates - 1]));
    stamp_cycles(stamps, 51);
  }
#pragma unroll
  for (uint32_t c = 0; c < kCandidates; ++c) {
    const uint64_t bits = warp_sum64(cbits[c]);
    if (lane == 0 && bits) atomicAdd(&s_bits[c], static_cast<unsigned long long>(bits));
  }
  stamp(stamps, 8);
  peers.sync();
  if (tid == 0) {
    uint64_t bits[kCandidates] = {};
#pragma unroll
    for (uint32_t b = 0; b < kPeerSlots<kCluster>; ++b)
      for (uint32_t c = 0; c < kCandidates; ++c) bits[c] += b < peers.count ? peers.at(s_bits, b)[c] : 0;
    const uint32_t c = choose_candidate(plan.ncand, plan.valid, bits);
    uint32_t cnt[kSlots], longest = 0;
    cnt[0] = 0;
    for (uint32_t l = 1; l < kSlots; ++l) {
      cnt[l] = plan.bound[c][l] - plan.bound[c][l - 1];
      if (cnt[l]) longest = l;
    }
    canonical_next(cnt, s_next);
    s_choice = c;
    s_maxlen = longest;
  }
  if constexpr (kCluster) __pipeline_wait_prior(0);  // the ranks (the barrier publishes them)
  __syncthreads();
  stamp(stamps, 9);
  uint8_t* lens = smem + L::lens;
  if constexpr (!kCluster) {  // (the cluster: from each symbol's rank, stage 5)
    const uint32_t shift = 5 * s_choice;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
      if (r0 + j < cap) lens[sym[j]] = static_cast<uint8_t>((packed[j] >> shift) & 31u);
    __syncthreads();
  }
  stamp(stamps, 6);

  // 5. Per symbol (tile j: symbols bS + j*NT + tid): lengths out, codes per
  // length and present groups before each warp, then the codes.
  uint32_t* wc2 = reinterpret_cast<uint32_t*>(smem + L::wc2);  // [ITEMS][NW][kWc2Stride]
  uint32_t* gf = reinterpret_cast<uint32_t*>(smem + L::gf);    // [ITEMS][2 * NW]
  uint32_t len[ITEMS], before[ITEMS], gmask = 0, amax = 0;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) wc2[(j * NW + warp) * kWc2Stride + lane] = 0;
  __syncwarp();
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const uint32_t i = j * NT + tid, s = bS + i;
    if constexpr (kCluster) {  // the chosen candidate's length of the symbol's rank (as stage 4 gave its rank)
      // (an absent symbol's rank, 0xFFFF where the present were gathered, is at or above m: no probes)
      const uint32_t rank = s < cap ? rank_sh[i] : ~0u;
      len[j] = rank < m && plan.valid[s_choice] ? len_of_rank_probes(plan.bound[s_choice], rank) : 0;
    } else {
      len[j] = s < cap ? lens[i] : 0;
    }
    if (s < cap) out.lengths[s] = static_cast<uint8_t>(len[j]);
    const uint32_t same = __match_any_sync(kFull, len[j]);  // few distinct lengths: MATCH.ANY is fast here
    before[j] = __popc(same & lt);
    if (before[j] == 0) wc2[(j * NW + warp) * kWc2Stride + len[j]] = __popc(same);
    const uint32_t nzm = __ballot_sync(kFull, len[j] != 0);
    if (lane == 0) {
      gf[j * 2 * NW + 2 * warp] = (nzm & 0xFFFFu) != 0;
      gf[j * 2 * NW + 2 * warp + 1] = (nzm >> 16) != 0;
    }
    if ((lane < 16 ? (nzm & 0xFFFFu) : (nzm >> 16)) != 0) gmask |= 1u << j;
    if (nzm) amax = max_u32(amax, s - lane + 32 - __clz(nzm));  // 1 + the warp's last symbol with a code
  }
  if (amax) atomicMax(&s_alpha, amax);
  __syncthreads();
  stamp(stamps, 10);
  // Exclusive scans in place: task l-1 (l = 1..24) over wc2[.][.][l], task 24
  // over gf; 32 consecutive elements a round (wc2's rows are kWc2Stride words
  // apart, so a round's loads fall in 32 different banks).
  for (uint32_t task = warp; task <= kMaxLen; task += NW) {
    const bool groups = task == kMaxLen;
    const uint32_t n = groups ? 2 * NW * ITEMS : NW * ITEMS;
    uint32_t* a = groups ? gf : wc2 + task + 1;
    const uint32_t stride = groups ? 1 : kWc2Stride;
    uint32_t carry = 0;
    for (uint32_t e0 = 0; e0 < n; e0 += 32) {
      const uint32_t e = e0 + lane, x = e < n ? a[e * stride] : 0, incl = warp_incl_scan(x, lane);
      if (e < n) a[e * stride] = carry + incl - x;
      carry += __shfl_sync(kFull, incl, 31);
    }
    if (lane == 31) s_btot[groups ? kGroupSlot : task + 1] = carry;
  }
  if (tid == 0) s_btot[0] = 0, s_btot[kAlphaSlot] = s_alpha;
  {  // zero this block's share of the serialized bytes (the ORs come after the barrier), and its staged fields
    uint32_t* words = reinterpret_cast<uint32_t*>(out.serialized);
    const uint32_t nwords = serialized_capacity(cap) / 4, per = (nwords + peers.count - 1) / peers.count;
    const uint32_t w0 = min_u32(peers.rank * per, nwords), w1 = min_u32(w0 + per, nwords);
    for (uint32_t w = w0 + tid; w < w1; w += NT) words[w] = 0;
    if constexpr (L::staged_fields) {
      uint32_t* staged = reinterpret_cast<uint32_t*>(smem + L::fields);
      for (uint32_t w = tid; w < L::fields_words; w += NT) staged[w] = 0;
    }
  }
  peers.sync();
  if (tid <= kAlphaSlot) {
    uint32_t below = 0, all = 0, top = 0;
#pragma unroll
    for (uint32_t b = 0; b < kPeerSlots<kCluster>; ++b) {
      const uint32_t x = b < peers.count ? peers.at(s_btot, b)[tid] : 0;
      below += b < peers.rank ? x : 0;
      all += x;
      top = max_u32(top, x);
    }
    s_base[tid] = below;
    if (tid == kGroupSlot) s_groups = all;
    if (tid == kAlphaSlot) s_n = top;
  }
  __syncthreads();
  stamp(stamps, 11);
  const uint32_t n = s_n, fbits = field_bits(s_maxlen), groups = group_count(n);
  uint32_t* stream = reinterpret_cast<uint32_t*>(out.serialized) + 2;
  // The block's length fields are one run of bits (its present groups'),
  // staged in shared memory from the word holding its first bit: shared
  // atomics, then each word stored once (the two end words, which a
  // neighbour's fields or the presence flags may share, OR-ed in). At 65,536
  // symbols the codes' writes 10.4 k -> 6.0 k cycles; blocks of 256 symbols
  // OR into global memory directly (the barrier and the store loop cost them
  // more than their atomics: 687 -> 910 cycles).
  constexpr bool kStaged = L::staged_fields;
  uint32_t* staged = kStaged ? reinterpret_cast<uint32_t*>(smem + L::fields) : stream;
  const uint64_t bit0 = field_bit(groups, s_base[kGroupSlot], 0, fbits);
  const uint32_t w_first = kStaged ? static_cast<uint32_t>(bit0 >> 5) : 0;
  const uint32_t staged_words =
      static_cast<uint32_t>(((bit0 & 31) + uint64_t{s_btot[kGroupSlot]} * 16 * fbits + 31) / 32);
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const uint32_t s = bS + j * NT + tid, l = len[j];
    if (s >= cap) continue;
    uint32_t entry = 0;
    if (l) {
      const uint32_t code = s_next[l] + s_base[l] + wc2[(j * NW + warp) * kWc2Stride + l] + before[j];
      entry = (l << 24) | reverse_bits(code, l);
      const uint32_t present_before = s_base[kGroupSlot] + gf[j * 2 * NW + 2 * warp + (lane >> 4)];
      or_bits(staged, static_cast<uint32_t>(field_bit(groups, present_before, s, fbits) - 32 * uint64_t{w_first}), l,
              fbits);
    }
    out.encode_entry[s] = entry;
    if ((lane & 15) == 0 && (gmask >> j & 1)) atomicOr(&stream[s >> 9], 1u << ((s >> 4) & 31));
  }
  if constexpr (kStaged) {
    __syncthreads();
    for (uint32_t w = tid; w < staged_words; w += NT) {
      const uint32_t v = staged[w];
      if (w == 0 || w + 1 == staged_words) {
        if (v) atomicOr(&stream[w_first + w], v);
      } else {
        stream[w_first + w] = v;
      }
    }
  }
  if (peers.rank == 0 && tid == 0) write_header(out, error, n, s_maxlen, s_groups, m);
  stamp(stamps, 7);
  if constexpr (kCluster) peers.sync();  // no block leaves while another may read its shared memory
}

template <int NT, int ITEMS, bool kCluster>
__global__ void __launch_bounds__(NT, 1)
    codebook_kernel(const uint64_t* hist, uint32_t cap, uint32_t fixed_limit, DeviceCodebookOut out, Temp tmp,
                    uint64_t* stamps, uint32_t staged_sort, uint32_t serial_all, uint32_t warp_tail,
                    uint32_t run_after, uint32_t sort_network, uint32_t wide_digits) {
  codebook_body<NT, ITEMS, kCluster>(hist, cap, fixed_limit, out, tmp, stamps, staged_sort, serial_all, warp_tail,
                                     run_after, sort_network, wide_digits);
}

// A batch job's block shape (0: up to 256 symbols, 1: up to 1,024, 2: up to
// 2,048 where `mid`, 3: up to 8,192), as build_codebook_device picks it for
// one codebook.
__host__ __device__ __forceinline__ unsigned batch_class_of(uint32_t cap, bool mid) {
  if (cap <= 256) return 0;
  if (cap <= kSmallCapacity) return 1;
  if (cap <= kMidCapacity && mid) return 2;
  return 3;
}

// Many codebooks of one single-block shape in one launch, block b building
// jobs[b] (build_codebooks_device): a launch where each took one. With
// `shape` >= 0 the jobs were written on the device and the grid covers them
// all: a block whose job is empty (capacity 0) or of another shape leaves at
// once (build_codebooks_device_unsorted).
template <int NT, int ITEMS>
__global__ void __launch_bounds__(NT, 1)
    codebook_batch_kernel(const CodebookJob* jobs, int shape, uint32_t mid, uint32_t staged_sort, uint32_t serial_all,
                          uint32_t warp_tail, uint32_t run_after, uint32_t sort_network, uint32_t wide_digits) {
  const CodebookJob j = jobs[blockIdx.x];
  if (shape >= 0 && (j.capacity == 0 || batch_class_of(j.capacity, mid != 0) != static_cast<unsigned>(shape))) return;
  codebook_body<NT, ITEMS, false>(j.hist, j.capacity, j.length_limit, j.out, Temp{}, nullptr, staged_sort,
                                  serial_all, warp_tail, run_after, sort_network, wide_digits);
}

}  // namespace

}  // namespace vlec::cuda
