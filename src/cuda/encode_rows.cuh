// cuda/encode_rows.cuh: what every GPU Huffman encoder (lanes, pavle,
// reduce_shuffle) shares before it forms words: coalesced loads of a lane's
// groups (staged a batch of rows per warp), the code table (its first 1,024
// entries in shared memory), the block's chunk state, each warp's range of
// rows, and pass A, which sums each lane's code lengths per range and folds
// the chunk's XXH3 block sums from the bytes it loads.
#pragma once

#include <algorithm>
#include <type_traits>

#include "cuda/cuda_check.hpp"
#include "cuda/encode_kernels.cuh"
#include "cuda/launch_cache.hpp"
#include "cuda/xxh3_warp.cuh"
#include "huffman/codebook.hpp"
#include "huffman/layout.hpp"

namespace vlec::cuda {
namespace {

using huffman::kGroup;
using huffman::kLanes;
using huffman::kRow;

constexpr unsigned kWarps = 8;
constexpr unsigned kFull = 0xFFFFFFFFu;

__device__ __forceinline__ uint32_t lanemask_lt() {
  uint32_t m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// A lane's group of 4 symbols as one word, for staging rows in shared memory.
template <typename Sym> struct GroupWord;
template <> struct GroupWord<uint8_t> { using type = uint32_t; };
template <> struct GroupWord<uint16_t> { using type = uint2; };
template <> struct GroupWord<uint32_t> { using type = uint4; };
template <typename Sym> using GroupWordT = typename GroupWord<Sym>::type;

// Rows staged per warp: enough loads in flight, while the code that uses them
// stays a single (rolled) loop body, which keeps the kernel small.
template <typename Sym> constexpr unsigned kBatchRows = sizeof(Sym) == 4 ? 4 : 8;
template <typename Sym> constexpr unsigned kStageBytes = kWarps * kBatchRows<Sym> * kLanes * sizeof(GroupWordT<Sym>);

template <typename Sym>
__device__ __forceinline__ void unpack_group(const GroupWordT<Sym>& v, Sym (&s)[4]) {
  if constexpr (sizeof(Sym) == 1) {
    for (unsigned i = 0; i < 4; ++i) s[i] = static_cast<Sym>(v >> (8 * i));
  } else if constexpr (sizeof(Sym) == 2) {
    s[0] = static_cast<Sym>(v.x), s[1] = static_cast<Sym>(v.x >> 16);
    s[2] = static_cast<Sym>(v.y), s[3] = static_cast<Sym>(v.y >> 16);
  } else {
    s[0] = v.x, s[1] = v.y, s[2] = v.z, s[3] = v.w;
  }
}

// A lane's groups of rows [0, count) of a batch (count <= kBatchRows, from
// `src`, its group of the batch's first row) into registers, and from there
// into its slots of the warp's stage. kWhole: a full batch (every batch but
// a range's last; the caller's test of count is warp-uniform), loaded and
// stored without a predicate a row: the guarded form cost u16 ~90
// instructions a batch of predicate logic and predicated loads, the plain
// one ~30.
template <bool kWhole, typename Sym>
__device__ __forceinline__ void load_batch(const GroupWordT<Sym>* src, unsigned count,
                                           GroupWordT<Sym> (&v)[kBatchRows<Sym>]) {
#pragma unroll
  for (unsigned b = 0; b < kBatchRows<Sym>; ++b)
    if (kWhole || b < count) v[b] = __ldg(src + b * kLanes);
}
template <bool kWhole, typename Sym>
__device__ __forceinline__ void store_batch(const GroupWordT<Sym> (&v)[kBatchRows<Sym>], unsigned count,
                                            GroupWordT<Sym>* stage, unsigned lane) {
#pragma unroll
  for (unsigned b = 0; b < kBatchRows<Sym>; ++b)
    if (kWhole || b < count) stage[b * kLanes + lane] = v[b];
}

// Load rows [row, row + count) (count <= kBatchRows) of this lane into `stage`.
template <typename Sym>
__device__ __forceinline__ void stage_rows(const Sym* in, uint64_t row, unsigned count, GroupWordT<Sym>* stage,
                                           unsigned lane) {
  const GroupWordT<Sym>* src = reinterpret_cast<const GroupWordT<Sym>*>(in + row * kRow) + lane;
  GroupWordT<Sym> v[kBatchRows<Sym>];
  if (count == kBatchRows<Sym>) {  // warp-uniform
    load_batch<true, Sym>(src, count, v);
    store_batch<true, Sym>(v, count, stage, lane);
  } else {
    load_batch<false, Sym>(src, count, v);
    store_batch<false, Sym>(v, count, stage, lane);
  }
}

template <typename Sym>
__device__ __forceinline__ void load_group(const Sym* row, unsigned lane, Sym (&s)[4]) {
  if constexpr (sizeof(Sym) == 1) {
    const uint32_t v = __ldg(reinterpret_cast<const uint32_t*>(row) + lane);
    for (unsigned i = 0; i < 4; ++i) s[i] = static_cast<Sym>(v >> (8 * i));
  } else if constexpr (sizeof(Sym) == 2) {
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(row) + lane);
    s[0] = static_cast<Sym>(v.x), s[1] = static_cast<Sym>(v.x >> 16);
    s[2] = static_cast<Sym>(v.y), s[3] = static_cast<Sym>(v.y >> 16);
  } else {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(row) + lane);
    s[0] = v.x, s[1] = v.y, s[2] = v.z, s[3] = v.w;
  }
}

// The symbols lane `lane` owns in the chunk's last, partial row (`rest` symbols in it).
template <typename Sym>
__device__ __forceinline__ unsigned load_partial_group(const Sym* row, uint32_t rest, unsigned lane, Sym (&s)[4]) {
  const unsigned first = lane * kGroup;
  const unsigned mine = rest > first ? min(rest - first, kGroup) : 0;
  for (unsigned i = 0; i < 4; ++i) s[i] = i < mine ? row[first + i] : Sym(0);
  return mine;
}

// The codebook's entries: the first kSharedEntries in shared memory (the
// whole table for bytes and alphabets up to 1,024), the rest read through L1.
// File-scope arrays, so that every lookup addresses them directly. For bytes
// a lookup is one shift-and-mask and one load: the table is 1 KiB-aligned,
// so OR-ing the scaled byte into its shared address adds it; and pass A
// reads the code lengths from a byte table 256-aligned, whose address is
// one byte permutation of the group word (the byte in the low address byte).
//
// The byte table holds kNoCodeLength for a symbol without a code, so that pass
// A ORs the lengths it loads (one LOP3 for two symbols) instead of testing
// each against zero; a range holding such a symbol is stored raw, so its
// bit sums, which the flag inflates, are never used.
constexpr unsigned kSharedEntries = 1024;
constexpr uint32_t kNoCodeLength = 0x80;  // above every code length (<= 32)
// Entry kSharedEntries is 0 (no code): SharedEncodeTable's clamped index.
__shared__ __align__(1024) uint32_t s_encode_table[kSharedEntries + 1];
// The length table covers the shared entries too (SharedEncodeTable's pass A
// reads u16 and u32 lengths from it, entry kSharedEntries holding the flag).
__shared__ __align__(256) uint8_t s_length_table[kSharedEntries + 1];

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ uint32_t load_shared_u32(uint32_t address) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(address));
  return v;
}
__device__ __forceinline__ uint32_t load_shared_u8(uint32_t address) {
  uint32_t v;
  asm volatile("ld.shared.u8 %0, [%1];" : "=r"(v) : "r"(address));
  return v;
}

