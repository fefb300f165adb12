// tests/test_huffman.cpp: the Huffman codebook (optimality, length limiting,
// determinism, serialization) and the chunk layout (a hand-computed example,
// round trips at every K and every partial-row shape, bad words rejected).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cmath>
#include <numeric>
#include <queue>
#include <random>

#include "common/bits.hpp"
#include "huffman/chunk_codec.hpp"
#include "huffman/codebook.hpp"
#include "huffman/gpu_tables.hpp"
#include "test_util.hpp"
#include "vlec/error.hpp"

namespace vlec::huffman {
namespace {

// Optimal (unlimited) Huffman cost by the textbook heap algorithm: the sum of
// the weights of all internal nodes. Unique even when the lengths are not.
uint64_t reference_cost(const Histogram& h) {
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> q;
  for (uint64_t c : h)
    if (c) q.push(c);
  if (q.size() == 1) return q.top();
  uint64_t cost = 0;
  while (q.size() > 1) {
    uint64_t a = q.top(); q.pop();
    uint64_t b = q.top(); q.pop();
    cost += a + b;
    q.push(a + b);
  }
  return cost;
}

uint64_t kraft(const Codebook& b) {
  uint64_t k = 0;
  for (uint8_t l : b.lengths)
    if (l) k += uint64_t{1} << (b.max_length - l);
  return k;
}

uint64_t book_bits(const Histogram& h, const Codebook& b) {
  uint64_t bits = 0;
  for (std::size_t s = 0; s < h.size(); ++s) bits += h[s] * (s < b.lengths.size() ? b.lengths[s] : 0);
  return bits;
}

Histogram random_histogram(std::mt19937_64& rng, unsigned symbols, bool sparse) {
  Histogram h(symbols, 0);
  for (auto& c : h) {
    c = rng() % 1000;
    if (sparse && rng() % 3 == 0) c = 0;
    if (rng() % 7 == 0) c = c * 1000 + 1;
  }
  h[rng() % symbols] += 1;
  while (!h.empty() && h.back() == 0) h.pop_back();
  return h;
}

TEST(Codebook, UnlimitedLengthsAreOptimal) {
  std::mt19937_64 rng(test::base_seed());
  SCOPED_TRACE("seed " + std::to_string(test::base_seed()));
  for (int trial = 0; trial < 200; ++trial) {
    const Histogram h = random_histogram(rng, 2 + rng() % 600, trial % 2);
    const Codebook b = build_codebook(h, kMaxCodeLength);
    const LengthCounts unl = huffman_length_counts(h);
    unsigned deepest = 0;
    for (unsigned l = 0; l <= kMaxTreeDepth; ++l)
      if (unl[l]) deepest = l;
    if (deepest <= kMaxCodeLength && std::count_if(h.begin(), h.end(), [](uint64_t c) { return c; }) > 1) {
      EXPECT_EQ(book_bits(h, b), reference_cost(h)) << "trial " << trial;
    }
    EXPECT_EQ(kraft(b), uint64_t{1} << b.max_length);
  }
}

TEST(Codebook, LimitedCodesAreCompleteAndWithinLimit) {
  std::mt19937_64 rng(test::base_seed() + 1);
  SCOPED_TRACE("seed " + std::to_string(test::base_seed() + 1));
  for (int trial = 0; trial < 200; ++trial) {
    const Histogram h = random_histogram(rng, 2 + rng() % 3000, trial % 2);
    const uint64_t present = std::count_if(h.begin(), h.end(), [](uint64_t c) { return c; });
    for (unsigned limit : {9u, 11u, 12u, 16u}) {
      if ((uint64_t{1} << limit) < present) continue;
      const Codebook b = build_codebook(h, limit);
      EXPECT_LE(b.max_length, limit);
      EXPECT_EQ(kraft(b), uint64_t{1} << b.max_length) << "limit " << limit;
      EXPECT_GE(book_bits(h, b), reference_cost(h));
      for (std::size_t s = 0; s < h.size(); ++s) EXPECT_EQ(h[s] != 0, b.lengths[s] != 0);
    }
  }
}

TEST(Codebook, FibonacciFrequenciesGiveTheLongestCodes) {
  Histogram h(40);
  h[0] = h[1] = 1;
  for (int i = 2; i < 40; ++i) h[i] = h[i - 1] + h[i - 2];
  LengthCounts unl = huffman_length_counts(h);
  EXPECT_EQ(unl[39], 2u);  // a Fibonacci histogram makes a maximally deep tree
  const Codebook b = build_codebook(h, 24);
  EXPECT_EQ(b.max_length, 24u);  // only the format's limit holds it
  EXPECT_EQ(kraft(b), uint64_t{1} << 24);
  // The automatic policy takes 16 bits here: the deep codes are so rare that
  // limiting them costs less than its slack (FORMAT §4.3).
  EXPECT_EQ(build_codebook(h, 0).max_length, 16u);
}

TEST(Codebook, SingleSymbolGetsOneBit) {
  Histogram h(201, 0);
  h[200] = 12345;
  const Codebook b = build_codebook(h);
  EXPECT_EQ(b.alphabet_size, 201u);
  EXPECT_EQ(b.max_length, 1u);
  EXPECT_EQ(b.lengths[200], 1);
  EXPECT_EQ(b.codes[200], 0u);
}

TEST(Codebook, DeterministicUnderTiesAndSymbolOrder) {
  // Equal counts everywhere: the rank order (count desc, symbol asc) decides.
  Histogram h(300, 7);
  const Codebook a = build_codebook(h), b = build_codebook(h);
  EXPECT_EQ(a.lengths, b.lengths);
  EXPECT_EQ(a.codes, b.codes);
  // 300 equal symbols: 2^9 - 300 = 212 get 8 bits, the rest 9, smallest symbols shortest.
  EXPECT_EQ(a.lengths[0], 8);
  EXPECT_EQ(a.lengths[211], 8);
  EXPECT_EQ(a.lengths[212], 9);
}

TEST(Codebook, AutomaticLimitPolicy) {
  // Skewed bytes: 11 bits cost ~1.4% over 24, so the policy moves to 16.
  std::vector<uint8_t> d = test::sample("skewed", 1 << 20, DType::u8, test::base_seed());
  Histogram h;
  accumulate_histogram(d.data(), d.size(), DType::u8, h);
  const Codebook b = build_codebook(h);
  const std::vector<uint32_t> ranked = rank_symbols(h);
  const LengthCounts unl = huffman_length_counts(h);
  const uint64_t base = coded_bits(h, ranked, limit_length_counts(unl, 24));
  EXPECT_LE(book_bits(h, b), base + base / kAutoLimitSlack);
  // and no shorter candidate limit would have met the bound
  for (unsigned limit : kAutoLengthLimits) {
    if (limit >= b.max_length) break;
    EXPECT_GT(coded_bits(h, ranked, limit_length_counts(unl, limit)), base + base / kAutoLimitSlack) << limit;
  }
}

// A histogram that a 12-bit limit would serve within the bound while 11 bits
// would not: the policy (FORMAT §4.3) goes to 16, which codes better than 12
// and decodes faster on both backends (writers before 2026-11-26 chose 12).
TEST(Codebook, AutomaticLimitSkipsTwelve) {
  Histogram h(64);
  for (uint32_t s = 0; s < 64; ++s) h[s] = 1 + static_cast<uint64_t>(1e7 * std::pow(0.83, s));
  const std::vector<uint32_t> ranked = rank_symbols(h);
  const LengthCounts unl = huffman_length_counts(h);
  const uint64_t base = coded_bits(h, ranked, limit_length_counts(unl, 24));
  ASSERT_GT(coded_bits(h, ranked, limit_length_counts(unl, 11)), base + base / kAutoLimitSlack);
  const uint64_t b12 = coded_bits(h, ranked, limit_length_counts(unl, 12));
  ASSERT_LE(b12, base + base / kAutoLimitSlack);  // a policy with 12 would choose it
  const Codebook b = build_codebook(h);
  EXPECT_EQ(b.max_length, 16u);
  EXPECT_LT(book_bits(h, b), b12);
  EXPECT_EQ(book_bits(h, b), coded_bits(h, ranked, limit_length_counts(unl, 16)));
}

// A wide alphabet (16,384 symbols, exponential counts) whose 16-bit code
// costs 0.25 % over the 24-bit one: within the slack of 1/256 (writers
// before 2026-11-27, at 1/512, chose 24), so the policy takes 16 bits and
// the decoders two symbols a refill.
TEST(Codebook, AutomaticLimitTakesSixteenWithinTheSlack) {
  Histogram h(16384);
  for (uint32_t s = 0; s < h.size(); ++s) h[s] = 1 + static_cast<uint64_t>(1e5 * std::exp(-static_cast<double>(s) / 4000));
  const std::vector<uint32_t> ranked = rank_symbols(h);
  const LengthCounts unl = huffman_length_counts(h);
  const uint64_t base = coded_bits(h, ranked, limit_length_counts(unl, 24));
  const uint64_t b16 = coded_bits(h, ranked, limit_length_counts(unl, 16));
  ASSERT_GT(b16, base + base / 512);
  ASSERT_LE(b16, base + base / kAutoLimitSlack);
  const Codebook b = build_codebook(h);
  EXPECT_EQ(b.max_length, 16u);
  EXPECT_EQ(book_bits(h, b), b16);
}

TEST(Codebook, LargestAlphabet) {
  std::mt19937_64 rng(test::base_seed() + 2);
  Histogram h(kMaxAlphabet);
  for (auto& c : h) c = 1 + rng() % 50;
  h[32768] = 1u << 30;
  const Codebook b = build_codebook(h);
  EXPECT_EQ(b.alphabet_size, kMaxAlphabet);
  EXPECT_EQ(kraft(b), uint64_t{1} << b.max_length);
  EXPECT_GT(b.max_length, 16u);  // a dominant symbol among 65,536 needs codes beyond 16 bits
  // A 16-bit limit leaves only the flat code; 15 bits cannot hold the alphabet.
  const Codebook flat = build_codebook(h, 16);
  EXPECT_TRUE(std::all_of(flat.lengths.begin(), flat.lengths.end(), [](uint8_t l) { return l == 16; }));
  EXPECT_THROW(build_codebook(h, 15), Error);
}

// The parse reads a group's 16 length fields as two words; a bad field must
// still be reported as the field-by-field read names it: its symbol, at
// every place in a group and every bit offset, with 4- and 5-bit fields.
TEST(Codebook, BadLengthFieldsNameTheirSymbol) {
  std::mt19937_64 rng(test::base_seed() + 31);
  SCOPED_TRACE("seed " + std::to_string(test::base_seed() + 31));
  auto expect_error = [](const std::vector<uint8_t>& bytes, ErrorCode code, const std::string& text) {
    for (const bool codes : {true, false}) {
      Codebook back;
      try {
        parse_codebook(bytes.data(), bytes.size(), kMaxAlphabet, back, codes);
        ADD_FAILURE() << "no error; expected: " << text;
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), code) << e.what();
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what() << " (expected: " << text << ")";
      }
    }
  };
  for (const unsigned limit : {12u, 20u}) {  // 4-bit and 5-bit fields
    // 300 .. 315 symbols (odd counts leave the last group partly past the
    // alphabet), a few absent so that unflagged groups move the offsets.
    const unsigned n = 300 + static_cast<unsigned>(rng() % 16);
    Histogram h(n, 0);
    for (unsigned s = 0; s < n; ++s) h[s] = (s / 16) % 5 == 3 ? 0 : 1 + rng() % 200 + (limit > 16 ? (1ull << (s % 19)) : 0);
    h[n - 1] += 1;
    const Codebook b = build_codebook(h);
    const std::vector<uint8_t> good = serialize_codebook(b);
    const unsigned bits = good[5];
    ASSERT_EQ(bits, b.max_length <= 15 ? 4u : 5u);
    EXPECT_EQ(bits, limit > 16 ? 5u : 4u) << "max_length " << b.max_length;
    const unsigned groups = (n + 15) / 16;
    // Bit offset of symbol s's field (its group flagged), from byte 8.
    auto field_at = [&](unsigned s) {
      unsigned present = 0;
      for (unsigned g = 0; g < s / 16; ++g) {
        bool any = false;
        for (unsigned k = 0; k < 16 && g * 16 + k < n; ++k) any = any || b.lengths[g * 16 + k];
        present += any;
      }
      return 64 + groups + (present * 16 + s % 16) * bits;
    };
    auto with_field = [&](unsigned s, unsigned v) {
      std::vector<uint8_t> bytes = good;
      const unsigned at = field_at(s);
      for (unsigned i = 0; i < bits; ++i) {
        const unsigned bit = at + i;
        bytes[bit / 8] = static_cast<uint8_t>((bytes[bit / 8] & ~(1u << bit % 8)) | ((v >> i) & 1u) << bit % 8);
      }
      return bytes;
    };
    const unsigned too_long = std::min(b.max_length + 1, (1u << bits) - 1);
    ASSERT_GT(too_long, b.max_length);
    unsigned tested = 0;
    for (unsigned s = 0; s < n; ++s) {
      if (!b.lengths[s]) continue;  // (its group may be unflagged)
      ++tested;
      expect_error(with_field(s, too_long), ErrorCode::corrupt_stream,
                   "code length " + std::to_string(too_long) + " of symbol " + std::to_string(s) +
                       " exceeds the codebook maximum");
    }
    EXPECT_GT(tested, 200u);
    // A flagged group with every field zero.
    for (unsigned g = 0; g + 1 < groups; ++g) {
      if (!b.lengths[g * 16]) continue;
      std::vector<uint8_t> bytes = good;
      for (unsigned k = 0; k < 16; ++k) {
        const unsigned at = field_at(g * 16 + k);
        for (unsigned i = 0; i < bits; ++i) bytes[(at + i) / 8] &= static_cast<uint8_t>(~(1u << (at + i) % 8));
      }
      expect_error(bytes, ErrorCode::corrupt_stream, "codebook group " + std::to_string(g) + " is flagged but empty");
    }
    // A length past the alphabet, in the last group.
    if (n % 16) {
      const unsigned s = n + static_cast<unsigned>(rng() % (16 - n % 16));
      expect_error(with_field(s, 1), ErrorCode::corrupt_stream,
                   "code length given for symbol " + std::to_string(s) + " beyond the alphabet size");
    }
  }
}


