// huffman/encode.cpp: CPU encoder of one chunk in the lane layout.
//
// Where each word goes depends only on each lane's own bit counts: the
// mirrored decoder of lane j takes a word before step q exactly when
// z_q = floor((C_q + T - 1) / 32) has grown since step q - 1 (C_q = bits the
// lane has coded before step q, T the refill threshold; z_{-1} = -1), and
// the word it takes is the lane's word number z_q. So the encoder works in
// segments of rows, in two passes:
//   1. lane by lane (a classic one-stream bit packer): code the lane's
//      symbols into its own run of words and note z_q at every step;
//   2. step by step: the lanes whose z grew take the next slots of the chunk,
//      in lane order (a 32-bit mask per step, walked bit by bit), and each
//      slot receives its word from the lane's run.
// A slot is reserved before its word is complete, by at most T + 31 bits of
// the lane; a word not complete at the end of a segment (at most two per
// lane) is written after the next segment, which holds at least 16 rows
// (64 symbols of at least one bit per lane) or ends the chunk.
//
// Values without a code get length kNoCodeLength, which leaves a lasting
// mark in the lane's bit count; a marked chunk is re-encoded by the plain
// step-by-step encoder below, which reports the value exactly as it always
// has (or the chunk's kDoesNotFit where that comes first): encode_plain.cpp.
#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/bits.hpp"
#include "common/safety.hpp"
#include "huffman/chunk_codec.hpp"
#include "huffman/encode_plain.hpp"

