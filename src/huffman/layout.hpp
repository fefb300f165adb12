// huffman/layout.hpp: the Huffman chunk layout, shared by every encoder and
// decoder on the CPU and the GPU (docs/FORMAT.md §5).
//
// A chunk's symbols are dealt to 32 lanes in groups of 4: symbol i goes to lane
// (i / 4) % 32. Each lane codes its symbols into its own LSB-first bitstream,
// cut into 32-bit words. The chunk stores those words in the order a warp of
// 32 decoders consumes them: decoding proceeds in steps of K symbols per
// lane, and before each step every lane whose bit buffer holds fewer than
// T = K * max_length bits takes its next word; within a step, lanes take words
// in lane order. So a GPU warp finds each lane's next word with one ballot and
// a popcount, its reads are coalesced, its 32 lanes write 32 neighbouring
// groups of output, and no per-lane offsets or per-lane padding are stored.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/bits.hpp"

namespace vlec::huffman {

constexpr unsigned kLanes = 32;          // decoders per chunk (one warp)
constexpr unsigned kGroup = 4;           // consecutive symbols per lane visit
constexpr unsigned kRow = kLanes * kGroup;  // symbols in one row of groups
constexpr unsigned kWordBits = 32;

// Symbols decoded per refill check: as many as the 32 bits guaranteed after a
// refill can hold, rounded down to a divisor of kGroup.
VLEC_HD constexpr unsigned symbols_per_step(unsigned max_length) {
  return max_length <= 8 ? 4 : max_length <= 16 ? 2 : 1;
}

// A lane refills before a step when its buffer holds fewer bits than this.
VLEC_HD constexpr unsigned refill_threshold(unsigned max_length) {
  return symbols_per_step(max_length) * max_length;
}

// Number of symbols that lane `lane` owns in a chunk of `n` symbols.
VLEC_HD constexpr uint64_t lane_symbols(uint64_t n, unsigned lane) {
  const uint64_t full_rows = n / kRow;
  const uint64_t rest = n % kRow;
  const uint64_t start = uint64_t{lane} * kGroup;
  const uint64_t extra = rest > start ? (rest - start < kGroup ? rest - start : kGroup) : 0;
  return full_rows * kGroup + extra;
}

// Position in the chunk of the t-th symbol of lane `lane`.
VLEC_HD constexpr uint64_t symbol_index(uint64_t t, unsigned lane) {
  return ((t / kGroup) * kLanes + lane) * kGroup + t % kGroup;
}

}  // namespace vlec::huffman
