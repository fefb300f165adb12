// bench/lane_layout_probe_kernels.cuh: the kernels of the lane layout probe
// (lane_layout_probe.cu, which says what the layout is and why it is probed):
// the encoder into fixed slots, the encoder with placement (pass A, look-back,
// pass B) into one frame, and a plain decoder. Included by that file alone.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/chunk_scan.cuh"
#include "huffman/layout.hpp"

namespace vlec::probe {

constexpr unsigned kWarpsPerBlock = 8;
constexpr unsigned kSharedEntries = 1024;
constexpr unsigned kFull = 0xFFFFFFFFu;

template <typename Sym>
__device__ __forceinline__ void load_group(const Sym* p, uint32_t (&s)[4]) {
  if constexpr (sizeof(Sym) == 1) {
    const uint32_t w = *reinterpret_cast<const uint32_t*>(p);
    for (int k = 0; k < 4; ++k) s[k] = (w >> (8 * k)) & 255u;
  } else {
    const uint2 w = *reinterpret_cast<const uint2*>(p);
    s[0] = w.x & 0xFFFFu, s[1] = w.x >> 16, s[2] = w.y & 0xFFFFu, s[3] = w.y >> 16;
  }
}

// The symbols lane `lane` owns in a chunk's last, partial row (the chunk holds `count`).
__device__ __forceinline__ uint32_t partial_row_symbols(uint64_t count, uint32_t lane) {
  const uint32_t rest = static_cast<uint32_t>(count % huffman::kRow);
  return rest > huffman::kGroup * lane ? min(rest - huffman::kGroup * lane, huffman::kGroup) : 0;
}

// The codebook's first kSharedEntries entries into `table` (a block's shared
// memory), where the encoders look codes up there.
template <bool kShared>
__device__ __forceinline__ void load_table(uint32_t* table, const uint32_t* entry) {
  if constexpr (kShared) {
    for (uint32_t i = threadIdx.x; i < kSharedEntries; i += blockDim.x) table[i] = entry[i];
    __syncthreads();
  }
}

// Lane `lane`'s symbols of a chunk of `count` (src: its first group), K
// merged a step: put(word) for every word the lane completes, in order, its
// last, partial word included. lookup(symbol): (length << 24) | code.
template <typename Sym, unsigned K, typename Lookup, typename Put>
__device__ __forceinline__ void code_lane(const Sym* src, uint64_t count, uint32_t lane, const Lookup& lookup,
                                          const Put& put) {
  uint64_t acc = 0;
  uint32_t nb = 0;
  const auto append = [&](uint32_t code, uint32_t len) {  // code below 2^32, nb below 32: one word at most
    acc |= uint64_t{code} << nb;
    nb += len;
    if (nb >= 32) {
      put(static_cast<uint32_t>(acc));
      acc >>= 32;
      nb -= 32;
    }
  };
  const uint64_t rows = count / huffman::kRow;
  for (uint64_t r = 0; r < rows; ++r, src += huffman::kRow) {
    uint32_t s[4];
    load_group(src, s);
#pragma unroll
    for (unsigned step = 0; step < 4 / K; ++step) {
      uint32_t code = 0, len = 0;
#pragma unroll
      for (unsigned k = 0; k < K; ++k) {
        const uint32_t e = lookup(s[step * K + k]);
        code |= (e & 0xFFFFFFu) << len;
        len += e >> 24;
      }
      append(code, len);
    }
  }
  for (uint32_t k = 0, mine = partial_row_symbols(count, lane); k < mine; ++k) {
    const uint32_t e = lookup(src[k]);
    append(e & 0xFFFFFFu, e >> 24);
  }
  if (nb > 0) put(static_cast<uint32_t>(acc));
}

// One warp a chunk: lane j codes the chunk's symbols of lane j (groups of 4,
// row by row) into its words, word i stored at 32 i + j of the chunk's slot
// as it completes; then the words past the shortest lane's count are packed
// after 32 * shortest, row by row in lane order. lane_words: each lane's count.
template <typename Sym, unsigned K, bool kShared>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    probe_encode(const Sym* in, uint64_t n, uint32_t chunk, uint64_t chunks, const uint32_t* entry,
                 uint32_t* slots, uint64_t slot_words, uint32_t* lane_words) {
  __shared__ uint32_t table[kShared ? kSharedEntries : 1];
  load_table<kShared>(table, entry);
  const uint32_t lane = threadIdx.x & 31;
  const uint64_t c = uint64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  if (c >= chunks) return;
  const uint64_t first = c * chunk, count = min(uint64_t{chunk}, n - first);
  uint32_t* out = slots + c * slot_words;
  uint32_t* next = out + lane;  // where the lane's next word goes (32 words on per word)
  code_lane<Sym, K>(
      in + first + huffman::kGroup * lane, count, lane,
      [&](uint32_t s) { return kShared ? table[s] : __ldg(entry + s); },
      [&](uint32_t w) { __stcg(next, w), next += 32; });
  const uint32_t words = static_cast<uint32_t>((next - out) / 32);
  const uint32_t shortest = __reduce_min_sync(kFull, words), longest = __reduce_max_sync(kFull, words);
  uint32_t at = 32 * shortest;
  // A lane reads only its own words (its own stores: program order); a row's
  // words are all read before any is moved, and moves go below 32 (t + 1).
  for (uint32_t t = shortest; t < longest; ++t) {
    const bool has = words > t;
    const uint32_t w = has ? out[32 * t + lane] : 0, mask = __ballot_sync(kFull, has);
    __syncwarp();
    if (has) out[at + __popc(mask & ((1u << lane) - 1))] = w;
    at += __popc(mask);
    __syncwarp();
  }
  lane_words[32 * c + lane] = words;
}

// The encoder with placement: the same, in a frame. A warp takes its chunk
// by ticket, sums each lane's code lengths (pass A: the lane's word count),
// finds the chunk's offset by the decoupled look-back (chunk_scan.cuh) over
// sizes of 36 + 4 * words bytes, writes the lane counts (the shortest, then
// 32 one-byte excesses), then codes the chunk again (pass B): words below the
// shortest count straight to 32 i + j, the tail words through shared memory
// to their packed places. status[c] = 1: a spread above kTailWords.
constexpr unsigned kTailWords = 32;
constexpr unsigned kCountBytes = 36;

template <typename Sym, unsigned K, bool kShared>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    probe_encode_placed(const Sym* in, uint64_t n, uint32_t chunk, uint64_t chunks, const uint32_t* entry,
                        uint8_t* frame, uint64_t* offsets, cuda::ChunkScanState scan, uint32_t* status) {
  __shared__ uint32_t table[kShared ? kSharedEntries : 1];
  __shared__ uint32_t tail[kWarpsPerBlock][kTailWords][32];
  load_table<kShared>(table, entry);
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  uint32_t ticket = 0;
  if (lane == 0) ticket = atomicAdd(scan.ticket, 1u);
  const uint64_t c = __shfl_sync(kFull, ticket, 0);
  if (c >= chunks) return;
  const uint64_t first = c * chunk, count = min(uint64_t{chunk}, n - first), rows = count / huffman::kRow;
  const Sym* const src0 = in + first + huffman::kGroup * lane;
  const auto lookup = [&](uint32_t s) { return kShared ? table[s] : __ldg(entry + s); };
  uint32_t bits = 0;  // pass A
  const Sym* src = src0;
  for (uint64_t r = 0; r < rows; ++r, src += huffman::kRow) {
    uint32_t s[4];
    load_group(src, s);
#pragma unroll
    for (int k = 0; k < 4; ++k) bits += lookup(s[k]) >> 24;
  }
  for (uint32_t k = 0, mine = partial_row_symbols(count, lane); k < mine; ++k) bits += lookup(src[k]) >> 24;
  const uint32_t words = (bits + 31) / 32;
  const uint32_t shortest = __reduce_min_sync(kFull, words), longest = __reduce_max_sync(kFull, words);
  const uint32_t total = __reduce_add_sync(kFull, words);
  const uint64_t offset = cuda::scan_exclusive_prefix(scan, c, kCountBytes + 4 * uint64_t{total}, lane);
  uint8_t* const base = frame + offset;
  if (lane == 0) offsets[c] = offset, *reinterpret_cast<uint32_t*>(base) = shortest;
  base[4 + lane] = static_cast<uint8_t>(words - shortest);
  if (longest - shortest > kTailWords) {
    if (lane == 0) status[c] = 1;
    return;
  }
  uint32_t* const wbase = reinterpret_cast<uint32_t*>(base + kCountBytes);
  uint32_t* const tail_start = wbase + 32 * shortest;
  uint32_t* next = wbase + lane;
  uint32_t held = 0;  // tail words in shared memory
  code_lane<Sym, K>(src0, count, lane, lookup, [&](uint32_t w) {  // pass B
    if (next < tail_start) __stcg(next, w), next += 32;
    else tail[warp][held++][lane] = w;
  });
  uint32_t at = 32 * shortest;  // each lane reads back only its own tail words
  for (uint32_t t = shortest; t < longest; ++t) {
    const bool has = words > t;
    const uint32_t mask = __ballot_sync(kFull, has);
    if (has) __stcg(wbase + at + __popc(mask & ((1u << lane) - 1)), tail[warp][t - shortest][lane]);
    at += __popc(mask);
  }
}

// The decoder probe: one warp a chunk, lane j decodes its own symbols, word i
// of its lane read at 32 i + j below the shortest count (its few tail words
// first copied into shared memory), a refill whenever the buffer holds fewer
// than 32 bits (no ballot: where the word is depends on i alone), one symbol
// a lookup in a 2^kPrimaryBits table in shared memory (longer codes: a table
// of 2^max_length entries in global memory), and the row's 4 symbols stored
// as one coalesced word (u8) or two (u16). status[c] = 1: the lanes' spread
// exceeds kTailWords (none measured above 15).
constexpr unsigned kPrimaryBits = 11;

template <typename Sym, unsigned K>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    probe_decode(const uint32_t* slots, uint64_t slot_words, const uint32_t* lane_words, uint64_t n, uint32_t chunk,
                 uint64_t chunks, const uint32_t* primary, const uint32_t* whole, unsigned L, Sym* out,
                 uint32_t* status) {
  __shared__ uint32_t table[1u << kPrimaryBits];
  __shared__ uint32_t tail[kWarpsPerBlock][kTailWords][32];  // [warp][word - shortest][lane]: no bank conflicts
  for (uint32_t i = threadIdx.x; i < (1u << kPrimaryBits); i += blockDim.x) table[i] = primary[i];
  __syncthreads();
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const uint64_t c = uint64_t{blockIdx.x} * kWarpsPerBlock + warp;
  if (c >= chunks) return;
  const uint32_t* in = slots + c * slot_words;
  const uint32_t words = lane_words[32 * c + lane];
  const uint32_t shortest = __reduce_min_sync(kFull, words), longest = __reduce_max_sync(kFull, words);
  if (longest - shortest > kTailWords) {
    if (lane == 0) status[c] = 1;
    return;
  }
  uint32_t at = 32 * shortest;
  for (uint32_t t = shortest; t < longest; ++t) {
    const bool has = words > t;
    const uint32_t mask = __ballot_sync(kFull, has);
    if (has) tail[warp][t - shortest][lane] = in[at + __popc(mask & ((1u << lane) - 1))];
    at += __popc(mask);
  }
  __syncwarp();
  const uint32_t P = min(kPrimaryBits, L);
  const uint64_t pmask = (uint64_t{1} << P) - 1, lmask = (uint64_t{1} << L) - 1;
  uint64_t buf = 0;
  uint32_t bits = 0, i = 0;
  const uint32_t* word_at = in + lane;
  const auto refill = [&] {
    if (bits < 32) {
      const uint32_t w = i < shortest ? __ldg(word_at) : i < words ? tail[warp][i - shortest][lane] : 0u;
      buf |= uint64_t{w} << bits;
      bits += 32;
      ++i;
      word_at += 32;
    }
  };
  const auto decode_one = [&]() -> uint32_t {
    uint32_t e = table[buf & pmask];
    if ((e >> 24) == 0) e = __ldg(whole + (buf & lmask));
    const uint32_t l = e >> 24;
    buf >>= l;
    bits -= l;
    return e & 0xFFFFFFu;
  };
  const uint64_t first = c * chunk, count = min(uint64_t{chunk}, n - first), rows = count / huffman::kRow;
  Sym* dst = out + first + huffman::kGroup * lane;
  for (uint64_t r = 0; r < rows; ++r, dst += huffman::kRow) {
    uint32_t s[4];
#pragma unroll
    for (unsigned step = 0; step < 4 / K; ++step) {
      refill();
#pragma unroll
      for (unsigned k = 0; k < K; ++k) s[step * K + k] = decode_one();
    }
    if constexpr (sizeof(Sym) == 1)
      *reinterpret_cast<uint32_t*>(dst) = s[0] | s[1] << 8 | s[2] << 16 | s[3] << 24;
    else
      *reinterpret_cast<uint2*>(dst) = make_uint2(s[0] | s[1] << 16, s[2] | s[3] << 16);
  }
  for (uint32_t k = 0, mine = partial_row_symbols(count, lane); k < mine; ++k) {
    refill();
    dst[k] = static_cast<Sym>(decode_one());
  }
}

// The CPU's check: every chunk's lanes rebuilt from the probe's layout and
// decoded with the codebook (a table of 2^max_length entries), each symbol
// compared with the input. Returns the chunks that differ.
}  // namespace vlec::probe