TEST(Codebook, SerializationRoundTripsAndIsStrict) {
  std::mt19937_64 rng(test::base_seed() + 3);
  SCOPED_TRACE("seed " + std::to_string(test::base_seed() + 3));
  for (int trial = 0; trial < 100; ++trial) {
    const Histogram h = random_histogram(rng, 1 + rng() % 70000 % kMaxAlphabet, true);
    const Codebook b = build_codebook(h);
    const std::vector<uint8_t> bytes = serialize_codebook(b);
    ASSERT_EQ(bytes.size() % 4, 0u);
    Codebook back;
    ASSERT_EQ(parse_codebook(bytes.data(), bytes.size(), kMaxAlphabet, back), bytes.size());
    EXPECT_EQ(back.lengths, b.lengths);
    EXPECT_EQ(back.codes, b.codes);
    // Without the codes (the GPU decoder's parse): the same lengths and
    // maximum, no codes.
    Codebook lengths_only;
    ASSERT_EQ(parse_codebook(bytes.data(), bytes.size(), kMaxAlphabet, lengths_only, false), bytes.size());
    EXPECT_EQ(lengths_only.lengths, b.lengths);
    EXPECT_EQ(lengths_only.max_length, b.max_length);
    EXPECT_EQ(lengths_only.alphabet_size, b.alphabet_size);
    EXPECT_TRUE(lengths_only.codes.empty());
    // The length counts the parse keeps (for the checks and the GPU table
    // plan) are the lengths' histogram, and plan the same tables as a count
    // of their own.
    ASSERT_TRUE(lengths_only.counted);
    std::array<uint32_t, kMaxCodeLength + 1> direct{};
    for (const uint8_t l : b.lengths) ++direct[l];
    direct[0] += b.alphabet_size - static_cast<uint32_t>(b.lengths.size());
    EXPECT_EQ(lengths_only.length_counts, direct);
    Codebook uncounted = lengths_only;
    uncounted.counted = false;
    uncounted.length_counts = {};
    for (const unsigned width : {1u, 2u}) {
      if (width == 1 && b.alphabet_size > 256) continue;
      const GpuTablePlan p = plan_gpu_decode_tables(lengths_only, width), q = plan_gpu_decode_tables(uncounted, width);
      EXPECT_EQ(p.gpu_single_bits, q.gpu_single_bits);
      EXPECT_EQ(p.pair_bits, q.pair_bits);
      EXPECT_EQ(p.use_pairs, q.use_pairs);
      EXPECT_EQ(p.sub_entries, q.sub_entries);
      EXPECT_EQ(p.coded_symbols, q.coded_symbols);
    }
    // Truncation is always rejected.
    EXPECT_THROW(parse_codebook(bytes.data(), bytes.size() - 1 - rng() % 4, kMaxAlphabet, back), Error);
    EXPECT_THROW(parse_codebook(bytes.data(), bytes.size() - 1 - rng() % 4, kMaxAlphabet, back, false), Error);
  }
  // An incomplete code is rejected, with or without the codes: three
  // symbols of length 2.
  Codebook bad;
  bad.alphabet_size = 3;
  bad.lengths = {2, 2, 2};
  bad.max_length = 2;
  EXPECT_THROW(assign_canonical_codes(bad), Error);
  EXPECT_THROW(check_code_lengths(bad), Error);
  Codebook one;  // a single symbol of length 1 is accepted both ways
  one.alphabet_size = 1;
  one.lengths = {1};
  check_code_lengths(one);
  EXPECT_EQ(one.max_length, 1u);
  EXPECT_TRUE(one.codes.empty());
}

