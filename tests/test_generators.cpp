// tests/test_generators.cpp: checks the sample-data generators (src/gen).
//
// Two kinds of checks: contract checks that hold for every generator
// (determinism by seed, sizes, the empty case) and statistical checks that
// each generator produces the data it claims to (entropy, run lengths, fill
// fraction). The statistical bounds are wide enough to hold for any seed; the
// seed is printed with each check, and VLEC_TEST_SEED overrides it, so a
// failure can be replayed exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "gen/generators.hpp"

namespace {

using vlec::DType;
using vlec::gen::make;
using vlec::gen::Sample;

uint64_t test_seed() {
  const char* env = std::getenv("VLEC_TEST_SEED");
  return env ? std::strtoull(env, nullptr, 0) : 20240607u;
}

std::string seed_note(uint64_t seed) { return "seed=" + std::to_string(seed) + " (set VLEC_TEST_SEED to replay)"; }

uint64_t element(const Sample& s, size_t i) {
  const size_t width = static_cast<size_t>(s.dtype);
  uint64_t v = 0;
  for (size_t b = 0; b < width; ++b) v |= uint64_t{s.bytes[i * width + b]} << (8 * b);
  return v;
}

std::map<uint64_t, size_t> histogram(const Sample& s) {
  std::map<uint64_t, size_t> h;
  for (size_t i = 0; i < s.elements(); ++i) ++h[element(s, i)];
  return h;
}

// Shannon entropy of the element histogram, in bits per element.
double entropy_bits(const Sample& s) {
  double h = 0;
  const double n = static_cast<double>(s.elements());
  for (const auto& [value, count] : histogram(s)) {
    const double p = static_cast<double>(count) / n;
    h -= p * std::log2(p);
  }
  return h;
}

void report(const std::string& what, double value, uint64_t seed) {
  std::printf("[ stats    ] %s = %.4f (seed %llu)\n", what.c_str(), value, static_cast<unsigned long long>(seed));
}

// A size that the volume turns into a small cube and the others use as is.
size_t small_size(const std::string& name) { return name == "volume" ? 64 * 64 * 64 : 100003; }

TEST(Generators, ListsAllGeneratorsInFixedOrder) {
  const std::vector<std::string> expected = {"skewed", "runs", "text", "quant1024", "quant65536", "volume", "uniform"};
  const auto& list = vlec::gen::generators();
  ASSERT_EQ(list.size(), expected.size());
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(list[i].name, expected[i]);
    EXPECT_FALSE(list[i].description.empty());
    const DType want = expected[i].rfind("quant", 0) == 0 ? DType::u16 : DType::u8;
    EXPECT_EQ(list[i].dtype, want) << list[i].name;
  }
}

TEST(Generators, UnknownNameThrows) { EXPECT_THROW(make("no-such-generator", 100, 1), std::invalid_argument); }

TEST(Generators, SameSeedGivesSameBytes) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  for (const auto& info : vlec::gen::generators()) {
    SCOPED_TRACE(info.name);
    const Sample a = make(info.name, small_size(info.name), seed);
    const Sample b = make(info.name, small_size(info.name), seed);
    EXPECT_EQ(a.name, info.name);
    EXPECT_EQ(a.dtype, info.dtype);
    EXPECT_EQ(a.bytes, b.bytes);
  }
}

TEST(Generators, DifferentSeedGivesDifferentBytes) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed) + " vs seed+1");
  for (const auto& info : vlec::gen::generators()) {
    SCOPED_TRACE(info.name);
    EXPECT_NE(make(info.name, small_size(info.name), seed).bytes, make(info.name, small_size(info.name), seed + 1).bytes);
  }
}

TEST(Generators, RequestedSizeIsHonoured) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  for (const auto& info : vlec::gen::generators()) {
    if (info.name == "volume") continue;  // a cube: checked below
    const size_t width = static_cast<size_t>(info.dtype);
    for (size_t bytes : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{8}, size_t{9}, size_t{1000}, size_t{65537},
                         size_t{262147}}) {
      SCOPED_TRACE(info.name + " bytes=" + std::to_string(bytes));
      const Sample s = make(info.name, bytes, seed);
      EXPECT_EQ(s.bytes.size(), bytes / width * width);
      EXPECT_EQ(s.elements() * width, bytes / width * width);
    }
  }
}

TEST(Generators, VolumeIsLargestCubeThatFits) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  const std::vector<std::pair<size_t, size_t>> bytes_to_side = {
      {1, 1}, {7, 1}, {8, 2}, {26, 2}, {27, 3}, {1000, 10}, {1001, 10}, {128 * 128 * 128 - 1, 127}, {128 * 128 * 128, 128}};
  for (const auto& [bytes, side] : bytes_to_side) {
    SCOPED_TRACE("bytes=" + std::to_string(bytes));
    EXPECT_EQ(make("volume", bytes, seed).bytes.size(), side * side * side);
  }
}

