// bench/lane_layout_probe_decoder.cuh: vlec's own decoder (huffman_decode.cu,
// huffman_decode_lanes.cuh) on the lane layout the probe writes, so that the
// two decoders differ in the layout alone. Included by lane_layout_probe.cu,
// which says what the layout is and why it is probed.
//
// Kept from vlec's decoder: one warp a chunk, the tables in shared memory
// (the pair table, the single table, the second level), the split bit
// buffer (lo, hi, used), the lookups, the row loop block by block of the
// hash, and the chunk's XXH3 folded from the rows the lanes decode (checked
// against vlec's index). Changed: the refill. A lane's word i lies at
// 32 i + lane below the shortest lane's count, so a lane that takes a word
// takes its own next one: no ballot, no shuffle, no register windows. Its
// next two words wait in registers (loaded two refills ahead), and with
// kAhead > 0 each refill prefetches into L1 the line kAhead words on (a line
// is one word of every lane). The few words past the shortest count lie
// lane-major after the others, so a lane finds them from one offset.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/huffman_decode.hpp"
#include "cuda/launch_cache.hpp"
#include "cuda/huffman_decode_lanes.cuh"
#include "cuda/warp_index.cuh"
#include "cuda/xxh3_warp.cuh"
#include "huffman/chunk_codec.hpp"
#include "huffman/gpu_tables.hpp"
#include "huffman/layout.hpp"
#include "lane_layout_probe_kernels.cuh"

namespace vlec::probe {

namespace dl = cuda::decode_lanes;

constexpr unsigned kDecodeTailRows = 16;

template <typename Sym>
__device__ __forceinline__ void store_lane_group(Sym* base, uint64_t row, const Sym (&s)[4]) {
  if constexpr (sizeof(Sym) == 1)
    reinterpret_cast<uint32_t*>(base)[row * huffman::kLanes] = uint32_t{s[0]} | uint32_t{s[1]} << 8 | uint32_t{s[2]} << 16 |
                                               uint32_t{s[3]} << 24;
  else
    reinterpret_cast<uint2*>(base)[row * huffman::kLanes] = make_uint2(uint32_t{s[0]} | uint32_t{s[1]} << 16,
                                                       uint32_t{s[2]} | uint32_t{s[3]} << 16);
}  // rows past the shortest count a chunk may have (measured: 15 at most)

template <unsigned kAhead>
struct PlacedLaneDecoder {
  uint32_t lo = 0, hi = 0, used = 64;  // the bits held are (hi:lo) >> used
  uint32_t limit = 0;                  // a lane takes a word when used > limit (= 64 - T)
  uint32_t bad = 0;
  uint32_t tables = 0;
  const uint32_t* words = nullptr;  // the chunk's words
  uint32_t lane = 0, shortest = 0, count = 0, tail_from = 0, next_index = 0;
  uint32_t next0 = 0, next1 = 0;

  // Word i of the lane: at 32 i + lane below the shortest count, at
  // tail_from + i past it (the lane-major tail), 0 past the lane's count.
  // Selects and one predicated load, no branch.
  __device__ __forceinline__ uint32_t word(uint32_t i) const {
    const uint32_t at = i < shortest ? 32 * i + lane : tail_from + i;
    uint32_t w = 0;
    if (i < count) w = __ldg(words + at);
    return w;
  }
  __device__ __forceinline__ void start(uint32_t threshold) {
    tables = dl::pinned_tables_base();
    limit = 64 - threshold;
    next0 = word(0);
    next1 = word(1);
    next_index = 2;
    if constexpr (kAhead > 0)
      for (uint32_t k = 2; k < kAhead && k < shortest; ++k) asm volatile("prefetch.global.L1 [%0];" ::"l"(words + 32 * k + lane));
  }
  __device__ __forceinline__ uint32_t held() const { return 64 - used; }
  __device__ __forceinline__ uint32_t peek() const { return static_cast<uint32_t>((uint64_t{hi} << 32 | lo) >> used); }
  __device__ __forceinline__ void consume(uint32_t len) { used += len; }
  // Branch-free: selects, the load predicated on the lane taking a word.
  template <bool kFirst = true>
  __device__ __forceinline__ void refill(bool active) {
    const bool need = active && used > limit;
    uint32_t fresh = next1;
    if (need) fresh = word(next_index);
    if constexpr (kAhead > 0)
      if (need && next_index + kAhead < shortest)
        asm volatile("prefetch.global.L1 [%0];" ::"l"(words + 32 * (next_index + kAhead) + lane));
    lo = need ? hi : lo;
    hi = need ? next0 : hi;
    used = need ? used - 32 : used;
    next0 = need ? next1 : next0;
    next1 = fresh;
    next_index += need ? 1u : 0u;
  }
  __device__ __forceinline__ void next_row() {}
  __device__ __forceinline__ bool leftover_bits() const {
    return used < 64 && ((uint64_t{hi} << 32 | lo) >> used) != 0;
  }
  // The words this lane took (the buffer's refills).
  __device__ __forceinline__ uint32_t taken() const { return next_index - 2; }