// The layout, computed by hand: lengths {1,2,3,3} give canonical codes
// 0, 10, 110, 111 (LSB-first: 0, 1, 3, 7). Max length 3 means K = 4 symbols
// per step and refill threshold 12. Lane 0 owns symbols 0-3, lane 1 symbols 4-7.
TEST(ChunkLayout, HandComputedExample) {
  Codebook b;
  b.alphabet_size = 4;
  b.lengths = {1, 2, 3, 3};
  assign_canonical_codes(b);
  EXPECT_EQ(b.codes, (std::vector<uint32_t>{0, 1, 3, 7}));
  const uint8_t in[8] = {0, 1, 2, 3, 3, 3, 3, 3};
  std::vector<uint32_t> out(2 + kEncodeSlackWords);
  ASSERT_EQ(encode_chunk(in, DType::u8, 8, make_encode_table(b, DType::u8), out.data(), 2), 2u);
  // lane 0: 0 | 1<<1 | 3<<3 | 7<<6 = 0x1DA; lane 1: four codes 111 = 0xFFF
  EXPECT_EQ(out[0], 0x1DAu);
  EXPECT_EQ(out[1], 0xFFFu);
  uint8_t back[8];
  decode_chunk(reinterpret_cast<const uint8_t*>(out.data()), 2, 8, make_decode_table(b), DType::u8, back);
  EXPECT_EQ(0, std::memcmp(in, back, 8));
}