namespace vlec::huffman {

EncodeTable make_encode_table(const Codebook& book, DType t) {
  EncodeTable table;
  table.max_length = book.max_length;
  const std::size_t values = t == DType::u8 ? 256 : kMaxAlphabet;
  const std::size_t slots = values + (t == DType::u32 ? 1 : 0);
  table.entry.assign(values, 0);
  table.code.assign(slots, 0);
  table.length.assign(slots, kNoCodeLength);
  for (uint32_t s = 0; s < book.alphabet_size && s < values; ++s)
    if (book.lengths[s]) {
      table.entry[s] = (uint32_t{book.lengths[s]} << 24) | book.codes[s];
      table.code[s] = book.codes[s];
      table.length[s] = book.lengths[s];
    }
  if (t == DType::u8 && book.max_length >= 1 && book.max_length <= 16) {
    table.pair_code.assign(256 * 256, 0);
    table.pair_length.assign(256 * 256, kNoCodeLength);
    for (uint32_t b = 0; b < 256; ++b) {
      if (table.length[b] == kNoCodeLength) continue;
      for (uint32_t a = 0; a < 256; ++a) {
        if (table.length[a] == kNoCodeLength) continue;
        table.pair_code[a | b << 8] = table.code[a] | table.code[b] << table.length[a];
        table.pair_length[a | b << 8] = static_cast<uint8_t>(table.length[a] + table.length[b]);
      }
    }
  }
  return table;
}

namespace {

// ---------------------------------------------------------------------------
// The fast encoder (see the top of the file).

// Rows per segment; at least 16 (see above). 32 rather than 64: the
// segment's runs and steps stay nearer L1; one thread, 64 MiB, encode +3-7 %
// on skewed bytes, +1-3 % on u16 codes, the same frames
// (bench/results/2026-11-28-cpu-session30-encode-segment-rows.log).
constexpr unsigned kSegmentRows = 32;
static_assert(kSegmentRows >= 16, "a reserved word must complete within the next segment");

// One lane's bit packer. `k` indexes the segment's word buffer: the word
// being filled is words[k]; it is stored after every step, complete or not.
struct LaneCoder {
  uint64_t acc = 0;  // bits not yet in a complete word, LSB first
  uint32_t nb = 0;   // valid bits in acc: below 32 between steps, >= 64 once a value had no code
  uint32_t k = 0;
};

struct Scratch {
  std::vector<uint32_t> words;  // kLanes runs of `stride` words
  std::vector<uint16_t> z;      // z (as an index into words) of row -1 and of every step
};

// The lane's steps over `rows` full rows. `in` is its first symbol of the
// first row; `z` its z of the first step (later steps kLanes apart).
template <typename Sym, unsigned K, bool kPairs>
inline void code_rows(const Sym* in, std::size_t rows, const EncodeTable& table, LaneCoder& lane,
                      uint32_t* words, uint16_t* z, uint32_t D) {
  constexpr unsigned kSteps = kGroup / K;
  const uint32_t* code = kPairs ? table.pair_code.data() : table.code.data();
  const uint8_t* length = kPairs ? table.pair_length.data() : table.length.data();
  uint64_t acc = lane.acc;
  uint32_t nb = lane.nb;
  if constexpr (K == 1) {
    // One symbol (at most 24 bits) per step: the packer stores whole bytes,
    // every second step, so that the bit count stays below 8 + 2 * 24 bits.
    // `at` is the byte of words[] that holds bit 0 of acc.
    uint8_t* bytes = reinterpret_cast<uint8_t*>(words);
    uint32_t at = 4 * lane.k;
    uint32_t zbase = 8 * at + D;  // z = (zbase + nb) >> 5
    auto flush = [&] {
      store_le64(bytes + at, acc);
      const uint32_t c = nb & 56;  // whole bytes (a count marked by a value without a code keeps its mark)
      acc >>= c;
      nb -= c;
      at += c >> 3;
      zbase += c;
    };
    flush();
#pragma GCC unroll 2
    for (std::size_t r = 0; r < rows; ++r, in += kRow, z += kSteps * kLanes) {
#pragma GCC unroll 4
      for (unsigned s = 0; s < kSteps; ++s) {
        z[s * kLanes] = static_cast<uint16_t>((zbase + nb) >> 5);
        uint32_t v = in[s];
        if constexpr (sizeof(Sym) > 2) v = std::min<uint32_t>(v, kMaxAlphabet);
        acc |= uint64_t{code[v]} << (nb & 63);
        nb += length[v];
        if (s % 2 == 1) flush();
      }
    }
    // Back to a whole-word state: the partial word's stored bytes rejoin acc.
    const uint32_t head = 8 * (at & 3);
    acc = acc << head | (load_le32(bytes + (at & ~3u)) & ((uint64_t{1} << head) - 1));
    lane.acc = acc;
    lane.nb = nb + head;
    lane.k = at >> 2;
    return;
  }
  std::size_t k = lane.k;  // (a full-width index saves a zero extension per store)
#pragma GCC unroll 2
  for (std::size_t r = 0; r < rows; ++r, in += kRow, z += kSteps * kLanes) {
#pragma GCC unroll 4
    for (unsigned s = 0; s < kSteps; ++s) {
      z[s * kLanes] = static_cast<uint16_t>(k + ((nb + D) >> 5));
      if constexpr (kPairs) {
#pragma GCC unroll 2
        for (unsigned h = 0; h < K / 2; ++h) {
          const uint32_t v = load_le16(in + s * K + 2 * h);
          acc |= uint64_t{code[v]} << (nb & 63);
          nb += length[v];
        }
      } else {
#pragma GCC unroll 4
        for (unsigned i = 0; i < K; ++i) {
          uint32_t v = in[s * K + i];
          if constexpr (sizeof(Sym) > 2) v = std::min<uint32_t>(v, kMaxAlphabet);
          acc |= uint64_t{code[v]} << (nb & 63);
          nb += length[v];
        }
      }
      words[k] = static_cast<uint32_t>(acc);
      const uint32_t d = nb & 32;
      acc >>= d;
      nb -= d;
      k += d >> 5;
    }
  }
  lane.acc = acc;
  lane.nb = nb;
  lane.k = static_cast<uint32_t>(k);
}

// The lane's steps in the chunk's last, partial row, where it owns `count`
// symbols (0 to 4): steps without a symbol take no word (z stays).
template <typename Sym, unsigned K>
inline void code_partial_row(const Sym* in, unsigned count, const EncodeTable& table, LaneCoder& lane,
                             uint32_t* words, uint16_t* z, uint32_t D) {
  uint16_t last = z[-static_cast<std::ptrdiff_t>(kLanes)];
  for (unsigned s = 0; s < kGroup / K; ++s) {
    if (s * K >= count) {
      z[s * kLanes] = last;
      continue;
    }
    last = z[s * kLanes] = static_cast<uint16_t>(lane.k + ((lane.nb + D) >> 5));
    for (unsigned i = s * K; i < std::min(count, s * K + K); ++i) {
      uint32_t v = in[i];
      if constexpr (sizeof(Sym) > 2) v = std::min<uint32_t>(v, kMaxAlphabet);
      lane.acc |= uint64_t{table.code[v]} << (lane.nb & 63);
      lane.nb += table.length[v];
    }
    words[lane.k] = static_cast<uint32_t>(lane.acc);
    const uint32_t d = lane.nb & 32;
    lane.acc >>= d;
    lane.nb -= d;
    lane.k += d >> 5;
  }
}

// Lanes whose z differs between two rows of z.
inline uint32_t grown(const uint16_t* prev, const uint16_t* cur) {
#if defined(__SSE2__)
  const __m128i* p = reinterpret_cast<const __m128i*>(prev);
  const __m128i* c = reinterpret_cast<const __m128i*>(cur);
  const __m128i e0 = _mm_cmpeq_epi16(_mm_loadu_si128(c + 0), _mm_loadu_si128(p + 0));
  const __m128i e1 = _mm_cmpeq_epi16(_mm_loadu_si128(c + 1), _mm_loadu_si128(p + 1));
  const __m128i e2 = _mm_cmpeq_epi16(_mm_loadu_si128(c + 2), _mm_loadu_si128(p + 2));
  const __m128i e3 = _mm_cmpeq_epi16(_mm_loadu_si128(c + 3), _mm_loadu_si128(p + 3));
  const uint32_t lo = static_cast<uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(e0, e1)));
  const uint32_t hi = static_cast<uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(e2, e3)));
  return ~(lo | hi << 16);
