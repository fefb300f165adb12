// cuda/encode_warp.cuh: the "warp" GPU Huffman encoder (the device API's
// default): one warp a chunk, one pass over its symbols, writing exactly the
// CPU encoder's bytes (docs/FORMAT.md §5). Its device code, for its kernel
// (encode_warp.cu: one frame a grid) and its batch kernel
// (encode_warp_batch.cu: many frames a grid), each in its own translation
// unit: in one, the batch kernel's pointers, read from memory, made the
// shared non-inlined hash readers' byte loads generic in both kernels.
//
// Why it is fast: the input is read once, and nothing waits on a barrier.
// Each lane codes its own symbols (the format's deal of symbols to lanes, K
// merged a step), and the lanes encoder's refill replay (LaneWriter,
// encode_lane_writer.cuh: a ballot and popcounts a step) gives every word its
// slot as it completes; the words go to the warp's own scratch slot. With
// the whole chunk in one warp there are no row ranges, so no pass over the
// code lengths, no words shared between warps and no block barriers, which
// is what held the lanes encoder (bench/lane_layout_probe.cu measured both:
// docs/ARCHITECTURE.md, session 30). After the last step the chunk's size is
// the words the refills took; the warp publishes it at once. Placing the
// chunk waits until the warp has coded its next chunk into its other slot
// (deferred placement): by then the predecessors, taken earlier by ticket,
// have published their sizes, and the decoupled look-back (chunk_scan.cuh)
// finds the chunk's offset without spinning; the slot is copied there. The
// chunk's XXH3 is folded from the rows as they are loaded (the decoder's
// RowHasher), unless the histogram pass gave it. A chunk that codes no
// smaller than its raw bytes, or holds a symbol without a code, is stored
// raw, as on the CPU; its coded words past the slot's end are never stored.
#pragma once

#include <algorithm>

#include "common/safety.hpp"
#include "cuda/encode_lane_writer.cuh"
#include "cuda/encode_rows.cuh"
#include "cuda/warp_chunk.cuh"
#include "cuda/warp_index.cuh"
#include "cuda/xxh3_warp.cuh"
#include "huffman/codebook.hpp"

