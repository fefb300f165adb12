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
// each warp writes the words its lanes take in its range, encoding a few
// steps into the next range where a word it took is not yet full.
#include "cuda/encode_rows.cuh"

namespace vlec::cuda {

namespace {

constexpr unsigned kSharedSumWords = 2048;  // XXH3 block sums of chunks up to 256 KiB, in shared memory

// One lane's writer in pass B. The lane's stream bits sit in `acc` from the
// start of its word `word`; words below `own_from` were taken before this
// range and are stored by the warp that took them. Slots of the words taken
// and not yet stored wait in slot0..slot2 (never more than two are pending).
struct LaneWriter {
  uint64_t acc = 0;
  uint32_t acc_bits = 0;
  uint32_t word = 0, own_from = 0;
  uint32_t buffer = 0;  // the mirrored decoder's buffered bits
  uint32_t slot0 = 0, slot1 = 0, slot2 = 0, pending = 0;

  // Take a word if the decoder would (before a step); `base` is warp-uniform.
  // Branch-free: selects instead of a divergent block.
  __device__ __forceinline__ void refill(bool active, uint32_t T, uint32_t& base) {
    const bool need = active && buffer < T;
    const uint32_t mask = __ballot_sync(kFull, need);
    const uint32_t slot = base + __popc(mask & lanemask_lt());
    slot0 = need && pending == 0 ? slot : slot0;
    slot1 = need && pending == 1 ? slot : slot1;
    slot2 = need && pending == 2 ? slot : slot2;
    pending += need;
    buffer += need ? 32u : 0u;
    base += __popc(mask);
  }
  // Append up to 32 bits (one step's codes, merged); store the word they complete.
  __device__ __forceinline__ void append(uint32_t code, uint32_t len, uint32_t* words) {
    acc |= uint64_t{code} << acc_bits;
    acc_bits += len;
    const bool full = acc_bits >= 32;
    const bool store = full && word >= own_from;
    if (store) words[slot0] = static_cast<uint32_t>(acc);
    slot0 = store ? slot1 : slot0;
    slot1 = store ? slot2 : slot1;
    pending -= store;
    word += full;
    acc = full ? acc >> 32 : acc;
    acc_bits -= full ? 32u : 0u;
  }
  // The chunk ended: the remaining words (zero-padded) are the lane's last.
  // `acc` may still start below own_from (a lane that took a word at its
  // range's start and ended inside an earlier range's word): skip that part.
  __device__ __forceinline__ void flush(uint32_t* words) {
    if (pending == 0) return;
    const uint32_t behind = word < own_from ? own_from - word : 0;  // words of acc that are not ours (0..2)
    const uint64_t bits = behind == 0 ? acc : behind == 1 ? acc >> 32 : 0;
    words[slot0] = static_cast<uint32_t>(bits);
    if (pending > 1) words[slot1] = static_cast<uint32_t>(bits >> 32);
    if (pending > 2) words[slot2] = 0;
  }
};

// One row of a lane: kGroup / K steps of K symbols. `kInside` the range the
// lanes take words; past it (lookahead) they only complete words already taken.
template <typename Sym, unsigned K, bool kInside>
__device__ __forceinline__ void encode_row(LaneWriter& w, const Sym (&s)[4], unsigned mine, const EncodeTable& table,
                                           uint32_t T, uint32_t& base, uint32_t* words) {
  bool unused = false;
#pragma unroll
  for (unsigned step = 0; step < kGroup / K; ++step) {
    if (kInside) w.refill(step * K < mine, T, base);
    // Merge the step's codes: K * L <= 32 bits by the refill rule.
    uint32_t code = 0, len = 0;
#pragma unroll
    for (unsigned k = 0; k < K; ++k) {
      if (step * K + k < mine) {
        const uint32_t e = table(s[step * K + k], unused);
        code |= (e & 0xFFFFFFu) << len;
        len += e >> 24;
      }
    }
    if (kInside) w.buffer -= len;
    if (kInside || w.pending > 0) w.append(code, len, words);
  }
}

// Pass B: the words this warp's lanes take in its range, each stored once.
template <typename Sym, unsigned K>
__device__ void pass_b(const Sym* in, uint64_t full_rows, uint32_t rest, const Range& r, const EncodeTable& table,
                       uint32_t T, uint32_t* words, const ChunkShared& sh, GroupWordT<Sym>* stage, unsigned warp,
                       unsigned lane) {
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
  for (uint64_t row0 = r.row_begin; row0 < r.row_end; row0 += kBatchRows<Sym>) {
    const unsigned count = static_cast<unsigned>(min(uint64_t{kBatchRows<Sym>}, r.row_end - row0));
    stage_rows(in, row0, count, stage, lane);
    for (unsigned b = 0; b < count; ++b) {
      Sym s[4];
      unpack_group<Sym>(stage[b * kLanes + lane], s);
      encode_row<Sym, K, true>(w, s, kGroup, table, T, base, words);
    }
  }
  if (r.tail) {
    Sym s[4];
    const unsigned mine = load_partial_group(in + full_rows * kRow, rest, lane, s);
    encode_row<Sym, K, true>(w, s, mine, table, T, base, words);
  }
  // Lookahead into the following rows, until every word taken is complete
  // (or the chunk ends: the words are then the lanes' last).
  if (warp != kWarps - 1) {
    for (uint64_t row = r.row_end; row < full_rows + (rest > 0) && __any_sync(kFull, w.pending > 0); ++row) {
      Sym s[4];
      unsigned mine = kGroup;
      if (row < full_rows)
        load_group(in + row * kRow, lane, s);
      else
        mine = load_partial_group(in + full_rows * kRow, rest, lane, s);
      encode_row<Sym, K, false>(w, s, mine, table, T, base, words);
    }
  }
  w.flush(words);
}

template <typename Sym, unsigned K>
__device__ void encode_chunk(const HuffmanEncodeArgs& a, ChunkShared& sh, unsigned long long* s_sums, void* s_stage,
                             uint64_t c,
                             uint32_t T, const EncodeTable& table, unsigned warp, unsigned lane) {
  const uint64_t first = c * a.chunk_elements;
  const uint64_t n = min(uint64_t{a.chunk_elements}, a.elements - first);
  const Sym* in = static_cast<const Sym*>(a.in) + first;
  const uint64_t full_rows = n / kRow;
  const uint32_t rest = static_cast<uint32_t>(n % kRow);
  const uint64_t raw_bytes = n * sizeof(Sym);
  const uint64_t hash_blocks = raw_bytes > 240 ? (raw_bytes - 1) / 1024 : 0;
  constexpr unsigned kRowsPerBlock = 1024 / (kRow * sizeof(Sym));
  // XXH3 block sums in shared memory when they fit, else in global scratch.
  unsigned long long* block_sums =
      8 * hash_blocks <= kSharedSumWords ? s_sums : a.block_sums + 8 * (c * a.blocks_per_chunk);
  const Range r = warp_range(full_rows, rest, kRowsPerBlock, warp);

  for (uint64_t i = threadIdx.x; i < 8 * hash_blocks; i += blockDim.x) block_sums[i] = 0;
  __syncthreads();
  GroupWordT<Sym>* stage = reinterpret_cast<GroupWordT<Sym>*>(s_stage) + warp * kBatchRows<Sym> * kLanes;
  pass_a<Sym, K>(in, full_rows, rest, r, table, hash_blocks, block_sums, sh, stage, warp, lane);
  __syncthreads();
  if (warp == 0) {
    // The chunk's size from the lanes' sums (docs/FORMAT.md §5): a lane that
    // has consumed C bits before its last step has taken ceil((C + T) / 32) words.
    uint32_t total = 0;
    for (unsigned w = 0; w < kWarps; ++w) total += sh.range_bits[w][lane];
    const uint64_t lane_n = huffman::lane_symbols(n, lane);
    uint32_t words = lane_n ? (total - sh.final_step[lane] + T + 31) / 32 : 0;
    for (unsigned m = 16; m > 0; m >>= 1) words += __shfl_xor_sync(kFull, words, m);
    const bool coded = !sh.bad && uint64_t{words} * 4 < raw_bytes;
    const uint32_t stored = coded ? 4 * words : static_cast<uint32_t>(raw_bytes);
    const uint64_t offset = scan_exclusive_prefix(a.scan, c, (stored + 3) / 4 * 4, lane);
    if (lane == 0) {
      sh.stored_bytes = stored;
      sh.offset = offset;
    }
  }
  __syncthreads();
  uint8_t* out = a.frame + a.layout[1] + sh.offset;
  if (sh.stored_bytes == raw_bytes) {
    // Stored raw, zero-padded to a multiple of 4 bytes.
    const uint8_t* src = reinterpret_cast<const uint8_t*>(in);
    for (uint64_t i = threadIdx.x; i < (raw_bytes + 3) / 4 * 4; i += blockDim.x) out[i] = i < raw_bytes ? src[i] : 0;
  } else {
    pass_b<Sym, K>(in, full_rows, rest, r, table, T, reinterpret_cast<uint32_t*>(out), sh, stage, warp, lane);
  }
  // The checksum is not needed to place anything, so it comes last.
  if (warp == kWarps - 1) {
    const uint64_t hash = fold_chunk_hash(block_sums, hash_blocks, reinterpret_cast<const uint8_t*>(in), raw_bytes,
                                          lane);
    if (lane == 0) {
      uint32_t* entry = reinterpret_cast<uint32_t*>(a.frame + a.layout[0] + 16 * c);  // 4-byte aligned
      entry[0] = sh.stored_bytes;
      entry[1] = 0;
      entry[2] = static_cast<uint32_t>(hash);
      entry[3] = static_cast<uint32_t>(hash >> 32);
      a.checksums[c] = hash;
      a.chunk_status[c] = sh.bad ? kEncodeNoCode : kEncodeOk;
    }
  }
}

// One kernel per K; the one whose K matches the codebook (known only on the
// device) runs, the others return at once.
template <typename Sym, unsigned K>
__global__ void __launch_bounds__(kWarps * 32, 4) encode_lanes_kernel(const HuffmanEncodeArgs a) {
  __shared__ ChunkShared sh;
  __shared__ unsigned long long s_sums[kSharedSumWords];
  __shared__ GroupWordT<Sym> s_stage[kWarps * kBatchRows<Sym> * kLanes];
  const uint32_t L = *a.max_length;
  if (huffman::symbols_per_step(L) != K) return;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (unsigned i = threadIdx.x; i < kSharedEntries; i += blockDim.x)
    s_encode_table[i] = i < a.table_size ? a.encode_entry[i] : 0;
  // (the first __syncthreads below also orders these stores)
  const EncodeTable table{a.encode_entry, a.table_size};
  for (;;) {
    if (threadIdx.x == 0) {
      sh.chunk = atomicAdd(a.scan.ticket, 1u);
      sh.bad = 0;
    }
    __syncthreads();
    const uint64_t c = sh.chunk;
    if (c >= a.chunk_count) return;
    encode_chunk<Sym, K>(a, sh, s_sums, s_stage, c, K * L, table, warp, lane);
    __syncthreads();
  }
}

}  // namespace

void launch_encode_lanes(const HuffmanEncodeArgs& a, cudaStream_t stream) {
  if (a.chunk_count == 0) return;
  int sms = 0, per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  auto launch = [&](auto kernel) {
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kWarps * 32, 0));
    const uint64_t blocks = std::min<uint64_t>(a.chunk_count, uint64_t(sms) * std::max(per_sm, 1));
    kernel<<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream>>>(a);
  };
  auto launch_all = [&](auto sym) {
    using Sym = decltype(sym);
    launch(encode_lanes_kernel<Sym, 4>);
    launch(encode_lanes_kernel<Sym, 2>);
    launch(encode_lanes_kernel<Sym, 1>);
  };
  switch (a.width) {
    case 1: launch_all(uint8_t{}); break;
    case 2: launch_all(uint16_t{}); break;
    case 4: launch_all(uint32_t{}); break;
    default: VLEC_REQUIRE(false, "GPU Huffman encoding takes 1-, 2- or 4-byte elements, not ", a.width);
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda
