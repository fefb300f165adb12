// tests/test_gpu_tables.cpp: the GPU Huffman decoder's tables
// (huffman/gpu_tables.hpp), checked on the CPU: every lookup the kernel makes
// (single table, second level, canonical walk, pair table with its slow
// path) is replayed here exactly as cuda/huffman_decode.cu makes it, on code
// sequences drawn from real codebooks, and must give each code's symbol and
// length. The GPU suite then checks whole frames against the CPU backend.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "huffman/codebook.hpp"
#include "vlec/error.hpp"
#include "huffman/gpu_tables.hpp"
#include "decode_table_books.hpp"
#include "test_util.hpp"

namespace vlec {
namespace {

using huffman::Codebook;
using huffman::GpuDecodeTables;

// (length << 16) | symbol, as the kernel's lookup_single returns it (0: no code).
uint32_t kernel_single(const GpuDecodeTables& g, uint64_t buf) {
  const unsigned sb = g.gpu_single_bits;
  EXPECT_EQ(g.single.size(), std::size_t{1} << sb);
  uint32_t e = g.single[buf & ((1u << sb) - 1)];
  if (!(e & huffman::kGpuLong)) return e;
  if (const unsigned sub_bits = e & 31)
    return g.cpu.sub.at(((e & ~huffman::kGpuLong) >> 5) + ((buf >> sb) & ((1u << sub_bits) - 1)));
  const unsigned L = g.cpu.max_length;  // the canonical walk (decode_canonical)
  uint32_t v = 0;
  for (unsigned i = 0; i < L; ++i) v |= static_cast<uint32_t>((buf >> i) & 1) << (L - 1 - i);
  for (unsigned l = sb + 1; l <= L; ++l) {
    const uint32_t code = v >> (L - l);
    if (code - g.cpu.first[l] < g.cpu.count[l]) return l << 16 | g.cpu.sorted[g.cpu.offset[l] + code - g.cpu.first[l]];
  }
  return 0;
}

// Two codes with the pair table (the kernel's lookup_pair): {s1, s2, total length}.
std::array<uint32_t, 3> kernel_pair(const GpuDecodeTables& g, unsigned width, uint64_t buf) {
  const unsigned W = width == 1 ? 8 : 16, pb = huffman::gpu_pair_bits(width);
  const uint64_t index = buf & ((uint64_t{1} << pb) - 1);
  uint64_t e = width == 1 ? g.pair8.at(index) : g.pair16.at(index);
  if (e >> (2 * W + 7) & 1) {
    uint32_t s1 = static_cast<uint32_t>(e) & ((1u << W) - 1), l1 = static_cast<uint32_t>(e >> (2 * W)) & 63;
    if (l1 == 0) {
      const uint32_t e1 = kernel_single(g, buf);
      s1 = e1 & 0xFFFF, l1 = e1 >> 16;
    }
    const uint32_t e2 = kernel_single(g, buf >> l1);
    e = s1 | uint64_t{e2 & 0xFFFF} << W | uint64_t{l1 + (e2 >> 16)} << (2 * W);
  }
  return {static_cast<uint32_t>(e & ((1u << W) - 1)), static_cast<uint32_t>((e >> W) & ((1u << W) - 1)),
          static_cast<uint32_t>(e >> (2 * W))};
}

// Draws symbols by frequency, codes two of them into the low bits of a buffer
// with random bits above (the codes that follow), and checks the kernel's
// lookups; returns how many lookups needed the second level.
std::size_t check_book(const huffman::Histogram& hist, unsigned width, std::mt19937_64& rng) {
  const Codebook book = huffman::build_codebook(hist);
  const GpuDecodeTables g = huffman::make_gpu_decode_tables(book, width);
  const unsigned K = huffman::symbols_per_step(book.max_length);
  EXPECT_EQ(g.use_pairs, K >= 2 && g.pair_bits != 0 && g.pair_slow_share < huffman::kGpuPairMaxSlowShare);
  std::vector<uint32_t> present;
  std::vector<double> weight;
  for (uint32_t s = 0; s < hist.size(); ++s)
    if (hist[s]) present.push_back(s), weight.push_back(static_cast<double>(hist[s]));
  std::discrete_distribution<std::size_t> pick(weight.begin(), weight.end());
  std::uniform_int_distribution<std::size_t> any(0, present.size() - 1);
  std::size_t long_lookups = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    // Every other pair takes symbols uniformly from those present, so rare (long) codes are covered.
    const uint32_t s1 = present[trial % 2 ? any(rng) : pick(rng)], s2 = present[trial % 4 == 1 ? any(rng) : pick(rng)];
    const unsigned l1 = book.lengths[s1], l2 = book.lengths[s2];
    const uint64_t junk = rng() << (l1 + l2);
    const uint64_t buf = book.codes[s1] | uint64_t{book.codes[s2]} << l1 | (l1 + l2 < 64 ? junk : 0);
    const uint32_t e1 = kernel_single(g, buf), e2 = kernel_single(g, buf >> l1);
    long_lookups += l1 > g.gpu_single_bits;
    EXPECT_EQ(e1, l1 << 16 | s1) << "trial " << trial;
    EXPECT_EQ(e2, l2 << 16 | s2) << "trial " << trial;
    if (g.pair_bits != 0) {  // built (and checked) whether the kernel uses it or not
      const auto p = kernel_pair(g, width, buf);
      EXPECT_EQ(p[0], s1) << "trial " << trial;
      EXPECT_EQ(p[1], s2) << "trial " << trial;
      EXPECT_EQ(p[2], l1 + l2) << "trial " << trial;
    }
    if (::testing::Test::HasFailure()) break;
  }
  return long_lookups;
}

TEST(GpuDecodeTables, EveryLookupGivesTheCode) {
  const uint64_t seed = test::base_seed() + 31;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Skewed bytes (geometric counts: codes of 1 to 16+ bits), u8 and u16 symbols.
  huffman::Histogram skewed(256, 0);
  for (unsigned s = 0; s < 256; ++s) skewed[s] = 1 + (uint64_t{1} << 40 >> std::min(40u, s / 2 + s % 3));
  EXPECT_GT(check_book(skewed, 1, rng), 0u);
  check_book(skewed, 2, rng);
  // Quantization codes: a two-sided geometric over 1,024 and 65,536 bins
  // (max lengths 16 and 24: K = 2 and K = 1, second-level tables).
  for (uint32_t bins : {1024u, 65536u}) {
    huffman::Histogram q(bins, 0);
    for (uint32_t s = 0; s < bins; ++s) {
      const uint32_t d = s > bins / 2 ? s - bins / 2 : bins / 2 - s;
      q[s] = 1 + static_cast<uint64_t>(1e12 * std::exp(-0.02 * d * (bins == 1024 ? 8 : 1)));
    }
    const Codebook book = huffman::build_codebook(q);
    SCOPED_TRACE("bins " + std::to_string(bins) + ", max length " + std::to_string(book.max_length));
    EXPECT_GT(check_book(q, 2, rng), 0u);
    check_book(q, 4, rng);
  }
  // Short codes (K = 4: tables repeated to their fixed widths), odd alphabets, equal counts.
  for (uint32_t n : {2u, 3u, 5u, 17u, 255u, 256u}) {
    huffman::Histogram h(256, 0);
    for (uint32_t s = 0; s < n; ++s) h[(s * 37 + 11) % 256] = 1000 + (rng() % 1000);
    check_book(h, 1, rng);
    check_book(h, 2, rng);
  }
}

TEST(GpuDecodeTables, OneSymbolCodebookHasNoCodeForOtherBits) {
  huffman::Histogram h(256, 0);
  h[200] = 5;
  const Codebook book = huffman::build_codebook(h);
  const GpuDecodeTables g = huffman::make_gpu_decode_tables(book, 1);
  ASSERT_EQ(book.max_length, 1u);
  EXPECT_EQ(kernel_single(g, book.codes[200]), 1u << 16 | 200);
  EXPECT_EQ(kernel_single(g, book.codes[200] ^ 1), 0u);  // length 0: the chunk then fails its padding check
  EXPECT_FALSE(g.use_pairs);  // half its indexes hold no code
}

TEST(GpuDecodeTables, EmptyCodebookHasNoTables) {
  const GpuDecodeTables g = huffman::make_gpu_decode_tables(Codebook{}, 1);
  EXPECT_TRUE(g.single.empty());
  EXPECT_FALSE(g.use_pairs);
}

// The single table's width: 13 bits for K = 2 without pairs only where codes
// above 11 bits are common (huffman::gpu_single_bits), on the GPU and the
// CPU alike, and every lookup still gives the code.
TEST(GpuDecodeTables, WideSingleTableWhereLongCodesAreCommon) {
  std::mt19937_64 rng(test::base_seed() + 34);
  // Exponential counts over 16,384 symbols: limit 16, 4 % of the codes above 11 bits.
  huffman::Histogram common(16384);
  for (uint32_t s = 0; s < common.size(); ++s)
    common[s] = 1 + static_cast<uint64_t>(1e5 * std::exp(-static_cast<double>(s) / 4000));
  // 1,000 equal symbols (10-bit codes: no pair table) and 100 rare ones (long codes, rare).
  huffman::Histogram rare(1100);
  for (uint32_t s = 0; s < rare.size(); ++s) rare[s] = s < 1000 ? 1000000 : 1;
  for (const auto& [hist, wide] : {std::pair{common, true}, std::pair{rare, false}}) {
    const Codebook book = huffman::build_codebook(hist);
    ASSERT_EQ(huffman::symbols_per_step(book.max_length), 2u);
    ASSERT_GT(book.max_length, 11u);
    EXPECT_EQ(huffman::long_codes_common(book), wide);
    const GpuDecodeTables g = huffman::make_gpu_decode_tables(book, 2);
    EXPECT_FALSE(g.use_pairs);
    EXPECT_EQ(g.gpu_single_bits, wide ? 13u : 11u);
    EXPECT_EQ(huffman::plan_gpu_decode_tables(book, 2).gpu_single_bits, g.gpu_single_bits);
    EXPECT_EQ(huffman::cpu_single_bits(book), wide ? 13u : 11u);
    check_book(hist, 2, rng);
  }
}

// The plan the host makes before the GPU builds the tables (kernel shape and
// table sizes from the length counts) equals what building them gives.
TEST(GpuDecodeTables, PlanEqualsTheBuiltTables) {
  const uint64_t seed = test::base_seed() + 32;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const test::NamedBook& nb : test::decode_table_books(rng))
    for (unsigned width : {1u, 2u, 4u}) {
      if (width == 1 && nb.book.alphabet_size > 256) continue;
      SCOPED_TRACE(nb.name + ", width " + std::to_string(width) + ", max length " +
                   std::to_string(nb.book.max_length));
      const GpuDecodeTables g = huffman::make_gpu_decode_tables(nb.book, width);
      const huffman::GpuTablePlan p = huffman::plan_gpu_decode_tables(nb.book, width);
      EXPECT_EQ(p.max_length, g.cpu.max_length);
      EXPECT_EQ(p.single_bits, g.cpu.single_bits);
      EXPECT_EQ(std::size_t{1} << p.gpu_single_bits, g.single.size());
      EXPECT_EQ(p.gpu_single_bits, g.gpu_single_bits);
      EXPECT_EQ(p.pair_bits, g.pair_bits);
      EXPECT_EQ(p.use_pairs, g.use_pairs);
      EXPECT_EQ(p.pair_slow_share, g.pair_slow_share);
      EXPECT_EQ(p.sub_entries, g.cpu.sub.size());
      EXPECT_TRUE(p.second_level || p.max_length <= p.single_bits);
      EXPECT_EQ(p.coded_symbols, g.cpu.sorted.size());
      if (g.pair_bits) EXPECT_EQ(std::size_t{1} << p.gpu_pair_bits, width == 1 ? g.pair8.size() : g.pair16.size());
    }
  const huffman::GpuTablePlan empty = huffman::plan_gpu_decode_tables(Codebook{}, 1);
  EXPECT_EQ(empty.gpu_single_bits, 0u);
  EXPECT_FALSE(empty.use_pairs);
}

// The plan sizes the second level from the length counts alone (canonical
// codes of one length precede all longer ones); here against the direct
// count: for every index of the single table that starts longer codes,
// 2^(longest - single_bits) entries. Random histograms over 2 to 65,536
// symbols, every length limit from 12 to 24, both single-table widths.
TEST(GpuDecodeTables, SecondLevelSizedFromTheLengthCounts) {
  const uint64_t seed = test::base_seed() + 35;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  unsigned with_second_level = 0;
  for (int round = 0; round < 300; ++round) {
    const uint32_t n = 2 + static_cast<uint32_t>(rng() % (round % 3 == 0 ? 65535 : 2000));
    huffman::Histogram h(n, 0);
    const unsigned spread = 1 + static_cast<unsigned>(rng() % 40);
    for (uint32_t s = 0; s < n; ++s)
      h[s] = rng() % 4 == 0 ? 0 : 1 + (rng() % (uint64_t{1} << (rng() % spread)));
    h[rng() % n] += 1;  // at least one symbol
    const unsigned limit = rng() % 2 ? 0 : 12 + static_cast<unsigned>(rng() % 13);
    Codebook book;
    try {
      book = huffman::build_codebook(h, limit);
    } catch (const Error&) {
      continue;  // a limit below log2 of the symbols present
    }
    for (unsigned width : {1u, 2u}) {
      if (width == 1 && n > 256) continue;
      const huffman::GpuTablePlan p = huffman::plan_gpu_decode_tables(book, width);
      std::vector<uint8_t> longest(std::size_t{1} << p.single_bits, 0);
      for (uint32_t s = 0; s < book.alphabet_size; ++s)
        if (book.lengths[s] > p.single_bits) {
          uint8_t& m = longest[book.codes[s] & ((1u << p.single_bits) - 1)];
          m = std::max(m, book.lengths[s]);
        }
      std::size_t want = 0;
      for (uint8_t m : longest)
        if (m) want += std::size_t{1} << (m - p.single_bits);
      SCOPED_TRACE("round " + std::to_string(round) + ": " + std::to_string(n) + " symbols, limit " +
                   std::to_string(limit) + ", max length " + std::to_string(book.max_length) + ", width " +
                   std::to_string(width));
      EXPECT_EQ(p.sub_entries, want <= huffman::kMaxSubEntries ? want : 0);
      EXPECT_EQ(p.second_level, want <= huffman::kMaxSubEntries);
      with_second_level += want > 0;
    }
  }
  EXPECT_GT(with_second_level, 50u) << "too few codebooks with codes above the single table";
}

}  // namespace
}  // namespace vlec