  template <typename Sym, unsigned K, bool kPairs, unsigned kLong>
  __device__ __forceinline__ void decode_step(const dl::LongTables& t, Sym* s) {
    using Shape = dl::TableShape<Sym, K, kPairs, kLong>;
    if constexpr (kPairs) {
      constexpr unsigned W = dl::PairEntry<Sym>::W;
#pragma unroll
      for (unsigned h = 0; h < K / 2; ++h) {
        const auto e = dl::lookup_pair<Sym, Shape, kLong>(t, tables, peek(), held(), bad);
        s[2 * h] = static_cast<Sym>(e & ((1u << W) - 1));
        s[2 * h + 1] = static_cast<Sym>((e >> W) & ((1u << W) - 1));
        consume(static_cast<uint32_t>(e >> (2 * W)));
      }
    } else {
#pragma unroll
      for (unsigned k = 0; k < K; ++k) s[k] = static_cast<Sym>(decode_one<Shape, kLong>(t));
    }
  }
  template <typename Shape, unsigned kLong>
  __device__ __forceinline__ uint32_t decode_pair_bytes(const dl::LongTables& t) {
    const uint32_t e = dl::lookup_pair<uint8_t, Shape, kLong>(t, tables, peek(), held(), bad);
    consume(e >> 16);
    return e;
  }
  template <typename Shape, unsigned kLong>
  __device__ __forceinline__ uint32_t decode_one(const dl::LongTables& t) {
    const uint32_t e = dl::lookup_single<Shape, kLong>(t, tables, peek(), held(), bad);
    consume(e >> 16);
    return e & 0xFFFF;
  }
};

// status[c]: 0 decoded and verified; 2 a bad code, a lane that took other than its word count, or bits left;
// 3 the XXH3 differs from checksums[c].
template <typename Sym, unsigned K, bool kPairs, unsigned kLong, unsigned kAhead>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, 5)
    probe_decode_tuned(const cuda::HuffmanDecodeArgs a, const uint8_t* frame, const uint64_t* offsets,
                       const uint64_t* checksums, uint32_t* status) {
  using Shape = dl::TableShape<Sym, K, kPairs, kLong>;
  __shared__ uint64_t secret[xxh3::kSecretSize / 8];
  cuda::copy_secret_words(secret);
  {  // the block's tables (huffman_decode.cu's fill_tables)
    uint4* s_single = dl::s_decode_tables + Shape::kPairBytes / 16;
    const uint4* single = reinterpret_cast<const uint4*>(a.table.single);
    for (uint32_t i = threadIdx.x; i < (1u << Shape::kSingleBits) / 4; i += blockDim.x) s_single[i] = single[i];
    if constexpr (kPairs) {
      const uint4* pair = static_cast<const uint4*>(a.table.pair);
      for (uint32_t i = threadIdx.x; i < Shape::kPairBytes / 16; i += blockDim.x) dl::s_decode_tables[i] = pair[i];
    }
    if (kLong && threadIdx.x < 3 * cuda::kCanonSlots) dl::s_canon[threadIdx.x] = a.table.canon[threadIdx.x];
    if (kLong && a.table.sub_shared) {
      uint32_t* s_sub = reinterpret_cast<uint32_t*>(dl::s_decode_tables) + Shape::kSharedBytes / 4;
      for (uint32_t i = threadIdx.x; i < a.table.sub_entries; i += blockDim.x) s_sub[i] = a.table.sub[i];
    }
  }
  __syncthreads();
  const dl::LongTables& t = a.table;
  const unsigned lane = threadIdx.x % 32, warp = cuda::uniform_warp_index();
  constexpr unsigned kRowsPerBlock = 1024 / (huffman::kRow * sizeof(Sym));
  for (uint64_t c = uint64_t{blockIdx.x} * kWarpsPerBlock + warp; c < a.chunk_count;
       c += uint64_t{gridDim.x} * kWarpsPerBlock) {
    const uint8_t* b = frame + offsets[c];
    PlacedLaneDecoder<kAhead> d;
    d.words = reinterpret_cast<const uint32_t*>(b + kCountBytes);
    d.lane = lane;
    d.shortest = *reinterpret_cast<const uint32_t*>(b);
    d.count = d.shortest + b[4 + lane];
    d.tail_from = lane_tail_start(d.count, d.shortest, lane) - d.shortest;
    d.start(K * a.table.max_length);

    const uint64_t first = c * a.chunk_elements;
    const uint64_t n = min(uint64_t{a.chunk_elements}, a.elements - first);
    const uint64_t bytes = n * sizeof(Sym);
    Sym* out = static_cast<Sym*>(a.out) + first;
    const uint8_t* out_bytes = reinterpret_cast<const uint8_t*>(out);
    const uint32_t hashed_blocks = bytes > 240 ? static_cast<uint32_t>((bytes - 1) / 1024) : 0;
    cuda::RowHasher<Sym> hasher(secret);
    uint64_t acc = cuda::init_acc_lane(lane);
    const uint32_t full_rows = static_cast<uint32_t>(n / huffman::kRow);
    Sym* lane_out = out + lane * huffman::kGroup;
    uint32_t row = 0;
    auto decode_row = [&](Sym (&s)[4]) {
      d.template refill<true>(true);
      d.template decode_step<Sym, K, kPairs, kLong>(t, s);
#pragma unroll
      for (unsigned step = 1; step < huffman::kGroup / K; ++step) {
        d.template refill<false>(true);
        d.template decode_step<Sym, K, kPairs, kLong>(t, s + step * K);
      }
      store_lane_group(lane_out, uint64_t{row}, s);
    };
    auto decode_byte_row = [&]() -> uint32_t {
      uint32_t w;
      if constexpr (sizeof(Sym) == 1 && K == 2 && kPairs) {
        d.template refill<true>(true);
        const uint32_t first_pair = d.template decode_pair_bytes<Shape, kLong>(t);
        d.template refill<false>(true);
        const uint32_t second_pair = d.template decode_pair_bytes<Shape, kLong>(t);
        w = __byte_perm(first_pair, second_pair, 0x5410);
        reinterpret_cast<uint32_t*>(lane_out)[uint64_t{row} * huffman::kLanes] = w;
      } else if constexpr (sizeof(Sym) == 1) {
        Sym s[4];
        decode_row(s);
        w = uint32_t{s[0]} | uint32_t{s[1]} << 8 | uint32_t{s[2]} << 16 | uint32_t{s[3]} << 24;
      } else {
        w = 0;
      }
      return w;
    };
    for (uint32_t blk = 0; blk < hashed_blocks; ++blk) {
      if constexpr (sizeof(Sym) == 1) {
#pragma unroll 1
        for (unsigned r = 0; r < kRowsPerBlock; r += 2) {
          const uint32_t w0 = decode_byte_row();
          ++row;
          const uint32_t w1 = decode_byte_row();
          ++row;
          hasher.add_two_rows(w0, w1, r, lane);
        }
      } else {
#pragma unroll 1
        for (unsigned r = 0; r < kRowsPerBlock; ++r, ++row) {
          Sym s[4];
          decode_row(s);
          hasher.add(s, r, lane);
        }
      }
      hasher.fold(acc, lane);
    }
#pragma unroll 1
    for (; row < full_rows; ++row) {
      Sym s[4];
      decode_row(s);
    }
    const uint32_t rest = static_cast<uint32_t>(n % huffman::kRow);
    if (rest) {
      const uint32_t mine = rest > lane * huffman::kGroup ? min(rest - lane * huffman::kGroup, huffman::kGroup) : 0;
      Sym* tail = out + uint64_t{full_rows} * huffman::kRow + lane * huffman::kGroup;
      for (unsigned k = 0; k < mine; ++k) {
        d.template refill<true>(true);
        tail[k] = static_cast<Sym>(d.template decode_one<Shape, kLong>(t));
      }
    }
    // A lane's word count: its refills, less the words it took past its code bits' end (those read as zeros).
    const bool wrong = d.bad || d.leftover_bits() || d.taken() < d.count;
    const bool any_wrong = __any_sync(kFull, wrong);
    __syncwarp();
    const uint64_t hash = bytes <= 240 ? (lane == 0 ? xxh3::hash64_short(out_bytes, bytes) : 0)
                                       : cuda::finish_long_warp(acc, out_bytes, bytes, lane);
    if (lane == 0) status[c] = any_wrong ? 2u : hash != checksums[c] ? 3u : 0u;
  }
}