// Round trips over every partial-row shape, each K (max length <= 8, <= 16,
// > 16), each symbol type, and primary tables narrower than the longest code.
void round_trip_every_shape() {
  std::mt19937_64 rng(test::base_seed() + 4);
  SCOPED_TRACE("seed " + std::to_string(test::base_seed() + 4) +
               (decode_bmi2_active() ? ", BMI2 decode loop" : ", portable decode loop"));
  for (DType t : {DType::u8, DType::u16, DType::u32}) {
    for (unsigned limit : {6u, 11u, 16u, 24u}) {
      const unsigned symbols = t == DType::u8 ? 256 : 3000;
      Histogram h(symbols);
      for (unsigned s = 0; s < symbols; ++s) h[s] = 1 + (s < 40 ? uint64_t{1} << (40 - s) / 2 : rng() % 3);
      if ((1u << limit) < symbols) continue;
      const Codebook b = build_codebook(h, limit);
      const EncodeTable et = make_encode_table(b, t);
      for (unsigned primary : {8u, 11u}) {
        const DecodeTable dt = make_decode_table(b, primary);
        for (std::size_t n : {1, 2, 3, 4, 5, 31, 127, 128, 129, 255, 256, 300, 1000, 4096, 4097, 65535}) {
          std::vector<uint32_t> values(n);
          // draw from the histogram's shape: mostly small symbols, some rare ones
          for (auto& v : values) v = rng() % 8 ? static_cast<uint32_t>(rng() % 12) : static_cast<uint32_t>(rng() % symbols);
          std::vector<uint8_t> in = test::convert(
              std::vector<uint8_t>(reinterpret_cast<uint8_t*>(values.data()), reinterpret_cast<uint8_t*>(values.data() + n)),
              4, static_cast<unsigned>(dtype_bytes(t)));
          const std::size_t cap = n * 4;
          std::vector<uint32_t> words(cap + kEncodeSlackWords);
          const std::size_t w = encode_chunk(in.data(), t, n, et, words.data(), cap);
          ASSERT_NE(w, kDoesNotFit);
          std::vector<uint8_t> back(in.size(), 0xA5);
          decode_chunk(reinterpret_cast<const uint8_t*>(words.data()), w, n, dt, t, back.data());
          ASSERT_EQ(in, back) << to_string(t) << " limit " << limit << " n " << n << " primary " << primary;
          // One word more or less is always caught.
          EXPECT_THROW(decode_chunk(reinterpret_cast<const uint8_t*>(words.data()), w - 1, n, dt, t, back.data()), Error);
          words[w] = 0;
          EXPECT_THROW(decode_chunk(reinterpret_cast<const uint8_t*>(words.data()), w + 1, n, dt, t, back.data()), Error);
        }
      }
    }
  }
}

