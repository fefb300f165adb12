// cuda/encode_rows.cuh: what every GPU Huffman encoder (lanes, pavle,
// reduce_shuffle) shares before it forms words: coalesced loads of a lane's
// groups (staged a batch of rows per warp), the code table (its first 1,024
// entries in shared memory), the block's chunk state, each warp's range of
// rows, and pass A, which sums each lane's code lengths per range and folds
// the chunk's XXH3 block sums from the bytes it loads.
#pragma once

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/encode_kernels.cuh"
#include "cuda/xxh3_warp.cuh"
#include "huffman/layout.hpp"

namespace vlec::cuda {
namespace {

using huffman::kGroup;
using huffman::kLanes;
using huffman::kRow;

constexpr unsigned kWarps = 8;
constexpr unsigned kFull = 0xFFFFFFFFu;

__device__ __forceinline__ uint32_t lanemask_lt() {
  uint32_t m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// A lane's group of 4 symbols as one word, for staging rows in shared memory.
template <typename Sym> struct GroupWord;
template <> struct GroupWord<uint8_t> { using type = uint32_t; };
template <> struct GroupWord<uint16_t> { using type = uint2; };
template <> struct GroupWord<uint32_t> { using type = uint4; };
template <typename Sym> using GroupWordT = typename GroupWord<Sym>::type;

// Rows staged per warp: enough loads in flight, while the code that uses them
// stays a single (rolled) loop body, which keeps the kernel small.
template <typename Sym> constexpr unsigned kBatchRows = sizeof(Sym) == 4 ? 4 : 8;
template <typename Sym> constexpr unsigned kStageBytes = kWarps * kBatchRows<Sym> * kLanes * sizeof(GroupWordT<Sym>);

template <typename Sym>
__device__ __forceinline__ void unpack_group(const GroupWordT<Sym>& v, Sym (&s)[4]) {
  if constexpr (sizeof(Sym) == 1) {
    for (unsigned i = 0; i < 4; ++i) s[i] = static_cast<Sym>(v >> (8 * i));
  } else if constexpr (sizeof(Sym) == 2) {
    s[0] = static_cast<Sym>(v.x), s[1] = static_cast<Sym>(v.x >> 16);
    s[2] = static_cast<Sym>(v.y), s[3] = static_cast<Sym>(v.y >> 16);
  } else {
    s[0] = v.x, s[1] = v.y, s[2] = v.z, s[3] = v.w;
  }
}

// Load rows [row, row + count) (count <= kBatchRows) of this lane into `stage`.
template <typename Sym>
__device__ __forceinline__ void stage_rows(const Sym* in, uint64_t row, unsigned count, GroupWordT<Sym>* stage,
                                           unsigned lane) {
  const GroupWordT<Sym>* src = reinterpret_cast<const GroupWordT<Sym>*>(in + row * kRow) + lane;
  GroupWordT<Sym> v[kBatchRows<Sym>];
#pragma unroll
  for (unsigned b = 0; b < kBatchRows<Sym>; ++b)
    if (b < count) v[b] = __ldg(src + b * kLanes);
#pragma unroll
  for (unsigned b = 0; b < kBatchRows<Sym>; ++b)
    if (b < count) stage[b * kLanes + lane] = v[b];
}

template <typename Sym>
__device__ __forceinline__ void load_group(const Sym* row, unsigned lane, Sym (&s)[4]) {
  if constexpr (sizeof(Sym) == 1) {
    const uint32_t v = __ldg(reinterpret_cast<const uint32_t*>(row) + lane);
    for (unsigned i = 0; i < 4; ++i) s[i] = static_cast<Sym>(v >> (8 * i));
  } else if constexpr (sizeof(Sym) == 2) {
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(row) + lane);
    s[0] = static_cast<Sym>(v.x), s[1] = static_cast<Sym>(v.x >> 16);
    s[2] = static_cast<Sym>(v.y), s[3] = static_cast<Sym>(v.y >> 16);
  } else {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(row) + lane);
    s[0] = v.x, s[1] = v.y, s[2] = v.z, s[3] = v.w;
  }
}

// The symbols lane `lane` owns in the chunk's last, partial row (`rest` symbols in it).
template <typename Sym>
__device__ __forceinline__ unsigned load_partial_group(const Sym* row, uint32_t rest, unsigned lane, Sym (&s)[4]) {
  const unsigned first = lane * kGroup;
  const unsigned mine = rest > first ? min(rest - first, kGroup) : 0;
  for (unsigned i = 0; i < 4; ++i) s[i] = i < mine ? row[first + i] : Sym(0);
  return mine;
}

// The codebook's entries: the first kSharedEntries in shared memory (the
// whole table for bytes and alphabets up to 1,024), the rest read through L1.
// A file-scope array, so that every lookup addresses it directly.
constexpr unsigned kSharedEntries = 1024;
__shared__ uint32_t s_encode_table[kSharedEntries];
struct EncodeTable {
  const uint32_t* entry;
  uint32_t size;
  __device__ __forceinline__ uint32_t operator()(uint32_t sym, bool& bad) const {
    uint32_t e;
    if (sym < kSharedEntries)
      e = s_encode_table[sym];
    else
      e = sym < size ? __ldg(entry + sym) : 0;
    bad |= e == 0;
    return e;
  }
};

// Shared state of the block's chunk.
struct ChunkShared {
  uint32_t range_bits[kWarps][kLanes];   // code bits of each warp's range, per lane
  uint32_t last_step[kWarps][kLanes];    // bits of the last step of each warp's range, per lane
  uint32_t final_step[kLanes];           // bits of each lane's last step in the chunk
  uint32_t bad;
  uint32_t stored_bytes;
  uint32_t avg_bits;                     // floor(code bits / symbols) (pavle, reduce_shuffle)
  uint64_t offset;                       // the chunk's payload offset in the frame
  uint64_t chunk;
};

// The warp's share of the chunk: full rows [row_begin, row_end), plus the
// partial row if `tail`. Ranges cover whole XXH3 blocks so that each warp's
// block sums are complete.
struct Range {
  uint64_t row_begin, row_end;
  bool tail;
};

__device__ inline Range warp_range(uint64_t full_rows, uint32_t rest, unsigned rows_per_block, unsigned warp) {
  const uint64_t units = full_rows / rows_per_block;
  Range r;
  r.row_begin = units * warp / kWarps * rows_per_block;
  r.row_end = warp + 1 == kWarps ? full_rows : units * (warp + 1) / kWarps * rows_per_block;
  r.tail = warp + 1 == kWarps && rest > 0;
  return r;
}

// Pass A: code-length sums and the chunk's XXH3 block sums.
template <typename Sym, unsigned K>
__device__ void pass_a(const Sym* in, uint64_t full_rows, uint32_t rest, const Range& r, const EncodeTable& table,
                       uint64_t hash_blocks, unsigned long long* block_sums, ChunkShared& sh,
                       GroupWordT<Sym>* stage, unsigned warp, unsigned lane) {
  constexpr unsigned kRowsPerBlock = 1024 / (kRow * sizeof(Sym));
  uint32_t bits = 0, last = 0;
  bool bad = false;
  RowHasher<Sym> hasher;
  for (uint64_t row0 = r.row_begin; row0 < r.row_end; row0 += kBatchRows<Sym>) {
    const unsigned count = static_cast<unsigned>(min(uint64_t{kBatchRows<Sym>}, r.row_end - row0));
    stage_rows(in, row0, count, stage, lane);
    for (unsigned b = 0; b < count; ++b) {
      const uint64_t row = row0 + b;
      Sym s[4];
      unpack_group<Sym>(stage[b * kLanes + lane], s);
      uint32_t len[4];
      for (unsigned i = 0; i < 4; ++i) len[i] = table(s[i], bad) >> 24;
      bits += len[0] + len[1] + len[2] + len[3];
      last = 0;
      for (unsigned i = 4 - K; i < 4; ++i) last += len[i];
      const uint64_t block = row / kRowsPerBlock;
      if (block < hash_blocks) {  // the warp's rows are whole blocks, so this is warp-uniform
        hasher.add(s, static_cast<unsigned>(row % kRowsPerBlock), lane);
        if (row % kRowsPerBlock == kRowsPerBlock - 1) hasher.flush(block_sums + 8 * block, lane);
      }
    }
  }
  uint32_t final_step = last;
  if (r.tail) {
    Sym s[4];
    const unsigned mine = load_partial_group(in + full_rows * kRow, rest, lane, s);
    uint32_t tail_bits = 0, tail_last = 0;
    for (unsigned i = 0; i < mine; ++i) {
      const uint32_t l = table(s[i], bad) >> 24;
      tail_bits += l;
      tail_last = i % K == 0 ? l : tail_last + l;  // the lane's last step is its last K-aligned group
    }
    bits += tail_bits;
    if (mine) final_step = tail_last;
  }
  sh.range_bits[warp][lane] = bits;
  sh.last_step[warp][lane] = last;
  if (warp == kWarps - 1) sh.final_step[lane] = final_step;
  if (__any_sync(kFull, bad) && lane == 0) atomicOr(&sh.bad, 1u);
}

}  // namespace
}  // namespace vlec::cuda