// The launch (huffman_decode.cu's launch_kernel): the second level in shared
// memory where it fits, a grid of the blocks the GPU holds at once.
template <typename Sym, unsigned K, bool kPairs, unsigned kLong, unsigned kAhead>
void launch_decode_tuned(cuda::HuffmanDecodeArgs a, const uint8_t* frame, const uint64_t* offsets,
                         const uint64_t* checksums, uint32_t* status) {
  using Shape = dl::TableShape<Sym, K, kPairs, kLong>;
  const auto kernel = probe_decode_tuned<Sym, K, kPairs, kLong, kAhead>;
  a.table.sub_shared = kLong && a.table.sub != nullptr && a.table.sub_entries > 0 && a.table.sub_entries <= Shape::kMaxSharedSub;
  const std::size_t smem = Shape::kSharedBytes + (a.table.sub_shared ? 4 * std::size_t{a.table.sub_entries} : 0);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  const uint64_t blocks = std::min<uint64_t>((a.chunk_count + kWarpsPerBlock - 1) / kWarpsPerBlock,
                                             cuda::resident_blocks(reinterpret_cast<const void*>(kernel),
                                                                   kWarpsPerBlock * 32, smem));
  kernel<<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, smem>>>(a, frame, offsets, checksums, status);
  CUDA_CHECK(cudaGetLastError());
}

