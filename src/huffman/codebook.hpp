// huffman/codebook.hpp: histogram, deterministic length-limited canonical
// Huffman codebooks, and their compact serialization (docs/FORMAT.md §4).
//
// The code lengths are a pure function of the histogram: symbols are ranked
// by (count descending, symbol ascending); a two-queue Huffman construction
// that takes a leaf before an internal node of equal weight gives the number
// of codes of each length (bl_count); the Kraft-sum limiter clamps it to the
// length limit; lengths are dealt out in rank order. Only integer arithmetic
// and fixed tie rules are involved, so every machine, thread count and
// backend (the GPU included) computes the same lengths.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vlec/types.hpp"

namespace vlec::huffman {

constexpr uint32_t kMaxAlphabet = 65536;   // symbols 0..65535
constexpr unsigned kMaxCodeLength = 24;    // longest code the format allows
constexpr unsigned kMaxTreeDepth = 128;    // bound on unlimited Huffman depth for 64-bit counts

// The length limits the automatic policy chooses among (docs/FORMAT.md §4.3).
// 12 was one until writers of 2026-11-26: it decoded slower than 16 on both
// backends (its squeezed lengths make more two-code steps miss the pair
// table) while coding worse (docs/ARCHITECTURE.md, "Code length limits").
constexpr std::array<unsigned, 3> kAutoLengthLimits = {11, 16, 24};
// The policy takes the shortest candidate L with B(L) <= B(24) + B(24) /
// kAutoLimitSlack (~0.4 %). Writers before 2026-11-27 used 512: at 256, u16
// quantization codes of 65,536 bins get 16 bits (+0.28 % of size) instead of
// 24 and decode two symbols a refill, 20 % faster on the GPU and on the CPU
// (docs/ARCHITECTURE.md, "Code length limits").
constexpr uint64_t kAutoLimitSlack = 256;

using Histogram = std::vector<uint64_t>;  // index = symbol value

// Count symbols of `count` elements of type `t` (u8, u16 or u32) into `hist`,
// which is resized to cover the largest value seen. A u32 value >= 65,536
// throws ErrorCode::value_out_of_alphabet naming the value and its position
// (element index `first_index` + i).
void accumulate_histogram(const void* data, std::size_t count, DType t, Histogram& hist,
                          uint64_t first_index = 0);

// bl_count[l] = number of symbols with code length l, for l in 0..kMaxTreeDepth.
using LengthCounts = std::array<uint32_t, kMaxTreeDepth + 1>;

// Unlimited Huffman code length counts (two-queue construction, leaf first on ties).
// One present symbol gets length 1.
LengthCounts huffman_length_counts(const Histogram& hist);

// Clamp `counts` to `limit` with the Kraft-sum limiter of docs/FORMAT.md §4.2.
// Requires 2^limit >= number of symbols.
LengthCounts limit_length_counts(LengthCounts counts, unsigned limit);

// Symbols with non-zero count in rank order: count descending, symbol ascending.
std::vector<uint32_t> rank_symbols(const Histogram& hist);

// Total coded bits of the histogram when symbols in `ranked` order receive the
// lengths described by `counts`, shortest first.
uint64_t coded_bits(const Histogram& hist, const std::vector<uint32_t>& ranked,
                    const LengthCounts& counts);

struct Codebook {
  uint32_t alphabet_size = 0;    // symbols >= alphabet_size have no code
  unsigned max_length = 0;       // longest code (0 only for an empty codebook)
  std::vector<uint8_t> lengths;  // per symbol; 0 = no code
  std::vector<uint32_t> codes;   // per symbol: the code, bit-reversed for LSB-first output
  // How many symbols have each length, where `counted` (parse_codebook
  // counts them as it reads the fields, so that the checks and the GPU
  // decoder's table plan need no pass over the lengths of their own).
  std::array<uint32_t, kMaxCodeLength + 1> length_counts{};
  bool counted = false;

  bool empty() const { return max_length == 0; }
};

// Build the codebook of a histogram. length_limit 0 chooses the limit
// automatically (docs/FORMAT.md §4.3); otherwise it must be in 1..24 and at
// least ceil(log2(symbols present)).
Codebook build_codebook(const Histogram& hist, unsigned length_limit = 0);

// Fill `codes` (and check the lengths) from `lengths`: canonical codes, in
// order of (length, symbol), as in DEFLATE. Throws corrupt_stream if the
// lengths do not form a complete prefix code (one symbol of length 1 excepted).
void assign_canonical_codes(Codebook& book);
// The same checks and max_length, without the codes (`codes` left empty):
// for a reader that derives the codes itself (the GPU table builder, from
// the lengths' stable order), where assigning them costs the host ~2 ns a
// symbol before its first decode.
void check_code_lengths(Codebook& book);

// Serialization. Bytes written is a multiple of 4.
std::vector<uint8_t> serialize_codebook(const Codebook& book);
// Parse a codebook at `data` (at most `size` bytes); returns its byte size.
// `codes` false: the lengths are checked as ever, the codes not assigned
// (check_code_lengths).
// `max_alphabet` is the largest alphabet the element type allows.
std::size_t parse_codebook(const uint8_t* data, std::size_t size, uint32_t max_alphabet,
                           Codebook& book, bool codes = true);

}  // namespace vlec::huffman
