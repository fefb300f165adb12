// huffman/encode_plain.hpp: the plain CPU encoder of one chunk in the lane
// layout (encode_plain.cpp), which encode.cpp's fast encoder falls back to
// for chunks with a value that has no code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "huffman/chunk_codec.hpp"

namespace vlec::huffman::detail {

// n symbols of `in` (element index first_index on) into out[0, capacity)
// words; the words written, or kDoesNotFit. Throws value_out_of_alphabet for
// the first value without a code. Sym: uint8_t, uint16_t or uint32_t.
template <typename Sym>
std::size_t encode_plain(const Sym* in, std::size_t n, const EncodeTable& table, uint32_t* out,
                         std::size_t capacity, uint64_t first_index);

}  // namespace vlec::huffman::detail
