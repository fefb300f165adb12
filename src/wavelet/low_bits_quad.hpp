// wavelet/low_bits_quad.hpp: the k low bits of four consecutive values (a
// quad) as the words of a group's low-bit stream they land in (FORMAT §10.5:
// value i's k low bits at bit i*k of the LSB-first words). The GPU writer's
// symbols kernel (cuda/wavelet_encode_symbols.cuh) places one quad a thread
// this way and ORs the words into its tile's shared words.
//
// Why it is shaped so: the symbols kernel is bound by its instructions
// (Nsight Compute, H200: 71 % of the issue slots busy), and placing each of
// the four values into each of four candidate words by compare and select
// took ~32 instructions a value. Here the quad is two pairs: each pair's
// 2k <= 48 bits form one 64-bit value (hi:lo), placed by three funnel
// shifts; the second pair's words are merged into the first's by selects on
// its word offset (0, 1 or 2). The quad ends below bit 31 + 4 * 24 = 127, so
// four words always hold it. Host and device: tests/test_wavelet_low_bits.cpp
// checks it against a bit-by-bit placement for every k, offset and count.
#pragma once

#include <cstdint>

#include "common/bits.hpp"

namespace vlec::wavelet {

// The high 32 bits of (hi:lo) << s, for s < 32 (CUDA's __funnelshift_l).
VLEC_HD inline uint32_t funnel_left(uint32_t lo, uint32_t hi, uint32_t s) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_l(lo, hi, s);
#else
  return static_cast<uint32_t>((((uint64_t{hi} << 32) | lo) << s) >> 32);
#endif
}

// The words of a quad's low bits: words[q] holds bits [32q, 32q + 32) of
// the quad placed at bit `off` of words[0].
struct QuadLowWords {
  uint32_t words[4];
};

// z[m]'s low k bits (mask = 2^k - 1, 1 <= k <= 24) at bit off + m * k
// (off < 32). A value the quad does not hold must be 0 (its bits then add
// nothing): the symbols kernel zeroes the values past a tile's end.
VLEC_HD inline QuadLowWords quad_low_words(const uint32_t (&z)[4], uint32_t k, uint32_t mask, uint32_t off) {
  const uint32_t l0 = z[0] & mask, l1 = z[1] & mask, l2 = z[2] & mask, l3 = z[3] & mask;
  // Pair (l0, l1) at bit off of word 0; pair (l2, l3) at bit off + 2k, word d.
  const uint32_t a_lo = l0 | l1 << k, a_hi = funnel_left(l1, 0, k);
  const uint32_t b_lo = l2 | l3 << k, b_hi = funnel_left(l3, 0, k);
  const uint32_t at = off + 2 * k, d = at / 32, s = at % 32;
  const uint32_t a0 = a_lo << off, a1 = funnel_left(a_lo, a_hi, off), a2 = funnel_left(a_hi, 0, off);
  const uint32_t b0 = b_lo << s, b1 = funnel_left(b_lo, b_hi, s), b2 = funnel_left(b_hi, 0, s);
  // (d == 2 puts b2 at word 4, past the quad's last bit: it is 0.)
  QuadLowWords q;
  q.words[0] = a0 | (d == 0 ? b0 : 0u);
  q.words[1] = a1 | (d == 0 ? b1 : d == 1 ? b0 : 0u);
  q.words[2] = a2 | (d == 0 ? b2 : d == 1 ? b1 : b0);
  q.words[3] = d == 1 ? b2 : d == 2 ? b1 : 0u;
  return q;
}

}  // namespace vlec::wavelet
