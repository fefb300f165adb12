// huffman/decode.cpp: CPU decoder of one chunk in the lane layout.
//
// Why it is fast: the 32 lane decoders of a chunk are independent, so the
// CPU interleaves them as huff0 interleaves its 4 streams: while one lane
// waits on its table lookup, the others proceed. Rows in which every lane
// owns a full group run without bounds logic, the 32 lanes unrolled, and a
// refill is one 32-bit load taken without a data-dependent branch. When a
// step decodes K >= 2 symbols, one lookup in a pair table (4,096 entries of
// 4 bytes for u8, 8 for wider symbols) yields two symbols and their total
// length whenever both codes fit in its index; otherwise, and for K = 1, one
// lookup in the single table (2,048 entries, or 8,192 for K = 1) yields one
// symbol, and a code longer than its index goes to a second-level table. The
// rare cases leave the hot loop through out-of-line calls that return an
// entry as the table would have held it, so that the lane's buffer never
// leaves its registers. The last rows, whose refills could run past the
// chunk, are decoded the same way from a zero-padded copy of its last words.
#include <algorithm>
#include <atomic>
#include <type_traits>

#include "common/bits.hpp"
#include "common/safety.hpp"
#include "huffman/chunk_codec.hpp"

namespace vlec::huffman {

namespace {

// single: symbol | length << 16, or kSingleLong for an index that starts a
// code longer than single_bits (long_info and sub resolve it). An index that
// starts no code (only a one-symbol codebook has them) holds 0: symbol 0 of
// length 0, which consumes nothing and so leaves the chunk to fail its
// padding check, as the GPU decoder does.
// long_info: sub offset << 5 | sub_bits (0: no second level; the canonical
// arrays resolve the code). sub: symbol | length << 16.

// Pair tables, for symbols of W bits: s1 | s2 << W | total length << 2W.
// An entry with the flag bit 2W + 7 set is a step the entry cannot complete;
// it holds s1 | l1 << 2W if the first code fits (l1 = 0 if not).
// Index widths: 13 bits for bytes (8,192 entries of 4 bytes, 32 KiB) leave
// text about one step in twenty for the slow path, against one in eleven at
// 12 bits (measured on the Canterbury texts); 16-bit symbols take 12 bits
// (4,096 entries of 8 bytes).
constexpr unsigned kPairBits8 = 13;
constexpr unsigned kPairBits16 = 12;
template <unsigned W>
constexpr uint64_t kPairSlow = uint64_t{1} << (2 * W + 7);

// The pair tables are used when the estimated share of steps they complete
// (the share of their indexes that hold two codes: code bits are close to
// uniformly random) is at least this many 256ths.
constexpr unsigned kMinPairShare = 128;

}  // namespace

DecodeTable make_primary_decode_table(const Codebook& book, unsigned primary_bits) {
  DecodeTable t;
  t.max_length = book.max_length;
  if (book.empty()) return t;
  t.bits = std::min(book.max_length, primary_bits);
  t.entry.assign(std::size_t{1} << t.bits, 0);
  // Canonical First/Entry arrays, and the symbols in canonical order.
  for (uint32_t s = 0; s < book.alphabet_size; ++s)
    if (book.lengths[s]) ++t.count[book.lengths[s]];
  uint32_t code = 0, index = 0;
  for (unsigned l = 1; l <= t.max_length; ++l) {
    code = (code + (l > 1 ? t.count[l - 1] : 0)) << 1;
    t.first[l] = code;
    t.offset[l] = index;
    index += t.count[l];
  }
  t.sorted.assign(index, 0);
  std::array<uint32_t, kMaxCodeLength + 1> fill = t.offset;
  for (uint32_t s = 0; s < book.alphabet_size; ++s)
    if (unsigned l = book.lengths[s]) {
      t.sorted[fill[l]++] = s;
      if (l <= t.bits)
        for (uint32_t hi = 0; hi < (1u << (t.bits - l)); ++hi)
          t.entry[book.codes[s] | (hi << l)] = (l << 16) | s;
    }

  return t;
}

bool long_codes_common(const uint64_t* counts, unsigned max_length) {
  uint64_t long_space = 0;  // in units of 2^-24 of the code space
  for (unsigned l = 12; l <= std::min(max_length, kMaxCodeLength); ++l) long_space += counts[l] << (kMaxCodeLength - l);
  return long_space >= (uint64_t{1} << (kMaxCodeLength - 7));
}

bool long_codes_common(const Codebook& book) {
  std::array<uint64_t, kMaxCodeLength + 1> counts{};
  for (uint8_t l : book.lengths) ++counts[l];
  return long_codes_common(counts.data(), book.max_length);
}

unsigned cpu_single_bits(const Codebook& book) {
  return single_table_bits(book.max_length, long_codes_common(book));
}

DecodeTable make_decode_table(const Codebook& book, unsigned primary_bits, unsigned symbol_bytes,
                              unsigned max_single_bits) {
  DecodeTable t = make_primary_decode_table(book, primary_bits);
  if (book.empty()) return t;
  // The CPU tables. The single table, and the longest code under each of its
  // indexes that starts a longer code.
  const unsigned K = symbols_per_step(book.max_length);
  const unsigned sb = t.single_bits =
      std::min(book.max_length, max_single_bits ? max_single_bits : cpu_single_bits(book));
  const uint32_t single_mask = (1u << sb) - 1;
  t.single.assign(std::size_t{1} << sb, 0);
  t.long_info.assign(std::size_t{1} << sb, 0);
  std::vector<uint8_t> longest(std::size_t{1} << sb, 0);
  for (uint32_t s = 0; s < book.alphabet_size; ++s) {
    const unsigned l = book.lengths[s];
    if (l == 0) continue;
    if (l <= sb) {
      for (uint32_t hi = 0; hi < (1u << (sb - l)); ++hi) t.single[book.codes[s] | (hi << l)] = s | l << 16;
    } else {
      uint8_t& m = longest[book.codes[s] & single_mask];
      m = static_cast<uint8_t>(std::max<unsigned>(m, l));
    }
  }
  std::size_t sub_entries = 0;
  for (uint8_t m : longest)
    if (m) sub_entries += std::size_t{1} << (m - sb);
  const bool second_level = sub_entries <= kMaxSubEntries;
  if (second_level) t.sub.assign(sub_entries, 0);
  std::size_t at = 0;
  for (uint32_t i = 0; i < longest.size(); ++i) {
    if (!longest[i]) continue;
    t.single[i] = kSingleLong;
    if (!second_level) continue;
    const unsigned sub_bits = longest[i] - sb;
    t.long_info[i] = static_cast<uint32_t>(at) << 5 | sub_bits;
    at += std::size_t{1} << sub_bits;
  }
  if (second_level)
    for (uint32_t s = 0; s < book.alphabet_size; ++s) {
      const unsigned l = book.lengths[s];
      if (l <= sb) continue;
      const uint32_t info = t.long_info[book.codes[s] & single_mask];
      const unsigned sub_bits = info & 31;
      const uint32_t rest = book.codes[s] >> sb;
      for (uint32_t hi = 0; hi < (1u << (sub_bits - (l - sb))); ++hi)
        t.sub[(info >> 5) + (rest | hi << (l - sb))] = s | l << 16;
    }

  // Pair tables, for steps of two or four symbols, for the symbol widths the
  // caller will decode (symbol_bytes 0: both).
  if (K >= 2) {
    // The single entry of a code of length <= avail in the low bits of v, or 0.
    auto known = [&](uint32_t v, unsigned avail) -> uint32_t {
      const uint32_t e = t.single[v & single_mask];
      const unsigned l = e >> 16;
      return (e & kSingleLong) || l == 0 || l > avail ? 0 : e;
    };
    // Fills `pair` (entries of W-bit symbols) with index width pb; returns
    // the share, in 256ths, of indexes that hold two codes.
    auto fill_pairs = [&](auto& pair, unsigned W, unsigned pb) -> std::size_t {
      using E = typename std::decay_t<decltype(pair)>::value_type;
      pair.resize(std::size_t{1} << pb);
      const uint32_t sym_mask = (1u << W) - 1;
      const E slow = E{1} << (2 * W + 7);
      std::size_t complete = 0;
      for (uint32_t i = 0; i < (1u << pb); ++i) {
        const uint32_t e1 = known(i, pb);
        const uint32_t l1 = e1 >> 16;
        const uint32_t e2 = e1 ? known(i >> l1, pb - l1) : 0;
        const E s1 = e1 & sym_mask, s2 = e2 & sym_mask;
        if (e2) {
          pair[i] = s1 | s2 << W | E{l1 + (e2 >> 16)} << (2 * W);
          ++complete;
        } else {
          pair[i] = slow | s1 | E{l1} << (2 * W);
        }
      }
      return complete * 256 / pair.size();
    };
    if (symbol_bytes <= 1) {
      const unsigned pb = std::min(kPairBits8, 2 * book.max_length);
      if (fill_pairs(t.pair8, 8, pb) >= kMinPairShare) t.pair8_bits = pb; else t.pair8 = {};
    }
    if (symbol_bytes != 1) {
      const unsigned pb = std::min(kPairBits16, 2 * book.max_length);
      if (fill_pairs(t.pair16, 16, pb) >= kMinPairShare) t.pair16_bits = pb; else t.pair16 = {};
    }
  }
  return t;
}

namespace {

[[noreturn]] void bad_chunk(const char* what) {
  SAFETY_CHECK(false, ErrorCode::corrupt_stream, what);
  __builtin_unreachable();
}

// A code longer than the single table: symbol | length << 16.
uint32_t decode_long(const DecodeTable& t, uint64_t buf, uint32_t bits) {
  const uint32_t info = t.long_info[buf & ((uint64_t{1} << t.single_bits) - 1)];
  uint32_t e = 0;
  if (const unsigned sub_bits = info & 31) {
    e = t.sub[(info >> 5) + ((buf >> t.single_bits) & ((uint32_t{1} << sub_bits) - 1))];
  } else {  // the canonical arrays
    const unsigned L = t.max_length;
    const uint32_t v = reverse_bits(static_cast<uint32_t>(buf & ((uint64_t{1} << L) - 1)), L);
    unsigned l = t.single_bits + 1;
    for (; l <= L; ++l) {
      const uint32_t code = v >> (L - l);
      if (code - t.first[l] < t.count[l]) {
        e = t.sorted[t.offset[l] + code - t.first[l]] | l << 16;
        break;
      }
    }
    if (l > L) bad_chunk("invalid Huffman code in chunk");  // unreachable for a complete code
  }
  if ((e >> 16) > bits) bad_chunk("invalid Huffman code in chunk");
  return e;
}

// Any code: symbol | length << 16.
inline uint32_t decode_entry(const DecodeTable& t, uint64_t buf, uint32_t bits) {
  const uint32_t e = t.single[buf & ((uint64_t{1} << t.single_bits) - 1)];
  return __builtin_expect(e & kSingleLong, 0) ? decode_long(t, buf, bits) : e;
}

__attribute__((noinline)) uint32_t decode_long_outlined(const DecodeTable& t, uint64_t buf, uint32_t bits) {
  return decode_long(t, buf, bits);
}

// A step the pair entry `e` cannot complete: the entry it would have held.
template <unsigned W, typename E>
__attribute__((noinline)) E decode_pair_slow(const DecodeTable& t, E e, uint64_t buf, uint32_t bits) {
  uint32_t s1 = static_cast<uint32_t>(e) & ((1u << W) - 1);
  uint32_t l1 = static_cast<uint32_t>(e >> (2 * W)) & 63;
  if (l1 == 0) {
    const uint32_t e1 = decode_entry(t, buf, bits);
    s1 = e1 & ((1u << W) - 1);
    l1 = e1 >> 16;
  }
  const uint32_t e2 = decode_entry(t, buf >> l1, bits - l1);
  return static_cast<E>(s1 | (e2 & ((1u << W) - 1)) << W | E{l1 + (e2 >> 16)} << (2 * W));
}

// One symbol, any code, for the checked tail.
template <typename Sym>
inline Sym decode_one(const DecodeTable& t, uint64_t& buf, uint32_t& bits) {
  const uint32_t e = decode_entry(t, buf, bits);
  buf >>= e >> 16;
  bits -= e >> 16;
  return static_cast<Sym>(e & 0xFFFF);
}

// Decoder state of the 32 lanes, as structure of arrays.
struct Lanes {
  uint64_t buf[kLanes] = {};
  uint32_t bits[kLanes] = {};
};

// The pair table for a symbol type: entry type and symbol width.
template <typename Sym>
struct PairTable {
  using E = uint64_t;
  static constexpr unsigned W = 16;
  static const E* get(const DecodeTable& t) { return t.pair16.data(); }
  static unsigned bits(const DecodeTable& t) { return t.pair16_bits; }
};
template <>
struct PairTable<uint8_t> {
  using E = uint32_t;
  static constexpr unsigned W = 8;
  static const E* get(const DecodeTable& t) { return t.pair8.data(); }
  static unsigned bits(const DecodeTable& t) { return t.pair8_bits; }
};

// Full rows while a whole row's worth of words (at most one per lane-step)
// is in bounds; `p` is the next word.
template <typename Sym, unsigned K, bool kPairs>
[[gnu::always_inline]] inline std::size_t decode_full_rows_body(const uint8_t* words, std::size_t word_count,
                                                                std::size_t full_rows,
                             const DecodeTable& t, Lanes& L, std::size_t& p_io, Sym* out) {
  using Pair = PairTable<Sym>;
  using E = typename Pair::E;
  constexpr unsigned W = Pair::W;
  constexpr unsigned kSteps = kGroup / K;
  constexpr std::size_t kRowWords = kLanes * kSteps;
  const uint64_t T = refill_threshold(t.max_length);
  const uint64_t single_mask = (uint64_t{1} << t.single_bits) - 1;
  const uint64_t pair_mask = (uint64_t{1} << Pair::bits(t)) - 1;
  const uint32_t* single = t.single.data();
  const E* pair = kPairs ? Pair::get(t) : nullptr;
  std::size_t p = p_io;
  std::size_t row = 0;
  for (; row < full_rows && p + kRowWords <= word_count; ++row) {
    Sym* row_out = out + row * kRow;
#pragma GCC unroll 4
    for (unsigned step = 0; step < kSteps; ++step) {
#pragma GCC unroll 32
      for (unsigned j = 0; j < kLanes; ++j) {
        uint64_t buf = L.buf[j];
        uint32_t bits = L.bits[j];
        // All ones if the lane takes a word (a wrapped bit count never does).
        const uint64_t need = static_cast<uint64_t>(static_cast<int64_t>(bits - T) >> 63);
        buf |= (uint64_t{load_le32(words + 4 * p)} << (bits & 63)) & need;
        bits += static_cast<uint32_t>(need) & kWordBits;
        p -= need;
        Sym* o = row_out + j * kGroup + step * K;
        if constexpr (kPairs) {
#pragma GCC unroll 2
          for (unsigned h = 0; h < K / 2; ++h) {
            E e = pair[buf & pair_mask];
            if (__builtin_expect((e & kPairSlow<W>) != 0, 0)) e = decode_pair_slow<W>(t, e, buf, bits);
            if constexpr (sizeof(Sym) == 1) {
              store_le16(o + 2 * h, static_cast<uint16_t>(e));
            } else if constexpr (sizeof(Sym) == 2) {
              store_le32(o + 2 * h, static_cast<uint32_t>(e));
            } else {
              o[2 * h] = static_cast<uint32_t>(e) & 0xFFFF;
              o[2 * h + 1] = static_cast<uint32_t>(e) >> 16;
            }
            const uint32_t len = static_cast<uint32_t>(e >> (2 * W));
            buf >>= len;
            bits -= len;
          }
        } else {
#pragma GCC unroll 4
          for (unsigned k = 0; k < K; ++k) {
            uint32_t e = single[buf & single_mask];
            if (__builtin_expect(e & kSingleLong, 0)) e = decode_long_outlined(t, buf, bits);
            o[k] = static_cast<Sym>(e & 0xFFFF);
            const uint32_t len = e >> 16;
            buf >>= len;
            bits -= len;
          }
        }
        L.buf[j] = buf;
        L.bits[j] = bits;
      }
    }
  }
  p_io = p;
  return row;
}

// The hot loop compiled twice: for any x86-64, and with BMI2, whose
// shlx/shrx shift by a register in one micro-op where shl/shr take three (the
// loop shifts twice per lookup); decode_chunk picks one at run time.
#if defined(__x86_64__) && defined(__GNUC__)
#define VLEC_HAVE_BMI2_CLONE 1
template <typename Sym, unsigned K, bool kPairs>
__attribute__((target("bmi2"))) std::size_t decode_full_rows_bmi2(const uint8_t* words, std::size_t word_count,
                                                                  std::size_t full_rows, const DecodeTable& t,
                                                                  Lanes& L, std::size_t& p_io, Sym* out) {
  return decode_full_rows_body<Sym, K, kPairs>(words, word_count, full_rows, t, L, p_io, out);
}
const bool kCpuHasBmi2 = __builtin_cpu_supports("bmi2");
#endif
std::atomic<bool> g_bmi2_allowed{true};

template <typename Sym, unsigned K, bool kPairs>
std::size_t decode_full_rows(const uint8_t* words, std::size_t word_count, std::size_t full_rows,
                             const DecodeTable& t, Lanes& L, std::size_t& p_io, Sym* out) {
#ifdef VLEC_HAVE_BMI2_CLONE
  if (kCpuHasBmi2 && g_bmi2_allowed.load(std::memory_order_relaxed))
    return decode_full_rows_bmi2<Sym, K, kPairs>(words, word_count, full_rows, t, L, p_io, out);
#endif
  return decode_full_rows_body<Sym, K, kPairs>(words, word_count, full_rows, t, L, p_io, out);
}

template <typename Sym, unsigned K, bool kPairs>
void decode_lanes(const uint8_t* words, std::size_t word_count, std::size_t n, const DecodeTable& t, Sym* out) {
  constexpr std::size_t kRowWords = kLanes * (kGroup / K);
  Lanes L;
  std::size_t p = 0;
  const std::size_t full_rows = n / kRow;
  std::size_t row = decode_full_rows<Sym, K, kPairs>(words, word_count, full_rows, t, L, p, out);
  // The last rows read the chunk's last words, fewer than a row's worth:
  // decode them from a copy with room for a row's worth after them, so
  // that they too take the unchecked path. A stream short of words reads
  // zeros there and fails the word count below.
  uint8_t tail[8 * kRowWords] = {};
  if (row < full_rows) {
    const std::size_t rest = word_count - p;
    std::memcpy(tail, words + 4 * p, 4 * rest);
    words = tail;
    word_count = rest;
    p = 0;
    row += decode_full_rows<Sym, K, kPairs>(tail, 2 * kRowWords, full_rows - row, t, L, p, out + row * kRow);
    if (row < full_rows || p > word_count) bad_chunk("Huffman chunk needs more words than it holds");
  }
  // The final partial row, one lane-step at a time with checked refills.
  const uint32_t T = refill_threshold(t.max_length);
  const uint64_t first = row * kRow;
  uint64_t lane_n[kLanes];
  for (unsigned j = 0; j < kLanes; ++j) lane_n[j] = lane_symbols(n, j);
  const uint64_t steps = div_ceil(lane_n[0], K);
  for (uint64_t q = first / kLanes / K; q < steps; ++q) {
    const uint64_t t0 = q * K;
    for (unsigned j = 0; j < kLanes; ++j) {
      if (t0 >= lane_n[j]) break;
      if (L.bits[j] < T) {
        if (p >= word_count) bad_chunk("Huffman chunk needs more words than it holds");
        L.buf[j] |= uint64_t{load_le32(words + 4 * p)} << L.bits[j];
        L.bits[j] += kWordBits;
        ++p;
      }
      const uint64_t t_end = std::min<uint64_t>(t0 + K, lane_n[j]);
      for (uint64_t tt = t0; tt < t_end; ++tt) out[symbol_index(tt, j)] = decode_one<Sym>(t, L.buf[j], L.bits[j]);
    }
  }
  if (p != word_count) bad_chunk("Huffman chunk holds more words than its symbols use");
  for (unsigned j = 0; j < kLanes; ++j) {
    // A lane that consumed more bits than it took wrapped its bit count.
    if (L.bits[j] >= 64) bad_chunk("Huffman chunk lane reads past its words");
    if (L.buf[j] != 0) bad_chunk("Huffman chunk padding bits are not zero");
  }
}

template <typename Sym>
void decode_typed(const uint8_t* words, std::size_t word_count, std::size_t n, const DecodeTable& t,
                  void* out) {
  Sym* o = static_cast<Sym*>(out);
  const bool pairs = PairTable<Sym>::bits(t) != 0;
  switch (symbols_per_step(t.max_length)) {
    case 4:
      return pairs ? decode_lanes<Sym, 4, true>(words, word_count, n, t, o)
                   : decode_lanes<Sym, 4, false>(words, word_count, n, t, o);
    case 2:
      return pairs ? decode_lanes<Sym, 2, true>(words, word_count, n, t, o)
                   : decode_lanes<Sym, 2, false>(words, word_count, n, t, o);
    default: return decode_lanes<Sym, 1, false>(words, word_count, n, t, o);
  }
}

}  // namespace

void set_decode_bmi2_allowed(bool allowed) { g_bmi2_allowed.store(allowed); }

bool decode_bmi2_active() {
#ifdef VLEC_HAVE_BMI2_CLONE
  return kCpuHasBmi2 && g_bmi2_allowed.load();
#else
  return false;
#endif
}

void decode_chunk(const uint8_t* words, std::size_t word_count, std::size_t n,
                  const DecodeTable& table, DType t, void* out) {
  if (n == 0) {
    SAFETY_CHECK(word_count == 0, ErrorCode::corrupt_stream, "empty Huffman chunk holds words");
    return;
  }
  SAFETY_CHECK(table.max_length > 0 && !table.single.empty(), ErrorCode::corrupt_stream,
               "Huffman chunk without a codebook");
  switch (t) {
    case DType::u8: return decode_typed<uint8_t>(words, word_count, n, table, out);
    case DType::u16: return decode_typed<uint16_t>(words, word_count, n, table, out);
    case DType::u32: return decode_typed<uint32_t>(words, word_count, n, table, out);
    default: VLEC_REQUIRE(false, "Huffman coding takes u8, u16 or u32 elements, not ", to_string(t));
  }
}

}  // namespace vlec::huffman
