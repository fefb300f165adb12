// wavelet/coefficients.hpp: the sample and coefficient mappings of the
// wavelet codec (docs/FORMAT.md §10.4-10.5): the reversible colour transform
// between interleaved samples and planar int32 planes, the zigzag map of
// signed coefficients to unsigned, and the split of each unsigned value z
// into a Huffman symbol z >> k and k raw low bits.
//
// The split keeps every symbol below the 65,536-symbol Huffman alphabet
// (u16 images give coefficients of up to ~22 bits) and is chosen per group by
// the size estimate of shift_rule.hpp, so noisy fine subbands, whose low bits
// are close to uniform, do not pay for a Huffman code of them either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vlec/wavelet.hpp"
#include "wavelet/shift_rule.hpp"

namespace vlec::wavelet {

constexpr unsigned kMaxShift = shift_rule::kMaxShift;

inline uint32_t zigzag(int32_t c) { return (static_cast<uint32_t>(c) << 1) ^ static_cast<uint32_t>(c >> 31); }
inline int32_t unzigzag(uint32_t z) { return static_cast<int32_t>((z >> 1) ^ (0u - (z & 1))); }

// Interleaved samples -> planes (plane p at planar + p * N, N = pixels),
// with the RCT on planes 0..2 when `rct`: Y = floor((R + 2G + B) / 4),
// Cb = B - G, Cr = R - G.
void split_planes(const void* samples, const WaveletImage& image, bool rct, int32_t* planar, unsigned threads);
// The same for u8 samples into int16 planes (RCT values lie in -255..255):
// half the memory traffic, and the int16 transform needs no range check.
void split_planes(const uint8_t* samples, const WaveletImage& image, bool rct, int16_t* planar, unsigned threads);

// The inverse, writing u16 samples big-endian when `big_endian`. Throws
// corrupt_stream when a value falls outside the sample type.
void join_planes(const int32_t* planar, const WaveletImage& image, bool rct, bool big_endian, uint8_t* out,
                 unsigned threads);

// The shift k for a group's zigzag values by the rule of shift_rule.hpp
// (smallest estimate over k0 ... k0 + `search`, k0 the smallest k keeping
// z >> k below 65,536; stop at the second k in a row that does not improve;
// ties to the smaller k). `cost`, if given, receives the estimate (bits) of
// the chosen k.
unsigned choose_shift(const uint32_t* z, std::size_t n, unsigned search = shift_rule::kDefaultSearch,
                      uint64_t* cost = nullptr);

// The same rule from a histogram: `hist` counts the n values at
// k0 = shift_rule::smallest_shift(top) (top = the largest value; the
// histogram may have extra empty bins). Equal to shift_rule::choose_shift()
// bit for bit, with the bins merged in place per step instead of re-summed
// and log2_fx of small counts from a table of its own values. `hist_out`, if
// given, receives the histogram of the symbols at the chosen shift (without
// trailing empty bins), which is exactly what the Huffman coder would count.
// The histogram at shift k of a histogram at k0 = smallest_shift(top): its
// bins merged by 2^(k - k0), trailing empty bins dropped (as choose_shift's
// `hist_out`).
void histogram_at_shift(const std::vector<uint64_t>& hist, uint32_t top, unsigned k, std::vector<uint64_t>& out);
unsigned choose_shift(const std::vector<uint64_t>& hist, uint64_t n, uint32_t top,
                      unsigned search = shift_rule::kDefaultSearch, uint64_t* cost = nullptr,
                      std::vector<uint64_t>* hist_out = nullptr);

// Bytes of the packed low bits of n values: align(ceil(n k / 8), 8).
uint64_t low_bits_bytes(uint64_t n, unsigned k);

// Rebuild coefficients from the decoded symbols (width 1 or 2 bytes) and the
// packed low bits: c = unzigzag((symbol << k) | low). Throws corrupt_stream
// when a value exceeds 32 bits or the padding bits are not zero.
void combine(const uint8_t* symbols, unsigned symbol_width, const uint8_t* low_bits, std::size_t n, unsigned k,
             int32_t* out);

}  // namespace vlec::wavelet