struct EncodeTable {
  const uint32_t* entry;
  uint32_t size;
  uint32_t table_address = shared_address(s_encode_table);
  uint32_t length_address = shared_address(s_length_table);

  __device__ __forceinline__ uint32_t operator()(uint32_t sym, bool& bad) const {
    uint32_t e;
    if (sym < kSharedEntries)
      e = s_encode_table[sym];
    else
      e = sym < size ? __ldg(entry + sym) : 0;
    bad |= e == 0;
    return e;
  }
  // Entry of symbol i of a lane's group (its 4 symbols packed as in memory).
  template <typename Sym>
  __device__ __forceinline__ uint32_t group_entry(const GroupWordT<Sym>& g, unsigned i, bool& bad) const {
    if constexpr (sizeof(Sym) == 1) {
      const uint32_t scaled = i == 0 ? g << 2 : g >> (8 * i - 2);
      const uint32_t e = load_shared_u32(table_address | (scaled & 0x3FCu));
      bad |= e == 0;
      return e;
    } else {
      Sym s[4];
      unpack_group<Sym>(g, s);
      return (*this)(s[i], bad);
    }
  }
  // Pass B's entry of symbol i of a lane's group: pass A found a code for
  // every symbol of a chunk pass B encodes.
  template <typename Sym>
  __device__ __forceinline__ uint32_t coded_entry(const GroupWordT<Sym>& g, unsigned i) const {
    bool unused = false;
    return group_entry<Sym>(g, i, unused);
  }
  // Code length of symbol i of a lane's group; 0 = no code.
  template <typename Sym>
  __device__ __forceinline__ uint32_t group_length(const GroupWordT<Sym>& g, unsigned i, bool& bad) const {
    return group_entry<Sym>(g, i, bad) >> 24;
  }
  // Bytes only: the code length of byte i of a lane's group word, or
  // kNoCodeLength (pass A ORs them).
  template <typename Sym>
  __device__ __forceinline__ uint32_t flagged_length(const GroupWordT<Sym>& g, unsigned i) const {
    static_assert(sizeof(Sym) == 1, "wider symbols' lengths: group_length, or SharedEncodeTable");
    return load_shared_u8(__byte_perm(g, length_address, 0x7650u | i));
  }
};

