// wavelet/shift_rule.hpp: the wavelet writer's size estimate of a group of
// zigzag coefficients, its choice of the shift k (symbol z >> k, k raw low
// bits) and its decision to code a level's detail subbands as one group or
// one group each (docs/FORMAT.md §10.6).
//
// Every backend must write the same bytes, so these decisions are integer
// functions of a histogram, written once here for the CPU and the GPU
// (VLEC_HD, header-only, no tables, no floating point, no std:: calls):
//
//  - the coded size is the Shannon size in fixed point: per non-empty bin of
//    count c out of n, c * max(1, log2 n - log2 c) bits (Huffman never codes
//    a symbol in less than one bit), with log2 from log2_fx() below. Each bin's
//    term is an integer, so a GPU may add them in any order;
//  - the codebook size follows the serialization of FORMAT §4.1 from three
//    facts a GPU can also sum or max over bins: the alphabet (1 + the largest
//    non-empty bin), the non-empty 16-symbol groups and the non-empty bins;
//  - no Huffman codebook is built, which made the old rule (an exact codebook
//    per candidate shift, again per subband for the split decision) the
//    largest cost of encoding 16-bit images.
//
// The histograms: the group's values are counted at k0, the smallest shift
// that keeps symbols below 65,536 (smallest_shift()); the histogram of
// k0 + j is the k0 histogram with bins merged in runs of 2^j. A level's
// histogram at its k0 is the sum of its subbands' histograms, each merged
// down from its own (smaller or equal) k0, so one counting pass per subband
// serves both the split decision and the shift of whichever groups result.
#pragma once

#include <cstdint>

#ifndef VLEC_HD
#if defined(__CUDACC__)
#define VLEC_HD __host__ __device__
#else
#define VLEC_HD
#endif
#endif