namespace vlec::cuda {
namespace {

__shared__ uint64_t s_warp_secret[xxh3::kSecretSize / 8];

// What coding a chunk left for its placement (warp-uniform).
struct CodedChunk {
  uint64_t c;
  uint64_t hash;  // lane 0's
  uint32_t words;  // the words the refills took
  bool bad;        // a symbol without a code
};

// Chunk c by the calling warp, coded into `slot` (slot_words words); its
// size published.
template <typename Sym, unsigned K, typename Table>
__device__ __forceinline__ CodedChunk code_chunk(const HuffmanEncodeArgs& a, const Table& table, uint32_t T, uint64_t c,
                                                 uint32_t* slot, uint32_t slot_words, unsigned lane) {
  constexpr unsigned kBatch = kBatchRows<Sym>;
  const uint64_t first = c * a.chunk_elements;
  const uint64_t n = min(uint64_t{a.chunk_elements}, a.elements - first);
  const Sym* in = static_cast<const Sym*>(a.in) + first;
  const uint64_t raw_bytes = n * sizeof(Sym), full_rows = n / kRow;
  const uint32_t rest = static_cast<uint32_t>(n % kRow);
  const GroupWordT<Sym>* const lane_src = reinterpret_cast<const GroupWordT<Sym>*>(in) + lane;
  const bool hash_here = a.given_checksums == nullptr;  // (uniform)
  RowsHash<Sym> hash(s_warp_secret, raw_bytes, lane);
  LaneWriter w;  // the whole chunk is this warp's: nothing was taken before it
  w.bound = slot_words;
  uint32_t base = 0;  // warp-uniform: the words all lanes have taken
  // The smallest entry looked up: 0 if a symbol has no code (one IMNMX a
  // symbol, where a flag took a compare and an OR).
  uint32_t least = ~0u;
  const auto entry_of = [&](const GroupWordT<Sym>& g, unsigned i) {
    bool unused = false;
    const uint32_t e = table.template group_entry<Sym>(g, i, unused);
    least = min(least, e);
    return e;
  };
  uint64_t row0 = 0;
  for (; row0 + kBatch <= full_rows; row0 += kBatch) {
    GroupWordT<Sym> g[kBatch];
    load_batch<true, Sym>(lane_src + row0 * kLanes, kBatch, g);
    if (hash_here) hash.batch(g, row0);
#pragma unroll
    for (unsigned b = 0; b < kBatch; ++b)
      encode_row<K, true, false, true>(w, kGroup, [&](unsigned i) { return entry_of(g[b], i); }, T, base, slot);
  }
  for (; row0 < full_rows; ++row0) {
    const GroupWordT<Sym> g = __ldg(lane_src + row0 * kLanes);
    encode_row<K, true, false, true>(w, kGroup, [&](unsigned i) { return entry_of(g, i); }, T, base, slot);
  }
  if (rest) {
    Sym s[4];
    const unsigned mine = load_partial_group(in + full_rows * kRow, rest, lane, s);
    bool unused = false;
    encode_row<K, true, false, true>(
        w, mine,
        [&](unsigned i) {
          const uint32_t e = table(s[i], unused);
          least = min(least, e);
          return e;
        },
        T, base, slot);
  }
  w.flush<true>(slot);
  CodedChunk r;
  r.c = c;
  r.words = base;
  r.bad = __any_sync(kFull, least == 0);
  const bool coded = !r.bad && uint64_t{base} * 4 < raw_bytes;
  const uint64_t stored = coded ? 4 * uint64_t{base} : raw_bytes;
  if (lane == 0) scan_publish_size(a.scan, c, (stored + 3) / 4 * 4);
  // The hash is not needed to place anything: taken while the predecessors publish.
  r.hash = hash_here ? hash.finish(lane_src, reinterpret_cast<const uint8_t*>(in), raw_bytes) : a.given_checksums[c];
  return r;
}

// The coded chunk's offset by the decoupled look-back, its slot (or, stored
// raw, its input) copied there, and its index entry.
__device__ __forceinline__ void place_chunk(const HuffmanEncodeArgs& a, const CodedChunk& k, const uint32_t* slot,
                                            unsigned lane) {
  const uint64_t first = k.c * a.chunk_elements;
  const uint64_t raw_bytes = min(uint64_t{a.chunk_elements}, a.elements - first) * a.width;
  const bool coded = !k.bad && uint64_t{k.words} * 4 < raw_bytes;
  const uint32_t stored = coded ? 4 * k.words : static_cast<uint32_t>(raw_bytes);
  const uint64_t padded = (uint64_t{stored} + 3) / 4 * 4;
  __syncwarp();  // every lane's slot stores before the copy reads them
  const uint64_t offset = scan_walk_back(a.scan, k.c, padded, lane);
  uint8_t* out = a.frame + a.layout[1] + offset;  // 4-byte aligned
  if (coded) {
    copy_slot(reinterpret_cast<uint32_t*>(out), slot, k.words, lane);
  } else {
    // Stored raw, zero-padded to a multiple of 4 bytes (the input's chunks are 4-byte aligned).
    const uint8_t* bytes = static_cast<const uint8_t*>(a.in) + first * a.width;
    const uint32_t* src = reinterpret_cast<const uint32_t*>(bytes);
    uint32_t* dst = reinterpret_cast<uint32_t*>(out);
    for (uint64_t i = lane; i < raw_bytes / 4; i += kLanes) dst[i] = __ldg(src + i);
    if (lane < padded - raw_bytes / 4 * 4 && raw_bytes % 4) {
      const uint64_t i = raw_bytes / 4 * 4 + lane;
      out[i] = i < raw_bytes ? bytes[i] : 0;
    }
  }
  if (lane == 0) {
    uint32_t* entry = reinterpret_cast<uint32_t*>(a.frame + a.layout[0] + 16 * k.c);  // 4-byte aligned
    entry[0] = stored;
    entry[1] = 0;
    entry[2] = static_cast<uint32_t>(k.hash);
    entry[3] = static_cast<uint32_t>(k.hash >> 32);
    a.checksums[k.c] = k.hash;
    a.chunk_status[k.c] = k.bad ? kEncodeNoCode : kEncodeOk;
  }
  __syncwarp();  // the slot is read before the warp writes it again
}

// One frame's chunks: its blocks are `blocks` of the grid's, this one its
// `block`th (the grid itself for one frame; a share of it in a batch).
template <typename Sym, unsigned K, bool kShared>
__device__ __forceinline__ void encode_warp_frame(const HuffmanEncodeArgs& a, uint32_t block, uint32_t blocks) {
  const uint32_t L = *a.max_length;
  if (huffman::symbols_per_step(L) != K) return;
  if (a.table_by_bound && (*a.alphabet_bound <= kSharedEntries) != kShared) return;
  fill_encode_tables(a.encode_entry, a.table_size);
  copy_secret_words(s_warp_secret);
  __syncthreads();
  const unsigned lane = threadIdx.x % 32;
  const uint32_t slot_words = static_cast<uint32_t>(encode_warp_slot_words(a.chunk_elements, a.width));
  const bool defer = encode_warp_defers(a.chunk_count, uint64_t{blocks} * kWarps);  // (uniform)
  uint32_t* const slots =
      a.warp_slots + (uint64_t{block} * kWarps + uniform_warp_index()) * (defer ? 2 : 1) * slot_words;
  const auto take = [&]() -> uint64_t {
    uint32_t ticket = 0;
    if (lane == 0) ticket = atomicAdd(a.scan.ticket, 1u);
    return __shfl_sync(kFull, ticket, 0);
  };
  const auto code = [&](uint64_t c, uint32_t* slot) {
    if constexpr (kShared) {
      static_assert(sizeof(Sym) > 1, "bytes take EncodeTable, which is all in shared memory");
      return code_chunk<Sym, K>(a, SharedEncodeTable{}, K * L, c, slot, slot_words, lane);
    } else {
      return code_chunk<Sym, K>(a, EncodeTable{a.encode_entry, a.table_size}, K * L, c, slot, slot_words, lane);
    }
  };
  uint64_t c = take();
  if (c >= a.chunk_count) return;
  unsigned at = 0;  // the slot the coded chunk `prev` is in
  CodedChunk prev = code(c, slots);
  for (;;) {
    c = take();
    if (c >= a.chunk_count) break;
    if (!defer) place_chunk(a, prev, slots, lane);  // one slot: emptied before it is coded into again
    const unsigned next = defer ? at ^ 1 : at;
    const CodedChunk k = code(c, slots + next * slot_words);
    if (defer) place_chunk(a, prev, slots + at * slot_words, lane);
    prev = k;
    at = next;
  }
  place_chunk(a, prev, slots + at * slot_words, lane);
}

}  // namespace
}  // namespace vlec::cuda
