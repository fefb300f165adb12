// cuda/huffman_decode.cu: see huffman_decode.hpp. One warp decodes one chunk
// and verifies it: the chunk's XXH3 is folded from the rows the lanes hold
// in registers (xxh3_warp.cuh), so checking costs no second pass.
//
// Why it is fast: the hot loop is branch-free in the common case and short;
// the per-lane work (refill from register windows of upcoming words, table
// lookups) and why it is shaped so are in huffman_decode_lanes.cuh. The
// kernel is specialised on the symbol type, K, pairs and long codes. Full
// rows go block by block of the hash, so no row tests whether to hash.
#include <algorithm>
#include <atomic>
#include <type_traits>
#include <utility>

#include "cuda/cuda_check.hpp"
#include "cuda/launch_cache.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/huffman_decode.hpp"
#include "cuda/huffman_decode_lanes.cuh"
#include "cuda/warp_index.cuh"
#include "cuda/xxh3_warp.cuh"
#include "huffman/gpu_tables.hpp"
#include "huffman/layout.hpp"

namespace vlec::cuda {

namespace {

// Diagnostics (set_decode_sub_shared): whether a second level that fits goes
// to shared memory (the default) or is read from global memory.
std::atomic<bool> g_sub_shared{true};

using huffman::kGroup;
using huffman::kLanes;
using huffman::kRow;
using namespace decode_lanes;

constexpr unsigned kWarpsPerBlock = 8;

// Four symbols of a lane, stored with one vector store.
template <typename Sym>
__device__ __forceinline__ void store_group(void* base, uint64_t group, const Sym (&s)[4]) {
  if constexpr (sizeof(Sym) == 1) {
    static_cast<uint32_t*>(base)[group] = uint32_t{s[0]} | uint32_t{s[1]} << 8 | uint32_t{s[2]} << 16 |
                                          uint32_t{s[3]} << 24;
  } else if constexpr (sizeof(Sym) == 2) {
    static_cast<uint2*>(base)[group] = make_uint2(uint32_t{s[0]} | uint32_t{s[1]} << 16,
                                                  uint32_t{s[2]} | uint32_t{s[3]} << 16);
  } else {
    static_cast<uint4*>(base)[group] = make_uint4(s[0], s[1], s[2], s[3]);
  }
}

// Decoder variants (HuffmanDecodeArgs::variant), measured by gpu_bench on
// its three datasets' kernels only: 0 the decoder; 1 the previous one (64-bit
// buffer, no prefetch); 2 the split buffer without the prefetch; 3 three
// register windows instead of the prefetch; 4 the decoder at 4 blocks an SM
// (64 registers), without row windows; 5 the decoder without row windows
// (K = 2: the windows checked after every refill). The decoder runs 5
// blocks an SM (48 registers; its row loops do not spill): +3.6 % on skewed
// bytes, +1 % on quant1024, even on quant65536
// (bench/results/2026-11-22-h100-huffman-decode-refill-steps.log).
//
// Row windows (kVariant 0, K = 2) except with the 13-bit single table
// (kLong 2: u16 quantization codes of 65,536 bins), whose rows take ~1.2
// words a lane, so that the windows move on nearly every row: there the
// windows checked at every refill decode 3 % faster (1,044-1,046 against
// 1,012-1,018 GB/s; skewed bytes 955 against 886-888, quant1024 1,399-1,407
// against 1,352-1,358: bench/results/2026-11-26-h100-session14-row-windows-gpu-bench.log).
template <unsigned K, unsigned kVariant, unsigned kLong>
using DecoderFor = LaneDecoder<K, kVariant != 1, kVariant == 3 ? 3 : 2, kVariant == 0 || kVariant == 4 || kVariant == 5,
                               K == 2 && kLong != 2 && kVariant == 0>;
template <unsigned kVariant>
constexpr int kBlocksPerSm = kVariant == 0 || kVariant == 5 ? 5 : 4;

// The XXH3 secret's words, for the row hashes (RowHasher).
__shared__ uint64_t s_secret_words[xxh3::kSecretSize / 8];

// Zero padding after a chunk (its bytes [from, to) of the payload).
__device__ bool padding_zero(const uint8_t* payload, uint64_t from, uint64_t to, unsigned lane) {
  bool ok = true;
  for (uint64_t i = from + lane; i < to; i += kLanes) ok = ok && payload[i] == 0;
  return __all_sync(kFullMask, ok);
}

// Decode and verify chunk c with the calling warp.
template <typename Sym, unsigned K, bool kPairs, unsigned kLong, unsigned kVariant>
__device__ __forceinline__ void decode_chunk(const HuffmanDecodeArgs& a, const LongTables& t, uint64_t c,
                                             unsigned lane) {
  const ChunkDesc chunk = a.chunks[c];
  const uint64_t first = c * a.chunk_elements;
  const uint64_t n = min(uint64_t{a.chunk_elements}, a.elements - first);
  const uint64_t bytes = n * sizeof(Sym);
  Sym* out = static_cast<Sym*>(a.out) + first;
  const uint8_t* out_bytes = reinterpret_cast<const uint8_t*>(out);
  // The payload's zero padding: after this chunk, and after the last one up to the payload's end.
  const uint64_t end = chunk.offset + (uint64_t{chunk.stored_bytes} + 3) / 4 * 4;
  bool padding_ok = padding_zero(a.payload, chunk.offset + chunk.stored_bytes, end, lane);
  if (c + 1 == a.chunk_count) padding_ok = padding_ok && padding_zero(a.payload, end, a.payload_bytes, lane);
  uint32_t status = kChunkOk;

  if (chunk.raw) {
    const uint32_t* src = reinterpret_cast<const uint32_t*>(a.payload + chunk.offset);
    uint32_t* dst = reinterpret_cast<uint32_t*>(out);
    for (uint64_t i = lane; i < bytes / 4; i += kLanes) dst[i] = __ldg(src + i);
    for (uint64_t i = bytes / 4 * 4 + lane; i < bytes; i += kLanes)
      reinterpret_cast<uint8_t*>(out)[i] = a.payload[chunk.offset + i];
    __syncwarp();
    if (a.verify) {
      const uint64_t hash = warp_hash(out_bytes, bytes, lane);
      if (lane == 0 && hash != chunk.checksum) status = kChunkChecksum;
    }
    if (!padding_ok) status = kChunkPadding;
    if (lane == 0) a.status[c] = status;
    return;
  }

  constexpr unsigned kRowsPerBlock = 1024 / (kRow * sizeof(Sym));
  const uint64_t hash_blocks = bytes > 240 ? (bytes - 1) / 1024 : 0;
  const uint32_t threshold = K * a.table.max_length;
  DecoderFor<K, kVariant, kLong> d;
  d.words = reinterpret_cast<const uint32_t*>(a.payload + chunk.offset);
  const uint32_t word_count = chunk.stored_bytes / 4;
  d.last_word = word_count - 1;  // Huffman chunks hold at least one word (frame.cpp)
  d.start(lane, threshold);
  RowHasher<Sym> hasher(s_secret_words);
  uint64_t acc = init_acc_lane(lane);
  const uint32_t full_rows = static_cast<uint32_t>(n / kRow);  // n < 2^32 (chunk_elements is 32-bit)
  // The hash's whole 1 KiB blocks lie in the full rows (the last block, even
  // when whole, is hashed from memory with the tail): decode them block by
  // block, folding each into the hash, so the row loop tests nothing per row.
  const uint32_t hashed_blocks = a.verify ? static_cast<uint32_t>(hash_blocks) : 0;
  Sym* lane_out = out + lane * kGroup;
  uint32_t row = 0;
  auto decode_row = [&](Sym (&s)[4]) {
    d.template refill<true>(true);
    d.template decode_step<Sym, kPairs, kLong>(t, s);
#pragma unroll
    for (unsigned step = 1; step < kGroup / K; ++step) {
      d.template refill<false>(true);
      d.template decode_step<Sym, kPairs, kLong>(t, s + step * K);
    }
    store_group(lane_out, uint64_t{row} * kLanes, s);
    d.next_row();
  };
  // A row of bytes as the lane's word (4 symbols, little-endian). With the
  // pair table a step's entry holds both symbols in its low 16 bits, so the
  // word is one byte permutation of the two entries (the bytes unpacked and
  // packed again took five instructions).
  auto decode_byte_row = [&]() -> uint32_t {
    uint32_t word;
    if constexpr (sizeof(Sym) == 1 && K == 2 && kPairs) {
      d.template refill<true>(true);
      const uint32_t first = d.template decode_pair_bytes<TableShape<Sym, K, kPairs, kLong>, kLong>(t);
      d.template refill<false>(true);
      const uint32_t second = d.template decode_pair_bytes<TableShape<Sym, K, kPairs, kLong>, kLong>(t);
      word = __byte_perm(first, second, 0x5410);
      reinterpret_cast<uint32_t*>(lane_out)[uint64_t{row} * kLanes] = word;
      d.next_row();
    } else if constexpr (sizeof(Sym) == 1) {
      Sym s[4];
      decode_row(s);
      word = pack_bytes(s);
    } else {
      word = 0;  // (bytes only)
    }
    return word;
  };
  for (uint32_t block = 0; block < hashed_blocks; ++block) {
    if constexpr (sizeof(Sym) == 1) {  // two rows a hash step (RowHasher::add_two_rows)
#pragma unroll 1
      for (unsigned r = 0; r < kRowsPerBlock; r += 2) {
        const uint32_t w0 = decode_byte_row();
        ++row;
        const uint32_t w1 = decode_byte_row();
        ++row;
        hasher.add_two_rows(w0, w1, r, lane);
      }
    } else {
#pragma unroll 1
      for (unsigned r = 0; r < kRowsPerBlock; ++r, ++row) {
        Sym s[4];
        decode_row(s);
        hasher.add(s, r, lane);
      }
    }
    hasher.fold(acc, lane);
  }
#pragma unroll 1
  for (; row < full_rows; ++row) {
    Sym s[4];
    decode_row(s);
  }
  // The last, partial row: this lane owns `mine` symbols of it.
  const uint32_t rest = static_cast<uint32_t>(n % kRow);
  if (rest) {
    const uint32_t mine = rest > lane * kGroup ? min(rest - lane * kGroup, kGroup) : 0;
    Sym* tail = out + uint64_t{full_rows} * kRow + lane * kGroup;
    for (unsigned step = 0; step < kGroup / K; ++step) {
      if (step == 0) d.template refill<true>(step * K < mine);
      else d.template refill<false>(step * K < mine);
      for (unsigned k = 0; k < K; ++k)
        if (step * K + k < mine) tail[step * K + k] = static_cast<Sym>(d.template decode_one<TableShape<Sym, K, kPairs, kLong>, kLong>(t));
    }
  }
  const uint32_t bad_mask = __ballot_sync(kFullMask, d.bad);
  const uint32_t pad_mask = __ballot_sync(kFullMask, d.leftover_bits());
  status = bad_mask ? kChunkBadCode : d.base != word_count ? kChunkWordCount : pad_mask || !padding_ok ? kChunkPadding
                                                                                                      : kChunkOk;
  if (a.verify && status == kChunkOk) {
    __syncwarp();  // the tail of the chunk is hashed from what the lanes stored
    const uint64_t hash = bytes <= 240 ? (lane == 0 ? xxh3::hash64_short(out_bytes, bytes) : 0)
                                       : finish_long_warp(acc, out_bytes, bytes, lane);
    if (lane == 0 && hash != a.chunks[c].checksum) status = kChunkChecksum;  // read again: no register held
  }
  if (lane == 0) a.status[c] = status;
}

// The block's copy of a frame's decode tables and of the XXH3 secret (the
// caller syncs after).
template <typename Sym, unsigned K, bool kPairs, unsigned kLong>
__device__ __forceinline__ void fill_tables(const HuffmanDecodeArgs& a) {
  using Shape = TableShape<Sym, K, kPairs, kLong>;
  copy_secret_words(s_secret_words);
  if (a.table.single) {  // null only for frames without a codebook (all chunks raw)
    // 16-byte copies (the 13-bit table is 32 KiB: 8 loads a thread, not 32).
    uint4* s_single = s_decode_tables + Shape::kPairBytes / 16;
    const uint4* single = reinterpret_cast<const uint4*>(a.table.single);
    for (uint32_t i = threadIdx.x; i < (1u << Shape::kSingleBits) / 4; i += blockDim.x) s_single[i] = single[i];
    if constexpr (kPairs) {
      const uint4* pair = static_cast<const uint4*>(a.table.pair);
      for (uint32_t i = threadIdx.x; i < Shape::kPairBytes / 16; i += blockDim.x) s_decode_tables[i] = pair[i];
    }
    if (kLong && threadIdx.x < 3 * kCanonSlots) s_canon[threadIdx.x] = a.table.canon[threadIdx.x];
    if (kLong && a.table.sub_shared) {
      uint32_t* s_sub = reinterpret_cast<uint32_t*>(s_decode_tables) + Shape::kSharedBytes / 4;
      for (uint32_t i = threadIdx.x; i < a.table.sub_entries; i += blockDim.x) s_sub[i] = a.table.sub[i];
    }
  }
}

// Warp w of block b decodes chunk 8b + w, then those one grid further (only
// with resident_blocks: the grid then fills the GPU once).
template <typename Sym, unsigned K, bool kPairs, unsigned kLong, unsigned kVariant>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, kBlocksPerSm<kVariant>)
    huffman_decode_kernel(const HuffmanDecodeArgs a) {
  fill_tables<Sym, K, kPairs, kLong>(a);
  __syncthreads();
  const LongTables& t = a.table;
  const unsigned lane = threadIdx.x % kLanes;
  for (uint64_t c = uint64_t{blockIdx.x} * kWarpsPerBlock + uniform_warp_index(); c < a.chunk_count;
       c += uint64_t{gridDim.x} * kWarpsPerBlock)
    decode_chunk<Sym, K, kPairs, kLong, kVariant>(a, t, c, lane);
}

// Many frames of one kernel shape in one launch: frame f has blocks
// [block_start[f], block_start[f + 1]), one per 8 chunks; a block copies its
// frame's arguments to shared memory (thread 0, after a binary search) and
// its tables, then each warp decodes one chunk, as huffman_decode_kernel.
template <typename Sym, unsigned K, bool kPairs, unsigned kLong>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, kBlocksPerSm<0>)
    huffman_decode_many_kernel(const HuffmanDecodeArgs* frames, const uint32_t* block_start, uint32_t count) {
  __shared__ __align__(16) unsigned char s_args[sizeof(HuffmanDecodeArgs)];
  __shared__ uint32_t s_first;
  auto& a = *reinterpret_cast<HuffmanDecodeArgs*>(s_args);
  if (threadIdx.x == 0) {
    uint32_t lo = 0, hi = count;  // the last frame whose first block is <= this one
    while (hi - lo > 1) {
      const uint32_t mid = (lo + hi) / 2;
      if (block_start[mid] <= blockIdx.x) lo = mid;
      else hi = mid;
    }
    a = frames[lo];
    s_first = block_start[lo];
  }
  __syncthreads();
  fill_tables<Sym, K, kPairs, kLong>(a);
  __syncthreads();
  const uint64_t c = uint64_t{blockIdx.x - s_first} * kWarpsPerBlock + uniform_warp_index();
  if (c < a.chunk_count) decode_chunk<Sym, K, kPairs, kLong, 0>(a, a.table, c, threadIdx.x % kLanes);
}

