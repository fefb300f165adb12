// huffman/decode.cpp: CPU decoder of one chunk in the lane layout.
//
// Why it is fast: the 32 lane decoders of a chunk are independent, so the
// CPU interleaves them as huff0 interleaves its 4 streams: while one lane
// waits on its table lookup, the others proceed. Each lookup in an 11-bit
// table (8 KiB, L1-resident) yields symbol and length; a refill is one
// 32-bit load, taken without a data-dependent branch on the common path.
// Rows in which every lane owns a full group run without any bounds logic.
#include <algorithm>

#include "common/bits.hpp"
#include "common/safety.hpp"
#include "huffman/chunk_codec.hpp"

namespace vlec::huffman {

DecodeTable make_decode_table(const Codebook& book, unsigned primary_bits) {
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

namespace {

// Resolve a code longer than the primary table from the next max_length bits.
inline uint32_t decode_long(const DecodeTable& t, uint64_t buf, unsigned& len) {
  const unsigned L = t.max_length;
  const uint32_t v = reverse_bits(static_cast<uint32_t>(buf & ((uint64_t{1} << L) - 1)), L);
  for (unsigned l = t.bits + 1; l <= L; ++l) {
    const uint32_t code = v >> (L - l);
    if (code - t.first[l] < t.count[l]) {
      len = l;
      return t.sorted[t.offset[l] + code - t.first[l]];
    }
  }
  len = L + 1;  // unreachable for a complete code; the caller's checks reject it
  return 0;
}

[[noreturn]] void bad_chunk(const char* what) {
  SAFETY_CHECK(false, ErrorCode::corrupt_stream, what);
  __builtin_unreachable();
}

// Decoder state of the 32 lanes, as structure of arrays.
struct Lanes {
  uint64_t buf[kLanes] = {};
  uint32_t bits[kLanes] = {};
};

template <typename Sym, bool kLong>
inline Sym decode_symbol(const DecodeTable& t, const uint32_t* entry, uint64_t mask, uint64_t& buf,
                         uint32_t& bits) {
  uint32_t e = entry[buf & mask];
  if (kLong && __builtin_expect(e < 0x10000, 0)) {
    unsigned len;
    const uint32_t sym = decode_long(t, buf, len);
    if (len > bits) bad_chunk("invalid Huffman code in chunk");
    e = (len << 16) | sym;
  }
  const unsigned len = e >> 16;
  buf >>= len;
  bits -= len;
  return static_cast<Sym>(e & 0xFFFF);
}

template <typename Sym, unsigned K, bool kLong>
void decode_lanes(const uint8_t* words, std::size_t word_count, std::size_t n, const DecodeTable& t,
                  Sym* out) {
  const uint32_t T = K * t.max_length;
  const uint64_t mask = (uint64_t{1} << t.bits) - 1;
  const uint32_t* entry = t.entry.data();
  Lanes L;
  std::size_t p = 0;
  // Full rows while a whole row's worth of words (at most one per lane-step)
  // is in bounds: refills are then branch-free loads.
  const std::size_t full_rows = n / kRow;
  constexpr std::size_t kRowWords = kLanes * (kGroup / K);
  std::size_t row = 0;
  for (; row < full_rows && p + kRowWords <= word_count; ++row) {
    Sym* row_out = out + row * kRow;
    for (unsigned step = 0; step < kGroup / K; ++step) {
      for (unsigned j = 0; j < kLanes; ++j) {
        uint64_t buf = L.buf[j];
        uint32_t bits = L.bits[j];
        const uint32_t need = bits < T;
        const uint64_t w = load_le32(words + 4 * p);
        buf |= (w << bits) & (0 - uint64_t{need});
        bits += need << 5;
        p += need;
        Sym* o = row_out + j * kGroup + step * K;
#pragma GCC unroll 4
        for (unsigned k = 0; k < K; ++k) o[k] = decode_symbol<Sym, kLong>(t, entry, mask, buf, bits);
        L.buf[j] = buf;
        L.bits[j] = bits;
      }
    }
  }
  // The rest, one lane-step at a time with checked refills: the last rows
  // of words and the final partial row.
  const std::size_t first = row * kRow;
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
      for (uint64_t tt = t0; tt < t_end; ++tt)
        out[symbol_index(tt, j)] = decode_symbol<Sym, kLong>(t, entry, mask, L.buf[j], L.bits[j]);
    }
  }
  if (p != word_count) bad_chunk("Huffman chunk holds more words than its symbols use");
  for (unsigned j = 0; j < kLanes; ++j)
    if (L.buf[j] != 0) bad_chunk("Huffman chunk padding bits are not zero");
}

template <typename Sym>
void decode_typed(const uint8_t* words, std::size_t word_count, std::size_t n, const DecodeTable& t,
                  void* out) {
  Sym* o = static_cast<Sym*>(out);
  const bool long_codes = t.max_length > t.bits;
  switch (symbols_per_step(t.max_length)) {
    case 4: return decode_lanes<Sym, 4, false>(words, word_count, n, t, o);
    case 2:
      return long_codes ? decode_lanes<Sym, 2, true>(words, word_count, n, t, o)
                        : decode_lanes<Sym, 2, false>(words, word_count, n, t, o);
    default:
      return long_codes ? decode_lanes<Sym, 1, true>(words, word_count, n, t, o)
                        : decode_lanes<Sym, 1, false>(words, word_count, n, t, o);
  }
}

}  // namespace

void decode_chunk(const uint8_t* words, std::size_t word_count, std::size_t n,
                  const DecodeTable& table, DType t, void* out) {
  if (n == 0) {
    SAFETY_CHECK(word_count == 0, ErrorCode::corrupt_stream, "empty Huffman chunk holds words");
    return;
  }
  SAFETY_CHECK(table.max_length > 0, ErrorCode::corrupt_stream, "Huffman chunk without a codebook");
  switch (t) {
    case DType::u8: return decode_typed<uint8_t>(words, word_count, n, table, out);
    case DType::u16: return decode_typed<uint16_t>(words, word_count, n, table, out);
    case DType::u32: return decode_typed<uint32_t>(words, word_count, n, table, out);
    default: VLEC_REQUIRE(false, "Huffman coding takes u8, u16 or u32 elements, not ", to_string(t));
  }
}

}  // namespace vlec::huffman