TEST(Generators, SizeZeroWorks) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  for (const auto& info : vlec::gen::generators()) {
    SCOPED_TRACE(info.name);
    const Sample s = make(info.name, 0, seed);
    // The volume's 0 means "default size", 512^3.
    EXPECT_EQ(s.bytes.size(), info.name == "volume" ? size_t{512} * 512 * 512 : 0);
  }
}

TEST(Generators, SkewedHasGeometricEntropy) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  const double h = entropy_bits(make("skewed", 1 << 20, seed));
  report("skewed entropy bits/byte", h, seed);
  EXPECT_GE(h, 2.85);
  EXPECT_LE(h, 3.05);
}

TEST(Generators, RunsHaveMeanLengthSixAndNeverMerge) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  const Sample s = make("runs", 1 << 20, seed);
  // Count maximal runs: adjacent maximal runs differ by definition, so a
  // merge of two generated runs shows up only as a longer mean. Generated
  // lengths average 6.00; merging equal neighbours (about 2.6% of them for
  // the geometric p = 0.05 values) would raise it to about 6.16, far outside
  // the +-0.1 band (the mean's standard error on 1 MiB is about 0.013).
  size_t runs = 0;
  for (size_t i = 0; i < s.bytes.size(); ++i) runs += (i == 0 || s.bytes[i] != s.bytes[i - 1]);
  ASSERT_GT(runs, 0u);
  const double mean = static_cast<double>(s.bytes.size()) / static_cast<double>(runs);
  report("runs mean run length", mean, seed);
  EXPECT_GE(mean, 5.5);
  EXPECT_LE(mean, 6.5);
  EXPECT_NEAR(mean, 6.0, 0.1) << "adjacent runs appear to merge or run lengths drifted";
}

TEST(Generators, Quant1024CodesAreSzLike) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  const Sample s = make("quant1024", 2 << 20, seed);
  size_t outliers = 0;
  for (size_t i = 0; i < s.elements(); ++i) {
    const uint64_t code = element(s, i);
    ASSERT_LT(code, 1024u) << "at element " << i;
    outliers += code == 0;
  }
  const double h = entropy_bits(s);
  const double outlier_fraction = static_cast<double>(outliers) / static_cast<double>(s.elements());
  report("quant1024 entropy bits/code", h, seed);
  report("quant1024 outlier fraction", outlier_fraction, seed);
  EXPECT_GE(h, 2.5);
  EXPECT_LE(h, 6.0);
  EXPECT_LT(outlier_fraction, 0.01);
}

TEST(Generators, Quant65536CodesAreSzLike) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  const Sample s = make("quant65536", 2 << 20, seed);
  const auto h = histogram(s);
  ASSERT_FALSE(h.empty());
  EXPECT_LT(h.rbegin()->first, 65536u);
  const double bits = entropy_bits(s);
  report("quant65536 entropy bits/code", bits, seed);
  report("quant65536 distinct codes", static_cast<double>(h.size()), seed);
  EXPECT_GE(bits, 7.0);
  EXPECT_LE(bits, 12.0);
  EXPECT_GT(h.size(), 1000u);
}

TEST(Generators, VolumeIsSparse) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  const Sample s = make("volume", 128 * 128 * 128, seed);
  ASSERT_EQ(s.bytes.size(), size_t{128} * 128 * 128);
  size_t nonzero = 0;
  for (uint8_t b : s.bytes) nonzero += b != 0;
  const double fraction = static_cast<double>(nonzero) / static_cast<double>(s.bytes.size());
  report("volume 128^3 non-zero fraction", fraction, seed);
  EXPECT_GE(fraction, 0.005);
  EXPECT_LE(fraction, 0.10);
}

TEST(Generators, TextIsPrintableAsciiInLines) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  const Sample s = make("text", 1 << 20, seed);
  size_t line = 0, longest = 0, lines = 0, line_chars = 0;
  for (size_t i = 0; i < s.bytes.size(); ++i) {
    const uint8_t c = s.bytes[i];
    ASSERT_TRUE(c == '\n' || (c >= 0x20 && c <= 0x7E)) << "byte " << int{c} << " at " << i;
    if (c == '\n') {
      if (line > 0) ++lines, line_chars += line;
      line = 0;
    } else {
      longest = std::max(longest, ++line);
    }
  }
  ASSERT_GT(lines, 0u);
  const double mean_line = static_cast<double>(line_chars) / static_cast<double>(lines);
  report("text mean line length", mean_line, seed);
  EXPECT_LE(longest, 80u);
  EXPECT_GE(mean_line, 40.0);  // paragraph ends shorten some lines
}

}  // namespace
