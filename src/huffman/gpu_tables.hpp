// huffman/gpu_tables.hpp: the decode tables of the GPU Huffman decoder, built
// on the host from the CPU decoder's tables (chunk_codec.hpp), so that both
// backends resolve every code through the same, tested construction.
//
// Why this shape: the GPU decoder is instruction-bound, so a code must cost
// one shared-memory lookup and no loop. The single table carries, for an
// index that starts a longer code, where that code's second-level entries are
// (in global memory, read through L1), instead of a marker that sends the
// decoder through the canonical First/Entry walk (one compare per length).
// The pair table (two codes per lookup) is built wherever the CPU decoder
// builds one (it completes at least half of its indexes' steps), but the
// GPU decoder uses it only where fewer than 1 % of its indexes cannot
// complete a step (kGpuPairMaxSlowShare): a warp takes the slow path when
// any of its 32 lanes does, and each index of a Huffman bit stream is about
// equally likely, so a share s makes 1 - (1 - s)^32 of the warp-steps slow.
// Where the pair table is not used and codes above 11 bits are common
// (K = 2), the single table takes 13 bits (gpu_single_bits below).
// Measured on an H100 (bench/results/2026-11-26-h100-session9-pair-rule.log,
// 1 GiB, pairs on / off): skewed bytes (0.6 %: 17 % of warp-steps slow)
// 735 / 684 GB/s; quant1024 (1.8 %) 1,190 / 1,258; text (2.8 %) 700 / 812;
// byte runs (14.7 %) 555 / 632; the sparse volume (25 %) 796 / 846.
#pragma once

#include <cstdint>
#include <vector>

#include "huffman/chunk_codec.hpp"

namespace vlec::huffman {

// A single-table entry of an index that starts a code longer than
// single_bits: kGpuLong | sub offset << 5 | sub bits (sub bits 0: no
// second level; the canonical arrays resolve the code). Other entries are
// symbol | length << 16 (0: no code starts here, one-symbol codebooks only).
constexpr uint32_t kGpuLong = 1u << 31;

// Fixed index widths, so that the decoder's masks and table offsets are
// constants: the single table has 2^13 entries for K = 1 (codes of more than
// 16 bits) and for K = 2 without the pair table where long codes are common
// (single_table_bits), 2^11 otherwise; the pair table 2^13 entries for 1-byte symbols and 2^12
// otherwise. A CPU table of fewer index bits (short codes) is repeated to
// fill the width: an entry depends only on its index's low bits.
//
// Why 13 bits for K = 2 without pairs where long codes are common
// (long_codes_common): there both codes of a step are single lookups, and a
// code longer than the table costs its warp a divergent second-level lookup
// whenever any of the step's 64 codes is long. On u16 quantization codes of
// 65,536 bins (limit 16) 4.4 % of the codes exceed 11 bits (94 % of the
// warp-steps hold one) and 1.1 % exceed 13 (52 %). The pair table (2^12
// entries of 8 bytes) and the 13-bit single table take the same 32 KiB, so
// no kernel needs more shared memory than before. Where long codes are rare
// the larger table only costs its copy into each block (every block of the
// wavelet decoder's small embedded chunks copies it).
constexpr unsigned gpu_single_bits(unsigned max_length, bool use_pairs, bool long_common) {
  return single_table_bits(max_length, !use_pairs && long_common);
}
constexpr unsigned gpu_pair_bits(unsigned width) { return width == 1 ? 13 : 12; }

// The pair table's slow share (in 65,536ths of its indexes) below which the
// GPU decoder uses it: 1 %.
constexpr uint32_t kGpuPairMaxSlowShare = 655;

struct GpuDecodeTables {
  DecodeTable cpu;                // single, sub, pairs and the canonical arrays, single_bits =
                                  // min(max_length, gpu_single_bits); its pair tables are the CPU's (11 bits)
  std::vector<uint32_t> single;   // cpu.single with the long entries as above, 2^gpu_single_bits entries
  unsigned gpu_single_bits = 0;   // gpu_single_bits(max_length, use_pairs, long_codes_common); 0 if empty
  std::vector<uint32_t> pair8;    // cpu.pair8 or cpu.pair16 repeated to 2^gpu_pair_bits entries
  std::vector<uint64_t> pair16;
  unsigned pair_bits = 0;         // index width of the pair table in cpu (0: none)
  uint32_t pair_slow_share = 0;   // its indexes that cannot complete a step, in 65,536ths
  bool use_pairs = false;         // pair_bits != 0 and pair_slow_share < kGpuPairMaxSlowShare

  const void* pair_data(unsigned width) const {
    return width == 1 ? static_cast<const void*>(pair8.data()) : static_cast<const void*>(pair16.data());
  }
  std::size_t pair_bytes(unsigned width) const {
    return width == 1 ? 4 * pair8.size() : 8 * pair16.size();
  }
};

// Tables for decoding `width`-byte symbols (1, 2 or 4) coded with `book`.
GpuDecodeTables make_gpu_decode_tables(const Codebook& book, unsigned width);

// What the tables above will be, known without building them: the GPU
// builds them itself (cuda/decode_tables_gpu.hpp), but the host must choose
// the kernel (K, pairs, long codes) and size the tables before they exist.
// Everything here is computed from the codebook's lengths in
// O(alphabet + L^2) and equals the fields of make_gpu_decode_tables (tested).
struct GpuTablePlan {
  unsigned max_length = 0;
  unsigned single_bits = 0;      // index width of the single table before repetition (cpu.single_bits)
  unsigned gpu_single_bits = 0;  // 0 for an empty codebook
  unsigned pair_bits = 0;        // GpuDecodeTables::pair_bits (0: no pair table)
  unsigned gpu_pair_bits = 0;    // gpu_pair_bits(width)
  uint32_t pair_slow_share = 0;
  bool use_pairs = false;
  bool second_level = false;     // codes longer than single_bits have second-level entries
  std::size_t sub_entries = 0;   // cpu.sub.size()
  uint32_t coded_symbols = 0;    // cpu.sorted.size()
};
GpuTablePlan plan_gpu_decode_tables(const Codebook& book, unsigned width);

}  // namespace vlec::huffman
