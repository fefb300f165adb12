// cuda/encode_lanes.cu: the default GPU Huffman encoder ("lanes"), one thread
// block per chunk, writing exactly the CPU encoder's bytes.
//
// Why it is fast: the input is read once from DRAM and once more from L2,
// every word is written once, straight to its final place, and nothing is
// staged. The eight warps of a block split the chunk's rows. Pass A sums each
// lane's code lengths per range and folds the XXH3 block sums of the bytes
// it loads. A lane's refill schedule depends only on its own consumed bits C:
// with T = K·L, the words a lane has taken after the refill of a step that
// starts at C are ceil((C + T) / 32). So from the range sums every warp knows
// how many words all lanes took before its range (its slot base), and the
// chunk's size is known before any word is formed. The chunk's offset in the
// frame then comes from a decoupled look-back (chunk_scan.cuh), and in pass B
// each warp writes the words its lanes take in its range. A word taken near
// a range's end is completed by the next range's codes: the two warps each
// leave their part in shared memory and one more barrier joins them
// (fix_up_boundary), or, in chunks too short for that, the earlier warp
// encodes a few steps into the next range itself (the lookahead).
#include "cuda/encode_lane_writer.cuh"
#include "cuda/encode_rows.cuh"
#include "cuda/warp_index.cuh"
#include "huffman/codebook.hpp"

