// cuda/warp_chunk.cuh: what a warp that encodes a whole chunk in one pass
// needs besides its lane writer (encode_lane_writer.cuh): the chunk's XXH3
// from the rows as it loads them, and the copy of its scratch slot to the
// chunk's place. Used by the warp encoder (encode_warp.cu) and by the lane
// layout probe's one-pass encoders (bench/).
#pragma once

#include <cstdint>

#include "cuda/encode_rows.cuh"
#include "cuda/xxh3_warp.cuh"

namespace vlec::cuda {
namespace {

// XXH3-64 of a chunk of at most 240 bytes, out of line: inlined, its 64-bit
// arithmetic took the kernel from 64 registers to ~120.
__device__ __noinline__ uint64_t short_chunk_hash(const uint8_t* bytes, uint64_t len) {
  return xxh3::hash64_short(bytes, len);
}

// The chunk's XXH3 from the rows the warp loads (the XXH3 secret's words in
// shared memory: copy_secret_words): RowHasher over each batch's
// whole 1 KiB blocks (a batch of kBatchRows holds whole blocks), the blocks
// past the whole batches read again, the tail by finish_long_warp. Lanes
// 0..7 fold the blocks in order.
template <typename Sym>
struct RowsHash {
  static constexpr unsigned kRowsPerBlock = 1024 / (kRow * sizeof(Sym));
  static_assert(kBatchRows<Sym> % kRowsPerBlock == 0, "a batch holds whole XXH3 blocks");
  RowHasher<Sym> hasher;
  uint64_t acc, blocks, hashed = 0;
  unsigned lane;
  __device__ RowsHash(const uint64_t* shared_secret, uint64_t raw_bytes, unsigned lane_index)
      : hasher(shared_secret), acc(init_acc_lane(lane_index)), blocks(raw_bytes > 240 ? (raw_bytes - 1) / 1024 : 0),
        lane(lane_index) {}
  __device__ __forceinline__ void block(const GroupWordT<Sym>* g) {  // kRowsPerBlock rows
    if constexpr (sizeof(Sym) == 1) {
      for (unsigned r = 0; r < kRowsPerBlock; r += 2) hasher.add_two_rows(g[r], g[r + 1], r, lane);
    } else {
      for (unsigned r = 0; r < kRowsPerBlock; ++r) {
        Sym s[4];
        unpack_group<Sym>(g[r], s);
        hasher.add(s, r, lane);
      }
    }
    hasher.fold(acc, lane);
  }
  // A whole batch from row `row0` (warp-uniform).
  __device__ __forceinline__ void batch(const GroupWordT<Sym> (&g)[kBatchRows<Sym>], uint64_t row0) {
    for (unsigned k = 0; k < kBatchRows<Sym> / kRowsPerBlock; ++k)
      if (row0 / kRowsPerBlock + k < blocks) block(g + k * kRowsPerBlock), ++hashed;
  }
  // The hash in lane 0; `lane_src` is the lane's group of the chunk's first row.
  __device__ uint64_t finish(const GroupWordT<Sym>* lane_src, const uint8_t* bytes, uint64_t raw_bytes) {
    for (; hashed < blocks; ++hashed) {
      GroupWordT<Sym> g[kRowsPerBlock];
      for (unsigned r = 0; r < kRowsPerBlock; ++r) g[r] = __ldg(lane_src + (hashed * kRowsPerBlock + r) * kLanes);
      block(g);
    }
    if (raw_bytes <= 240) return lane == 0 ? short_chunk_hash(bytes, raw_bytes) : 0;
    return finish_long_warp(acc, bytes, raw_bytes, lane);
  }
};

// A slot's first `words` words to `dst` by one warp, kCopyLoads loads in
// flight a lane (the slot was just written: its words come from L2). With
// one chunk a warp (the wavelet writer's 4,096 chunks of 16,384 symbols)
// every warp copies at once at the end, and at four loads a lane the copy
// held 28 % of the warp encoder's stall samples (Nsight Compute, H200,
// session 34): the stores waited on L2 latency with too few bytes in flight.
constexpr unsigned kCopyLoads = 16;
__device__ __forceinline__ void copy_slot(uint32_t* dst, const uint32_t* slot, uint32_t words, unsigned lane) {
  uint32_t i = lane;
  for (; i + 32 * (kCopyLoads - 1) < words; i += 32 * kCopyLoads) {
    uint32_t v[kCopyLoads];
#pragma unroll
    for (unsigned n = 0; n < kCopyLoads; ++n) v[n] = __ldcg(slot + i + 32 * n);
#pragma unroll
    for (unsigned n = 0; n < kCopyLoads; ++n) dst[i + 32 * n] = v[n];
  }
  for (; i < words; i += 32) dst[i] = __ldcg(slot + i);
}

}  // namespace
}  // namespace vlec::cuda
