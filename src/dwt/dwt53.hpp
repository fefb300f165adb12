// dwt/dwt53.hpp: internals of the CPU 5/3 wavelet transform (vlec/dwt.hpp is
// the public API): the level geometry and the tuning constants, shared with
// the tests and the benchmark.
#pragma once

#include <cstddef>
#include <vector>

#include "vlec/dwt.hpp"

namespace vlec::dwt {

// Columns lifted together by the y and z passes: 256 int32 = 1 KiB of each
// row per visit. Narrow blocks (128 bytes) leave the walk down a column
// dominated by TLB misses and prefetcher restarts, one per row; at 1 KiB the
// forward pass of a 4096 x 4096 image ran 2x faster than at 128 bytes (2-core
// VM), and the buffer of one block (n/2 rows) still fits the L2 for n = 4096.
// Blocks narrow down to kMinBlock when there would be fewer than 4 per thread.
#ifndef VLEC_DWT_BLOCK
#define VLEC_DWT_BLOCK 256
#endif
constexpr std::size_t kBlock = VLEC_DWT_BLOCK;
constexpr std::size_t kMinBlock = 32;

// About how many samples one parallel job covers: large enough that handing
// out jobs costs nothing, small enough to balance the threads.
constexpr std::size_t kJobSamples = std::size_t{1} << 15;

// Low-band extents: ext[0] = shape, ext[k+1] = dwt53_low_extent(shape, k+1).
// Stops after `levels` levels or at the first level where every axis has
// length 1, so ext.size() - 1 is the number of levels that do something.
std::vector<DwtShape> level_extents(const DwtShape& shape, unsigned levels);

}  // namespace vlec::dwt