TEST(ChunkLayout, RoundTripsEveryShape) { round_trip_every_shape(); }

// The same with the portable decode loop, which a CPU with BMI2 would
// otherwise never run.
TEST(ChunkLayout, RoundTripsEveryShapeWithoutBmi2) {
  set_decode_bmi2_allowed(false);
  struct Restore {
    ~Restore() { set_decode_bmi2_allowed(true); }
  } restore;
  ASSERT_FALSE(decode_bmi2_active());
  round_trip_every_shape();
}

TEST(ChunkLayout, CapacityIsRespected) {
  std::vector<uint8_t> d = test::sample("uniform", 65536, DType::u8, test::base_seed() + 5);
  Histogram h;
  accumulate_histogram(d.data(), d.size(), DType::u8, h);
  const Codebook b = build_codebook(h);
  std::vector<uint32_t> out(d.size() / 4 + kEncodeSlackWords);
  // Uniform bytes cost 8 bits each plus padding: they cannot fit in the raw size.
  EXPECT_EQ(encode_chunk(d.data(), DType::u8, d.size(), make_encode_table(b, DType::u8), out.data(),
                         (d.size() - 1) / 4),
            kDoesNotFit);
}

TEST(ChunkLayout, ValueWithoutCodeIsNamed) {
  Histogram h(10, 1);
  const Codebook b = build_codebook(h);
  std::vector<uint8_t> in(1000, 3);
  in[777] = 200;
  std::vector<uint32_t> out(1000 + kEncodeSlackWords);
  try {
    encode_chunk(in.data(), DType::u8, in.size(), make_encode_table(b, DType::u8), out.data(), 1000, 5000);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::value_out_of_alphabet);
    EXPECT_NE(std::string(e.what()).find("value 200 at element 5777"), std::string::npos) << e.what();
  }
}

