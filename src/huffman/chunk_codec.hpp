// huffman/chunk_codec.hpp: CPU encoder and decoder of one Huffman-coded chunk
// in the lane layout of layout.hpp. These are the reference the GPU kernels
// must match byte for byte; the frame driver runs them on many chunks at once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "huffman/codebook.hpp"
#include "huffman/layout.hpp"
#include "vlec/types.hpp"

namespace vlec::huffman {

// Length recorded for a value without a code in the encoder's split tables:
// adding it to a lane's bit count (always below 64 otherwise) leaves a mark
// that later flushes never clear, so one test per chunk catches such values.
constexpr uint8_t kNoCodeLength = 64;

struct EncodeTable {
  unsigned max_length = 0;
  // Per-symbol code and length packed as (length << 24) | reversed code; 0 = no code.
  std::vector<uint32_t> entry;  // covers every value of the element type (65,536 for u32)
  // The same as split tables for the fast encoder: code[v] is the reversed
  // code (0 if none), length[v] its length or kNoCodeLength. For u32 there is
  // one more slot, at index 65,536, that every larger value is clamped to.
  std::vector<uint32_t> code;
  std::vector<uint8_t> length;
  // u8 with max_length <= 16: two consecutive bytes a, b at index a | b << 8
  // (one little-endian 16-bit load) give the codes of a then b, concatenated,
  // and the sum of their lengths (kNoCodeLength or more if either has none).
  std::vector<uint32_t> pair_code;
  std::vector<uint8_t> pair_length;
};
EncodeTable make_encode_table(const Codebook& book, DType t);

constexpr std::size_t kDoesNotFit = ~std::size_t{0};
// `out` must have room for capacity_words + kEncodeSlackWords words: the
// step-by-step encoder (used for a chunk with a value that has no code)
// checks the capacity once per row and keeps a scratch word at its end.
constexpr std::size_t kEncodeSlackWords = kRow + 1;

// Encode `n` symbols (elements of type `t`) into at most `capacity_words` words.
// Returns the number of words, or kDoesNotFit if more would be needed (the
// caller then stores the chunk raw). A value without a code throws
// value_out_of_alphabet naming the element index `first_index` + i.
std::size_t encode_chunk(const void* symbols, DType t, std::size_t n, const EncodeTable& table,
                         uint32_t* out, std::size_t capacity_words, uint64_t first_index = 0);

// Table-driven decoding: one lookup of `bits` bits gives symbol and length for
// every code of at most `bits` bits; longer codes (rare by construction) are
// resolved with the canonical First/Entry arrays (Tian et al. §IV-B2).
// `single` holds this for an index that starts a code longer than single_bits.
constexpr uint32_t kSingleLong = 1u << 23;
// Second-level entries at most (more: long codes walk the canonical arrays).
constexpr std::size_t kMaxSubEntries = std::size_t{1} << 20;

struct DecodeTable {
  unsigned max_length = 0;
  unsigned bits = 0;              // primary table index width
  std::vector<uint32_t> entry;    // (length << 16) | symbol; length 0 = longer code
  std::array<uint32_t, kMaxCodeLength + 1> first{};   // first canonical code of each length
  std::array<uint32_t, kMaxCodeLength + 1> count{};   // codes of each length
  std::array<uint32_t, kMaxCodeLength + 1> offset{};  // index of that first code in `sorted`
  std::vector<uint32_t> sorted;   // symbols in canonical order (length, symbol)

  // The CPU decoder's own tables (the GPU uses the ones above; these ignore
  // primary_bits); see decode.cpp.
  unsigned single_bits = 0;        // index width of `single`
  std::vector<uint32_t> single;    // one code per lookup
  std::vector<uint32_t> long_info; // per `single` index: where its longer codes are in `sub`
  std::vector<uint32_t> sub;       // second-level entries of codes longer than single_bits
  unsigned pair8_bits = 0;         // index width of pair8 (0: none)
  unsigned pair16_bits = 0;        // index width of pair16 (0: none)
  std::vector<uint32_t> pair8;     // two codes per lookup, symbols as bytes
  std::vector<uint64_t> pair16;    // two codes per lookup, symbols as 16-bit values
};
// Whether codes longer than 11 bits fill at least 1/128 of the code space,
// so that more than ~0.8 % of the codes would miss an 11-bit single table
// (u16 quantization codes of 65,536 bins limited to 16 bits: 4.4 %).
// `counts[l]`: the codes of length l.
bool long_codes_common(const uint64_t* counts, unsigned max_length);
bool long_codes_common(const Codebook& book);
// The single-table width both decoders take: 13 bits for K = 1, and for
// K = 2 where long codes are common (above) and the step's codes come from
// single lookups; 11 otherwise (there a 32 KiB table costs more to build, to
// copy and to keep in cache than it saves).
constexpr unsigned single_table_bits(unsigned max_length, bool long_common) {
  const unsigned K = symbols_per_step(max_length);
  return K == 1 || (K == 2 && long_common) ? 13 : 11;
}
// The CPU decoder's: single_table_bits with its own long_codes_common.
unsigned cpu_single_bits(const Codebook& book);
// Only the canonical arrays and the primary table (what the GPU decoder uses).
DecodeTable make_primary_decode_table(const Codebook& book, unsigned primary_bits);
// symbol_bytes: the width of the symbols the table will decode (1, 2 or 4),
// so that only that width's pair table is built; 0 builds both.
// max_single_bits: the single table's widest index (0: the CPU decoder's
// choice, cpu_single_bits).
DecodeTable make_decode_table(const Codebook& book, unsigned primary_bits = 11, unsigned symbol_bytes = 0,
                              unsigned max_single_bits = 0);

// Whether decode_chunk may take its BMI2 clone of the hot loop (default: if
// the CPU has BMI2). Tests switch it off to run the portable loop as well.
void set_decode_bmi2_allowed(bool allowed);
bool decode_bmi2_active();

// Decode a chunk of `n` symbols from `words` (`word_count` 32-bit little-endian
// words at any alignment). Throws corrupt_stream if the words do not hold
// exactly the chunk; the content itself is verified by the chunk checksum.
void decode_chunk(const uint8_t* words, std::size_t word_count, std::size_t n,
                  const DecodeTable& table, DType t, void* out);

}  // namespace vlec::huffman
