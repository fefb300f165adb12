// cuda/encode_common.cuh: what the "pavle" and "reduce_shuffle" encoders
// share (docs/FORMAT.md §5), on top of encode_rows.cuh (loads, code table,
// pass A): the chunk's bookkeeping, as in encode_lanes.cu
// (one thread block per chunk from an atomic ticket; pass A sums code lengths
// per lane and folds the XXH3 block sums; the size gives the chunk's place by
// decoupled look-back; raw when coding does not shrink it; index entry,
// checksum, status), and a pass B that builds the lane bitstreams in shared
// memory, a piece of kPieceRows rows at a time, then moves their words to
// their slots.
//
// A piece: thread (warp w, lane j) holds lane j's groups of rows
// [4w, 4w + 4) of the piece: 16 consecutive symbols of the lane's stream.
// With the code-length sums of the threads before it (a scan over the eight
// warps), each thread knows where its codes start in the lane's stream, and
// the strategy writes the codes into the lane bitstreams (words[index][lane]:
// lane j's word z at index z - floor(C/32), C = the lane's bits before the
// piece; the lane's partial word from the previous piece sits at index 0).
// Then the refill schedule, computed from the same sums, gives each word its
// slot: before step q a lane takes a word iff ceil((C_q + T) / 32) has grown
// (C_q = its bits before step q), the word it takes is number
// ceil((C_q + T) / 32) - 1, and the slots go step by step, lane by lane (one
// ballot per step and warp, plus the takes of the warps before). A word is
// taken before any of its bits is written, and is complete within T + 31
// bits of its taking: at most two words per lane wait for the next piece.
#pragma once

#include "cuda/encode_rows.cuh"
#include "cuda/warp_index.cuh"

