// dwt/dwt53.hpp: internals of the CPU 5/3 wavelet transform (vlec/dwt.hpp is
// the public API): the level geometry and the tuning constants, shared with
// the tests and the benchmark.
#pragma once

#include <cstddef>
#include <vector>

#include "vlec/dwt.hpp"

namespace vlec::dwt {

// Columns lifted together by the y and z passes: 32 int32 = 128 bytes, two
// cache lines per row touched, and a fixed-length inner loop of 4 AVX2 (8 SSE)
// vectors.
constexpr std::size_t kBlock = 32;

// About how many samples one parallel job covers: large enough that handing
// out jobs costs nothing, small enough to balance the threads.
constexpr std::size_t kJobSamples = std::size_t{1} << 15;

// Low-band extents: ext[0] = shape, ext[k+1] = dwt53_low_extent(shape, k+1).
// Stops after `levels` levels or at the first level where every axis has
// length 1, so ext.size() - 1 is the number of levels that do something.
std::vector<DwtShape> level_extents(const DwtShape& shape, unsigned levels);

}  // namespace vlec::dwt
