// huffman/codebook.cpp: see codebook.hpp. Everything here is O(alphabet) or
// O(alphabet * log alphabet) and runs once per frame, so it is written for
// exactness and clarity, not speed; the histogram is the only hot loop.
#include "huffman/codebook.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "common/bits.hpp"
#include "common/safety.hpp"

namespace vlec::huffman {

namespace {

template <typename T>
void count_wide(const T* p, std::size_t count, Histogram& hist, uint64_t first_index) {
  // One pass: the histogram grows to the largest value seen (so that small
  // alphabets stay small), and a value is checked against the alphabet only
  // where it is past the histogram's end, the rare branch. (A pass for the
  // largest value and the check, then one to count, ran quant1024's u16
  // codes at 2.3 GB/s on one core.)
  uint64_t* h = hist.data();
  std::size_t size = hist.size();
  for (std::size_t i = 0; i < count; ++i) {
    const uint64_t v = p[i];
    if (__builtin_expect(v >= size, 0)) {
      SAFETY_CHECK(v < kMaxAlphabet, ErrorCode::value_out_of_alphabet, "value ", v, " at element ", first_index + i,
                   " is outside the Huffman alphabet (values must be below 65536)");
      hist.resize(v + 1, 0);
      h = hist.data();
      size = hist.size();
    }
    ++h[v];
  }
}

void count_bytes(const uint8_t* p, std::size_t count, Histogram& hist) {
  // Four sub-histograms break the store-to-load dependency on runs of equal bytes.
  std::vector<uint32_t> sub(4 * 256, 0);
  std::size_t i = 0;
  while (i < count) {
    // Flush before a 32-bit sub-count could overflow.
    std::size_t end = std::min(count, i + (std::size_t{1} << 30));
    for (; i + 4 <= end; i += 4) {
      ++sub[p[i]];
      ++sub[256 + p[i + 1]];
      ++sub[512 + p[i + 2]];
      ++sub[768 + p[i + 3]];
    }
    for (; i < end; ++i) ++sub[p[i]];
    uint32_t top = 0;
    for (uint32_t s = 0; s < 256; ++s)
      if (sub[s] | sub[256 + s] | sub[512 + s] | sub[768 + s]) top = s;
    if (hist.size() <= top) hist.resize(top + 1, 0);
    for (uint32_t s = 0; s <= top; ++s) {
      hist[s] += uint64_t{sub[s]} + sub[256 + s] + sub[512 + s] + sub[768 + s];
      sub[s] = sub[256 + s] = sub[512 + s] = sub[768 + s] = 0;
    }
  }
}

// LSB-first bit writer/reader for the codebook section.
struct BitWriter {
  std::vector<uint8_t>& out;
  uint64_t acc = 0;
  unsigned n = 0;
  void put(uint32_t v, unsigned bits) {
    acc |= uint64_t{v} << n;
    n += bits;
    while (n >= 8) {
      out.push_back(static_cast<uint8_t>(acc));
      acc >>= 8;
      n -= 8;
    }
  }
  void flush() {
    if (n) out.push_back(static_cast<uint8_t>(acc));
    acc = 0;
    n = 0;
  }
};

struct BitReader {
  const uint8_t* data;
  std::size_t size_bits;
  std::size_t pos = 0;
  // `bits` <= 24 bits, LSB first. One unaligned 8-byte load where 8 bytes
  // are there (a 65,536-symbol codebook has 65,536 length fields: reading
  // them bit by bit took ~0.5 ms), bit by bit at the section's end.
  uint32_t get(unsigned bits) {
    SAFETY_CHECK(pos + bits <= size_bits, ErrorCode::truncated_stream,
                 "codebook section ends inside its length fields");
    uint32_t v = 0;
    if ((pos >> 3) + 8 <= size_bits / 8) {
      v = static_cast<uint32_t>((load_le64(data + (pos >> 3)) >> (pos & 7)) & ((uint64_t{1} << bits) - 1));
      pos += bits;
      return v;
    }
    for (unsigned b = 0; b < bits; ++b, ++pos) v |= uint32_t{(data[pos >> 3] >> (pos & 7)) & 1u} << b;
    return v;
  }
};

constexpr unsigned kGroup = 16;  // symbols per presence flag in the serialized codebook

unsigned field_bits_for(unsigned max_length) { return max_length <= 15 ? 4 : 5; }

// The 8 fields of `bits` (4 or 5) bits at the bottom of x, one a byte
// (field k in byte k): halves, quarters, then eighths of the 8 fields moved
// apart by shifts and masks, as one 64-bit word.
inline uint64_t spread_fields(uint64_t x, unsigned bits) {
  if (bits == 4) {
    x &= 0xFFFFFFFFull;
    x = (x | x << 16) & 0x0000FFFF0000FFFFull;
    x = (x | x << 8) & 0x00FF00FF00FF00FFull;
    return (x | x << 4) & 0x0F0F0F0F0F0F0F0Full;
  }
  x = (x & 0xFFFFFull) | (x & 0xFFFFF00000ull) << 12;
  x = (x & 0x000003FF000003FFull) | (x & 0x000FFC00000FFC00ull) << 6;
  return (x & 0x001F001F001F001Full) | (x & 0x03E003E003E003E0ull) << 3;
}

}  // namespace

void accumulate_histogram(const void* data, std::size_t count, DType t, Histogram& hist,
                          uint64_t first_index) {
  switch (t) {
    case DType::u8: count_bytes(static_cast<const uint8_t*>(data), count, hist); break;
    case DType::u16: count_wide(static_cast<const uint16_t*>(data), count, hist, first_index); break;
    case DType::u32: count_wide(static_cast<const uint32_t*>(data), count, hist, first_index); break;
    default: VLEC_REQUIRE(false, "Huffman coding takes u8, u16 or u32 elements, not ", to_string(t));
  }
}

std::vector<uint32_t> rank_symbols(const Histogram& hist) {
  std::vector<uint32_t> ranked;
  for (uint32_t s = 0; s < hist.size(); ++s)
    if (hist[s]) ranked.push_back(s);
  std::sort(ranked.begin(), ranked.end(), [&](uint32_t a, uint32_t b) {
    return hist[a] != hist[b] ? hist[a] > hist[b] : a < b;
  });
  return ranked;
}

LengthCounts huffman_length_counts(const Histogram& hist) {
  LengthCounts counts{};
  std::vector<uint32_t> ranked = rank_symbols(hist);
  const std::size_t m = ranked.size();
  if (m == 0) return counts;
  if (m == 1) {
    counts[1] = 1;
    return counts;
  }
  // Leaves in increasing weight: the reverse of rank order.
  std::vector<uint64_t> leaf(m);
  for (std::size_t i = 0; i < m; ++i) leaf[i] = hist[ranked[m - 1 - i]];
  // Two-queue construction: internal nodes are created in non-decreasing
  // weight, so the two smallest nodes are always at the heads of the queues.
  std::vector<uint64_t> inner(m - 1);
  std::vector<uint32_t> leaf_parent(m), inner_parent(m - 1);
  std::size_t li = 0, ii = 0;
  for (std::size_t k = 0; k + 1 < m; ++k) {
    uint64_t sum = 0;
    for (int pick = 0; pick < 2; ++pick) {
      if (li < m && (ii >= k || leaf[li] <= inner[ii])) {  // a leaf wins ties
        sum += leaf[li];
        leaf_parent[li++] = static_cast<uint32_t>(k);
      } else {
        sum += inner[ii];
        inner_parent[ii++] = static_cast<uint32_t>(k);
      }
    }
    inner[k] = sum;
  }
  std::vector<uint32_t> depth(m - 1);
  depth[m - 2] = 0;  // the root is created last
  for (std::size_t k = m - 2; k-- > 0;) depth[k] = depth[inner_parent[k]] + 1;
  for (std::size_t i = 0; i < m; ++i) ++counts[depth[leaf_parent[i]] + 1];
  return counts;
}

LengthCounts limit_length_counts(LengthCounts c, unsigned limit) {
  unsigned longest = 0;
  uint64_t symbols = 0;
  for (unsigned l = 1; l <= kMaxTreeDepth; ++l)
    if (c[l]) longest = l, symbols += c[l];
  VLEC_REQUIRE(limit >= 1 && limit <= kMaxCodeLength && (uint64_t{1} << limit) >= symbols,
               "code length limit ", limit, " cannot hold ", symbols, " symbols");
  if (longest <= limit) return c;
  for (unsigned l = limit + 1; l <= kMaxTreeDepth; ++l) c[limit] += c[l], c[l] = 0;
  uint64_t kraft = 0;  // in units of 2^-limit
  for (unsigned l = 1; l <= limit; ++l) kraft += uint64_t{c[l]} << (limit - l);
  // Each round removes one code of the longest length and splits the deepest
  // shorter leaf into two; the Kraft sum falls by one unit per round.
  while (kraft > (uint64_t{1} << limit)) {
    --c[limit];
    for (unsigned l = limit - 1; l >= 1; --l) {
      if (c[l]) {
        --c[l];
        c[l + 1] += 2;
        break;
      }
    }
    --kraft;
  }
  return c;
}

uint64_t coded_bits(const Histogram& hist, const std::vector<uint32_t>& ranked,
                    const LengthCounts& counts) {
  uint64_t bits = 0;
  std::size_t r = 0;
  for (unsigned l = 1; l <= kMaxTreeDepth && r < ranked.size(); ++l)
    for (uint32_t k = 0; k < counts[l] && r < ranked.size(); ++k) bits += hist[ranked[r++]] * l;
  return bits;
}

Codebook build_codebook(const Histogram& hist, unsigned length_limit) {
  Codebook book;
  std::vector<uint32_t> ranked = rank_symbols(hist);
  if (ranked.empty()) return book;
  const uint64_t m = ranked.size();
  LengthCounts unlimited = huffman_length_counts(hist);
  LengthCounts counts;
  if (length_limit != 0) {
    VLEC_REQUIRE(length_limit <= kMaxCodeLength, "code length limit ", length_limit,
                 " is above the format's maximum of ", kMaxCodeLength);
    VLEC_REQUIRE((uint64_t{1} << length_limit) >= m, "code length limit ", length_limit,
                 " is too short for ", m, " distinct symbols");
    counts = limit_length_counts(unlimited, length_limit);
  } else {
    // The shortest candidate limit that costs at most 1/256 (~0.4%) over the
    // 24-bit-limited code: 11 bits fit every code in the decoders' single
    // tables, 16 lets them take two symbols a refill (FORMAT §4.3).
    const uint64_t base = coded_bits(hist, ranked, limit_length_counts(unlimited, kMaxCodeLength));
    counts = limit_length_counts(unlimited, kMaxCodeLength);
    for (unsigned limit : kAutoLengthLimits) {
      if ((uint64_t{1} << limit) < m) continue;
      LengthCounts c = limit_length_counts(unlimited, limit);
      if (coded_bits(hist, ranked, c) <= base + base / kAutoLimitSlack) {
        counts = c;
        break;
      }
    }
  }
  book.alphabet_size = ranked.empty() ? 0 : *std::max_element(ranked.begin(), ranked.end()) + 1;
  book.lengths.assign(book.alphabet_size, 0);
  std::size_t r = 0;
  for (unsigned l = 1; l <= kMaxCodeLength; ++l)
    for (uint32_t k = 0; k < counts[l]; ++k) book.lengths[ranked[r++]] = static_cast<uint8_t>(l);
  assign_canonical_codes(book);
  return book;
}

// Canonical codes (FORMAT §4.2): codes of one length are consecutive in
// symbol order. Counting and numbering each chain through a per-length
// counter, which stalls on store forwarding when neighbouring symbols share a
// length (they mostly do in wide alphabets: 4.4 ns a symbol for hdr_room16's
// 65,536-symbol codebooks). So the alphabet is cut in four quarters with
// their own counters: four independent chains in one loop. A quarter starts
// each length at the canonical code plus the earlier quarters' counts of
// that length, so the codes are those of one pass in symbol order.
namespace {
// Bytes bit-reversed: three lookups reverse a code of up to 24 bits (the
// shift-and-mask reversal took as long as the rest of the numbering).
constexpr std::array<uint8_t, 256> kReversedBytes = [] {
  std::array<uint8_t, 256> t{};
  for (unsigned b = 0; b < 256; ++b)
    for (unsigned i = 0; i < 8; ++i) t[b] |= static_cast<uint8_t>(((b >> i) & 1u) << (7 - i));
  return t;
}();
static_assert(kMaxCodeLength <= 24, "reverse_code reverses 24 bits");
inline uint32_t reverse_code(uint32_t code, unsigned len) {
  const uint32_t r = uint32_t{kReversedBytes[code & 0xFF]} << 16 | uint32_t{kReversedBytes[(code >> 8) & 0xFF]} << 8 |
                     kReversedBytes[(code >> 16) & 0xFF];
  return r >> (24 - len);
}
}  // namespace

namespace {
// assign_canonical_codes, or (assign false) its checks and max_length alone.
void canonical_codes(Codebook& book, bool assign) {
  constexpr unsigned kParts = 4;
  constexpr unsigned kSlots = kMaxCodeLength + 2;
  const std::size_t n = book.lengths.size();
  const std::size_t part = (n + kParts - 1) / kParts;
  const uint8_t* lengths = book.lengths.data();
  std::array<std::array<uint32_t, kSlots>, kParts> count{};
  uint8_t longest_byte = 0;
  // The checks alone take parse_codebook's counts (lengths <= kMaxCodeLength,
  // all in part 0); assigning codes needs each part's own counts.
  if (book.counted && !assign) {
    for (unsigned l = 0; l <= kMaxCodeLength; ++l)
      if ((count[0][l] = book.length_counts[l]) && l) longest_byte = static_cast<uint8_t>(l);
  } else {
    for (std::size_t i = 0; i < part; ++i)
      for (unsigned q = 0; q < kParts; ++q) {
        const std::size_t s = q * part + i;
        if (s >= n) break;
        const uint8_t l = lengths[s];
        longest_byte = std::max(longest_byte, l);
        ++count[q][std::min<unsigned>(l, kSlots - 1)];  // an over-long length is refused below
      }
  }
  SAFETY_CHECK(longest_byte <= kMaxCodeLength, ErrorCode::corrupt_stream, "code length ", unsigned{longest_byte},
               " exceeds the maximum of ", kMaxCodeLength);
  const unsigned longest = longest_byte;
  std::array<uint32_t, kSlots> total{};
  uint64_t present = 0;
  for (unsigned q = 0; q < kParts; ++q)
    for (unsigned l = 1; l <= longest; ++l) total[l] += count[q][l], present += count[q][l];
  book.max_length = longest;
  book.codes.assign(assign ? n : 0, 0);
  if (present == 0) return;
  uint64_t kraft = 0;
  for (unsigned l = 1; l <= longest; ++l) kraft += uint64_t{total[l]} << (longest - l);
  const bool single = present == 1 && longest == 1;
  SAFETY_CHECK(single || kraft == (uint64_t{1} << longest), ErrorCode::corrupt_stream,
               "code lengths do not form a complete prefix code (Kraft sum ", kraft, "/",
               (uint64_t{1} << longest), ")");
  if (!assign) return;
  std::array<std::array<uint32_t, kSlots>, kParts> next{};
  uint32_t code = 0;
  for (unsigned l = 1; l <= longest; ++l) {
    code = (code + total[l - 1]) << 1;
    uint32_t at = code;
    for (unsigned q = 0; q < kParts; ++q) next[q][l] = at, at += count[q][l];
  }
  uint32_t* codes = book.codes.data();
  for (std::size_t i = 0; i < part; ++i)
    for (unsigned q = 0; q < kParts; ++q) {
      const std::size_t s = q * part + i;
      if (s >= n) break;
      if (const unsigned l = lengths[s]) codes[s] = reverse_code(next[q][l]++, l);
    }
}
}  // namespace

void assign_canonical_codes(Codebook& book) { canonical_codes(book, true); }
void check_code_lengths(Codebook& book) { canonical_codes(book, false); }

std::vector<uint8_t> serialize_codebook(const Codebook& book) {
  std::vector<uint8_t> out(8, 0);
  store_le32(out.data(), book.alphabet_size);
  if (book.alphabet_size) {
    out[4] = static_cast<uint8_t>(book.max_length);
    out[5] = static_cast<uint8_t>(field_bits_for(book.max_length));
    const unsigned bits = out[5];
    const uint32_t groups = static_cast<uint32_t>(div_ceil(book.alphabet_size, kGroup));
    auto length_at = [&](uint64_t s) -> uint32_t { return s < book.alphabet_size ? book.lengths[s] : 0; };
    BitWriter w{out};
    std::vector<bool> present(groups);
    for (uint32_t g = 0; g < groups; ++g) {
      for (unsigned k = 0; k < kGroup; ++k) present[g] = present[g] || length_at(g * kGroup + k);
      w.put(present[g], 1);
    }
    for (uint32_t g = 0; g < groups; ++g)
      if (present[g])
        for (unsigned k = 0; k < kGroup; ++k) w.put(length_at(g * kGroup + k), bits);
    w.flush();
  }
  out.resize(align_up(out.size(), 4), 0);
  return out;
}

std::size_t parse_codebook(const uint8_t* data, std::size_t size, uint32_t max_alphabet,
                           Codebook& book, bool codes) {
  SAFETY_CHECK(size >= 8, ErrorCode::truncated_stream, "codebook section truncated");
  book = Codebook{};
  const uint32_t n = load_le32(data);
  const unsigned max_length = data[4], bits = data[5];
  SAFETY_CHECK(load_le16(data + 6) == 0, ErrorCode::corrupt_stream, "codebook reserved field is not zero");
  SAFETY_CHECK(n <= max_alphabet, ErrorCode::corrupt_stream, "codebook alphabet size ", n,
               " exceeds the element type's ", max_alphabet);
  if (n == 0) {
    SAFETY_CHECK(max_length == 0 && bits == 0, ErrorCode::corrupt_stream,
                 "empty codebook with non-zero length fields");
    return 8;
  }
  SAFETY_CHECK(max_length >= 1 && max_length <= kMaxCodeLength, ErrorCode::corrupt_stream,
               "codebook maximum code length ", max_length, " outside 1..", kMaxCodeLength);
  SAFETY_CHECK(bits == field_bits_for(max_length), ErrorCode::corrupt_stream,
               "codebook length-field width ", bits, " does not match maximum length ", max_length);
  BitReader r{data + 8, (size - 8) * 8};
  const uint32_t groups = static_cast<uint32_t>(div_ceil(n, kGroup));
  // The presence flags are the bitstream's first `groups` bits: read as bytes.
  SAFETY_CHECK(groups <= r.size_bits, ErrorCode::truncated_stream, "codebook section ends inside its length fields");
  std::vector<uint8_t> flags(groups);
  uint32_t flagged = 0;
  for (uint32_t g = 0; g < groups; ++g) flagged += flags[g] = static_cast<uint8_t>((r.data[g >> 3] >> (g & 7)) & 1u);
  r.pos = groups;
  book.lengths.assign(n, 0);
  std::array<std::array<uint32_t, kMaxCodeLength + 1>, 4> counts{};  // by length, of the flagged groups' fields
  // The GPU decoder plans from the host copy of every embedded codebook
  // before its first decode, so the fields are read without a check each:
  // the section is checked once to hold them all; a group's 16 fields come
  // from two 8-byte loads and are spread into 16 bytes by shifts and masks
  // (spread_fields: 8 fields a 64-bit word), and its checks are one
  // test of those words (every field <= max_length, not all zero). A group
  // that fails is read again field by field for the same error as before.
  // (The 16 codebooks of a 12-bit MR slice at 8192^2, 19,000 symbols:
  // 32.8 -> 17.1 us on the lead's VM.)
  const std::size_t fields_end = r.pos + std::size_t{flagged} * kGroup * bits;
  SAFETY_CHECK(fields_end <= r.size_bits, ErrorCode::truncated_stream, "codebook section ends inside its length fields");
  const std::size_t whole_bytes = r.size_bits / 8;
  // A byte's high bit set iff the field in it exceeds max_length (fields < 32).
  const uint64_t over = (0x7Fu - max_length) * 0x0101010101010101ull;
  for (uint32_t g = 0; g < groups; ++g) {
    if (!flags[g]) continue;
    const std::size_t at = r.pos;
    uint8_t field[kGroup];
    uint64_t lo8, hi8;  // fields 0-7 and 8-15, one a byte
    if ((at >> 3) + 16 <= whole_bytes) {  // two 8-byte loads cover the group's <= 80 bits
      const uint64_t lo = load_le64(r.data + (at >> 3)), hi = load_le64(r.data + (at >> 3) + 8);
      const unsigned shift = at & 7;
      const uint64_t x0 = shift ? (lo >> shift) | (hi << (64 - shift)) : lo;  // bits at .. at + 63
      const uint64_t x1 = hi >> shift;                                         // bits at + 64 .. at + 119
      lo8 = spread_fields(x0, bits);
      hi8 = spread_fields(bits == 4 ? x0 >> 32 : x0 >> 40 | x1 << 24, bits);
      r.pos += kGroup * bits;
    } else {
      for (unsigned k = 0; k < kGroup; ++k) field[k] = static_cast<uint8_t>(r.get(bits));
      lo8 = load_le64(field), hi8 = load_le64(field + 8);
    }
    const uint64_t first = uint64_t{g} * kGroup;
    const bool past_end = first + kGroup > n;
    const bool bad = ((lo8 + over) | (hi8 + over)) & 0x8080808080808080ull;
    bool beyond = false;  // a length for a symbol past the alphabet (the last group only)
    if (past_end || bad) {
      store_le64(field, lo8), store_le64(field + 8, hi8);
      for (uint64_t s = n; s < first + kGroup; ++s) beyond = beyond || field[s - first] != 0;
    }
    if (bad || beyond) {  // the field-by-field read's first error
      for (unsigned k = 0; k < kGroup; ++k) {
        const uint32_t l = field[k];
        const uint64_t s = first + k;
        SAFETY_CHECK(l <= max_length, ErrorCode::corrupt_stream, "code length ", l, " of symbol ", s,
                     " exceeds the codebook maximum ", max_length);
        SAFETY_CHECK(s < n || l == 0, ErrorCode::corrupt_stream, "code length given for symbol ", s,
                     " beyond the alphabet size ", n);
      }
    }
    SAFETY_CHECK(lo8 | hi8, ErrorCode::corrupt_stream, "codebook group ", g, " is flagged but empty");
    // The lengths stored and counted from the two words (reading them back
    // from `field` would wait on a store each: two 8-byte stores do not
    // forward to a 16-byte load).
    if (past_end) {
      std::memcpy(book.lengths.data() + first, field, n - first);
    } else {
      store_le64(book.lengths.data() + first, lo8), store_le64(book.lengths.data() + first + 8, hi8);
    }
    // (Fields past the alphabet are zero, checked above; every field is at
    // most max_length here. Four counters a length: equal neighbours do not
    // chain their increments.)
    for (unsigned k = 0; k < 8; ++k) ++counts[k % 4][(lo8 >> 8 * k) & 0xFF];
    for (unsigned k = 0; k < 8; ++k) ++counts[k % 4][(hi8 >> 8 * k) & 0xFF];
  }
  SAFETY_CHECK(book.lengths[n - 1] != 0, ErrorCode::corrupt_stream,
               "codebook alphabet size ", n, " is not minimal");
  const std::size_t used = 8 + div_ceil(r.pos, 8);
  const std::size_t total = align_up(used, 4);
  SAFETY_CHECK(total <= size, ErrorCode::truncated_stream, "codebook section truncated");
  while (r.pos % 8) SAFETY_CHECK(r.get(1) == 0, ErrorCode::corrupt_stream, "codebook padding bits not zero");
  for (std::size_t i = used; i < total; ++i)
    SAFETY_CHECK(data[i] == 0, ErrorCode::corrupt_stream, "codebook padding bytes not zero");
  book.alphabet_size = n;
  for (unsigned l = 1; l <= kMaxCodeLength; ++l)
    book.length_counts[l] = counts[0][l] + counts[1][l] + counts[2][l] + counts[3][l];
  book.length_counts[0] = static_cast<uint32_t>(n);
  for (unsigned l = 1; l <= kMaxCodeLength; ++l) book.length_counts[0] -= book.length_counts[l];
  book.counted = true;
  canonical_codes(book, codes);
  SAFETY_CHECK(book.max_length == max_length, ErrorCode::corrupt_stream, "codebook maximum length ",
               max_length, " does not match its longest code ", book.max_length);
  return total;
}

}  // namespace vlec::huffman