namespace vlec::cuda {

namespace {

constexpr unsigned kSharedSumWords = 1024;  // XXH3 block sums of chunks up to 128 KiB, in shared memory (two chunks)

// Rows a lookahead batch loads: 8 for bytes (codes of ~3 bits take ~5 rows
// to complete a word), 4 for wider symbols, whose longer codes complete it
// in 1-3 rows (8 there cost quant65536 1-2 %).
template <typename Sym> constexpr unsigned kLookaheadRows = sizeof(Sym) == 1 ? 8 : 4;
static_assert(kLookaheadRows<uint16_t> <= kBatchRows<uint16_t> && kLookaheadRows<uint32_t> <= kBatchRows<uint32_t>,
              "a lookahead batch fits the warp's stage");

// Pass B: the words this warp's lanes take in its range, each stored once.
//
// Fix-up mode (`fix_up`; fix_up_chunk): a range's last words that the next
// range completes are not completed here by a lookahead. The warp leaves,
// per lane, its pending words' slots, their count and the current word's
// low bits in its stage; the next warp leaves the high bits of each word it
// completes that was taken before its range in s_heads (two slots a
// thread); fix_up_boundary ORs them together after a barrier.
template <typename Sym, unsigned K, typename Table>
__device__ void pass_b(const Sym* in, uint64_t full_rows, uint32_t rest, const Range& r, const Table& table,
                       uint32_t T, uint32_t* words, const ChunkShared& sh, GroupWordT<Sym>* stage, unsigned warp,
                       unsigned lane, bool fix_up) {
  if (fix_up) s_heads[2 * threadIdx.x] = s_heads[2 * threadIdx.x + 1] = 0;
  constexpr unsigned kRowsPerBlock = 1024 / (kRow * sizeof(Sym));
  // The lane's stream position at the range start, and the words it took
  // before: ceil((C + T) / 32), C being its position before the previous step.
  uint32_t consumed = 0;
  for (unsigned w = 0; w < warp; ++w) consumed += sh.range_bits[w][lane];
  uint32_t taken = 0;
  if (r.row_begin > 0) {
    uint32_t prev_step = 0;
    for (int w = static_cast<int>(warp) - 1; w >= 0; --w) {
      const Range pr = warp_range(full_rows, rest, kRowsPerBlock, static_cast<unsigned>(w));
      if (pr.row_end > pr.row_begin) {  // the nearest earlier warp with rows ran the previous step
        prev_step = sh.last_step[w][lane];
        break;
      }
    }
    taken = (consumed - prev_step + T + 31) / 32;
  }
  uint32_t base = taken;  // words all lanes took before the range: this range's first slot
  for (unsigned m = 16; m > 0; m >>= 1) base += __shfl_xor_sync(kFull, base, m);
  LaneWriter w;
  w.buffer = 32 * taken - consumed;
  w.word = consumed / 32;
  w.acc_bits = consumed % 32;  // the low bits belong to an earlier range's word, never stored here
  w.own_from = taken;
  // The range's full rows, staged so that many loads are in flight.
  // While some lane's current word is an earlier range's, appends check
  // ownership; the test is repeated after every such row, so the loop drops
  // the check as soon as every lane has passed its first word (~3 rows of
  // skewed bytes), not at the end of a batch: tested once a batch, 11 % of
  // all rows took the check's ~54 more instructions.
  bool unused = false;  // pass A checked every symbol
  bool check = __any_sync(kFull, w.word < w.own_from);
  for (uint64_t row0 = r.row_begin; row0 < r.row_end; row0 += kBatchRows<Sym>) {
    const unsigned count = static_cast<unsigned>(min(uint64_t{kBatchRows<Sym>}, r.row_end - row0));
    stage_rows(in, row0, count, stage, lane);
    unsigned b = 0;
    while (check && b < count) {
      const GroupWordT<Sym> g = stage[b * kLanes + lane];
      auto entry = [&](unsigned i) { return table.template coded_entry<Sym>(g, i); };
      encode_row<K, true, true>(w, kGroup, entry, T, base, words, fix_up);
      ++b;
      check = __any_sync(kFull, w.word < w.own_from);
    }
#pragma unroll 2
    for (; b < count; ++b) {
      const GroupWordT<Sym> g = stage[b * kLanes + lane];
      auto entry = [&](unsigned i) { return table.template coded_entry<Sym>(g, i); };
      encode_row<K, true, false>(w, kGroup, entry, T, base, words);
    }
  }
  if (r.tail) {
    Sym s[4];
    const unsigned mine = load_partial_group(in + full_rows * kRow, rest, lane, s);
    encode_row<K, true, true>(w, mine, [&](unsigned i) { return table(s[i], unused); }, T, base, words, fix_up);
  }
  if (fix_up && warp != kWarps - 1) {  // fix-up mode: the pending words' state for the next warp
    __syncwarp();                      // (the stage's rows are read)
    uint32_t* tail = reinterpret_cast<uint32_t*>(stage) + 4 * lane;
    const int n = w.pending();
    tail[0] = w.s0, tail[1] = w.s1, tail[2] = static_cast<uint32_t>(n > 0 ? n : 0), tail[3] = w.acc;
    return;
  }
  // Lookahead into the following rows, until every word taken is complete
  // (or the chunk ends: the words are then the lanes' last). A word taken
  // late in the range completes up to 64 bits later, several rows on where
  // codes are short, so the rows come a batch at a time with every load in
  // flight (row by row, each row's load from L2 was waited for in turn:
  // 16-row ranges, as in 16,384-element chunks, spent a large share there).
  if (warp != kWarps - 1) {
    uint64_t row = r.row_end;
    while (row < full_rows && __any_sync(kFull, w.pending() > 0)) {
      const unsigned count = static_cast<unsigned>(min(uint64_t{kLookaheadRows<Sym>}, full_rows - row));
      stage_rows(in, row, count, stage, lane);
      for (unsigned b = 0; b < count && __any_sync(kFull, w.pending() > 0); ++b) {
        const GroupWordT<Sym> g = stage[b * kLanes + lane];
        auto entry = [&](unsigned i) { return table.template coded_entry<Sym>(g, i); };
        encode_row<K, false, true>(w, kGroup, entry, T, base, words);
      }
      row += count;
    }
    if (row >= full_rows && rest > 0 && __any_sync(kFull, w.pending() > 0)) {
      Sym s[4];
      const unsigned mine = load_partial_group(in + full_rows * kRow, rest, lane, s);
      encode_row<K, false, true>(w, mine, [&](unsigned i) { return table(s[i], unused); }, T, base, words);
    }
  }
  w.flush(words);
}

// Fix-up mode needs every range after the first to complete the two words
// its predecessor may leave pending: at least 64 code bits a lane, which 16
// rows give (4 symbols a row, codes of at least 1 bit). Chunks whose ranges
// are shorter (a frame's short last chunk) take the lookahead.
constexpr uint64_t kFixUpRows = 16;
template <typename Sym>
__device__ __forceinline__ bool fix_up_chunk(uint64_t full_rows, uint32_t rest) {
  constexpr unsigned kRowsPerBlock = 1024 / (kRow * sizeof(Sym));
  for (unsigned w = 1; w < kWarps; ++w) {
    const Range r = warp_range(full_rows, rest, kRowsPerBlock, w);
    if (r.row_end - r.row_begin < kFixUpRows) return false;
  }
  return true;
}

// After the barrier that follows pass B: the words warp `warp - 1` left
// pending, completed with the high bits warp `warp` gave them.
__device__ __forceinline__ void fix_up_boundary(const uint32_t* prev_tail, uint32_t* words) {
  const uint32_t* heads = s_heads + 2 * threadIdx.x;
  const uint32_t s0 = prev_tail[0], s1 = prev_tail[1], n = prev_tail[2], acc = prev_tail[3];
  if (n >= 1) words[s0] = acc | heads[n - 1];
  if (n == 2) words[s1] = heads[0];
}

// A chunk as the block sees it; cheap to rebuild in each phase.
template <typename Sym>
struct ChunkView {
  uint64_t c, n, full_rows, raw_bytes, hash_blocks;
  uint32_t rest;
  const Sym* in;
  unsigned long long* block_sums;  // XXH3 block sums: in shared memory when they fit, else in global scratch
  Range r;                         // this warp's rows
  __device__ ChunkView(const HuffmanEncodeArgs& a, uint64_t chunk, unsigned long long* s_sums, unsigned warp) {
    constexpr unsigned kRowsPerBlock = 1024 / (kRow * sizeof(Sym));
    c = chunk;
    const uint64_t first = c * a.chunk_elements;
    n = min(uint64_t{a.chunk_elements}, a.elements - first);
    in = static_cast<const Sym*>(a.in) + first;
    full_rows = n / kRow;
    rest = static_cast<uint32_t>(n % kRow);
    raw_bytes = n * sizeof(Sym);
    hash_blocks = raw_bytes > 240 && !a.given_checksums ? (raw_bytes - 1) / 1024 : 0;  // 0: pass A does not hash
    block_sums = 8 * hash_blocks <= kSharedSumWords ? s_sums : a.block_sums + 8 * (c * a.blocks_per_chunk);
    r = warp_range(full_rows, rest, kRowsPerBlock, warp);
  }
};

// Warp 0, after pass A: the chunk's size from the lanes' sums (docs/FORMAT.md
// §5: a lane that has consumed C bits before its last step has taken
// ceil((C + T) / 32) words), published at once for the chunks after it.
template <typename Sym>
__device__ void publish_chunk_size(const HuffmanEncodeArgs& a, const ChunkView<Sym>& v, ChunkShared& sh, uint32_t T,
                                   unsigned lane) {
  uint32_t total = 0;
  for (unsigned w = 0; w < kWarps; ++w) total += sh.range_bits[w][lane];
  const uint64_t lane_n = huffman::lane_symbols(v.n, lane);
  uint32_t words = lane_n ? (total - sh.final_step[lane] + T + 31) / 32 : 0;
  for (unsigned m = 16; m > 0; m >>= 1) words += __shfl_xor_sync(kFull, words, m);
  const bool coded = !sh.bad() && uint64_t{words} * 4 < v.raw_bytes;
  const uint32_t stored = coded ? 4 * words : static_cast<uint32_t>(v.raw_bytes);
  if (lane == 0) {
    scan_publish_size(a.scan, v.c, (stored + 3) / 4 * 4);
    sh.stored_bytes = stored;
  }
}

// The chunk's words (or its raw bytes) at its place, then its index entry.
template <typename Sym, unsigned K, typename Table>
__device__ void write_chunk(const HuffmanEncodeArgs& a, const ChunkView<Sym>& v, const ChunkShared& sh, uint32_t T,
                            const Table& table, GroupWordT<Sym>* stage, unsigned warp, unsigned lane) {
  uint8_t* out = a.frame + a.layout[1] + sh.offset;
  const bool raw = sh.stored_bytes == v.raw_bytes;
  const bool fix_up = a.boundary_fix_up && !raw && fix_up_chunk<Sym>(v.full_rows, v.rest);  // block-uniform
  if (raw) {
    // Stored raw, zero-padded to a multiple of 4 bytes.
    const uint8_t* src = reinterpret_cast<const uint8_t*>(v.in);
    for (uint64_t i = threadIdx.x; i < (v.raw_bytes + 3) / 4 * 4; i += blockDim.x)
      out[i] = i < v.raw_bytes ? src[i] : 0;
  } else {
    pass_b<Sym, K>(v.in, v.full_rows, v.rest, v.r, table, T, reinterpret_cast<uint32_t*>(out), sh, stage, warp, lane,
                   fix_up);
  }
  if (fix_up) {
    __syncthreads();  // every warp's tail is in its stage, every head in place
    if (warp > 0) {
      constexpr unsigned kStageWords = kBatchRows<Sym> * kLanes * sizeof(GroupWordT<Sym>) / 4;
      const uint32_t* prev_tail = reinterpret_cast<const uint32_t*>(stage) - kStageWords + 4 * lane;
      fix_up_boundary(prev_tail, reinterpret_cast<uint32_t*>(out));
    }
  }
  // The checksum is not needed to place anything, so it comes last.
  if (warp == kWarps - 1) {
    const uint64_t hash = a.given_checksums ? a.given_checksums[v.c]
                                            : fold_chunk_hash(v.block_sums, v.hash_blocks,
                                                              reinterpret_cast<const uint8_t*>(v.in), v.raw_bytes, lane);
    if (lane == 0) {
      uint32_t* entry = reinterpret_cast<uint32_t*>(a.frame + a.layout[0] + 16 * v.c);  // 4-byte aligned
      entry[0] = sh.stored_bytes;
      entry[1] = 0;
      entry[2] = static_cast<uint32_t>(hash);
      entry[3] = static_cast<uint32_t>(hash >> 32);
      a.checksums[v.c] = hash;
      a.chunk_status[v.c] = sh.bad() ? kEncodeNoCode : kEncodeOk;
    }
  }
}

// Blocks per SM the registers are budgeted for: 5 (48 registers; a few
// spills outside the row loops) where codes are at most 16 bits, 4 (64
// registers) for K = 1, whose longer codes and four refills a row need them.
// Measured on the H100 (bench/results/2026-11-22-h100-encode-lanes-blocks-
// per-sm.log): skewed bytes 571 -> 611 GB/s, quant1024 784 -> 800,
// quant65536 615 -> 571 with 5.
template <unsigned K>
constexpr int kLanesMinBlocks = K == 1 ? 4 : 5;

// The block's chunks, two at a time, software-pipelined: pass A of the next
// chunk (and the publication of its size) comes before the walk back that
// places the current one. By then the current chunk's predecessors have
// published their sizes, so the walk does not wait for them (it did: warps
// stood at the barrier behind warp 0's spinning), and the block's warps meet
// at three barriers a chunk. The kernel's shared state comes in by reference,
// so that each table type's copy of this body uses the same shared memory.
template <typename Sym, unsigned K, typename Table>
__device__ __forceinline__ void encode_chunks(const HuffmanEncodeArgs& a, const Table& table, uint32_t T,
                                              ChunkShared (&sh)[2], unsigned long long (&s_sums)[2][kSharedSumWords],
                                              GroupWordT<Sym>* stage, uint64_t& s_ticket, unsigned warp,
                                              unsigned lane) {
  uint64_t cur_chunk = s_ticket;
  if (cur_chunk >= a.chunk_count) return;
  unsigned cur = 0;
  {
    const ChunkView<Sym> v(a, cur_chunk, s_sums[cur], warp);
    pass_a<Sym, K>(v.in, v.full_rows, v.rest, v.r, table, v.hash_blocks, v.block_sums, sh[cur], stage, warp, lane);
    __syncthreads();
    if (warp == 0) publish_chunk_size(a, v, sh[cur], T, lane);
    if (threadIdx.x == 0) s_ticket = atomicAdd(a.scan.ticket, 1u);
    __syncthreads();
  }
  for (;;) {
    const uint64_t next_chunk = s_ticket;
    const bool more = next_chunk < a.chunk_count;
    const unsigned nxt = cur ^ 1;
    if (more) {
      const ChunkView<Sym> v(a, next_chunk, s_sums[nxt], warp);
      pass_a<Sym, K>(v.in, v.full_rows, v.rest, v.r, table, v.hash_blocks, v.block_sums, sh[nxt], stage, warp,
                     lane);
    }
    __syncthreads();
    const ChunkView<Sym> v(a, cur_chunk, s_sums[cur], warp);
    if (warp == 0) {
      if (more) publish_chunk_size(a, ChunkView<Sym>(a, next_chunk, s_sums[nxt], warp), sh[nxt], T, lane);
      const uint64_t offset = scan_walk_back(a.scan, cur_chunk, (sh[cur].stored_bytes + 3) / 4 * 4, lane);
      if (lane == 0) sh[cur].offset = offset;
    }
    __syncthreads();
    // Everyone has read s_ticket (before the barriers above).
    if (threadIdx.x == 0 && more) s_ticket = atomicAdd(a.scan.ticket, 1u);
    write_chunk<Sym, K>(a, v, sh[cur], T, table, stage, warp, lane);
    __syncthreads();  // sh[cur] and s_sums[cur] are free; s_ticket is visible
    if (!more) return;
    cur = nxt;
    cur_chunk = next_chunk;
  }
}

// One kernel per K and table; the one whose K matches the codebook (known
// only on the device) runs, the others return at once. kShared: u16 and u32
// codes from SharedEncodeTable. Where the host cannot tell which table the
// codebook takes (a.table_by_bound), both kernels of each K are launched and
// the alphabet bound picks one. Each table has kernels of its own: one kernel
// holding both bodies spilled more (u16, K = 2: 60 bytes against 4) and lost
// 5-7 % on quant65536, which takes the global table.
template <typename Sym, unsigned K, bool kShared>
__global__ void __launch_bounds__(kWarps * 32, kLanesMinBlocks<K>) encode_lanes_kernel(const HuffmanEncodeArgs a) {
  __shared__ ChunkShared sh[2];
  __shared__ unsigned long long s_sums[2][kSharedSumWords];
  __shared__ __align__(16) GroupWordT<Sym> s_stage[kWarps * kBatchRows<Sym> * kLanes];
  __shared__ uint64_t s_ticket;
  const uint32_t L = *a.max_length;
  if (huffman::symbols_per_step(L) != K) return;
  if (a.table_by_bound && (*a.alphabet_bound <= kSharedEntries) != kShared) return;
  const uint32_t T = K * L;
  const unsigned warp = uniform_warp_index(), lane = threadIdx.x % 32;
  GroupWordT<Sym>* stage = s_stage + warp * kBatchRows<Sym> * kLanes;
  fill_encode_tables(a.encode_entry, a.table_size);
  if (threadIdx.x == 0) s_ticket = atomicAdd(a.scan.ticket, 1u);
  __syncthreads();  // (also orders the table stores)
  if constexpr (kShared) {
    static_assert(sizeof(Sym) > 1, "bytes take EncodeTable, which is all in shared memory");
    encode_chunks<Sym, K>(a, SharedEncodeTable{}, T, sh, s_sums, stage, s_ticket, warp, lane);
  } else {
    encode_chunks<Sym, K>(a, EncodeTable{a.encode_entry, a.table_size}, T, sh, s_sums, stage, s_ticket, warp, lane);
  }
}

}  // namespace

// The table the codes come from: launch_for_each_table (encode_rows.cuh).
void launch_encode_lanes(const HuffmanEncodeArgs& args, cudaStream_t stream) {
  launch_for_each_table(args, stream, [](auto sym, auto k, auto shared) {
    return encode_lanes_kernel<decltype(sym), decltype(k)::value, decltype(shared)::value>;
  });
}

}  // namespace vlec::cuda
