// bench/lane_layout_probe_blocks.cuh: the lane layout's encoder built as
// vlec's own encoder is (encode_lanes.cu), so that the two differ in the
// layout alone. Included by lane_layout_probe.cu, which says what the layout
// is and why it is probed.
//
// Like vlec's encoder: one block a chunk (tickets), eight warps splitting the
// chunk's rows, pass A from encode_rows.cuh itself (code-length sums per lane
// and range, and the chunk's XXH3 block sums), the chunk's size published at
// once and the decoupled look-back (chunk_scan.cuh) one chunk behind, two
// chunks in flight a block, and the chunk's XXH3 folded by the last warp.
// Unlike it: pass B replays no decoder. A lane's words are its code bits cut
// every 32, and word i of lane j has a place that the lanes' word counts
// alone give (32 i + j below the shortest count; the rest lane-major after
// 32 * shortest), so each warp starts at its lanes' bit
// offsets from pass A and stores every word it completes at once. A word
// whose bits two or more ranges share is left in shared memory by each (its
// part of the word, at most two such words a lane and range) and ORed
// together by warp 0 after one barrier. Rows come into registers a batch at
// a time (every load in flight) and are coded from there.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/chunk_scan.cuh"
#include "cuda/encode_rows.cuh"
#include "cuda/warp_index.cuh"
#include "cuda/xxh3_warp.cuh"
#include "huffman/layout.hpp"
#include "lane_layout_probe_kernels.cuh"

