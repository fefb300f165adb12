// rle/rle.hpp: run-length coding of one chunk (docs/FORMAT.md §6).
//
// A chunk becomes two streams: the value of each run (the element's bytes)
// and its length minus one as a u16. Runs longer than 65,536 elements are
// split, so every length fits the Huffman alphabet, and runs never cross a
// chunk boundary, so every chunk decodes alone. Both streams are fixed-width
// arrays: a GPU finds every run's output position with one scan.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vlec::rle {

constexpr uint32_t kMaxRun = 65536;

// Number of runs in `n` elements of `width` bytes (runs split at kMaxRun).
std::size_t count_runs(const void* data, std::size_t n, unsigned width);

// Write the runs: values (n_runs * width bytes) and lengths (run length - 1,
// u16 little-endian). Returns n_runs. Output arrays must hold count_runs().
std::size_t encode_runs(const void* data, std::size_t n, unsigned width, uint8_t* values,
                        uint16_t* lengths);

// Expand runs into `n` elements. Throws corrupt_stream unless the run lengths
// add up to exactly n. `lengths` is little-endian u16 at any alignment.
void decode_runs(const uint8_t* values, const uint8_t* lengths, std::size_t n_runs, unsigned width,
                 std::size_t n, void* out);

// Layout of a plain `rle` chunk payload: the values, zero padding to a
// multiple of 4 bytes, then the lengths.
inline std::size_t lengths_offset(std::size_t n_runs, unsigned width) {
  return (n_runs * width + 3) / 4 * 4;
}
inline std::size_t payload_bytes(std::size_t n_runs, unsigned width) {
  return lengths_offset(n_runs, width) + 2 * n_runs;
}

}  // namespace vlec::rle
