// cuda/encode_warp.cu: the "warp" GPU Huffman encoder (the device API's
// default): one warp a chunk, one pass over its symbols, writing exactly the
// CPU encoder's bytes (docs/FORMAT.md §5).
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
// the words the refills took; the warp publishes it, finds the chunk's
// offset by the decoupled look-back (chunk_scan.cuh: its predecessors,
// taken earlier by ticket, have mostly published by then) and copies the
// slot there (the slot was just written: its words come from L2). The
// chunk's XXH3 is folded from the rows as they are loaded (the decoder's
// RowHasher), unless the histogram pass gave it. A chunk that codes no
// smaller than its raw bytes, or holds a symbol without a code, is stored
// raw, as on the CPU; its coded words past the slot's end are never stored.
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

// Chunk c by the calling warp: coded into `slot` (slot_words words), placed,
// indexed.
template <typename Sym, unsigned K, typename Table>
__device__ __forceinline__ void encode_chunk(const HuffmanEncodeArgs& a, const Table& table, uint32_t T, uint64_t c, uint32_t* slot,
                             uint32_t slot_words, unsigned lane) {
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
  const bool any_bad = __any_sync(kFull, least == 0);
  const bool coded = !any_bad && uint64_t{base} * 4 < raw_bytes;
  const uint32_t stored = coded ? 4 * base : static_cast<uint32_t>(raw_bytes);
  const uint64_t padded = (uint64_t{stored} + 3) / 4 * 4;
  if (lane == 0) scan_publish_size(a.scan, c, padded);
  // The hash is not needed to place anything: taken while the predecessors publish.
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(in);
  const uint64_t h = hash_here ? hash.finish(lane_src, bytes, raw_bytes) : a.given_checksums[c];
  __syncwarp();  // every lane's slot stores before the copy reads them
  const uint64_t offset = scan_walk_back(a.scan, c, padded, lane);
  uint8_t* out = a.frame + a.layout[1] + offset;  // 4-byte aligned
  if (coded) {
    copy_slot(reinterpret_cast<uint32_t*>(out), slot, base, lane);
  } else {
    // Stored raw, zero-padded to a multiple of 4 bytes (the input's chunks are 4-byte aligned).
    const uint32_t* src = reinterpret_cast<const uint32_t*>(in);
    uint32_t* dst = reinterpret_cast<uint32_t*>(out);
    for (uint64_t i = lane; i < raw_bytes / 4; i += kLanes) dst[i] = __ldg(src + i);
    if (lane < padded - raw_bytes / 4 * 4 && raw_bytes % 4) {
      const uint64_t i = raw_bytes / 4 * 4 + lane;
      out[i] = i < raw_bytes ? bytes[i] : 0;
    }
  }
  if (lane == 0) {
    uint32_t* entry = reinterpret_cast<uint32_t*>(a.frame + a.layout[0] + 16 * c);  // 4-byte aligned
    entry[0] = stored;
    entry[1] = 0;
    entry[2] = static_cast<uint32_t>(h);
    entry[3] = static_cast<uint32_t>(h >> 32);
    a.checksums[c] = h;
    a.chunk_status[c] = any_bad ? kEncodeNoCode : kEncodeOk;
  }
  __syncwarp();  // the slot is read before the warp's next chunk writes it
}

// One kernel per K and table, as the lanes encoder's (launch_encode_lanes
// says which launch); the warps take chunks by ticket until none is left.
template <typename Sym, unsigned K, bool kShared>
__global__ void __launch_bounds__(kWarps * 32, 4) encode_warp_kernel(const HuffmanEncodeArgs a) {
  const uint32_t L = *a.max_length;
  if (huffman::symbols_per_step(L) != K) return;
  if (a.table_by_bound && (*a.alphabet_bound <= kSharedEntries) != kShared) return;
  fill_encode_tables(a.encode_entry, a.table_size);
  copy_secret_words(s_warp_secret);
  __syncthreads();
  const unsigned lane = threadIdx.x % 32;
  const uint32_t slot_words = static_cast<uint32_t>(encode_warp_slot_words(a.chunk_elements, a.width));
  uint32_t* const slot = a.warp_slots + (uint64_t{blockIdx.x} * kWarps + uniform_warp_index()) * slot_words;
  for (;;) {
    uint32_t ticket = 0;
    if (lane == 0) ticket = atomicAdd(a.scan.ticket, 1u);
    const uint64_t c = __shfl_sync(kFull, ticket, 0);
    if (c >= a.chunk_count) return;
    if constexpr (kShared) {
      static_assert(sizeof(Sym) > 1, "bytes take EncodeTable, which is all in shared memory");
      encode_chunk<Sym, K>(a, SharedEncodeTable{}, K * L, c, slot, slot_words, lane);
    } else {
      encode_chunk<Sym, K>(a, EncodeTable{a.encode_entry, a.table_size}, K * L, c, slot, slot_words, lane);
    }
  }
}

}  // namespace

// The tables as the lanes encoder picks them (launch_for_each_table); a
// block per 8 chunks, no more blocks than the GPU holds at once nor than the
// scratch has slots for.
void launch_encode_warp(const HuffmanEncodeArgs& args, cudaStream_t stream) {
  VLEC_REQUIRE(args.chunk_count == 0 || args.warp_slots != nullptr,
               "the warp encoder needs its scratch slots (frame_encode_temp_bytes)");
  const uint64_t max_blocks =
      std::min((args.chunk_count + kWarps - 1) / kWarps, encode_warp_slot_count(args.chunk_count) / kWarps);
  launch_for_each_table(
      args, stream,
      [](auto sym, auto k, auto shared) {
        return encode_warp_kernel<decltype(sym), decltype(k)::value, decltype(shared)::value>;
      },
      max_blocks);
}

}  // namespace vlec::cuda
