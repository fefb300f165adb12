// cuda/codebook_codes.hpp: the GPU codebook builder's canonical codes
// (GenerateCW: DEFLATE's first code of each length) and the serialized
// codebook's layout (presence flags, fields, sizes; docs/FORMAT.md §4.1),
// __host__ __device__, so the kernel and its host replay in the CPU tests
// place every bit with the same arithmetic.
#pragma once

#include <cstdint>

#include "cuda/generate_cl_base.hpp"

namespace vlec::cuda::cl {

// DEFLATE's first code of each length (docs/FORMAT.md §4.4); cnt[0] is 0.
VLEC_HD inline void canonical_next(const uint32_t* cnt, uint32_t* next) {
  uint32_t code = 0;
  next[0] = 0;
  for (uint32_t l = 1; l <= kMaxLen; ++l) {
    code = (code + (l >= 2 ? cnt[l - 1] : 0)) << 1;
    next[l] = code;
  }
}

// Serialization (docs/FORMAT.md §4.1): g = ceil(n/16) presence flags from bit 0
// of the stream (byte 8), then 16 fields of `fbits` bits per present group.
VLEC_HD inline uint32_t field_bits(uint32_t max_length) { return max_length <= 15 ? 4 : 5; }
VLEC_HD inline uint32_t group_count(uint32_t n) { return (n + 15) / 16; }
VLEC_HD inline uint64_t field_bit(uint32_t groups, uint32_t present_before, uint32_t s, uint32_t fbits) {
  return groups + uint64_t{present_before} * 16 * fbits + (s & 15u) * fbits;
}
VLEC_HD inline uint32_t serialized_bytes(uint32_t n, uint32_t present_groups, uint32_t fbits) {
  if (n == 0) return 8;
  const uint64_t bits = group_count(n) + uint64_t{present_groups} * 16 * fbits;
  return static_cast<uint32_t>((8 + (bits + 7) / 8 + 3) / 4 * 4);
}

// Bytes of the serialized codebook of any histogram of `capacity` symbols.
VLEC_HD inline uint32_t serialized_capacity(uint32_t capacity) {
  const uint32_t g = group_count(capacity);
  return serialized_bytes(capacity, g, 5);
}

}  // namespace vlec::cuda::cl
