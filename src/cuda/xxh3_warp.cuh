// cuda/xxh3_warp.cuh: XXH3-64 of a chunk computed by the warps that already
// hold its bytes (decoder rows in registers, encoder pass A in its stage).
//
// Within a 1 KiB block XXH3's eight accumulators only add: word w of the
// block adds its value to acc[i ^ 1] and a keyed product to acc[i], with
// i = w mod 8 and the key taken from the secret at 8 (w / 8 + i). So each lane
// sums the contributions of the words it holds, one shuffle butterfly per
// block gathers them per accumulator, and one warp folds the blocks in order
// (acc = scramble(acc + sums)) at the end. The stripes after the last whole
// block and the final, overlapping stripe are hashed from memory by one
// thread (common/xxh3.hpp, finish_long). block_sum, the per-block sums and
// butterfly, serves encoder pass A and, as warp_block_sum, the two-kernel
// checksums (frame header, wavelet).
#pragma once

#include <cstdint>

#include "common/xxh3.hpp"

namespace vlec::cuda {

constexpr unsigned kFullMaskXxh = 0xFFFFFFFFu;

// A lane's four bytes of a row as one little-endian word.
__device__ __forceinline__ uint32_t pack_bytes(const uint8_t (&s)[4]) {
  return uint32_t{s[0]} | uint32_t{s[1]} << 8 | uint32_t{s[2]} << 16 | uint32_t{s[3]} << 24;
}

// RowHasher: what one lane holds of a row of a chunk (4 elements of `Sym`)
// added to the chunk's XXH3; each lane contributes to two accumulators, a
// and a ^ 1. It takes the XXH3 secret as 24 words in shared memory (the
// caller's block copies them first, copy_secret_words): a key is then one
// LDS at the lane's offset plus the row's, where the secret in global
// memory took a load through L1 and ~6 instructions of 64-bit address
// arithmetic. The shared address is made opaque once (held in a register):
// left to itself the compiler rebuilt it from SR_CgaCtaId at every row.
template <typename Sym>
struct RowHasher {
  uint64_t sum_a = 0, sum_b = 0;  // contributions to acc[a] and acc[a ^ 1]
  uint32_t secret_address;

  __device__ __forceinline__ explicit RowHasher(const uint64_t* shared_secret)
      : secret_address(static_cast<uint32_t>(__cvta_generic_to_shared(shared_secret))) {
    asm volatile("" : "+r"(secret_address));
  }
  // sum += low32(value ^ key) * high32(value ^ key), as one mad.wide: with
  // a 64-bit add of a separate product the compiler placed sum_a's halves in
  // two unpaired registers and moved them around every product (six
  // instructions a product in the decoder's byte loop; three with this).
  __device__ __forceinline__ static void add_keyed_product(uint64_t& sum, uint64_t value, uint64_t key) {
    const uint64_t k = value ^ key;
    const uint32_t lo = static_cast<uint32_t>(k), hi = static_cast<uint32_t>(k >> 32);
    asm("mad.wide.u32 %0, %1, %2, %0;" : "+l"(sum) : "r"(lo), "r"(hi));
  }
  __device__ __forceinline__ uint64_t key(unsigned word) const {
    uint64_t v;
    asm("ld.shared.u64 %0, [%1];" : "=l"(v) : "r"(secret_address + 8 * word));
    return v;
  }