// The table of a u16 or u32 codebook whose symbols with a code all lie below
// kSharedEntries (1 + the largest of them, the codebook's alphabet bound,
// <= 1,024: quantization codes of up to 1,024 bins, most wavelet groups). A
// lookup is one shared load at a clamped index, with no branch to the global
// table and no bound test: a symbol at or above the bound reads entry
// kSharedEntries or one of the zeros below it, and is flagged as one without a
// code (EncodeTable's lookup took a branch and a bound test a symbol).
struct SharedEncodeTable {
  uint32_t table_address = shared_address(s_encode_table);
  uint32_t length_address = shared_address(s_length_table);

  __device__ __forceinline__ uint32_t operator()(uint32_t sym, bool& bad) const {
    const uint32_t e = load_shared_u32(table_address + 4 * min(sym, kSharedEntries));
    bad |= e == 0;
    return e;
  }
  template <typename Sym>
  __device__ __forceinline__ uint32_t group_entry(const GroupWordT<Sym>& g, unsigned i, bool& bad) const {
    static_assert(sizeof(Sym) > 1, "bytes take EncodeTable, which is all in shared memory");
    Sym s[4];
    unpack_group<Sym>(g, s);
    return (*this)(s[i], bad);
  }
  // Pass B's entry of symbol i of a lane's group. Pass A found a code for
  // every symbol of a chunk pass B encodes, so every symbol here lies below
  // the alphabet bound (<= kSharedEntries) and needs no clamp: a u16 pair's
  // low symbol is masked (one LOP3, which also keeps its read in the table)
  // and its high one addressed as (word >> 14) with one LEA.HI, exact
  // because the low symbol's bits 14 and 15 are 0. Three instructions a
  // pair where the clamps took six (SharedEncodeTable's operator()).
  template <typename Sym>
  __device__ __forceinline__ uint32_t coded_entry(const GroupWordT<Sym>& g, unsigned i) const {
    static_assert(sizeof(Sym) > 1, "bytes take EncodeTable, which is all in shared memory");
    if constexpr (sizeof(Sym) == 2) {
      const uint32_t word = i < 2 ? g.x : g.y;
      const uint32_t offset = i % 2 == 0 ? 4 * (word & (kSharedEntries - 1)) : word >> 14;
      return load_shared_u32(table_address + offset);
    } else {
      Sym s[4];
      unpack_group<Sym>(g, s);
      return load_shared_u32(table_address + 4 * (s[i] & (kSharedEntries - 1)));
    }
  }
  // The code length of symbol i of a lane's group, or kNoCodeLength (pass A
  // ORs them, as for bytes).
  template <typename Sym>
  __device__ __forceinline__ uint32_t flagged_length(const GroupWordT<Sym>& g, unsigned i) const {
    Sym s[4];
    unpack_group<Sym>(g, s);
    return load_shared_u8(length_address + min(static_cast<uint32_t>(s[i]), kSharedEntries));
  }
};

