// common/checksum.hpp: the one checksum vlec writes: XXH3-64 with seed 0, from
// the xxHash library. XXH3 is chosen over XXH32/XXH64 because within each 1 KiB
// block its accumulators are plain sums, which lets a GPU warp fold the hash of
// a chunk into the decoder (docs/FORMAT.md §6).
#pragma once

#include <cstddef>
#include <cstdint>

namespace vlec {

uint64_t checksum64(const void* data, std::size_t bytes);

}  // namespace vlec