#else
  uint32_t m = 0;
  for (unsigned j = 0; j < kLanes; ++j) m |= uint32_t{cur[j] != prev[j]} << j;
  return m;
#endif
}

struct Pending {
  uint32_t slot, lane, distance;  // the word `distance` past the lane's last complete one
};

template <typename Sym, unsigned K, bool kPairs>
std::size_t encode_fast(const Sym* in, std::size_t n, const EncodeTable& table, uint32_t* out,
                        std::size_t capacity, bool& no_code_seen) {
  constexpr unsigned kSteps = kGroup / K;
  const uint32_t D = refill_threshold(table.max_length) - 1;
  // A lane's run holds a segment's words plus the last partial and two zero
  // words; a lane marked by a value without a code completes at most one
  // word per step.
  const uint32_t stride =
      std::max((kSegmentRows * kGroup * table.max_length + kWordBits - 1) / kWordBits, kSegmentRows * kSteps) + 6;
  thread_local Scratch scratch;
  scratch.words.resize(std::size_t{kLanes} * stride);
  scratch.z.resize((kSegmentRows * kSteps + 1) * kLanes);
  uint32_t* words = scratch.words.data();
  uint16_t* z = scratch.z.data();

  LaneCoder lanes[kLanes];
  for (unsigned j = 0; j < kLanes; ++j) {
    lanes[j].k = j * stride;
    z[j] = static_cast<uint16_t>(j * stride - 1);  // z_{-1} = -1: every lane takes a word at step 0
  }
  Pending pending[2 * kLanes];
  unsigned pending_count = 0;
  std::size_t p = 0;  // words reserved so far
  const std::size_t full_rows = n / kRow;
  const unsigned rest = static_cast<unsigned>(n % kRow);
  const std::size_t rows = full_rows + (rest != 0);
  for (std::size_t row0 = 0; row0 < rows; row0 += kSegmentRows) {
    const std::size_t seg_rows = std::min<std::size_t>(kSegmentRows, rows - row0);
    const bool last = row0 + seg_rows == rows;
    const std::size_t seg_full = std::min(seg_rows, full_rows - std::min(full_rows, row0));
    const Sym* seg_in = in + row0 * kRow;
    // Pass 1: lane by lane.
    for (unsigned j = 0; j < kLanes; ++j) {
      code_rows<Sym, K, kPairs>(seg_in + j * kGroup, seg_full, table, lanes[j], words, z + kLanes + j, D);
      if (seg_full < seg_rows) {
        const unsigned begin = j * kGroup;
        const unsigned count = rest > begin ? std::min(rest - begin, kGroup) : 0;
        code_partial_row<Sym, K>(seg_in + seg_full * kRow + begin, count, table, lanes[j], words,
                                 z + kLanes + seg_full * kSteps * kLanes + j, D);
      }
    }
    const uint16_t* z_last = z + seg_rows * kSteps * kLanes;  // the segment's last step
    uint32_t marks = 0;
    std::size_t reserved = p;
    uint32_t avail[kLanes];
    for (unsigned j = 0; j < kLanes; ++j) {
      marks |= lanes[j].nb;
      reserved += static_cast<uint16_t>(z_last[j] - z[j]);
      avail[j] = lanes[j].k;
    }
    if (marks >= 64) {
      no_code_seen = true;
      return kDoesNotFit;
    }
    if (reserved > capacity) return kDoesNotFit;
    if (last) {
      // The lanes' last partial words, then zero words for the decoder's last reads.
      for (unsigned j = 0; j < kLanes; ++j) {
        words[lanes[j].k] = static_cast<uint32_t>(lanes[j].acc);
        words[lanes[j].k + 1] = 0;
        words[lanes[j].k + 2] = 0;
        avail[j] = lanes[j].k + 3;
      }
    }
    // Words reserved in the previous segment and completed in this one.
    for (unsigned i = 0; i < pending_count; ++i)
      out[pending[i].slot] = words[pending[i].lane * stride + pending[i].distance];
    pending_count = 0;
    // Pass 2: step by step. A word reserved 16 rows or more before the end
    // of the segment is complete (see the top of the file), and so is every
    // word of the last segment.
    const std::size_t steps = seg_rows * kSteps;
    const std::size_t safe = last ? steps : (seg_rows - std::min<std::size_t>(seg_rows, 16)) * kSteps;
    const uint16_t* prev = z;
    std::size_t q = 0;
    for (; q < safe; ++q, prev += kLanes) {
      const uint16_t* cur = prev + kLanes;
      for (uint32_t m = grown(prev, cur); m; m &= m - 1) out[p++] = words[cur[__builtin_ctz(m)]];
    }
    for (; q < steps; ++q, prev += kLanes) {
      const uint16_t* cur = prev + kLanes;
      for (uint32_t m = grown(prev, cur); m; m &= m - 1) {
        const unsigned j = static_cast<unsigned>(__builtin_ctz(m));
        const uint32_t at = cur[j];
        if (__builtin_expect(at < avail[j], 1))
          out[p] = words[at];
        else
          pending[pending_count++] = {static_cast<uint32_t>(p), j, at - avail[j]};
        ++p;
      }
    }
    // The next segment's words start again at each lane's run.
    for (unsigned j = 0; j < kLanes; ++j) {
      z[j] = static_cast<uint16_t>(z_last[j] - lanes[j].k + j * stride);
      lanes[j].k = j * stride;
    }
  }
  return p;
}

