// common/xxh3.hpp: XXH3-64 (seed 0, default secret) written once for the host
// and the GPU, so that GPU kernels can verify and compute the chunk checksums
// of docs/FORMAT.md §7 without leaving the device. Bit-exact with xxHash's
// XXH3_64bits (tests/test_xxh3.cpp checks every length up to 4 KiB and more).
//
// Besides the one-shot hash64(), the pieces of the long-input path are
// exposed (init_acc, accumulate_word, scramble, merge_accs) because within a
// 1 KiB block XXH3's accumulators are plain sums: a warp can fold the words
// it holds in registers into per-lane partial sums and combine them once per
// block, which is how the GPU decoder checks a chunk while it decodes it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/bits.hpp"

namespace vlec::xxh3 {

constexpr uint32_t kPrime32_1 = 0x9E3779B1u, kPrime32_2 = 0x85EBCA77u, kPrime32_3 = 0xC2B2AE3Du;
constexpr uint64_t kPrime64_1 = 0x9E3779B185EBCA87ull, kPrime64_2 = 0xC2B2AE3D27D4EB4Full,
                   kPrime64_3 = 0x165667B19E3779F9ull, kPrime64_4 = 0x85EBCA77C2B2AE63ull,
                   kPrime64_5 = 0x27D4EB2F165667C5ull;
constexpr unsigned kSecretSize = 192, kStripe = 64, kStripesPerBlock = 16, kBlock = 1024;

#define VLEC_XXH3_SECRET                                                                                   \
  {0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c, 0xde, 0xd4, \
   0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, 0xcb, 0x79, 0xe6, 0x4e, \
   0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21, 0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, \
   0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c, 0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, \
   0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3, 0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, \
   0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8, 0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, \
   0xc7, 0x0b, 0x4f, 0x1d, 0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, \
   0x73, 0x64, 0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb, \
   0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e, 0x2b, 0x16, \
   0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce, 0x45, 0xcb, 0x3a, 0x8f, \
   0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e}

// The secret as 24 little-endian words, for the 8-aligned reads of the hot
// accumulate and scramble steps (one load instead of eight).
#define VLEC_XXH3_SECRET_WORDS                                                                               \
  {0xbe4ba423396cfeb8ull, 0x1cad21f72c81017cull, 0xdb979083e96dd4deull, 0x1f67b3b7a4a44072ull,               \
   0x78e5c0cc4ee679cbull, 0x2172ffcc7dd05a82ull, 0x8e2443f7744608b8ull, 0x4c263a81e69035e0ull,               \
   0xcb00c391bb52283cull, 0xa32e531b8b65d088ull, 0x4ef90da297486471ull, 0xd8acdea946ef1938ull,               \
   0x3f349ce33f76faa8ull, 0x1d4f0bc7c7bbdcf9ull, 0x3159b4cd4be0518aull, 0x647378d9c97e9fc8ull,               \
   0xc3ebd33483acc5eaull, 0xeb6313faffa081c5ull, 0x49daf0b751dd0d17ull, 0x9e68d429265516d3ull,               \
   0xfca1477d58be162bull, 0xce31d07ad1b8f88full, 0x280416958f3acb45ull, 0x7e404bbbcafbd7afull}

#if defined(__CUDACC__)
static __constant__ uint8_t kSecretDevice[kSecretSize] = VLEC_XXH3_SECRET;
// Global, not __constant__: lanes read different words at once, which the
// constant cache serializes and L1 serves in one go.
static __device__ const uint64_t kSecretWordsDevice[kSecretSize / 8] = VLEC_XXH3_SECRET_WORDS;
#endif
static const uint8_t kSecretHost[kSecretSize] = VLEC_XXH3_SECRET;
static const uint64_t kSecretWordsHost[kSecretSize / 8] = VLEC_XXH3_SECRET_WORDS;

VLEC_HD inline uint64_t read64(const uint8_t* p) {
  uint64_t v = 0;
  for (unsigned i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}
VLEC_HD inline uint32_t read32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Eight bytes of the default secret at byte offset `off` (any alignment).
VLEC_HD inline uint64_t secret64(unsigned off) {
#if defined(__CUDA_ARCH__)
  return read64(kSecretDevice + off);
#else
  return read64(kSecretHost + off);
#endif
}
// Eight bytes of the secret at byte offset 8 * `word`.
VLEC_HD inline uint64_t secret_word(unsigned word) {
#if defined(__CUDA_ARCH__)
  return __ldg(&kSecretWordsDevice[word]);
#else
  return kSecretWordsHost[word];
#endif
}
VLEC_HD inline uint32_t secret32(unsigned off) {
#if defined(__CUDA_ARCH__)
  return read32(kSecretDevice + off);
#else
  return read32(kSecretHost + off);
#endif
}

VLEC_HD inline uint64_t mul128_fold64(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return (a * b) ^ __umul64hi(a, b);
#else
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(p) ^ static_cast<uint64_t>(p >> 64);
#endif
}
VLEC_HD inline uint64_t rotl64(uint64_t v, unsigned r) { return (v << r) | (v >> (64 - r)); }
VLEC_HD inline uint64_t swap64(uint64_t v) {
  v = ((v & 0x00FF00FF00FF00FFull) << 8) | ((v >> 8) & 0x00FF00FF00FF00FFull);
  v = ((v & 0x0000FFFF0000FFFFull) << 16) | ((v >> 16) & 0x0000FFFF0000FFFFull);
  return (v << 32) | (v >> 32);
}
VLEC_HD inline uint64_t xxh64_avalanche(uint64_t h) {
  h ^= h >> 33, h *= kPrime64_2, h ^= h >> 29, h *= kPrime64_3, h ^= h >> 32;
  return h;
}
VLEC_HD inline uint64_t avalanche(uint64_t h) {
  h ^= h >> 37, h *= 0x165667919E3779F9ull, h ^= h >> 32;
  return h;
}
VLEC_HD inline uint64_t rrmxmx(uint64_t h, uint64_t len) {
  h ^= rotl64(h, 49) ^ rotl64(h, 24);
  h *= 0x9FB21C651E98DF25ull;
  h ^= (h >> 35) + len;
  h *= 0x9FB21C651E98DF25ull;
  return h ^ (h >> 28);
}
VLEC_HD inline uint64_t mix16(const uint8_t* p, unsigned secret_off) {
  return mul128_fold64(read64(p) ^ secret64(secret_off), read64(p + 8) ^ secret64(secret_off + 8));
}

// --- the long-input path (more than 240 bytes) ---

VLEC_HD inline void init_acc(uint64_t acc[8]) {
  acc[0] = kPrime32_3, acc[1] = kPrime64_1, acc[2] = kPrime64_2, acc[3] = kPrime64_3;
  acc[4] = kPrime64_4, acc[5] = kPrime32_2, acc[6] = kPrime64_5, acc[7] = kPrime32_1;
}
// Word i (0..7) of a stripe, keyed with the secret at byte offset
// `secret_off`: adds `value` to acc[i ^ 1] and the returned product to acc[i].
VLEC_HD inline uint64_t product_with_key(uint64_t value, uint64_t secret) {
  const uint64_t key = value ^ secret;
  return uint64_t{static_cast<uint32_t>(key)} * (key >> 32);
}
VLEC_HD inline uint64_t keyed_product(uint64_t value, unsigned secret_off) {
  return product_with_key(value, secret_off % 8 == 0 ? secret_word(secret_off / 8) : secret64(secret_off));
}
VLEC_HD inline void accumulate_stripe(uint64_t acc[8], const uint8_t* p, unsigned secret_off) {
  for (unsigned i = 0; i < 8; ++i) {
    const uint64_t v = read64(p + 8 * i);
    acc[i ^ 1] += v;
    acc[i] += keyed_product(v, secret_off + 8 * i);
  }
}
VLEC_HD inline uint64_t scramble(uint64_t acc, unsigned i) {
  acc ^= acc >> 47;
  acc ^= secret_word((kSecretSize - kStripe) / 8 + i);
  return acc * kPrime32_1;
}
VLEC_HD inline uint64_t merge_accs(const uint64_t acc[8], uint64_t len) {
  uint64_t h = len * kPrime64_1;
  for (unsigned i = 0; i < 4; ++i)
    h += mul128_fold64(acc[2 * i] ^ secret64(11 + 16 * i), acc[2 * i + 1] ^ secret64(11 + 16 * i + 8));
  return avalanche(h);
}
// After all whole blocks (nb_blocks = (len - 1) / 1024): the stripes of the
// last partial block and the last stripe (which may overlap them).
VLEC_HD inline uint64_t finish_long(uint64_t acc[8], const uint8_t* input, uint64_t len) {
  const uint64_t nb_blocks = (len - 1) / kBlock;
  const uint64_t stripes = ((len - 1) - kBlock * nb_blocks) / kStripe;
  for (uint64_t s = 0; s < stripes; ++s)
    accumulate_stripe(acc, input + nb_blocks * kBlock + s * kStripe, static_cast<unsigned>(8 * s));
  accumulate_stripe(acc, input + len - kStripe, kSecretSize - kStripe - 7);
  return merge_accs(acc, len);
}

// XXH3_64bits(input, len) with seed 0, for len <= 240 (no block loop, so
// that GPU code that only hashes short tails stays small).
VLEC_HD inline uint64_t hash64_short(const uint8_t* in, uint64_t len) {
  if (len == 0) return xxh64_avalanche(secret64(56) ^ secret64(64));
  if (len <= 3) {
    const uint32_t combined = uint32_t{in[0]} << 16 | uint32_t{in[len >> 1]} << 24 | uint32_t{in[len - 1]} |
                              static_cast<uint32_t>(len) << 8;
    return xxh64_avalanche(uint64_t{combined} ^ (uint64_t{secret32(0) ^ secret32(4)}));
  }
  if (len <= 8) {
    const uint64_t input64 = read32(in + len - 4) + (uint64_t{read32(in)} << 32);
    return rrmxmx(input64 ^ (secret64(8) ^ secret64(16)), len);
  }
  if (len <= 16) {
    const uint64_t lo = read64(in) ^ (secret64(24) ^ secret64(32));
    const uint64_t hi = read64(in + len - 8) ^ (secret64(40) ^ secret64(48));
    return avalanche(len + swap64(lo) + hi + mul128_fold64(lo, hi));
  }
  if (len <= 128) {
    uint64_t acc = len * kPrime64_1;
    if (len > 32) {
      if (len > 64) {
        if (len > 96) acc += mix16(in + 48, 96) + mix16(in + len - 64, 112);
        acc += mix16(in + 32, 64) + mix16(in + len - 48, 80);
      }
      acc += mix16(in + 16, 32) + mix16(in + len - 32, 48);
    }
    acc += mix16(in, 0) + mix16(in + len - 16, 16);
    return avalanche(acc);
  }
  if (len <= 240) {
    uint64_t acc = len * kPrime64_1;
    for (unsigned i = 0; i < 8; ++i) acc += mix16(in + 16 * i, 16 * i);
    acc = avalanche(acc);
    for (unsigned i = 8; i < len / 16; ++i) acc += mix16(in + 16 * i, 16 * (i - 8) + 3);
    acc += mix16(in + len - 16, 136 - 17);
    return avalanche(acc);
  }
  return 0;  // not reached for len <= 240
}

// XXH3_64bits(input, len) with seed 0.
VLEC_HD inline uint64_t hash64(const uint8_t* in, uint64_t len) {
  if (len <= 240) return hash64_short(in, len);
  uint64_t acc[8];
  init_acc(acc);
  const uint64_t nb_blocks = (len - 1) / kBlock;
  for (uint64_t b = 0; b < nb_blocks; ++b) {
    for (unsigned s = 0; s < kStripesPerBlock; ++s) accumulate_stripe(acc, in + b * kBlock + s * kStripe, 8 * s);
    for (unsigned i = 0; i < 8; ++i) acc[i] = scramble(acc[i], i);
  }
  return finish_long(acc, in, len);
}

}  // namespace vlec::xxh3