  // `row_in_block`: the row's position inside its 1 KiB block.
  __device__ __forceinline__ void add(const Sym (&s)[4], unsigned row_in_block, unsigned lane) {
    if constexpr (sizeof(Sym) == 1) {
      const uint32_t mine = pack_bytes(s);
      const uint32_t next = __shfl_down_sync(kFullMaskXxh, mine, 1);
      // Odd lanes compute too (no divergent branch) and keep nothing.
      const bool even = lane % 2 == 0;
      const uint64_t v = uint64_t{mine} | uint64_t{next} << 32;
      const unsigned w = row_in_block * 16 + lane / 2;
      const uint64_t p = xxh3::product_with_key(v, key(w / 8 + w % 8));
      sum_a += even ? p : 0;
      sum_b += even ? v : 0;
    } else if constexpr (sizeof(Sym) == 2) {
      const uint64_t v = uint64_t{s[0]} | uint64_t{s[1]} << 16 | uint64_t{s[2]} << 32 | uint64_t{s[3]} << 48;
      // word w = 32 r + lane: key w / 8 + w % 8 = 4 r + lane / 8 + lane % 8
      add_keyed_product(sum_a, v, key(4 * row_in_block + lane / 8 + lane % 8));
      sum_b += v;
    } else {
      const uint64_t v0 = uint64_t{s[0]} | uint64_t{s[1]} << 32, v1 = uint64_t{s[2]} | uint64_t{s[3]} << 32;
      const unsigned w = row_in_block * 64 + 2 * lane;  // even word: a = w % 8, odd word: a ^ 1
      sum_a += xxh3::product_with_key(v0, key(w / 8 + w % 8)) + v1;
      sum_b += xxh3::product_with_key(v1, key(w / 8 + w % 8 + 1)) + v0;
    }
  }

  // Two consecutive rows of bytes (row_in_block even): even lanes hash row
  // r's word lane / 2, odd lanes row r + 1's word lane / 2, so no lane
  // computes a product it drops (add() leaves the odd lanes idle) and one
  // shuffle serves both rows. Word lane / 2 + 16 r and + 16 (r + 1) feed the
  // same accumulators (16 r is a multiple of 8), so fold() is unchanged.
  // (m0, m1: the lane's four bytes of rows r and r + 1, little-endian words.)
  __device__ __forceinline__ void add_two_rows(uint32_t m0, uint32_t m1, unsigned row_in_block, unsigned lane) {
    static_assert(sizeof(Sym) == 1, "two rows at a time: bytes only");
    const bool odd = lane & 1;
    // An even lane needs its odd neighbour's row r; an odd lane its even neighbour's row r + 1.
    const uint32_t got = __shfl_xor_sync(kFullMaskXxh, odd ? m0 : m1, 1);
    const uint64_t v = odd ? uint64_t{got} | uint64_t{m1} << 32 : uint64_t{m0} | uint64_t{got} << 32;
    // word w = 16 (r + odd) + lane / 2: key w / 8 + w % 8
    add_keyed_product(sum_a, v, key(2 * (row_in_block + odd) + lane / 16 + (lane / 2) % 8));
    sum_b += v;
  }

