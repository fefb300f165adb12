// cuda/dwt53_coded.cuh: the inverse rows kernel's reads of coded details
// (dwt53_inverse.cu, kCoded): the wavelet decoder's finest levels are not
// scattered into coefficients first; each coefficient is formed where the
// inverse 5/3 reads it, from its group's decoded symbol and k low bits
// (z = (symbol << k) | low bits, then unzigzag). Included by
// dwt53_inverse.cu alone.
//
// Why it is fast: a lane's N symbols come from one or two aligned words and
// its low bits from a four-word window loaded once; on long chains the next
// step's raw words are loaded (issue_coded) a step before they are decoded
// (decode_coded), so no decode waits for a load of its own step.
#pragma once

#include <cstdint>

#include "cuda/dwt53_common.cuh"
#include "cuda/dwt53_gpu.hpp"

namespace vlec::cuda::dwt {
namespace {

__device__ __forceinline__ int32_t unzigzag(uint32_t z) { return static_cast<int32_t>((z >> 1) ^ (0u - (z & 1))); }

// Coefficient i of band b's group: z = (symbol << k) | its k low bits
// (bits i k .. i k + k - 1 of the low-bit words, from a two-word window),
// unzigzagged; a z of more than 32 bits is reported (the scatter's word).
__device__ __forceinline__ int32_t coded_value(const DetailBand& b, uint64_t i, unsigned long long* wide) {
  uint64_t z = b.width == 2 ? uint64_t{reinterpret_cast<const uint16_t*>(b.symbols)[i]} : uint64_t{b.symbols[i]};
  if (b.shift) {
    const uint64_t bit = i * b.shift, w = bit / 32;
    const uint32_t lo = w < b.low_words ? b.low[w] : 0u, hi = w + 1 < b.low_words ? b.low[w + 1] : 0u;
    z = (z << b.shift) | (__funnelshift_r(lo, hi, static_cast<uint32_t>(bit % 32)) & ((1u << b.shift) - 1));
  }
  if (z > 0xFFFFFFFFull)
    atomicMin(wide, static_cast<unsigned long long>((uint64_t{b.group} << 40) | min(i, (uint64_t{1} << 40) - 1)));
  return unzigzag(static_cast<uint32_t>(z));
}

// The values of N coefficients from their symbols and the low-bit window
// win (words from w0 = i0 k / 32 on; k > 0), into c[OFF, OFF + N). Four
// words hold the N k <= 96 bits from a bit offset below 32 (the last bit is
// at most 31 + 96 - 1 = 126), so a value starting in word 3 ends there.
template <int N, int OFF, int V>
__device__ __forceinline__ void finish_coded(const DetailBand& b, uint64_t i0, const uint32_t (&sym)[N],
                                             const uint32_t (&win)[4], int32_t (&c)[V], unsigned long long* wide) {
  const uint32_t k = b.shift;  // (uniform across the warp: one band a call)
  const uint32_t off0 = static_cast<uint32_t>((i0 * k) % 32), mask = (1u << k) - 1;
#pragma unroll
  for (int m = 0; m < N; ++m) {
    const uint32_t bit = off0 + m * k, w = bit / 32, off = bit % 32;
    const uint32_t lo = w == 0 ? win[0] : w == 1 ? win[1] : w == 2 ? win[2] : win[3];
    const uint32_t hi = w == 0 ? win[1] : w == 1 ? win[2] : w == 2 ? win[3] : 0u;
    const uint32_t z = sym[m] << k | (__funnelshift_r(lo, hi, off) & mask);  // z's low 32 bits
    c[OFF + m] = unzigzag(z);
  }
  // z = (symbol << k) | low reaches 2^32 only where the symbol has a bit at
  // 32 - k or above, so only for k >= 17 (symbols are below 2^16). k is the
  // band's, the same in every lane: below 17 the checks and their
  // convergence barriers (one a value) are skipped as a block.
  if (k > 16) {
#pragma unroll
    for (int m = 0; m < N; ++m)
      if (sym[m] >> (32 - k))
        atomicMin(wide,
                  static_cast<unsigned long long>((uint64_t{b.group} << 40) | min(i0 + m, (uint64_t{1} << 40) - 1)));
  }
}

// The symbols of N coefficients from their raw load: one word (or two for
// four 2-byte symbols).
template <int N>
__device__ __forceinline__ void unpack_symbols(uint32_t width, uint32_t s0, uint32_t s1, uint32_t (&sym)[N]) {
  if (width == 2) {
    sym[0] = s0 & 0xFFFF, sym[1] = s0 >> 16;
    if constexpr (N == 4) sym[2] = s1 & 0xFFFF, sym[3] = s1 >> 16;
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) sym[i] = (s0 >> (8 * i)) & 0xFF;
  }
}

// The raw words of the N symbols from index i0 (a multiple of N): one
// vector load (s1 only for four 2-byte symbols).
template <int N>
__device__ __forceinline__ void load_symbol_words(const DetailBand& b, uint64_t i0, uint32_t& s0, uint32_t& s1) {
  if (b.width == 2) {
    if constexpr (N == 4) {
      const uint2 v = *reinterpret_cast<const uint2*>(b.symbols + 2 * i0);
      s0 = v.x, s1 = v.y;
    } else {
      s0 = *reinterpret_cast<const uint32_t*>(b.symbols + 2 * i0);
    }
  } else {
    s0 = N == 4 ? *reinterpret_cast<const uint32_t*>(b.symbols + i0)
                : uint32_t{*reinterpret_cast<const uint16_t*>(b.symbols + i0)};
  }
}

// The low-bit window of the values from index i0 (k > 0): four words from
// w0 = i0 k / 32, zero past the group's words.
__device__ __forceinline__ void load_window(const DetailBand& b, uint64_t i0, uint32_t (&win)[4]) {
  const uint64_t w0 = i0 * b.shift / 32;
#pragma unroll
  for (int w = 0; w < 4; ++w) win[w] = w0 + w < b.low_words ? b.low[w0 + w] : 0u;
}

// The values of N coefficients from their symbols and, where the band has
// low bits (kLow and k > 0), the window.
template <int N, int OFF, bool kLow, int V>
__device__ __forceinline__ void coded_values(const DetailBand& b, uint64_t i0, const uint32_t (&sym)[N],
                                             const uint32_t (&win)[4], int32_t (&c)[V], unsigned long long* wide) {
  if (!kLow || b.shift == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) c[OFF + i] = unzigzag(sym[i]);
    return;
  }
  if constexpr (kLow) finish_coded<N, OFF>(b, i0, sym, win, c, wide);
}

