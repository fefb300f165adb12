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
  // The wavelet decoder plans up to 23 codebooks per frame on the host
  // before its first decode, so the plan is one pass over the lengths (four
  // counters a length, so that runs of equal lengths do not chain their
  // increments) and then O(L^2) from the counts alone; the second level is
  // sized from the canonical codes' layout (below), not by a table of the
  // longest code under each index: filling and summing two such tables of
  // 2^11 and 2^13 entries had cost 1.8 us a codebook of 136 symbols, 6.8 us
  // one of 437 and 29 us one of 10,003 (16-bit level-1 groups).
  std::array<uint64_t, kMaxCodeLength + 1> n{};
  if (book.counted) {  // (parse_codebook counted them)
    for (unsigned l = 0; l <= kMaxCodeLength; ++l) n[l] = book.length_counts[l];
  } else {
    std::array<std::array<uint32_t, kMaxCodeLength + 1>, 4> part{};
    const uint8_t* lengths = book.lengths.data();
    uint32_t s = 0;
    for (; s + 4 <= book.alphabet_size; s += 4)
      for (unsigned j = 0; j < 4; ++j) ++part[j][lengths[s + j]];
    for (; s < book.alphabet_size; ++s) ++part[0][lengths[s]];
    for (unsigned l = 0; l <= kMaxCodeLength; ++l) n[l] = uint64_t{part[0][l]} + part[1][l] + part[2][l] + part[3][l];
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
  if (L > sb) {
    // Second-level entries: an index (the first sb bits a code reads) that
    // starts codes longer than sb gets 2^(m - sb) entries, m the longest of
    // them. Canonical codes of length l are the MSB-first values [first_l,
    // first_l + n_l), and every code of one length precedes (as a binary
    // fraction) every longer one, so the indexes of length l's codes, their
    // top sb bits, are a range [lo_l, hi_l] that ends at or below the
    // ranges of longer lengths, sharing at most its last index. From the
    // longest length down, each length's indexes below those already taken
    // are the ones whose longest code it is.
    std::array<uint64_t, kMaxCodeLength + 2> first{};
    for (unsigned l = 2; l <= L; ++l) first[l] = (first[l - 1] + n[l - 1]) << 1;
    uint64_t floor = ~uint64_t{0};  // the lowest index a longer length took
    for (unsigned l = L; l > sb; --l) {
      if (n[l] == 0) continue;
      const uint64_t lo = first[l] >> (l - sb), hi = (first[l] + n[l] - 1) >> (l - sb);
      const uint64_t top = std::min(hi, floor - 1);
      if (top >= lo && floor > lo) p.sub_entries += static_cast<std::size_t>(top - lo + 1) << (l - sb);
      floor = std::min(floor, lo);
    }
  }
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
