// huffman/gpu_tables.cpp: see gpu_tables.hpp.
#include "huffman/gpu_tables.hpp"

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
    g.use_pairs = true;
    if (width == 1) g.pair8 = repeated(g.cpu.pair8, gpu_pair_bits(1));
    else g.pair16 = repeated(g.cpu.pair16, gpu_pair_bits(width));
  }
  return g;
}

}  // namespace vlec::huffman
