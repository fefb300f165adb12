// huffman/gpu_tables.cpp: see gpu_tables.hpp.
#include "huffman/gpu_tables.hpp"

#include <algorithm>
#include <array>

namespace vlec::huffman {

namespace {

// `table` (a power-of-two size) repeated to 2^bits entries.
template <typename E>
std::vector<E> repeated(const std::vector<E>& table, unsigned bits) {
  std::vector<E> out(std::size_t{1} << bits);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = table[i & (table.size() - 1)];
  return out;
}

}  // namespace

GpuTablePlan plan_gpu_decode_tables(const Codebook& book, unsigned width) {
  GpuTablePlan p;
  p.max_length = book.max_length;
  if (book.empty()) return p;
  const unsigned L = book.max_length, K = symbols_per_step(L);
  p.gpu_pair_bits = gpu_pair_bits(width);
  // One pass over the alphabet (the wavelet decoder plans up to 23 codebooks
  // of up to 65,536 symbols per frame): the length counts, and for both
  // possible single-table widths the longest code above the width under
  // each of its indexes (the width is decided from the counts after).
  std::array<uint64_t, kMaxCodeLength + 1> n{};
  std::vector<uint8_t> longest11(L > 11 ? std::size_t{1} << 11 : 0, 0), longest13(L > 13 ? std::size_t{1} << 13 : 0, 0);
  for (uint32_t s = 0; s < book.alphabet_size; ++s) {
    const unsigned l = book.lengths[s];
    ++n[l];
    if (l > 11) {
      uint8_t& m11 = longest11[book.codes[s] & 0x7FFu];
      m11 = static_cast<uint8_t>(std::max<unsigned>(m11, l));
      if (l > 13) {
        uint8_t& m13 = longest13[book.codes[s] & 0x1FFFu];
        m13 = static_cast<uint8_t>(std::max<unsigned>(m13, l));
      }
    }
  }
  for (unsigned l = 1; l <= L; ++l) p.coded_symbols += static_cast<uint32_t>(n[l]);
  if (K >= 2) {
    // make_decode_table's pair fill (over its 11-bit single table) keeps the
    // table when at least half of its 2^pb indexes hold two codes. An index
    // holds the codes c1, c2 (lengths l1, l2 <= 11, l1 + l2 <= pb) in its
    // low bits for 2^(pb - l1 - l2) of its values, so the count is a sum
    // over pairs of lengths.
    const unsigned cpu_sb = std::min(L, 11u);
    const unsigned pb = std::min(width == 1 ? 13u : 12u, 2 * L);
    uint64_t complete = 0;
    for (unsigned l1 = 1; l1 <= cpu_sb; ++l1)
      for (unsigned l2 = 1; l2 <= cpu_sb && l1 + l2 <= pb; ++l2) complete += n[l1] * n[l2] << (pb - l1 - l2);
    if (complete * 256 >> pb >= 128) {
      p.pair_bits = pb;
      p.pair_slow_share = static_cast<uint32_t>((((uint64_t{1} << pb) - complete) << 16) >> pb);
      p.use_pairs = p.pair_slow_share < kGpuPairMaxSlowShare;
    }
  }
  p.gpu_single_bits = gpu_single_bits(L, p.use_pairs, long_codes_common(n.data(), L));
  const unsigned sb = p.single_bits = std::min(L, p.gpu_single_bits);
  if (L > sb)
    for (uint8_t m : sb == 11 ? longest11 : longest13)
      if (m) p.sub_entries += std::size_t{1} << (m - sb);
  p.second_level = p.sub_entries <= kMaxSubEntries;
  if (!p.second_level) p.sub_entries = 0;
  return p;
}

GpuDecodeTables make_gpu_decode_tables(const Codebook& book, unsigned width) {
  GpuDecodeTables g;
  // The pair table as the CPU's 11-bit single table makes it (plan_gpu_decode_tables counts that one).
  g.cpu = make_decode_table(book, 11, width, symbols_per_step(book.max_length) == 1 ? 13 : 11);
  if (book.empty()) return g;
  g.pair_bits = width == 1 ? g.cpu.pair8_bits : g.cpu.pair16_bits;
  if (g.pair_bits) {
    std::size_t slow = 0;
    if (width == 1) {
      for (uint32_t e : g.cpu.pair8) slow += (e >> (2 * 8 + 7)) & 1;
    } else {
      for (uint64_t e : g.cpu.pair16) slow += (e >> (2 * 16 + 7)) & 1;
    }
    g.pair_slow_share = static_cast<uint32_t>((slow << 16) >> g.pair_bits);
    g.use_pairs = g.pair_slow_share < kGpuPairMaxSlowShare;
    if (width == 1) g.pair8 = repeated(g.cpu.pair8, gpu_pair_bits(1));
    else g.pair16 = repeated(g.cpu.pair16, gpu_pair_bits(width));
  }
  // The single table and second level at the GPU's width (the pair tables
  // above stay those of the CPU's 11-bit table).
  g.gpu_single_bits = gpu_single_bits(book.max_length, g.use_pairs, long_codes_common(book));
  if (std::min(book.max_length, g.gpu_single_bits) != g.cpu.single_bits) {
    DecodeTable wide = make_decode_table(book, 11, width, g.gpu_single_bits);
    wide.pair8_bits = g.cpu.pair8_bits, wide.pair16_bits = g.cpu.pair16_bits;
    wide.pair8 = std::move(g.cpu.pair8), wide.pair16 = std::move(g.cpu.pair16);
    g.cpu = std::move(wide);
  }
  std::vector<uint32_t> single = g.cpu.single;
  for (std::size_t i = 0; i < single.size(); ++i)
    if (single[i] == kSingleLong) single[i] = kGpuLong | g.cpu.long_info[i];
  g.single = repeated(single, g.gpu_single_bits);
  return g;
}

}  // namespace vlec::huffman