// A shared address hidden from the compiler. nvcc takes a declared __align__
// as a fact and folds a test of the address's low bits away (the check below
// compiled to nothing), while on sm_90 the shared window starts with 1 KiB
// the system reserves: alignments above 1 KiB do not hold (a table declared
// __align__(2048) sat at 1 KiB mod 2 KiB, and OR-ing an index into its
// address read other entries: bench/results/2026-11-26-h100-session13-
// decoder-steps-not-kept-gpu-bench.log). The tables here need 1 KiB and 256.
__device__ __forceinline__ uint32_t opaque_shared_address(const void* p) {
  uint32_t a = shared_address(p);
  asm volatile("" : "+r"(a));
  return a;
}

// Fill the block's code tables (the caller's next barrier orders the stores).
// kCheckAlignment: trap unless the byte path's address arithmetic holds. The
// lanes kernel checks; the pieces kernels (pavle, reduce_shuffle), whose
// tables lie where the lanes kernel's do (first in the static layout), do
// not: the check's registers at the kernel's start changed reduce_shuffle's
// allocation (stack frame 144 -> 208 bytes) and cost it 11 % (H100, 1 GiB:
// 182 -> 162 GB/s on skewed bytes, -session13-final-14b8554-gpu-bench.log).
template <bool kCheckAlignment = true>
__device__ inline void fill_encode_tables(const uint32_t* entry, uint32_t size) {
  if (kCheckAlignment && threadIdx.x == 0 &&
      ((opaque_shared_address(s_encode_table) & 0x3FFu) || (opaque_shared_address(s_length_table) & 0xFFu)))
    __trap();
  for (unsigned i = threadIdx.x; i <= kSharedEntries; i += blockDim.x) {
    const uint32_t e = i < size && i < kSharedEntries ? entry[i] : 0;
    s_encode_table[i] = e;
    s_length_table[i] = static_cast<uint8_t>(e ? e >> 24 : kNoCodeLength);
  }
}

// Shared state of the block's chunk.
struct ChunkShared {
  uint32_t range_bits[kWarps][kLanes];   // code bits of each warp's range, per lane
  uint32_t last_step[kWarps][kLanes];    // bits of the last step of each warp's range, per lane
  uint32_t final_step[kLanes];           // bits of each lane's last step in the chunk
  uint32_t bad_warp[kWarps];             // a warp's range holds a symbol without a code (plain stores: no reset)
  uint32_t stored_bytes;
  uint32_t avg_bits;                     // floor(code bits / symbols) (pavle, reduce_shuffle)
  uint64_t offset;                       // the chunk's payload offset in the frame
  uint64_t chunk;
  __device__ __forceinline__ bool bad() const {
    uint32_t any = 0;
    for (unsigned w = 0; w < kWarps; ++w) any |= bad_warp[w];
    return any != 0;
  }
};

// The warp's share of the chunk: full rows [row_begin, row_end), plus the
// partial row if `tail`. Ranges cover whole XXH3 blocks so that each warp's
// block sums are complete.
struct Range {
  uint64_t row_begin, row_end;
  bool tail;
};

__device__ inline Range warp_range(uint64_t full_rows, uint32_t rest, unsigned rows_per_block, unsigned warp) {
  const uint64_t units = full_rows / rows_per_block;
  Range r;
  r.row_begin = units * warp / kWarps * rows_per_block;
  r.row_end = warp + 1 == kWarps ? full_rows : units * (warp + 1) / kWarps * rows_per_block;
  r.tail = warp + 1 == kWarps && rest > 0;
  return r;
}

// The sums a 1 KiB block adds to XXH3's accumulators (xxh3_warp.cuh,
// block_sum), from the block's copy in shared memory with the keys held in
// registers; lanes 0..7 store them (plain stores: a block belongs to one warp).
__device__ __forceinline__ void store_block_sum(const uint64_t* block, const BlockKeys& keys,
                                                unsigned long long* sums, unsigned lane) {
  const uint64_t sum = block_sum([&](unsigned m) { return block[lane + 32 * m]; }, keys);
  if (lane < 8) sums[lane] = sum;
}