TEST(Histogram, U32ValueOutsideAlphabetIsNamed) {
  std::vector<uint32_t> v(100, 5);
  v[42] = 70000;
  Histogram h;
  try {
    accumulate_histogram(v.data(), v.size(), DType::u32, h, 1000);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::value_out_of_alphabet);
    EXPECT_NE(std::string(e.what()).find("value 70000 at element 1042"), std::string::npos) << e.what();
  }
}

// The one-pass wide histogram grows to the largest value seen, across calls
// (a thread's chunks accumulate into one histogram), and counts every value
// exactly: random u16 and u32 values of rising and falling tops, against a
// plain count; the histogram never larger than 1 + the largest value.
TEST(Histogram, WideValuesGrowTheHistogramAcrossCalls) {
  const uint64_t seed = test::base_seed() + 41;
  std::printf("Histogram.WideValuesGrowTheHistogramAcrossCalls seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (const DType t : {DType::u16, DType::u32}) {
    Histogram h, want;
    uint32_t top = 0;
    for (int call = 0; call < 40; ++call) {
      const uint32_t bound = 1 + static_cast<uint32_t>(rng() % (call % 3 == 0 ? 65536 : 1 + 64 * (call + 1)));
      const std::size_t n = static_cast<std::size_t>(rng() % 5000);
      std::vector<uint32_t> v(n);
      for (uint32_t& x : v) x = static_cast<uint32_t>(rng() % bound);
      for (uint32_t x : v) {
        if (want.size() <= x) want.resize(x + 1, 0);
        ++want[x];
        top = std::max(top, x);
      }
      if (t == DType::u16) {
        const std::vector<uint16_t> v16(v.begin(), v.end());
        accumulate_histogram(v16.data(), n, t, h, 0);
      } else {
        accumulate_histogram(v.data(), n, t, h, 0);
      }
      ASSERT_EQ(h, want) << "call " << call;
      if (!h.empty()) ASSERT_EQ(h.size(), top + 1u);
    }
  }
}

}  // namespace
}  // namespace vlec::huffman
