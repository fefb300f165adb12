// cuda/generate_cl_base.hpp: the limits and the small arithmetic that every
// part of the GPU codebook builder (generate_cl.hpp) shares, host and device
// alike, so that each part can be included on its own.
#pragma once

#include <cstdint>

#include "common/bits.hpp"

namespace vlec::cuda::cl {

constexpr uint32_t kMaxPhases = 128;   // more than a total below 2^64 can take (the tests check the bound)
constexpr uint32_t kMaxDepth = 128;    // = huffman::kMaxTreeDepth
constexpr uint32_t kMaxLen = 24;       // = huffman::kMaxCodeLength
constexpr uint32_t kSlots = kMaxLen + 1;
constexpr uint32_t kCandidates = 3;    // the automatic policy's limits 11, 16, 24 (huffman::kAutoLengthLimits)
constexpr uint64_t kAutoLimitSlack = 256;  // = huffman::kAutoLimitSlack (static_assert in codebook_gpu.cu)

VLEC_HD inline uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
VLEC_HD inline uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

// Sums saturate: the same as the CPU's for every histogram whose total is
// below 2^64 (the documented domain), and the invariants (and so the memory
// safety) survive any other input.
VLEC_HD inline uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? ~uint64_t{0} : a + b; }

}  // namespace vlec::cuda::cl