// Whether a frame's second level goes to shared memory, and the bytes of
// shared memory its kernel then takes.
template <typename Sym, unsigned K, bool kPairs, unsigned kLong>
std::size_t set_sub_shared(HuffmanDecodeArgs& a) {
  using Shape = TableShape<Sym, K, kPairs, kLong>;
  a.table.sub_shared = kLong && a.table.sub != nullptr && a.table.sub_entries > 0 &&
                       a.table.sub_entries <= Shape::kMaxSharedSub && g_sub_shared.load(std::memory_order_relaxed);
  return Shape::kSharedBytes + (a.table.sub_shared ? 4 * std::size_t{a.table.sub_entries} : 0);
}

template <typename Sym, unsigned K, bool kPairs, unsigned kLong, unsigned kVariant = 0>
void launch_kernel(const HuffmanDecodeArgs& args, cudaStream_t stream) {
  const auto kernel = huffman_decode_kernel<Sym, K, kPairs, kLong, kVariant>;
  HuffmanDecodeArgs a = args;
  const std::size_t smem = set_sub_shared<Sym, K, kPairs, kLong>(a);
  if (kBlocksPerSm<kVariant> > 4)  // the shared-memory carveout that lets 5 blocks (5 x 41-43 KiB) share an SM
    set_attribute_once(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  const uint64_t needed = (a.chunk_count + kWarpsPerBlock - 1) / kWarpsPerBlock;
  uint64_t blocks = needed;
  if (a.resident_blocks)
    blocks = std::min<uint64_t>(needed,
                                resident_blocks(reinterpret_cast<const void*>(kernel), kWarpsPerBlock * 32, smem));
  VLEC_REQUIRE(blocks < (uint64_t{1} << 31), "too many chunks for one GPU decode launch: ", a.chunk_count);
  kernel<<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, smem, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

// The measured alternatives, on gpu_bench's datasets' kernels only: skewed
// bytes (u8, K = 2, pairs), quant1024 and quant65536 (u16, K = 2 without
// pairs, the 11- and the 13-bit single table), and u16 K = 1.
template <typename Sym, unsigned K, bool kPairs, unsigned kLong>
bool launch_variant(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  constexpr bool benched = (sizeof(Sym) <= 2 && K == 2 && kPairs && kLong) || (sizeof(Sym) == 2 && K == 2 && kLong) ||
                           (sizeof(Sym) == 2 && K == 1 && !kPairs && kLong);
  if constexpr (benched) {
    switch (a.variant) {
      case 1: launch_kernel<Sym, K, kPairs, kLong, 1>(a, stream); return true;
      case 2: launch_kernel<Sym, K, kPairs, kLong, 2>(a, stream); return true;
      case 3: launch_kernel<Sym, K, kPairs, kLong, 3>(a, stream); return true;
      case 4: launch_kernel<Sym, K, kPairs, kLong, 4>(a, stream); return true;
      case 5: launch_kernel<Sym, K, kPairs, kLong, 5>(a, stream); return true;
    }
  }
  VLEC_REQUIRE(a.variant == 0, "GPU decoder variant ", a.variant, " is built for gpu_bench's datasets only");
  return false;
}

template <typename Sym, unsigned K, bool kPairs, unsigned kLong>
void launch_default_or_variant(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  if (!launch_variant<Sym, K, kPairs, kLong>(a, stream)) launch_kernel<Sym, K, kPairs, kLong>(a, stream);
}

// ---- many frames -----------------------------------------------------------

// A frame's kernel shape: K from the code length limit, the pair table where
// it is used (K >= 2), long codes where codes outgrow the single table (K < 4).
HuffmanDecodeShape shape_of(const HuffmanDecodeArgs& a) {
  const unsigned K = huffman::symbols_per_step(a.table.max_length);
  const bool pairs = a.table.use_pairs && a.table.pair && K >= 2;
  // A width the rule (huffman::gpu_single_bits) gives this shape, long codes common or not.
  VLEC_REQUIRE(!a.table.single || a.table.single_bits == huffman::gpu_single_bits(a.table.max_length, pairs, false) ||
                   a.table.single_bits == huffman::gpu_single_bits(a.table.max_length, pairs, true),
               "GPU decode tables of the wrong shape");
  VLEC_REQUIRE(a.width == 1 || a.width == 2 || a.width == 4, "GPU Huffman decoding takes 1-, 2- or 4-byte elements");
  HuffmanDecodeShape s;
  s.width = a.width;
  s.K = K;
  s.pairs = pairs;
  s.wide_single = K == 2 && a.table.single && a.table.single_bits == 13;
  // Long codes: above the narrower single table the rule gives (13 bits for
  // K = 1, 11 for K = 2; a wide single table implies them).
  s.long_codes = K != 4 && a.table.max_length > huffman::single_table_bits(a.table.max_length, false);
  return s;
}

// Calls Op<Sym, K, kPairs, kLong>::run(args...) for a shape (the instantiated
// kernels; kLong as in TableShape: 0 none, 1 long codes, 2 the wide single table).
template <template <typename, unsigned, bool, unsigned> class Op, typename Sym, typename... Args>
auto dispatch_k(const HuffmanDecodeShape& s, Args&&... args) {
  if (s.K == 4) return s.pairs ? Op<Sym, 4, true, 0>::run(args...) : Op<Sym, 4, false, 0>::run(args...);
  if (s.K == 2 && s.pairs) return s.long_codes ? Op<Sym, 2, true, 1>::run(args...) : Op<Sym, 2, true, 0>::run(args...);
  if (s.K == 2 && s.wide_single) return Op<Sym, 2, false, 2>::run(args...);
  if (s.K == 2) return s.long_codes ? Op<Sym, 2, false, 1>::run(args...) : Op<Sym, 2, false, 0>::run(args...);
  return s.long_codes ? Op<Sym, 1, false, 1>::run(args...) : Op<Sym, 1, false, 0>::run(args...);
}
template <template <typename, unsigned, bool, unsigned> class Op, typename... Args>
auto dispatch_shape(const HuffmanDecodeShape& s, Args&&... args) {
  if (s.width == 1) return dispatch_k<Op, uint8_t>(s, args...);
  if (s.width == 2) return dispatch_k<Op, uint16_t>(s, args...);
  return dispatch_k<Op, uint32_t>(s, args...);
}

template <typename Sym, unsigned K, bool kPairs, unsigned kLong>
struct LaunchOne {
  static int run(const HuffmanDecodeArgs& a, cudaStream_t stream) {
    launch_default_or_variant<Sym, K, kPairs, kLong>(a, stream);
    return 0;
  }
};

template <typename Sym, unsigned K, bool kPairs, unsigned kLong>
struct SetSubShared {
  static std::size_t run(HuffmanDecodeArgs& a) { return set_sub_shared<Sym, K, kPairs, kLong>(a); }
};

template <typename Sym, unsigned K, bool kPairs, unsigned kLong>
struct LaunchMany {
  static int run(const HuffmanDecodeBatch::Launch& l, cudaStream_t stream) {
    const auto kernel = huffman_decode_many_kernel<Sym, K, kPairs, kLong>;
    set_attribute_once(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    kernel<<<l.blocks, kWarpsPerBlock * 32, l.shared_bytes, stream>>>(l.args, l.block_start, l.frames);
    CUDA_CHECK(cudaGetLastError());
    return 0;
  }
};

}  // namespace

std::size_t huffman_decode_batch_bytes(std::size_t frames) {
  return (frames * sizeof(HuffmanDecodeArgs) + 255) / 256 * 256 + 4 * (2 * frames + 1);
}

HuffmanDecodeBatch stage_huffman_decode_batch(const std::vector<HuffmanDecodeArgs>& frames, void* d_scratch,
                                              std::size_t scratch_bytes, cudaStream_t stream, HostWrites& writes) {
  HuffmanDecodeBatch batch;
  std::vector<std::pair<HuffmanDecodeShape, std::size_t>> order;  // (shape, frame), frames with chunks only
  for (std::size_t f = 0; f < frames.size(); ++f) {
    if (frames[f].chunk_count == 0) continue;
    VLEC_REQUIRE(frames[f].variant == 0 && !frames[f].resident_blocks,
                 "batched GPU decoding takes the default decoder only");
    order.emplace_back(shape_of(frames[f]), f);
  }
  if (order.empty()) return batch;
  VLEC_REQUIRE(d_scratch != nullptr && scratch_bytes >= huffman_decode_batch_bytes(order.size()),
               "batched GPU decode scratch of ", scratch_bytes, " bytes is smaller than the ",
               huffman_decode_batch_bytes(order.size()), " needed");
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first.key() < y.first.key(); });
  auto* d_args = static_cast<HuffmanDecodeArgs*>(d_scratch);
  auto* d_starts = reinterpret_cast<uint32_t*>(static_cast<unsigned char*>(d_scratch) +
                                               (order.size() * sizeof(HuffmanDecodeArgs) + 255) / 256 * 256);
  std::vector<HuffmanDecodeArgs> args;
  std::vector<uint32_t> starts;
  for (std::size_t i = 0; i < order.size();) {
    HuffmanDecodeBatch::Launch l;
    l.shape = order[i].first;
    l.args = d_args + args.size();
    l.block_start = d_starts + starts.size();
    uint64_t blocks = 0;
    for (; i < order.size() && order[i].first.key() == l.shape.key(); ++i) {
      HuffmanDecodeArgs a = frames[order[i].second];
      l.shared_bytes = std::max(l.shared_bytes, dispatch_shape<SetSubShared>(l.shape, a));
      starts.push_back(static_cast<uint32_t>(blocks));
      blocks += (a.chunk_count + kWarpsPerBlock - 1) / kWarpsPerBlock;
      args.push_back(a);
      ++l.frames;
    }
    starts.push_back(static_cast<uint32_t>(blocks));  // (read by no block: the binary search's bound)
    VLEC_REQUIRE(blocks < (uint64_t{1} << 31), "too many chunks for one GPU decode launch: ", blocks * kWarpsPerBlock);
    l.blocks = static_cast<uint32_t>(blocks);
    batch.launches.push_back(l);
  }
  writes.add(d_args, args, stream);
  writes.add(d_starts, starts, stream);
  return batch;
}

void launch_huffman_decode_batch(const HuffmanDecodeBatch::Launch& l, cudaStream_t stream) {
  if (l.blocks) dispatch_shape<LaunchMany>(l.shape, l, stream);
}

void set_decode_sub_shared(bool shared) { g_sub_shared.store(shared); }

void launch_huffman_decode(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  if (a.chunk_count == 0) return;
  VLEC_REQUIRE(a.width == 1 || a.width == 2 || a.width == 4, "GPU Huffman decoding takes 1-, 2- or 4-byte elements, not ",
               a.width);
  dispatch_shape<LaunchOne>(shape_of(a), a, stream);
}

}  // namespace vlec::cuda
