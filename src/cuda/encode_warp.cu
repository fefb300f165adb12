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
#include "cuda/warp_index.cuh"
#include "cuda/xxh3_warp.cuh"
#include "huffman/codebook.hpp"

namespace vlec::cuda {

namespace {

__shared__ uint64_t s_warp_secret[xxh3::kSecretSize / 8];

// XXH3-64 of a chunk of at most 240 bytes, out of line: inlined, its 64-bit
// arithmetic took the kernel from 64 registers to ~120.
__device__ __noinline__ uint64_t short_chunk_hash(const uint8_t* bytes, uint64_t len) {
  return xxh3::hash64_short(bytes, len);
}

// The chunk's XXH3 from the rows the warp loads: RowHasher over each batch's
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
  __device__ RowsHash(uint64_t raw_bytes, unsigned lane_index)
      : hasher(s_warp_secret), acc(init_acc_lane(lane_index)), blocks(raw_bytes > 240 ? (raw_bytes - 1) / 1024 : 0),
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
  RowsHash<Sym> hash(raw_bytes, lane);
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
    uint32_t* dst = reinterpret_cast<uint32_t*>(out);
    uint32_t i = lane;
    for (; i + 96 < base; i += 128) {  // four loads in flight a lane
      const uint32_t v0 = __ldcg(slot + i), v1 = __ldcg(slot + i + 32), v2 = __ldcg(slot + i + 64),
                     v3 = __ldcg(slot + i + 96);
      dst[i] = v0, dst[i + 32] = v1, dst[i + 64] = v2, dst[i + 96] = v3;
    }
    for (; i < base; i += 32) dst[i] = __ldcg(slot + i);
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

// The tables as launch_encode_lanes picks them; a grid of the blocks the GPU
// holds at once, no more than the scratch has slots for.
void launch_encode_warp(const HuffmanEncodeArgs& args, cudaStream_t stream) {
  if (args.chunk_count == 0) return;
  VLEC_REQUIRE(args.warp_slots != nullptr, "the warp encoder needs its scratch slots (frame_encode_temp_bytes)");
  HuffmanEncodeArgs a = args;
  const bool wide = a.width > 1 && encode_shared_table;
  const bool shared = wide && a.table_size <= kSharedEntries;
  a.table_by_bound = wide && !shared && a.alphabet_bound != nullptr && a.table_size >= huffman::kMaxAlphabet;
  const uint64_t slot_blocks = encode_warp_slot_count(a.chunk_count) / kWarps;
  auto launch = [&](auto kernel) {
    const uint64_t blocks = std::min<uint64_t>(
        {(a.chunk_count + kWarps - 1) / kWarps, slot_blocks,
         uint64_t{resident_blocks(reinterpret_cast<const void*>(kernel), kWarps * 32)}});
    kernel<<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream>>>(a);
  };
  auto launch_all = [&](auto sym, auto shared_tag) {
    using Sym = decltype(sym);
    constexpr bool kShared = decltype(shared_tag)::value && sizeof(Sym) > 1;
    launch(encode_warp_kernel<Sym, 4, kShared>);
    launch(encode_warp_kernel<Sym, 2, kShared>);
    launch(encode_warp_kernel<Sym, 1, kShared>);
  };
  auto launch_width = [&](auto shared_tag) {
    switch (a.width) {
      case 1: launch_all(uint8_t{}, shared_tag); break;
      case 2: launch_all(uint16_t{}, shared_tag); break;
      case 4: launch_all(uint32_t{}, shared_tag); break;
      default: VLEC_REQUIRE(false, "GPU Huffman encoding takes 1-, 2- or 4-byte elements, not ", a.width);
    }
  };
  if (!shared) launch_width(std::false_type{});
  if ((shared || a.table_by_bound) && a.width > 1) launch_width(std::true_type{});
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda
