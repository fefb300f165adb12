// wavelet/samples_checksum.cpp: see samples_checksum.hpp. Swapped (big-endian
// output) samples are hashed from a 64 KiB stack-sized buffer per segment, so
// neither definition copies the whole input.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "wavelet/samples_checksum.hpp"

#include <algorithm>
#include <vector>

#include "common/bits.hpp"
#include "common/parallel.hpp"

namespace vlec::wavelet {

namespace {

// `len` bytes of `data` with every pair swapped (an odd last byte, which u16
// samples never leave, is copied as is).
void swap_pairs(const uint8_t* data, std::size_t len, uint8_t* out) {
  std::size_t i = 0;
  for (; i + 1 < len; i += 2) out[i] = data[i + 1], out[i + 1] = data[i];
  if (i < len) out[i] = data[i];
}

}  // namespace

std::size_t checksum_segments(std::size_t bytes) {
  return std::max<std::size_t>(1, (bytes + kChecksumSegmentBytes - 1) / kChecksumSegmentBytes);
}

uint64_t checksum_of_segment_hashes(const uint64_t* hashes, std::size_t count) {
  std::vector<uint8_t> le(count * 8);
  for (std::size_t i = 0; i < count; ++i) store_le64(&le[8 * i], hashes[i]);
  return XXH3_64bits(le.data(), le.size());
}

uint64_t segmented_checksum(const uint8_t* data, std::size_t bytes, bool swap16, unsigned threads) {
  const std::size_t segments = checksum_segments(bytes);
  std::vector<uint64_t> hashes(segments);
  parallel_for(segments, resolve_threads(threads, segments), [&](std::size_t s) {
    const std::size_t at = s * kChecksumSegmentBytes;
    const std::size_t len = std::min(kChecksumSegmentBytes, bytes - std::min(bytes, at));
    if (!swap16) {
      hashes[s] = XXH3_64bits(len ? data + at : nullptr, len);
      return;
    }
    std::vector<uint8_t> swapped(len);
    swap_pairs(data + at, len, swapped.data());
    hashes[s] = XXH3_64bits(swapped.data(), len);
  });
  return checksum_of_segment_hashes(hashes.data(), segments);
}

uint64_t whole_checksum(const uint8_t* data, std::size_t bytes, bool swap16) {
  if (!swap16) return XXH3_64bits(bytes ? data : nullptr, bytes);
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  std::vector<uint8_t> swapped(std::min(bytes, kChecksumSegmentBytes));
  for (std::size_t at = 0; at < bytes; at += kChecksumSegmentBytes) {
    const std::size_t len = std::min(kChecksumSegmentBytes, bytes - at);
    swap_pairs(data + at, len, swapped.data());
    XXH3_64bits_update(&state, swapped.data(), len);
  }
  return XXH3_64bits_digest(&state);
}

}  // namespace vlec::wavelet
