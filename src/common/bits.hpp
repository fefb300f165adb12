// common/bits.hpp: little-endian loads and stores and bit tricks, written as
// memcpy so that they are safe on any alignment and compile to single moves.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define VLEC_HD __host__ __device__
#else
#define VLEC_HD
#endif

namespace vlec {

inline uint16_t load_le16(const void* p) { uint16_t v; std::memcpy(&v, p, 2); return v; }
inline uint32_t load_le32(const void* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline uint64_t load_le64(const void* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }
inline void store_le16(void* p, uint16_t v) { std::memcpy(p, &v, 2); }
inline void store_le32(void* p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void store_le64(void* p, uint64_t v) { std::memcpy(p, &v, 8); }

// Reverse the low `len` bits of `code` (1 <= len <= 32). Canonical Huffman codes are
// defined MSB-first; vlec's bitstreams are LSB-first, so codes are stored reversed.
VLEC_HD inline uint32_t reverse_bits(uint32_t code, unsigned len) {
#if defined(__CUDA_ARCH__)
  return __brev(code) >> (32 - len);
#else
  code = ((code & 0x55555555u) << 1) | ((code >> 1) & 0x55555555u);
  code = ((code & 0x33333333u) << 2) | ((code >> 2) & 0x33333333u);
  code = ((code & 0x0F0F0F0Fu) << 4) | ((code >> 4) & 0x0F0F0F0Fu);
  code = ((code & 0x00FF00FFu) << 8) | ((code >> 8) & 0x00FF00FFu);
  code = (code << 16) | (code >> 16);
  return code >> (32 - len);
#endif
}

constexpr uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
constexpr uint64_t div_ceil(uint64_t v, uint64_t d) { return (v + d - 1) / d; }

}  // namespace vlec