namespace vlec::wavelet::shift_rule {

constexpr unsigned kFracBits = 16;               // log2_fx: log2 in units of 2^-16
constexpr uint32_t kSymbolLimit = 65536;         // symbols must stay below this (FORMAT §10.4)
constexpr unsigned kMaxShift = 24;               // largest shift the format allows
constexpr unsigned kDefaultSearch = 8;           // shifts tried above k0
constexpr uint32_t kBinsPerCodebookGroup = 16;   // FORMAT §4.1 presence groups
constexpr uint32_t kNarrowLengthSymbols = 4096;  // codebook length fields: 4 bits up to this many symbols, else 5
// Bits a group costs beyond its code bits and low bits: its embedded frame's
// fixed header (48), header checksum (8), one chunk index entry (16), padding
// (8) and its group table entry (32), in bytes.
constexpr uint64_t kGroupOverheadBits = 8 * (48 + 8 + 16 + 8 + 32);

// floor(log2(x)) for x >= 1.
VLEC_HD inline unsigned floor_log2(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return 63u - static_cast<unsigned>(__clzll(static_cast<long long>(x)));
#else
  return 63u - static_cast<unsigned>(__builtin_clzll(x));
#endif
}

// log2(x) * 2^16, x >= 1, by repeated squaring of the mantissa: the integer
// part is floor(log2 x); the mantissa m = x / 2^floor(log2 x) in [1, 2) is
// kept as a 32-bit fraction (Q1.31, truncated), and each squaring, truncated
// to Q1.31 again, yields the next fraction bit (m^2 >= 2: bit 1, halve).
// Exact integer steps, so every machine gets the same value; it is at most
// a few units of 2^-16 below the true log2 (truncation only lowers it).
VLEC_HD inline uint32_t log2_fx(uint64_t x) {
  const unsigned e = floor_log2(x);
  uint64_t m = e >= 31 ? x >> (e - 31) : x << (31 - e);  // in [2^31, 2^32)
  uint32_t frac = 0;
  for (unsigned i = 0; i < kFracBits; ++i) {
    m = (m * m) >> 31;  // m < 2^32, so m * m < 2^64
    frac <<= 1;
    if (m >= (uint64_t{1} << 32)) {
      frac |= 1u;
      m >>= 1;
    }
  }
  return (static_cast<uint32_t>(e) << kFracBits) | frac;
}

// The smallest shift that keeps every symbol (z >> k) of values up to `top`
// below 65,536.
VLEC_HD inline unsigned smallest_shift(uint32_t top) {
  unsigned k = 0;
  while ((top >> k) >= kSymbolLimit) ++k;
  return k;
}

// The largest shift tried for values up to `top` from k0 = smallest_shift(top):
// at most `search` above k0 and at most kMaxShift, and no shift above the
// first one that maps every value to symbol 0.
VLEC_HD inline unsigned last_shift(uint32_t top, unsigned k0, unsigned search) {
  unsigned k = k0;
  while (k < k0 + search && k + 1 <= kMaxShift && (top >> k) >= 1) ++k;
  return k;
}

// Fixed-point code bits of one bin: count * max(1, log2 n - log2 count) in
// units of 2^-16 (0 for an empty bin). `log2_n` = log2_fx(n), n >= count.
VLEC_HD inline uint64_t bin_cost_fx(uint64_t count, uint32_t log2_n) {
  if (count == 0) return 0;
  const uint32_t info = log2_n - log2_fx(count);
  const uint32_t one = 1u << kFracBits;
  return count * (info > one ? info : one);
}

// What the estimate needs of one histogram (one shift). Sums and maxima over
// bins: partial summaries of disjoint bin ranges that start at multiples of
// 16 combine with merge().
struct Summary {
  uint64_t n = 0;          // values counted
  uint64_t cost_fx = 0;    // sum of bin_cost_fx over bins
  uint32_t symbols = 0;    // non-empty bins
  uint32_t groups = 0;     // non-empty groups of 16 bins (bins 16g .. 16g + 15)
  uint32_t alphabet = 0;   // 1 + the largest non-empty bin; 0 if none
};

VLEC_HD inline Summary merge(const Summary& a, const Summary& b) {
  Summary s;
  s.n = a.n + b.n;
  s.cost_fx = a.cost_fx + b.cost_fx;
  s.symbols = a.symbols + b.symbols;
  s.groups = a.groups + b.groups;
  s.alphabet = a.alphabet > b.alphabet ? a.alphabet : b.alphabet;
  return s;
}

// Bin b of `count` values (count > 0) into s; `log2_n` = log2_fx(n) of the
// histogram's n. The one rule summarize() and the GPU's summary kernel
// (cuda/wavelet_shift_gpu.cu, its presence groups across threads) share.
VLEC_HD inline void add_bin(Summary& s, uint32_t b, uint64_t count, uint32_t log2_n) {
  s.n += count;
  s.cost_fx += bin_cost_fx(count, log2_n);
  s.symbols += 1;
  s.alphabet = b + 1;
}

// Summary of bins [first, end) of `hist` (first a multiple of 16) for a
// histogram of `n` values in all (n counts every bin, not only this range).
// `bin(s)` returns the count of bin s, so a caller can summarize merged bins
// of a finer histogram without building the merged one (see merged_bin()).
template <typename BinFn>
VLEC_HD inline Summary summarize(BinFn bin, uint32_t first, uint32_t end, uint64_t n) {
  Summary s;
  if (n == 0) return s;
  const uint32_t log2_n = log2_fx(n);
  for (uint32_t g = first; g < end; g += kBinsPerCodebookGroup) {
    const uint32_t g_end = end - g < kBinsPerCodebookGroup ? end : g + kBinsPerCodebookGroup;
    bool present = false;
    for (uint32_t b = g; b < g_end; ++b) {
      const uint64_t c = bin(b);
      if (c == 0) continue;
      present = true;
      add_bin(s, b, c, log2_n);
    }
    s.groups += present;
  }
  return s;
}

// Bin s of the histogram merged by `j` shifts from `hist` (bins in all):
// the sum of hist[s * 2^j ... (s + 1) * 2^j - 1].
template <typename Count>
VLEC_HD inline uint64_t merged_bin(const Count* hist, uint32_t bins, uint32_t s, unsigned j) {
  const uint64_t lo = uint64_t{s} << j;
  const uint64_t hi = (uint64_t{s} + 1) << j;
  uint64_t sum = 0;
  for (uint64_t b = lo; b < hi && b < bins; ++b) sum += hist[b];
  return sum;
}

// Bins of the histogram merged by `j` shifts from one of `bins` bins.
VLEC_HD inline uint32_t merged_bins(uint32_t bins, unsigned j) {
  return static_cast<uint32_t>((uint64_t{bins} + (uint64_t{1} << j) - 1) >> j);
}

// Estimated bytes of the serialized codebook (FORMAT §4.1): 8 header bytes,
// one presence bit per 16 symbols of the alphabet, 16 length fields per
// present group (4 bits each when at most 4,096 symbols are present, which
// the automatic length limit then keeps at 11 or 12 bits; 5 bits above),
// padded to a byte, the whole to 4 bytes.
VLEC_HD inline uint64_t codebook_bytes(const Summary& s) {
  if (s.alphabet == 0) return 0;
  const uint64_t field_bits = s.symbols > kNarrowLengthSymbols ? 5 : 4;
  const uint64_t presence = (uint64_t{s.alphabet} + kBinsPerCodebookGroup - 1) / kBinsPerCodebookGroup;
  const uint64_t bits = presence + uint64_t{s.groups} * kBinsPerCodebookGroup * field_bits;
  return (8 + (bits + 7) / 8 + 3) / 4 * 4;
}

// The estimate of a group at shift k: code bits (the fixed-point sum rounded
// up to whole bits), plus the codebook, plus k raw bits per value.
VLEC_HD inline uint64_t estimated_bits(const Summary& s, unsigned k) {
  const uint64_t code_bits = (s.cost_fx + (uint64_t{1} << kFracBits) - 1) >> kFracBits;
  return code_bits + 8 * codebook_bytes(s) + s.n * k;
}

// The shift rule over the estimates of k0, k0 + 1, ..., k0 + count - 1
// (estimates[j] for k0 + j; count = last_shift() - k0 + 1): the smallest
// estimate, ties to the smaller shift, stopping at the second shift in a row
// that does not improve on the best so far (the estimate falls while the
// dropped bits are noise and rises after). A GPU may compute all `count`
// estimates at once; the ones after the stop are ignored.
VLEC_HD inline unsigned pick_shift(const uint64_t* estimates, unsigned count, unsigned k0, uint64_t* best_bits) {
  unsigned best_j = 0;
  uint64_t best = estimates[0];
  unsigned worse = 0;
  for (unsigned j = 1; j < count && worse < 2; ++j) {
    if (estimates[j] < best) {
      best = estimates[j], best_j = j, worse = 0;
    } else {
      ++worse;
    }
  }
  if (best_bits) *best_bits = best;
  return k0 + best_j;
}

// The whole rule on one thread: `hist` is the histogram of n values at
// k0 = smallest_shift(top) with `bins` bins (bins > top >> k0 is allowed,
// extra bins empty). Returns the shift; `best_bits` gets its estimate.
template <typename Count>
VLEC_HD inline unsigned choose_shift(const Count* hist, uint32_t bins, uint64_t n, uint32_t top, unsigned search,
                                     uint64_t* best_bits) {
  const unsigned k0 = smallest_shift(top);
  const unsigned count = last_shift(top, k0, search) - k0 + 1;
  uint64_t estimates[kMaxShift + 1] = {};
  for (unsigned j = 0; j < count; ++j) {
    const uint32_t merged = merged_bins(bins, j);
    const Summary s = summarize([&](uint32_t b) { return merged_bin(hist, bins, b, j); }, 0, merged, n);
    estimates[j] = estimated_bits(s, k0 + j);
  }
  return pick_shift(estimates, count, k0, best_bits);
}

// A group's estimate as the split decision compares it: its chosen shift's
// estimate plus the per-group overhead.
VLEC_HD inline uint64_t group_bits(uint64_t best_shift_bits) { return best_shift_bits + kGroupOverheadBits; }

// Whether a level's detail subbands are coded one group each: when at least
// two are non-empty and the sum of their group_bits() is strictly smaller
// than the group_bits() of the whole level.
VLEC_HD inline bool split_pays(uint64_t sum_of_subband_group_bits, unsigned nonempty_subbands,
                               uint64_t level_group_bits) {
  return nonempty_subbands > 1 && sum_of_subband_group_bits < level_group_bits;
}

}  // namespace vlec::wavelet::shift_rule