  // End of a 1 KiB block for a warp that folds its own chunk: gather the
  // block's totals into lanes 0..7 and fold them into acc (= acc[lane]).
  __device__ __forceinline__ void fold(uint64_t& acc, unsigned lane) {
    constexpr unsigned first = sizeof(Sym) == 1 ? 1 : sizeof(Sym) == 2 ? 8 : 4;
    for (unsigned m = first; m < 32; m <<= 1) {
      if (sizeof(Sym) == 1 && m == 2) m = 16;
      sum_a += __shfl_xor_sync(kFullMaskXxh, sum_a, m);
      sum_b += __shfl_xor_sync(kFullMaskXxh, sum_b, m);
    }
    // The leader lane holding accumulator index a: 2a (u8), a (u16), a / 2 for even a (u32).
    const unsigned i = lane % 8, j = i ^ 1;
    const unsigned src_a = sizeof(Sym) == 1 ? 2 * i : sizeof(Sym) == 2 ? i : i / 2;
    const unsigned src_b = sizeof(Sym) == 1 ? 2 * j : sizeof(Sym) == 2 ? j : j / 2;
    const uint64_t ta = __shfl_sync(kFullMaskXxh, sum_a, src_a);
    const uint64_t tb = __shfl_sync(kFullMaskXxh, sum_b, src_b);
    const bool has_a = sizeof(Sym) != 4 || i % 2 == 0, has_b = sizeof(Sym) != 4 || j % 2 == 0;
    if (lane < 8) acc = xxh3::scramble(acc + (has_a ? ta : 0) + (has_b ? tb : 0), lane);
    sum_a = sum_b = 0;
  }
};

// The secret's 24 words into `words` (shared memory) by the block's first
// threads; the caller's next barrier orders the stores.
__device__ __forceinline__ void copy_secret_words(uint64_t* words) {
  if (threadIdx.x < xxh3::kSecretSize / 8) words[threadIdx.x] = xxh3::secret_word(threadIdx.x);
}

__device__ __forceinline__ uint64_t init_acc_lane(unsigned lane) {
  uint64_t init[8];
  xxh3::init_acc(init);
  uint64_t acc = 0;
  for (unsigned i = 0; i < 8; ++i)
    if (lane == i) acc = init[i];
  return acc;
}

// The tail of a long hash, by a whole warp: the stripes after the last whole
// block and the final (overlapping, unaligned) stripe only add to the
// accumulators, so the lanes read them in parallel. Lanes 0..7 hold acc[lane];
// returns the hash in lane 0.
static __device__ __noinline__ uint64_t finish_long_warp(uint64_t acc, const uint8_t* bytes, uint64_t len, unsigned lane) {
  const uint64_t nb_blocks = (len - 1) / xxh3::kBlock;
  const unsigned stripes = static_cast<unsigned>(((len - 1) - nb_blocks * xxh3::kBlock) / xxh3::kStripe);
  const uint8_t* tail = bytes + nb_blocks * xxh3::kBlock;
  uint64_t prod = 0, val = 0;
  for (unsigned w = lane; w < 8 * stripes; w += 32) {  // word w of the partial block: acc index w % 8 = lane % 8
    const uint64_t v = xxh3::read64(tail + 8 * w);
    prod += xxh3::keyed_product(v, 8 * (w / 8 + w % 8));
    val += v;
  }
  if (lane < 8) {  // the last stripe, keyed at secret offset 121
    const uint64_t v = xxh3::read64(bytes + len - xxh3::kStripe + 8 * lane);
    prod += xxh3::keyed_product(v, xxh3::kSecretSize - xxh3::kStripe - 7 + 8 * lane);
    val += v;
  }
  for (unsigned m = 8; m < 32; m <<= 1) {
    prod += __shfl_xor_sync(kFullMaskXxh, prod, m);
    val += __shfl_xor_sync(kFullMaskXxh, val, m);
  }
  acc += prod + __shfl_xor_sync(kFullMaskXxh, val, 1);
  uint64_t accs[8];
  for (unsigned i = 0; i < 8; ++i) accs[i] = __shfl_sync(kFullMaskXxh, acc, i);
  return lane == 0 ? xxh3::merge_accs(accs, len) : 0;
}

// XXH3-64 of a chunk from its whole blocks' sums (8 words per block, in
// order; best in shared memory) and its bytes for the tail. One warp; lanes
// 0..7 fold the blocks in order. Returns the hash in lane 0.
static __device__ __noinline__ uint64_t fold_chunk_hash(const unsigned long long* sums, uint64_t nb_blocks, const uint8_t* bytes,
                                           uint64_t len, unsigned lane) {
  if (len <= 240) return lane == 0 ? xxh3::hash64_short(bytes, len) : 0;
  uint64_t acc = 0;
  if (lane < 8) {
    uint64_t init[8];
    xxh3::init_acc(init);
    for (unsigned i = 0; i < 8; ++i)
      if (lane == i) acc = init[i];
    for (uint64_t b = 0; b < nb_blocks; ++b) acc = xxh3::scramble(acc + sums[8 * b + lane], lane);
  }
  return finish_long_warp(acc, bytes, len, lane);
}

}  // namespace vlec::cuda