// The shapes of K = 2 (every dataset the probe runs); false for others.
template <typename Sym, unsigned kAhead>
bool decode_tuned(const cuda::HuffmanDecodeArgs& a, const uint8_t* frame, const uint64_t* offsets,
                  const uint64_t* checksums, uint32_t* status) {
  const unsigned K = huffman::symbols_per_step(a.table.max_length);
  if (K != 2 || a.table.single == nullptr) return false;
  const bool pairs = a.table.use_pairs && a.table.pair != nullptr;
  const bool wide = a.table.single_bits == 13;
  const bool long_codes = a.table.max_length > huffman::single_table_bits(a.table.max_length, false);
  if (pairs && long_codes) launch_decode_tuned<Sym, 2, true, 1, kAhead>(a, frame, offsets, checksums, status);
  else if (pairs) launch_decode_tuned<Sym, 2, true, 0, kAhead>(a, frame, offsets, checksums, status);
  else if (wide) launch_decode_tuned<Sym, 2, false, 2, kAhead>(a, frame, offsets, checksums, status);
  else if (long_codes) launch_decode_tuned<Sym, 2, false, 1, kAhead>(a, frame, offsets, checksums, status);
  else launch_decode_tuned<Sym, 2, false, 0, kAhead>(a, frame, offsets, checksums, status);
  return true;
}

}  // namespace vlec::probe