// N coefficients of row y of band b at columns x0 .. into c[OFF, OFF + N),
// the columns clamped to [0, b.nx) as load_part clamps them (value by value
// at a band's edge): the symbols with one vector load where they lie
// aligned in the row, their N k low bits from one window of four words
// (finish_coded; none for k = 0). All inline.
// Measured against it on the H100 (finest level of a u16 8192^2 image,
// bench/results/2026-11-27-h100-session15-*): the rare cases (edges,
// unaligned, k > 16) out of line behind one call, with a 64-bit window for
// k <= 16, 0.27 ms against 0.21; the width errors kept in a register and
// reported once at the kernel's end, 0.23 (ptxas then kept fewer loads in
// flight).
template <int N, int OFF, int V>
__device__ __forceinline__ void load_coded(const DetailBand& b, int x0, int y, int32_t (&c)[V],
                                           unsigned long long* wide) {
  static_assert(N == 2 || N == 4, "two or four coefficients a part");
  const uint64_t row = b.index0 + static_cast<uint64_t>(y) * b.nx;
  if (x0 < 0 || x0 + N > static_cast<int>(b.nx)) {
#pragma unroll
    for (int i = 0; i < N; ++i) c[OFF + i] = coded_value(b, row + clampi(x0 + i, 0, static_cast<int>(b.nx) - 1), wide);
    return;
  }
  const uint64_t i0 = row + static_cast<uint64_t>(x0);
  uint32_t sym[N];
  if (i0 % N != 0) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      sym[i] = b.width == 2 ? reinterpret_cast<const uint16_t*>(b.symbols)[i0 + i] : b.symbols[i0 + i];
  } else {
    uint32_t s0, s1 = 0;
    load_symbol_words<N>(b, i0, s0, s1);
    unpack_symbols<N>(b.width, s0, s1, sym);
  }
  uint32_t win[4];
  if (b.shift == 0) return coded_values<N, OFF, false>(b, i0, sym, win, c, wide);
  load_window(b, i0, win);
  coded_values<N, OFF, true>(b, i0, sym, win, c, wide);
}

// load_coded in two halves, so that a step's loads are all in flight before
// any of them is used (kRawPrefetch below): issue_coded only loads the raw
// words (symbols and low-bit window) into registers; decode_coded turns
// them into values a step later. Only the common case takes this path: the
// N columns inside the band and aligned for the vector load of their
// symbols (coded_fast); a lane at a band's edge or on an unaligned row
// loads nothing early and decodes with load_coded. kLow false: the caller
// knows the band has no low bits (k = 0), so no window is loaded or kept.
struct CodedRaw {
  uint32_t s0, s1;
  uint32_t win[4];
};
template <int N>
__device__ __forceinline__ bool coded_fast(const DetailBand& b, int x0, uint64_t i0) {
  return x0 >= 0 && x0 + N <= static_cast<int>(b.nx) && i0 % N == 0;
}
template <int N, bool kLow>
__device__ __forceinline__ void issue_coded(const DetailBand& b, int x0, int y, CodedRaw& r) {
  const uint64_t i0 = b.index0 + static_cast<uint64_t>(y) * b.nx + static_cast<uint64_t>(x0);
  if (!coded_fast<N>(b, x0, i0)) return;
  load_symbol_words<N>(b, i0, r.s0, r.s1);
  if (kLow && b.shift) load_window(b, i0, r.win);
}
template <int N, int OFF, bool kLow, int V>
__device__ __forceinline__ void decode_coded(const DetailBand& b, int x0, int y, const CodedRaw& r, int32_t (&c)[V],
                                             unsigned long long* wide) {
  const uint64_t i0 = b.index0 + static_cast<uint64_t>(y) * b.nx + static_cast<uint64_t>(x0);
  if (!coded_fast<N>(b, x0, i0)) return load_coded<N, OFF>(b, x0, y, c, wide);
  uint32_t sym[N];
  unpack_symbols<N>(b.width, r.s0, r.s1, sym);
  coded_values<N, OFF, kLow>(b, i0, sym, r.win, c, wide);
}

}  // namespace
}  // namespace vlec::cuda::dwt