namespace vlec::cuda {

// The XXH3 keys of the words a lane sums in a 1 KiB block: words lane + 32m
// (m = 0..3), keyed at secret word w / 8 + w % 8 = lane / 8 + lane % 8 + 4m,
// the same in every block, so a loop over blocks can keep them in registers.
struct BlockKeys {
  uint64_t key[4];
  __device__ __forceinline__ explicit BlockKeys(unsigned lane) {
#pragma unroll
    for (unsigned m = 0; m < 4; ++m) key[m] = xxh3::secret_word(lane / 8 + lane % 8 + 4 * m);
  }
  // From the secret's words in shared memory (copy_secret_words): four loads,
  // where a kernel short of registers cannot hold the keys across its loop.
  __device__ __forceinline__ BlockKeys(const uint64_t* secret_words, unsigned lane) {
#pragma unroll
    for (unsigned m = 0; m < 4; ++m) key[m] = secret_words[lane / 8 + lane % 8 + 4 * m];
  }
};

// What a whole 1 KiB block adds to the accumulators, computed by one warp
// (all 32 lanes call; word(m) returns the block's word lane + 32m): lane l
// (< 8) gets the keyed products of the words of index l plus the values of
// index l ^ 1; the other lanes' results are partial sums, not used.
template <typename Word>
__device__ __forceinline__ uint64_t block_sum(Word&& word, const BlockKeys& keys) {
  uint64_t prod = 0, val = 0;
#pragma unroll
  for (unsigned m = 0; m < 4; ++m) {
    const uint64_t v = word(m);
    prod += xxh3::product_with_key(v, keys.key[m]);
    val += v;
  }
  for (unsigned m = 8; m < 32; m <<= 1) {
    prod += __shfl_xor_sync(kFullMaskXxh, prod, m);
    val += __shfl_xor_sync(kFullMaskXxh, val, m);
  }
  // acc[i] gets the products of index i and the values of index i ^ 1.
  return prod + __shfl_xor_sync(kFullMaskXxh, val, 1);
}

// A whole 1 KiB block folded into a chunk's accumulators (lanes 0..7 of acc),
// in the chunk's block order: the kernels that hash chunks as they walk them.
template <typename Word>
__device__ __forceinline__ void fold_block(uint64_t& acc, Word&& word, const BlockKeys& keys, unsigned lane) {
  const uint64_t sum = block_sum(word, keys);
  if (lane < 8) acc = xxh3::scramble(acc + sum, lane);
}

// A chunk's XXH3-64 once its whole blocks (all but the last when the length
// is a multiple of 1 KiB) are folded into acc: the tail from its bytes, or
// XXH3's short path for chunks of at most 240 bytes. One warp; lane 0 gets it.
__device__ __forceinline__ uint64_t finish_chunk_hash(uint64_t acc, const uint8_t* bytes, uint64_t len, unsigned lane) {
  return len <= 240 ? (lane == 0 ? xxh3::hash64_short(bytes, len) : 0) : finish_long_warp(acc, bytes, len, lane);
}

// block_sum of block b of the 8-byte words at w64 (global memory).
// kReadOnly loads through the read-only cache (__ldg); pass false where the
// bytes were written by an earlier kernel the compiler cannot see (plain
// load, same result).
template <bool kReadOnly = true>
__device__ inline uint64_t warp_block_sum(const uint64_t* w64, uint64_t b, unsigned lane) {
  const uint64_t* block = w64 + b * 128 + lane;
  return block_sum([&](unsigned m) { return kReadOnly ? __ldg(block + 32 * m) : block[32 * m]; }, BlockKeys(lane));
}

// XXH3-64 of `len` bytes at `p` (8-byte aligned, global memory) by one warp:
// lane l takes words l, l+32, l+64 and l+96 of each 1 KiB block, so all its
// words feed accumulators l mod 8 and (l mod 8) ^ 1. Returns the hash in lane 0.
__device__ inline uint64_t warp_hash(const uint8_t* p, uint64_t len, unsigned lane) {
  if (len <= 240) return lane == 0 ? xxh3::hash64_short(p, len) : 0;
  const uint64_t blocks = (len - 1) / xxh3::kBlock;
  const uint64_t* w64 = reinterpret_cast<const uint64_t*>(p);
  uint64_t acc = 0;
  if (lane < 8) {
    uint64_t init[8];
    xxh3::init_acc(init);
    for (unsigned i = 0; i < 8; ++i)
      if (lane == i) acc = init[i];
  }
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint64_t sum = warp_block_sum(w64, b, lane);
    if (lane < 8) acc = xxh3::scramble(acc + sum, lane);
  }
  return finish_long_warp(acc, p, len, lane);
}

}  // namespace vlec::cuda
