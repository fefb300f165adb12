// wavelet/group_io.hpp: one group's coefficients read from and written to
// their subbands in the plane directly, without a gathered copy.
//
// The encoder passes over a subband's rows three times at most: its largest
// zigzag value, its histogram at k0 (the statistics of shift_rule.hpp, kept
// per subband so that a level's histogram is a merge, not another pass), and,
// once the group and its shift are fixed, one pass that writes the symbols,
// packs the low bits and counts the symbol runs. The decoder joins symbols
// and low bits and stores each row into the plane in one pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vlec/dwt.hpp"
#include "vlec/types.hpp"
#include "wavelet/layout.hpp"

namespace vlec::wavelet {

// The values (zigzag coefficients) of a set of subbands: count, largest, and
// histogram at k0 = shift_rule::smallest_shift(top), of (top >> k0) + 1 bins.
struct ValueStats {
  uint64_t n = 0;
  uint32_t top = 0;
  std::vector<uint64_t> hist;
  // The shift rule's answer for this histogram once asked (encode_plan.cpp):
  // the split decision and the group's shift ask for it twice, and on a
  // 16-bit image each answer is a pass over tens of thousands of bins.
  mutable unsigned cached_search = ~0u, cached_shift = 0;
  mutable uint64_t cached_bits = 0;
};

ValueStats value_stats(const int32_t* plane, const DwtShape& shape, const std::vector<Box>& boxes);

// The statistics of the union of `parts` (each merged down to the union's k0).
ValueStats merge_stats(const std::vector<const ValueStats*>& parts);

// A group's symbols (z >> k, u8 if top >> k < 256, else u16 little-endian),
// packed low bits (low_bits_bytes(n, k), padding zero) and symbol runs.
struct GroupSymbols {
  DType type = DType::u8;
  std::vector<uint8_t> symbols;
  std::vector<uint8_t> low_bits;
  uint64_t runs = 0;
};

void write_symbols(const int32_t* plane, const DwtShape& shape, const std::vector<Box>& boxes, unsigned k,
                   uint32_t top, GroupSymbols& out);

// The decoder's step: c = unzigzag((symbol << k) | low) for the group's n
// values (symbols of `width` 1 or 2 bytes), stored into the boxes of `plane`.
// Throws corrupt_stream when a value exceeds 32 bits or the low bits'
// padding is not zero (as combine()).
void combine_into(const uint8_t* symbols, unsigned width, const uint8_t* low_bits, std::size_t n, unsigned k,
                  const DwtShape& shape, const std::vector<Box>& boxes, int32_t* plane);

}  // namespace vlec::wavelet