namespace vlec::probe {

struct BlockProbeArgs {
  const void* in;
  uint64_t n;
  uint32_t chunk;
  uint64_t chunks;
  const uint32_t* entry;  // the code table (at least 1,024 entries)
  uint32_t table_size;    // its real size
  uint8_t* frame;         // the chunks, dense: 36 bytes of lane counts, then the words
  uint64_t* offsets;      // [chunks]: each chunk's place in `frame`
  uint64_t* hashes;       // [chunks]: XXH3-64 of each chunk's bytes
  uint32_t* status;       // [chunks]: 1 = not written (a lane spread above kTailWords, a symbol without a code)
  cuda::ChunkScanState scan;
};

// Where a chunk's words go: word i of lane j at 32 i + j below the shortest
// count, at tail_start[j] + i - shortest past it (lane_tail_start).
struct LanePlaces {
  uint32_t shortest, spread;
  uint32_t tail_start[32];
};

__device__ __forceinline__ uint32_t word_place(uint32_t shortest, uint32_t tail_from, uint32_t i, uint32_t lane) {
  return i < shortest ? 32 * i + lane : tail_from + i;  // tail_from = tail_start - shortest
}

// Warp 0 after pass A: the lanes' word counts, their places past the
// shortest count, and the chunk's size, published for the chunks after it.
__device__ inline void lay_out_chunk(const BlockProbeArgs& a, uint64_t c, const cuda::ChunkShared& sh, LanePlaces& p,
                                     unsigned lane) {
  uint32_t total = 0;
  for (unsigned w = 0; w < cuda::kWarps; ++w) total += sh.range_bits[w][lane];
  const uint32_t words = (total + 31) / 32;
  const uint32_t shortest = __reduce_min_sync(kFull, words), longest = __reduce_max_sync(kFull, words);
  p.tail_start[lane] = lane_tail_start(words, shortest, lane);
  const uint32_t all = __reduce_add_sync(kFull, words);
  if (lane == 0) {
    p.shortest = shortest, p.spread = longest - shortest;
    cuda::scan_publish_size(a.scan, c, kCountBytes + 4 * uint64_t{all});
  }
}

template <typename Sym>
struct ProbeChunk {
  uint64_t c, n, full_rows, raw_bytes, hash_blocks;
  uint32_t rest;
  const Sym* in;
  cuda::Range r;
  __device__ ProbeChunk(const BlockProbeArgs& a, uint64_t chunk, unsigned warp) {
    constexpr unsigned kRowsPerBlock = 1024 / (huffman::kRow * sizeof(Sym));
    c = chunk;
    const uint64_t first = c * a.chunk;
    n = min(uint64_t{a.chunk}, a.n - first);
    in = static_cast<const Sym*>(a.in) + first;
    full_rows = n / huffman::kRow;
    rest = static_cast<uint32_t>(n % huffman::kRow);
    raw_bytes = n * sizeof(Sym);
    hash_blocks = raw_bytes > 240 ? (raw_bytes - 1) / 1024 : 0;
    r = cuda::warp_range(full_rows, rest, kRowsPerBlock, warp);
  }
};

// Pass B of one warp: its lanes' codes from bit `start` to `end` of each
// lane's stream (`total` bits), each word stored at its place as it
// completes; a word shared with another range goes to parts[lane] (the one
// holding `start`) or parts[32 + lane] (the one holding `end`).
template <typename Sym, unsigned K, typename Table>
__device__ void pass_b_places(const ProbeChunk<Sym>& v, const Table& table, uint32_t start, uint32_t end,
                              uint32_t total, const LanePlaces& p, uint32_t* words, uint32_t* parts, unsigned lane) {
  constexpr unsigned kBatch = cuda::kBatchRows<Sym>;
  const uint32_t shortest = p.shortest, tail_from = p.tail_start[lane] - shortest;
  uint32_t acc = 0, acc_bits = start % 32, word = start / 32;
  bool head = acc_bits != 0;  // the current word's low bits are an earlier range's
  const auto append = [&](uint32_t code, uint32_t len) {  // len <= 32
    const uint32_t spill = __funnelshift_l(code, 0u, acc_bits);
    acc |= code << acc_bits;
    acc_bits += len;
    const bool full = acc_bits >= 32;
    if (full && head) parts[lane] = acc;
    if (full && !head) __stcg(words + word_place(shortest, tail_from, word, lane), acc);
    head = head && !full;
    word += full;
    acc = full ? spill : acc;
    acc_bits &= 31u;
  };
  const auto code_row = [&](const cuda::GroupWordT<Sym>& g) {
#pragma unroll
    for (unsigned step = 0; step < 4 / K; ++step) {
      uint32_t code = 0, len = 0;
#pragma unroll
      for (unsigned k = 0; k < K; ++k) {
        const uint32_t e = table.template coded_entry<Sym>(g, step * K + k);
        code |= (e & 0xFFFFFFu) << len;
        len += e >> 24;
      }
      append(code, len);
    }
  };
  for (uint64_t row0 = v.r.row_begin; row0 < v.r.row_end; row0 += kBatch) {
    const unsigned count = static_cast<unsigned>(min(uint64_t{kBatch}, v.r.row_end - row0));
    const cuda::GroupWordT<Sym>* src = reinterpret_cast<const cuda::GroupWordT<Sym>*>(v.in + row0 * huffman::kRow) + lane;
    cuda::GroupWordT<Sym> g[kBatch];
    if (count == kBatch) {  // warp-uniform
      cuda::load_batch<true, Sym>(src, count, g);
#pragma unroll
      for (unsigned b = 0; b < kBatch; ++b) code_row(g[b]);
    } else {
      cuda::load_batch<false, Sym>(src, count, g);
#pragma unroll
      for (unsigned b = 0; b < kBatch; ++b)
        if (b < count) code_row(g[b]);
    }
  }
  if (v.r.tail) {
    Sym s[4];
    bool unused = false;
    const unsigned mine = cuda::load_partial_group(v.in + v.full_rows * huffman::kRow, v.rest, lane, s);
    for (unsigned i = 0; i < mine; ++i) {
      const uint32_t e = table(s[i], unused);
      append(e & 0xFFFFFFu, e >> 24);
    }
  }
  if (acc_bits > 0) {
    if (32 * word < start || end != total) parts[32 + lane] = acc;
    else __stcg(words + word_place(shortest, tail_from, word, lane), acc);
  }
}

// Warp 0, after the barrier that follows pass B: the shared words, each the
// OR of its ranges' parts (ranges in order, so a word's parts are adjacent).
__device__ inline void join_shared_words(const cuda::ChunkShared& sh, const LanePlaces& p, const uint32_t* stage_words,
                                         unsigned stage_stride, uint32_t* words, unsigned lane) {
  uint32_t total = 0;
  for (unsigned w = 0; w < cuda::kWarps; ++w) total += sh.range_bits[w][lane];
  const uint32_t shortest = p.shortest, tail_from = p.tail_start[lane] - shortest;
  bool have = false;
  uint32_t cur = 0, value = 0;
  const auto put = [&](uint32_t i, uint32_t part) {
    if (have && i == cur) {
      value |= part;
      return;
    }
    if (have) __stcg(words + word_place(shortest, tail_from, cur, lane), value);
    have = true, cur = i, value = part;
  };
  uint32_t start = 0;
  for (unsigned w = 0; w < cuda::kWarps; ++w) {
    const uint32_t end = start + sh.range_bits[w][lane];
    const uint32_t* parts = stage_words + w * stage_stride;
    if (start % 32 != 0 && end >= 32 * (start / 32 + 1)) put(start / 32, parts[lane]);
    if (end % 32 != 0 && (end / 32 * 32 < start || end != total)) put(end / 32, parts[32 + lane]);
    start = end;
  }
  if (have) __stcg(words + word_place(shortest, tail_from, cur, lane), value);
}

template <unsigned K>
constexpr int kBlockProbeMinBlocks = K == 1 ? 4 : 5;  // as vlec's encoder

template <typename Sym, unsigned K, typename Table>
__device__ __forceinline__ void probe_chunks(const BlockProbeArgs& a, const Table& table, cuda::ChunkShared (&sh)[2],
                                             LanePlaces (&places)[2], unsigned long long (&s_sums)[2][1024],
                                             cuda::GroupWordT<Sym>* stage, uint32_t* stage_words, uint64_t& s_ticket,
                                             unsigned warp, unsigned lane) {
  constexpr unsigned kStageWords = cuda::kBatchRows<Sym> * huffman::kLanes * sizeof(cuda::GroupWordT<Sym>) / 4;
  const auto pass_a = [&](const ProbeChunk<Sym>& v, unsigned buf) {
    cuda::pass_a<Sym, K>(v.in, v.full_rows, v.rest, v.r, table, v.hash_blocks <= 128 ? v.hash_blocks : 0,
                         s_sums[buf], sh[buf], stage, warp, lane);
  };
  uint64_t cur_chunk = s_ticket;
  if (cur_chunk >= a.chunks) return;
  unsigned cur = 0;
  pass_a(ProbeChunk<Sym>(a, cur_chunk, warp), cur);
  __syncthreads();
  if (warp == 0) lay_out_chunk(a, cur_chunk, sh[cur], places[cur], lane);
  if (threadIdx.x == 0) s_ticket = atomicAdd(a.scan.ticket, 1u);
  __syncthreads();
  for (;;) {
    const uint64_t next_chunk = s_ticket;
    const bool more = next_chunk < a.chunks;
    const unsigned nxt = cur ^ 1;
    if (more) pass_a(ProbeChunk<Sym>(a, next_chunk, warp), nxt);
    __syncthreads();
    const ProbeChunk<Sym> v(a, cur_chunk, warp);
    const LanePlaces& p = places[cur];
    uint32_t lane_words = 0;
    if (warp == 0) {
      if (more) lay_out_chunk(a, next_chunk, sh[nxt], places[nxt], lane);
      uint32_t total = 0;
      for (unsigned w = 0; w < cuda::kWarps; ++w) total += sh[cur].range_bits[w][lane];
      lane_words = (total + 31) / 32;
      const uint32_t all = __reduce_add_sync(kFull, lane_words);
      const uint64_t offset = cuda::scan_walk_back(a.scan, cur_chunk, kCountBytes + 4 * uint64_t{all}, lane);
      if (lane == 0) sh[cur].offset = offset;
    }
    __syncthreads();
    if (threadIdx.x == 0 && more) s_ticket = atomicAdd(a.scan.ticket, 1u);
    uint8_t* const base = a.frame + sh[cur].offset;
    uint32_t* const words = reinterpret_cast<uint32_t*>(base + kCountBytes);
    const bool ok = !sh[cur].bad() && p.spread <= kTailWords && v.hash_blocks <= 128;  // block-uniform
    uint32_t start = 0;
    for (unsigned w = 0; w < warp; ++w) start += sh[cur].range_bits[w][lane];
    const uint32_t end = start + sh[cur].range_bits[warp][lane];
    uint32_t total = end;
    for (unsigned w = warp + 1; w < cuda::kWarps; ++w) total += sh[cur].range_bits[w][lane];
    if (ok) pass_b_places<Sym, K>(v, table, start, end, total, p, words, stage_words + warp * kStageWords, lane);
    __syncthreads();  // every range's shared parts are in its stage
    if (warp == 0) {
      if (ok) join_shared_words(sh[cur], p, stage_words, kStageWords, words, lane);
      if (lane == 0) {
        a.offsets[cur_chunk] = sh[cur].offset;
        *reinterpret_cast<uint32_t*>(base) = p.shortest;
        a.status[cur_chunk] = ok ? 0u : 1u;
      }
      base[4 + lane] = static_cast<uint8_t>(lane_words - p.shortest);
    }
    if (warp == cuda::kWarps - 1) {
      const uint64_t hash = cuda::fold_chunk_hash(s_sums[cur], v.hash_blocks, reinterpret_cast<const uint8_t*>(v.in),
                                                  v.raw_bytes, lane);
      if (lane == 0) a.hashes[cur_chunk] = hash;
    }
    __syncthreads();  // sh[cur], places[cur], s_sums[cur] and the stages are free; s_ticket is visible
    if (!more) return;
    cur = nxt;
    cur_chunk = next_chunk;
  }
}

// kSharedTable: u16 codes of alphabets up to 1,024 (SharedEncodeTable), as vlec's encoder picks.
template <typename Sym, unsigned K, bool kSharedTable>
__global__ void __launch_bounds__(cuda::kWarps * 32, kBlockProbeMinBlocks<K>) probe_encode_blocks(const BlockProbeArgs a) {
  __shared__ cuda::ChunkShared sh[2];
  __shared__ LanePlaces places[2];
  __shared__ unsigned long long s_sums[2][1024];
  __shared__ __align__(16) cuda::GroupWordT<Sym> s_stage[cuda::kWarps * cuda::kBatchRows<Sym> * huffman::kLanes];
  __shared__ uint64_t s_ticket;
  const unsigned warp = cuda::uniform_warp_index(), lane = threadIdx.x % 32;
  cuda::GroupWordT<Sym>* stage = s_stage + warp * cuda::kBatchRows<Sym> * huffman::kLanes;
  uint32_t* stage_words = reinterpret_cast<uint32_t*>(s_stage);
  cuda::fill_encode_tables(a.entry, a.table_size);
  if (threadIdx.x == 0) s_ticket = atomicAdd(a.scan.ticket, 1u);
  __syncthreads();
  if constexpr (kSharedTable) {
    static_assert(sizeof(Sym) > 1, "bytes take EncodeTable");
    probe_chunks<Sym, K>(a, cuda::SharedEncodeTable{}, sh, places, s_sums, stage, stage_words, s_ticket, warp, lane);
  } else {
    probe_chunks<Sym, K>(a, cuda::EncodeTable{a.entry, a.table_size}, sh, places, s_sums, stage, stage_words, s_ticket,
                         warp, lane);
  }
}

}  // namespace vlec::probe
