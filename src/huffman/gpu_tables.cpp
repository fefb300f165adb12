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
  const unsigned sb = p.single_bits = std::min(L, K == 1 ? 13u : 11u);
  p.gpu_single_bits = gpu_single_bits(L);
  p.gpu_pair_bits = gpu_pair_bits(width);
  std::array<uint64_t, kMaxCodeLength + 1> n{};
  std::vector<uint8_t> longest(L > sb ? std::size_t{1} << sb : 0, 0);
  const uint32_t mask = (1u << sb) - 1;
  for (uint32_t s = 0; s < book.alphabet_size; ++s)
    if (const unsigned l = book.lengths[s]) {
      ++n[l];
      if (l > sb) {
        uint8_t& m = longest[book.codes[s] & mask];
        m = static_cast<uint8_t>(std::max<unsigned>(m, l));
      }
    }
  for (unsigned l = 1; l <= L; ++l) p.coded_symbols += static_cast<uint32_t>(n[l]);
  for (uint8_t m : longest)
    if (m) p.sub_entries += std::size_t{1} << (m - sb);
  p.second_level = p.sub_entries <= kMaxSubEntries;
  if (!p.second_level) p.sub_entries = 0;
  if (K >= 2) {
    // make_decode_table's pair fill keeps the table when at least half of its
    // 2^pb indexes hold two codes. An index holds the codes c1, c2 (lengths
    // l1, l2 <= sb, l1 + l2 <= pb) in its low bits for 2^(pb - l1 - l2) of
    // its values, so the count is a sum over pairs of lengths.
    const unsigned pb = std::min(width == 1 ? 13u : 12u, 2 * L);
    uint64_t complete = 0;
    for (unsigned l1 = 1; l1 <= sb; ++l1)
      for (unsigned l2 = 1; l2 <= sb && l1 + l2 <= pb; ++l2) complete += n[l1] * n[l2] << (pb - l1 - l2);
    if (complete * 256 >> pb >= 128) {
      p.pair_bits = pb;
      p.pair_slow_share = static_cast<uint32_t>((((uint64_t{1} << pb) - complete) << 16) >> pb);
      p.use_pairs = p.pair_slow_share < kGpuPairMaxSlowShare;
    }
  }
  return p;
}

GpuDecodeTables make_gpu_decode_tables(const Codebook& book, unsigned width) {
  GpuDecodeTables g;
  g.cpu = make_decode_table(book, 11, width);
  if (book.empty()) return g;
  std::vector<uint32_t> single = g.cpu.single;
  for (std::size_t i = 0; i < single.size(); ++i)
    if (single[i] == kSingleLong) single[i] = kGpuLong | g.cpu.long_info[i];
  g.single = repeated(single, gpu_single_bits(book.max_length));
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
  return g;
}

}  // namespace vlec::huffman