namespace vlec::cuda {
namespace {

constexpr unsigned kSharedSumWords = 1024;  // XXH3 block sums of chunks up to 128 KiB, in shared memory

constexpr unsigned kThreadRows = 4;                    // rows of a lane per thread in a piece
constexpr unsigned kThreadSyms = kThreadRows * kGroup;  // 16 symbols of one lane per thread
constexpr unsigned kPieceRows = kWarps * kThreadRows;   // 32 rows; at least 16 (see above)
static_assert(kPieceRows >= 16, "a pending word must complete within the next piece");
// The most words a lane's piece touches: its partial word plus 24-bit codes.
constexpr unsigned kPieceLaneWords = (31 + kPieceRows * kGroup * 24 + 31) / 32;  // 97

// --- pass B in pieces ---------------------------------------------------------

struct PieceShared {
  uint32_t sum[kWarps][kLanes];   // code bits of each thread's symbols
  uint32_t last[kWarps][kLanes];  // bits of each thread's last step
  uint32_t takes[kWarps];         // words the warp's lanes take in the piece
  uint32_t bits[kLanes];          // the lane's bits before the piece
  uint32_t carry[kLanes];         // the lane's partial word before the piece
  uint32_t taken[kLanes];         // words the lane took before the piece
  uint32_t pend_n[2][kLanes];     // words taken, not yet complete: at most 2 per lane, by piece parity
  uint32_t pend_slot[2][2][kLanes];
  uint32_t pend_word[2][2][kLanes];
  uint32_t base;                  // slots taken before the piece
};

// One thread's share of a piece, handed to the strategy.
struct PieceThread {
  uint32_t e[kThreadSyms];  // (length << 24) | reversed code, in the lane's order; 0 past nsym
  uint32_t sb[kThreadSyms / 4];  // the bits of each step, one byte each (the codes are not needed after place)
  unsigned nsym;            // symbols the thread holds (16 but in the chunk's last rows)
  uint32_t c_start;         // the lane's bits before the piece
  uint32_t c_thr;           // the lane's bits before the thread's first symbol (after the scan)
};

template <unsigned K>
__device__ __forceinline__ uint32_t step_bits(const PieceThread& t, unsigned s) {
  return (t.sb[s / 4] >> (8 * (s % 4))) & 0xFF;
}

template <typename Sym>
__device__ __forceinline__ void load_thread(const Sym* in, uint64_t full_rows, uint32_t rest, uint64_t row0,
                                            unsigned rows_here, const EncodeTable& table, PieceThread& t,
                                            unsigned lane) {
  bool unused = false;
  Sym s[kThreadRows][4];
  unsigned mine[kThreadRows];
#pragma unroll
  for (unsigned g = 0; g < kThreadRows; ++g) {  // the loads first, so that they are all in flight
    mine[g] = 0;
    for (unsigned i = 0; i < 4; ++i) s[g][i] = 0;
    const uint64_t row = row0 + g;
    if (g < rows_here && row < full_rows) {
      unpack_group<Sym>(__ldg(reinterpret_cast<const GroupWordT<Sym>*>(in + row * kRow) + lane), s[g]);
      mine[g] = kGroup;
    } else if (g < rows_here) {  // the chunk's partial row
      mine[g] = load_partial_group(in + full_rows * kRow, rest, lane, s[g]);
    }
  }
  t.nsym = 0;
#pragma unroll
  for (unsigned g = 0; g < kThreadRows; ++g) {
#pragma unroll
    for (unsigned i = 0; i < 4; ++i) t.e[4 * g + i] = i < mine[g] ? table(s[g][i], unused) : 0;
    t.nsym += mine[g];
  }
}

// The steps of a thread, mirrored decoder by decoder: before step s the lane
// takes a word iff ceil((C + T) / 32) has grown; f(s, take, word) per step.
template <unsigned K, typename F>
__device__ __forceinline__ uint32_t walk_steps(const PieceThread& t, uint32_t T, uint32_t taken, F&& f) {
  uint32_t c = t.c_thr;
#pragma unroll
  for (unsigned s = 0; s < kThreadSyms / K; ++s) {
    const uint32_t need = (c + T + 31) / 32;
    const bool take = s * K < t.nsym && need > taken;
    if (take) taken = need;
    f(s, take, need - 1);
    c += step_bits<K>(t, s);
  }
  return taken;
}

// Strategy S provides: struct Shared (with `uint32_t words[cells][kLanes]`),
// prepare() (before the scan: the thread's entries only) and place() (after
// it: the lane bitstreams of the piece complete in S::Shared::words).
template <typename Sym, unsigned K, typename S>
__device__ void pass_b_pieces(const Sym* in, uint64_t full_rows, uint32_t rest, const EncodeTable& table, uint32_t T,
                              uint32_t avg_bits, uint32_t* out, PieceShared& ps, typename S::Shared& ss,
                              unsigned warp, unsigned lane) {
  const uint64_t rows = full_rows + (rest > 0);
  if (warp == 0) {
    ps.bits[lane] = ps.carry[lane] = ps.taken[lane] = 0;
    ps.pend_n[0][lane] = ps.pend_n[1][lane] = 0;
    if (lane == 0) ps.base = 0;
  }
  __syncthreads();
  unsigned parity = 0;
  for (uint64_t p0 = 0; p0 < rows; p0 += kPieceRows, parity ^= 1) {
    const bool last = p0 + kPieceRows >= rows;
    const uint64_t row0 = p0 + warp * kThreadRows;
    const unsigned here = row0 < rows ? static_cast<unsigned>(min(uint64_t{kThreadRows}, rows - row0)) : 0;
    PieceThread t;
    load_thread(in, full_rows, rest, row0, here, table, t, lane);
    uint32_t sum = 0, last_bits = 0;
#pragma unroll
    for (unsigned s = 0; s < kThreadSyms / 4; ++s) t.sb[s] = 0;
#pragma unroll
    for (unsigned s = 0; s < kThreadSyms / K; ++s) {
      uint32_t b = 0;
#pragma unroll
      for (unsigned k = 0; k < K; ++k) b += t.e[s * K + k] >> 24;
      t.sb[s / 4] |= b << (8 * (s % 4));
      sum += b;
      if (s * K < t.nsym) last_bits = b;
    }
    ps.sum[warp][lane] = sum;
    ps.last[warp][lane] = last_bits;
    if (warp == 0) ps.pend_n[parity][lane] = 0;  // this parity's words were written in the previous piece
    t.c_start = ps.bits[lane];
    S::template prepare<K>(ss, ps, t, avg_bits, warp, lane);
    __syncthreads();
    // The scan over the warps: where the thread's codes start, where the lane ends.
    uint32_t c_end = t.c_start;
    t.c_thr = t.c_start;
#pragma unroll
    for (unsigned w = 0; w < kWarps; ++w) {
      const uint32_t b = ps.sum[w][lane];
      if (w < warp) t.c_thr += b;
      c_end += b;
    }
    // Words the lane took before the thread's first step (the previous
    // thread of the lane has rows whenever this one has).
    const uint32_t taken0 = warp == 0 ? ps.taken[lane] : (t.c_thr - ps.last[warp - 1][lane] + T + 31) / 32;
    S::template place<K>(ss, ps, t, warp, lane);
    uint32_t warp_takes = 0;
    walk_steps<K>(t, T, taken0, [&](unsigned, bool take, uint32_t) { warp_takes += __popc(__ballot_sync(kFull, take)); });
    if (lane == 0) ps.takes[warp] = warp_takes;
    const uint32_t base = ps.base;
    __syncthreads();
    // Move the words to their slots.
    uint32_t slot = base, total = 0;
#pragma unroll
    for (unsigned w = 0; w < kWarps; ++w) {
      const uint32_t n = ps.takes[w];
      if (w < warp) slot += n;
      total += n;
    }
    const uint32_t wbase = t.c_start / 32, complete = c_end / 32;
    auto word = [&](uint32_t z) { return 32 * z < c_end ? ss.words[z - wbase][lane] : 0u; };
    const uint32_t taken_end = walk_steps<K>(t, T, taken0, [&](unsigned, bool take, uint32_t z) {
      const uint32_t mask = __ballot_sync(kFull, take);
      if (take) {
        const uint32_t at = slot + __popc(mask & lanemask_lt());
        if (last || z < complete) {
          out[at] = word(z);
        } else {
          const uint32_t k = atomicAdd(&ps.pend_n[parity][lane], 1u);
          ps.pend_slot[parity][k][lane] = at;
          ps.pend_word[parity][k][lane] = z;
        }
      }
      slot += __popc(mask);
    });
    if (warp == 0) {
      // Words taken in the previous piece are complete now (the piece has at
      // least 16 rows, or is the last).
      const unsigned prev = parity ^ 1;
      for (unsigned k = 0; k < ps.pend_n[prev][lane]; ++k) out[ps.pend_slot[prev][k][lane]] = word(ps.pend_word[prev][k][lane]);
      ps.bits[lane] = c_end;
      ps.carry[lane] = c_end % 32 ? ss.words[complete - wbase][lane] : 0;
      if (lane == 0) ps.base = base + total;
    }
    if (warp == kWarps - 1) ps.taken[lane] = taken_end;  // (read only after a full piece)
    __syncthreads();
  }
}

// --- the chunk -----------------------------------------------------------------

template <typename Sym, unsigned K, typename S>
__device__ void encode_chunk_pieces(const HuffmanEncodeArgs& a, ChunkShared& sh, PieceShared& ps,
                                    unsigned long long* s_sums, void* s_work, uint64_t c, uint32_t T,
                                    const EncodeTable& table, unsigned warp, unsigned lane) {
  const uint64_t first = c * a.chunk_elements;
  const uint64_t n = min(uint64_t{a.chunk_elements}, a.elements - first);
  const Sym* in = static_cast<const Sym*>(a.in) + first;
  const uint64_t full_rows = n / kRow;
  const uint32_t rest = static_cast<uint32_t>(n % kRow);
  const uint64_t raw_bytes = n * sizeof(Sym);
  const uint64_t hash_blocks = raw_bytes > 240 ? (raw_bytes - 1) / 1024 : 0;
  constexpr unsigned kRowsPerBlock = 1024 / (kRow * sizeof(Sym));
  unsigned long long* block_sums =
      8 * hash_blocks <= kSharedSumWords ? s_sums : a.block_sums + 8 * (c * a.blocks_per_chunk);
  const Range r = warp_range(full_rows, rest, kRowsPerBlock, warp);

  __syncthreads();
  GroupWordT<Sym>* stage = static_cast<GroupWordT<Sym>*>(s_work) + warp * kBatchRows<Sym> * kLanes;
  pass_a<Sym, K>(in, full_rows, rest, r, table, hash_blocks, block_sums, sh, stage, warp, lane);
  __syncthreads();
  if (warp == 0) {
    uint32_t total = 0;
    for (unsigned w = 0; w < kWarps; ++w) total += sh.range_bits[w][lane];
    const uint64_t lane_n = huffman::lane_symbols(n, lane);
    uint32_t words = lane_n ? (total - sh.final_step[lane] + T + 31) / 32 : 0;
    uint64_t bits = total;
    for (unsigned m = 16; m > 0; m >>= 1) {
      words += __shfl_xor_sync(kFull, words, m);
      bits += __shfl_xor_sync(kFull, bits, m);
    }
    const bool coded = !sh.bad() && uint64_t{words} * 4 < raw_bytes;
    const uint32_t stored = coded ? 4 * words : static_cast<uint32_t>(raw_bytes);
    const uint64_t offset = scan_exclusive_prefix(a.scan, c, (stored + 3) / 4 * 4, lane);
    if (lane == 0) {
      sh.stored_bytes = stored;
      sh.offset = offset;
      sh.avg_bits = static_cast<uint32_t>(bits / n);
    }
  }
  __syncthreads();
  uint8_t* out = a.frame + a.layout[1] + sh.offset;
  if (sh.stored_bytes == raw_bytes) {
    const uint8_t* src = reinterpret_cast<const uint8_t*>(in);
    for (uint64_t i = threadIdx.x; i < (raw_bytes + 3) / 4 * 4; i += blockDim.x) out[i] = i < raw_bytes ? src[i] : 0;
  } else {
    pass_b_pieces<Sym, K, S>(in, full_rows, rest, table, T, sh.avg_bits, reinterpret_cast<uint32_t*>(out), ps,
                             *static_cast<typename S::Shared*>(s_work), warp, lane);
  }
  if (warp == kWarps - 1) {
    const uint64_t hash = fold_chunk_hash(block_sums, hash_blocks, reinterpret_cast<const uint8_t*>(in), raw_bytes,
                                          lane);
    if (lane == 0) {
      uint32_t* entry = reinterpret_cast<uint32_t*>(a.frame + a.layout[0] + 16 * c);
      entry[0] = sh.stored_bytes;
      entry[1] = 0;
      entry[2] = static_cast<uint32_t>(hash);
      entry[3] = static_cast<uint32_t>(hash >> 32);
      a.checksums[c] = hash;
      a.chunk_status[c] = sh.bad() ? kEncodeNoCode : kEncodeOk;
    }
  }
}

template <typename Sym, typename S>
constexpr std::size_t kWorkBytes = std::max<std::size_t>(kStageBytes<Sym>, sizeof(typename S::Shared));

// One kernel per K; the one whose K matches the codebook runs.
template <typename Sym, unsigned K, typename S>
__global__ void __launch_bounds__(kWarps * 32, S::kMinBlocks) encode_pieces_kernel(const HuffmanEncodeArgs a) {
  __shared__ ChunkShared sh;
  __shared__ PieceShared ps;
  __shared__ unsigned long long s_sums[kSharedSumWords];
  __shared__ uint4 s_work[(kWorkBytes<Sym, S> + 15) / 16];  // stage (pass A) or S::Shared (pass B)
  const uint32_t L = *a.max_length;
  if (huffman::symbols_per_step(L) != K) return;
  const unsigned warp = uniform_warp_index(), lane = threadIdx.x % 32;
  fill_encode_tables<false>(a.encode_entry, a.table_size);  // (why not checked: encode_rows.cuh)
  const EncodeTable table{a.encode_entry, a.table_size};
  for (;;) {
    if (threadIdx.x == 0) {
      sh.chunk = atomicAdd(a.scan.ticket, 1u);
    }
    __syncthreads();
    const uint64_t c = sh.chunk;
    if (c >= a.chunk_count) return;
    encode_chunk_pieces<Sym, K, S>(a, sh, ps, s_sums, s_work, c, K * L, table, warp, lane);
    __syncthreads();
  }
}

template <typename S>
void launch_pieces(const HuffmanEncodeArgs& a, cudaStream_t stream) {
  launch_for_each_k(a, stream,
                    [](auto sym, auto k) { return encode_pieces_kernel<decltype(sym), decltype(k)::value, S>; });
}

}  // namespace
}  // namespace vlec::cuda