template <typename Sym>
std::size_t encode_typed(const Sym* in, std::size_t n, const EncodeTable& table, uint32_t* out,
                         std::size_t capacity, uint64_t first_index) {
  if (n == 0) return 0;
  const std::size_t type_values = sizeof(Sym) == 1 ? 256 : kMaxAlphabet + (sizeof(Sym) > 2);
  if (table.max_length > 0 && table.code.size() >= type_values) {
    bool no_code_seen = false;
    std::size_t words = 0;
    const bool pairs = sizeof(Sym) == 1 && !table.pair_code.empty();
    switch (symbols_per_step(table.max_length)) {
      case 4:
        words = pairs ? encode_fast<Sym, 4, true>(in, n, table, out, capacity, no_code_seen)
                      : encode_fast<Sym, 4, false>(in, n, table, out, capacity, no_code_seen);
        break;
      case 2:
        words = pairs ? encode_fast<Sym, 2, true>(in, n, table, out, capacity, no_code_seen)
                      : encode_fast<Sym, 2, false>(in, n, table, out, capacity, no_code_seen);
        break;
      default: words = encode_fast<Sym, 1, false>(in, n, table, out, capacity, no_code_seen); break;
    }
    if (!no_code_seen) return words;
  }
  return detail::encode_plain(in, n, table, out, capacity, first_index);
}

}  // namespace

std::size_t encode_chunk(const void* symbols, DType t, std::size_t n, const EncodeTable& table,
                         uint32_t* out, std::size_t capacity_words, uint64_t first_index) {
  switch (t) {
    case DType::u8:
      return encode_typed(static_cast<const uint8_t*>(symbols), n, table, out, capacity_words, first_index);
    case DType::u16:
      return encode_typed(static_cast<const uint16_t*>(symbols), n, table, out, capacity_words, first_index);
    case DType::u32:
      return encode_typed(static_cast<const uint32_t*>(symbols), n, table, out, capacity_words, first_index);
    default:
      VLEC_REQUIRE(false, "Huffman coding takes u8, u16 or u32 elements, not ", to_string(t));
  }
  return 0;
}

}  // namespace vlec::huffman
