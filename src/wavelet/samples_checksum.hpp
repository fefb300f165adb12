// wavelet/samples_checksum.hpp: the samples checksum of a wavelet frame
// (docs/FORMAT.md §10.2, flag bit 2). XXH3-64 is sequential over 1 KiB
// blocks, so one hash of a 128 MiB image would keep one GPU thread (or one
// CPU core) busy for milliseconds; the segmented checksum hashes 65,536-byte
// segments independently (any number of threads or GPU blocks at once) and
// then hashes the array of their hashes, a small sequential step that the
// GPU encoder can hand to checksum_of_segment_hashes() on the host.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vlec::wavelet {

constexpr std::size_t kChecksumSegmentBytes = 65536;

// Segments of `bytes` sample bytes: ceil(bytes / 65,536), at least 1.
std::size_t checksum_segments(std::size_t bytes);

// XXH3-64 (seed 0) of the `count` hashes as u64 little-endian.
uint64_t checksum_of_segment_hashes(const uint64_t* hashes, std::size_t count);

// The segmented checksum of `bytes` bytes at `data`: XXH3-64 of the XXH3-64
// hashes of consecutive 65,536-byte segments (the last one shorter; one
// segment, possibly empty, when shorter). With `swap16` the bytes are hashed
// as if every pair were swapped (u16 samples that the frame writes
// big-endian), without a swapped copy of the whole input. Segments run on
// `threads` threads (0 = all cores); the value does not depend on them.
uint64_t segmented_checksum(const uint8_t* data, std::size_t bytes, bool swap16, unsigned threads);

// The old definition (flag bit 2 clear): XXH3-64 of all bytes at once,
// also with the optional pair swap.
uint64_t whole_checksum(const uint8_t* data, std::size_t bytes, bool swap16);

}  // namespace vlec::wavelet