// Pass A: code-length sums and the chunk's XXH3 block sums.
//
// Why it is cheap: a batch of rows is loaded once into registers (all loads
// in flight), its code lengths are summed from those registers, and its
// copy in the warp's stage (the batch's bytes in memory order) is hashed
// with one 8-byte shared load per word and keys held in registers. A warp's
// range covers whole blocks, so each block's sums are stored, not added.
template <typename Sym, unsigned K, typename Table>
__device__ void pass_a(const Sym* in, uint64_t full_rows, uint32_t rest, const Range& r, const Table& table,
                       uint64_t hash_blocks, unsigned long long* block_sums, ChunkShared& sh,
                       GroupWordT<Sym>* stage, unsigned warp, unsigned lane) {
  constexpr unsigned kRowsPerBlock = 1024 / (kRow * sizeof(Sym));
  constexpr unsigned kBatch = kBatchRows<Sym>;
  constexpr unsigned kBlocksPerBatch = kBatch / kRowsPerBlock;
  static_assert(kBatch % kRowsPerBlock == 0, "a batch holds whole XXH3 blocks");
  const BlockKeys keys(lane);
  uint32_t bits = 0, last = 0;
  bool bad = false;
  // Flagged lengths (bytes, SharedEncodeTable): their OR, kNoCodeLength set
  // where a symbol has no code; the other tables set `bad`.
  constexpr bool kFlagged = sizeof(Sym) == 1 || std::is_same_v<Table, SharedEncodeTable>;
  uint32_t no_code = 0;
  for (uint64_t row0 = r.row_begin; row0 < r.row_end; row0 += kBatch) {
    const unsigned count = static_cast<unsigned>(min(uint64_t{kBatch}, r.row_end - row0));
    const GroupWordT<Sym>* src = reinterpret_cast<const GroupWordT<Sym>*>(in + row0 * kRow) + lane;
    const bool whole = count == kBatch;  // warp-uniform (load_batch says why it matters)
    GroupWordT<Sym> v[kBatch];
    if (whole)
      load_batch<true, Sym>(src, count, v);
    else
      load_batch<false, Sym>(src, count, v);
    // The warp's blocks below hash_blocks are summed here; a range's last
    // batch may hold fewer blocks than kBlocksPerBatch.
    const uint64_t block0 = row0 / kRowsPerBlock;
    if (block0 < hash_blocks) {  // warp-uniform
      if (whole)
        store_batch<true, Sym>(v, count, stage, lane);
      else
        store_batch<false, Sym>(v, count, stage, lane);
      __syncwarp();
#pragma unroll
      for (unsigned k = 0; k < kBlocksPerBatch; ++k)
        if (block0 + k < hash_blocks && (k + 1) * kRowsPerBlock <= count)  // (the next block may be the next warp's)
          store_block_sum(reinterpret_cast<const uint64_t*>(stage) + 128 * k, keys, block_sums + 8 * (block0 + k),
                          lane);
      __syncwarp();
    }
    auto sum_row = [&](const GroupWordT<Sym>& g) {
      uint32_t len[4];
      if constexpr (kFlagged) {
#pragma unroll
        for (unsigned i = 0; i < 4; ++i) len[i] = table.template flagged_length<Sym>(g, i);
        no_code |= len[0] | len[1] | len[2] | len[3];
      } else {
#pragma unroll
        for (unsigned i = 0; i < 4; ++i) len[i] = table.template group_length<Sym>(g, i, bad);
      }
      bits += len[0] + len[1] + len[2] + len[3];
      last = 0;
#pragma unroll
      for (unsigned i = 4 - K; i < 4; ++i) last += len[i];
    };
    if (whole) {
#pragma unroll
      for (unsigned b = 0; b < kBatch; ++b) sum_row(v[b]);
    } else {
#pragma unroll
      for (unsigned b = 0; b < kBatch; ++b)
        if (b < count) sum_row(v[b]);
    }
  }
  uint32_t final_step = last;
  if (r.tail) {
    Sym s[4];
    const unsigned mine = load_partial_group(in + full_rows * kRow, rest, lane, s);
    uint32_t tail_bits = 0, tail_last = 0;
    for (unsigned i = 0; i < mine; ++i) {
      const uint32_t l = table(s[i], bad) >> 24;
      tail_bits += l;
      tail_last = i % K == 0 ? l : tail_last + l;  // the lane's last step is its last K-aligned group
    }
    bits += tail_bits;
    if (mine) final_step = tail_last;
  }
  sh.range_bits[warp][lane] = bits;
  sh.last_step[warp][lane] = last;
  if (warp == kWarps - 1) sh.final_step[lane] = final_step;
  const bool any_bad = __any_sync(kFull, bad || (no_code & kNoCodeLength) != 0);
  if (lane == 0) sh.bad_warp[warp] = any_bad;
}

