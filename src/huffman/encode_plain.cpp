// huffman/encode_plain.cpp: the plain CPU encoder of one chunk in the lane
// layout, the chunk walked exactly as a warp of decoders walks it (step by
// step, lane by lane). encode.cpp's fast encoder hands it the chunks with a
// value that has no code, so that the error names the value exactly; it is
// not on the fast path, so it lives apart.
#include "huffman/encode_plain.hpp"

#include <algorithm>

#include "common/bits.hpp"
#include "common/safety.hpp"
#include "huffman/chunk_codec.hpp"

namespace vlec::huffman {

namespace {

[[noreturn]] void no_code(uint64_t value, uint64_t element) {
  SAFETY_CHECK(false, ErrorCode::value_out_of_alphabet, "value ", value, " at element ", element,
               " has no code in the codebook");
  __builtin_unreachable();
}

// ---------------------------------------------------------------------------
// The plain encoder: the chunk walked exactly as a warp of decoders walks it,
// step by step, lane by lane. For each lane it keeps the decoder's bit count,
// so it knows when that decoder will take its next word and hands the word
// the next slot of the chunk; when the lane's bitstream completes a word, the
// word goes to the slot reserved for it (a word's slot is always reserved
// before the word completes, because a decoder refills while it still holds
// bits). Used for chunks with a value that has no code, and where the fast
// encoder does not apply.

// Encoder state of the 32 lanes, as structure of arrays so that the compiler
// keeps the hot fields of neighbouring lanes in registers and cache lines.
// A lane has at most two reserved slots waiting for their words (one word
// ahead of the mirrored decoder's buffer plus the one being filled); slot[]
// has room for a third so that a reservation can be written unconditionally.
struct PlainLanes {
  uint64_t acc[kLanes] = {};          // bits coded but not yet stored, LSB first
  uint32_t acc_bits[kLanes] = {};
  uint32_t decoder_bits[kLanes] = {};  // bits the mirrored decoder holds
  uint32_t pending[kLanes] = {};       // reserved slots not yet written
  uint32_t slot[kLanes][4] = {};       // reserved word slots, oldest first
};

// Rows in which every lane owns kGroup symbols: no bounds logic, no
// data-dependent branches. A word that is not complete yet is written to the
// scratch word at out[capacity + kRow] instead of its slot.
template <typename Sym, unsigned K>
std::size_t encode_full_rows(const Sym* in, std::size_t rows, const EncodeTable& table, PlainLanes& L,
                             uint32_t* out, std::size_t capacity, uint64_t first_index) {
  const unsigned T = K * table.max_length;
  const uint32_t* entry = table.entry.data();
  const uint64_t table_size = table.entry.size();
  // u8 and u16 values always index inside a table made for their type.
  const bool kCheckRange = sizeof(Sym) > 2 || table_size < (uint64_t{1} << (8 * sizeof(Sym)));
  const uint32_t scratch = static_cast<uint32_t>(capacity + kRow);
  uint32_t words = 0;
  for (std::size_t row = 0; row < rows; ++row) {
    uint32_t min_entry = ~0u;  // a zero entry (no code) is reported once per row
    const Sym* row_in = in + row * kRow;
    for (unsigned step = 0; step < kGroup / K; ++step) {
      for (unsigned j = 0; j < kLanes; ++j) {
        const uint32_t need = L.decoder_bits[j] < T;
        L.slot[j][L.pending[j]] = words;
        L.pending[j] += need;
        words += need;
        uint32_t dbits = L.decoder_bits[j] + (need << 5);
        uint64_t acc = L.acc[j];
        uint32_t abits = L.acc_bits[j];
        const Sym* sym = row_in + j * kGroup + step * K;
#pragma GCC unroll 4
        for (unsigned k = 0; k < K; ++k) {
          const uint64_t v = sym[k];
          const uint32_t e = !kCheckRange || v < table_size ? entry[v] : 0;
          min_entry = std::min(min_entry, e);
          acc |= uint64_t{e & 0xFFFFFFu} << abits;
          abits += e >> 24;
          dbits -= e >> 24;
        }
        const uint32_t done = abits >= kWordBits;
        out[done ? L.slot[j][0] : scratch] = static_cast<uint32_t>(acc);
        L.slot[j][0] = done ? L.slot[j][1] : L.slot[j][0];
        L.slot[j][1] = done ? L.slot[j][2] : L.slot[j][1];
        L.pending[j] -= done;
        acc >>= done << 5;
        L.acc[j] = acc;
        L.acc_bits[j] = abits - (done << 5);
        L.decoder_bits[j] = dbits;
      }
    }
    if (__builtin_expect(min_entry == 0, 0)) {
      for (std::size_t i = row * kRow; i < (row + 1) * kRow; ++i) {
        const uint64_t v = in[i];
        if (v >= table_size || entry[v] == 0) no_code(v, first_index + i);
      }
    }
    if (words > capacity) return kDoesNotFit;
  }
  return words;
}

// Any chunk, one lane-step at a time: used for the last, partial row.
template <typename Sym>
std::size_t encode_tail(const Sym* in, std::size_t n, std::size_t first_row, const EncodeTable& table,
                        PlainLanes& L, std::size_t words, uint32_t* out, std::size_t capacity,
                        uint64_t first_index) {
  const unsigned K = symbols_per_step(table.max_length);
  const unsigned T = refill_threshold(table.max_length);
  const uint64_t table_size = table.entry.size();
  uint64_t lane_n[kLanes];
  for (unsigned j = 0; j < kLanes; ++j) lane_n[j] = lane_symbols(n, j);
  const uint64_t steps = div_ceil(lane_n[0], K);  // lane 0 owns the most symbols
  for (uint64_t q = first_row * (kGroup / K); q < steps; ++q) {
    const uint64_t t0 = q * K;
    for (unsigned j = 0; j < kLanes; ++j) {
      if (t0 >= lane_n[j]) break;  // lanes past this one have no symbols either
      if (L.decoder_bits[j] < T) {
        if (words >= capacity) return kDoesNotFit;
        L.slot[j][L.pending[j]++] = static_cast<uint32_t>(words++);
        L.decoder_bits[j] += kWordBits;
      }
      const uint64_t t_end = std::min<uint64_t>(t0 + K, lane_n[j]);
      for (uint64_t t = t0; t < t_end; ++t) {
        const uint64_t i = symbol_index(t, j);
        const uint64_t v = in[i];
        const uint32_t e = v < table_size ? table.entry[v] : 0;
        if (e == 0) no_code(v, first_index + i);
        L.acc[j] |= uint64_t{e & 0xFFFFFFu} << L.acc_bits[j];
        L.acc_bits[j] += e >> 24;
        L.decoder_bits[j] -= e >> 24;
      }
      if (L.acc_bits[j] >= kWordBits) {
        store_le32(out + L.slot[j][0], static_cast<uint32_t>(L.acc[j]));
        L.slot[j][0] = L.slot[j][1], L.slot[j][1] = L.slot[j][2];
        --L.pending[j];
        L.acc[j] >>= kWordBits;
        L.acc_bits[j] -= kWordBits;
      }
    }
  }
  // The last partial word of each lane, and any word the decoder will read
  // beyond the lane's bits, are stored zero-padded.
  for (unsigned j = 0; j < kLanes; ++j)
    for (unsigned k = 0; k < L.pending[j]; ++k) {
      store_le32(out + L.slot[j][k], static_cast<uint32_t>(L.acc[j]));
      L.acc[j] >>= kWordBits;
    }
  return words;
}

}  // namespace

namespace detail {

template <typename Sym>
std::size_t encode_plain(const Sym* in, std::size_t n, const EncodeTable& table, uint32_t* out,
                         std::size_t capacity, uint64_t first_index) {
  if (n == 0) return 0;
  PlainLanes lanes;
  const std::size_t rows = n / kRow;
  std::size_t words = 0;
  switch (symbols_per_step(table.max_length)) {
    case 4: words = encode_full_rows<Sym, 4>(in, rows, table, lanes, out, capacity, first_index); break;
    case 2: words = encode_full_rows<Sym, 2>(in, rows, table, lanes, out, capacity, first_index); break;
    default: words = encode_full_rows<Sym, 1>(in, rows, table, lanes, out, capacity, first_index); break;
  }
  if (words == kDoesNotFit) return kDoesNotFit;
  return encode_tail(in, n, rows, table, lanes, words, out, capacity, first_index);
}


template std::size_t encode_plain<uint8_t>(const uint8_t*, std::size_t, const EncodeTable&, uint32_t*, std::size_t,
                                           uint64_t);
template std::size_t encode_plain<uint16_t>(const uint16_t*, std::size_t, const EncodeTable&, uint32_t*, std::size_t,
                                            uint64_t);
template std::size_t encode_plain<uint32_t>(const uint32_t*, std::size_t, const EncodeTable&, uint32_t*, std::size_t,
                                            uint64_t);

}  // namespace detail

}  // namespace vlec::huffman