// Launches kernel_for(Sym{}, K) for the input's symbol width and K = 4, 2 and
// 1: the codebook's K is known only on the device, so the kernel whose K
// matches works and the others return at once. One block per chunk, up to
// the blocks the GPU holds at once (the blocks then take further chunks) and
// up to max_blocks.
template <class KernelFor>
void launch_for_each_k(const HuffmanEncodeArgs& a, cudaStream_t stream, KernelFor&& kernel_for,
                       uint64_t max_blocks = ~uint64_t{0}) {
  if (a.chunk_count == 0) return;
  auto launch = [&](auto kernel) {
    const uint64_t blocks = std::min<uint64_t>({a.chunk_count, max_blocks,
                                                resident_blocks(reinterpret_cast<const void*>(kernel), kWarps * 32)});
    kernel<<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream>>>(a);
  };
  auto launch_all = [&](auto sym) {
    launch(kernel_for(sym, std::integral_constant<unsigned, 4>{}));
    launch(kernel_for(sym, std::integral_constant<unsigned, 2>{}));
    launch(kernel_for(sym, std::integral_constant<unsigned, 1>{}));
  };
  switch (a.width) {
    case 1: launch_all(uint8_t{}); break;
    case 2: launch_all(uint16_t{}); break;
    case 4: launch_all(uint32_t{}); break;
    default: VLEC_REQUIRE(false, "GPU Huffman encoding takes 1-, 2- or 4-byte elements, not ", a.width);
  }
  CUDA_CHECK(cudaGetLastError());
}

// Launches kernel_for(Sym{}, K, kShared) (through launch_for_each_k) for the
// table the codes come from: u8 codes always from EncodeTable (all in
// shared memory); u16 and u32 codes from SharedEncodeTable where the host
// knows every symbol with a code lies below kSharedEntries (the table holds
// no more entries: wavelet groups, uploaded codebooks), from either as the
// alphabet bound decides on the device where the table spans the whole
// alphabet (the device pipeline's codebook without a caller's bound: three
// more launches that return at once), else from EncodeTable (a table cut
// at a bound above 1,024, as a caller's bound or an uploaded codebook's,
// whose bound is rarely far below it). choose_tables says which, and sets
// a.table_by_bound (which the kernels read) for the third case.
struct TableLaunches {
  bool global, shared;  // the kernels reading EncodeTable; those reading SharedEncodeTable (wider symbols only)
};
inline TableLaunches choose_tables(HuffmanEncodeArgs& a) {
  const bool wide = a.width > 1 && encode_shared_table;
  const bool shared = wide && a.table_size <= kSharedEntries;
  a.table_by_bound = wide && !shared && a.alphabet_bound != nullptr && a.table_size >= huffman::kMaxAlphabet;
  return {!shared, shared || a.table_by_bound};
}
template <class KernelFor>
void launch_for_each_table(const HuffmanEncodeArgs& args, cudaStream_t stream, KernelFor&& kernel_for,
                           uint64_t max_blocks = ~uint64_t{0}) {
  HuffmanEncodeArgs a = args;
  const TableLaunches tables = choose_tables(a);
  if (tables.global)
    launch_for_each_k(
        a, stream, [&](auto sym, auto k) { return kernel_for(sym, k, std::false_type{}); }, max_blocks);
  if (tables.shared)  // (u8: never launched here)
    launch_for_each_k(
        a, stream,
        [&](auto sym, auto k) { return kernel_for(sym, k, std::bool_constant<(sizeof(decltype(sym)) > 1)>{}); },
        max_blocks);
}

}  // namespace
}  // namespace vlec::cuda
