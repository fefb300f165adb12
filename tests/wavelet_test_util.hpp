// tests/wavelet_test_util.hpp: helpers shared by the wavelet frame tests
// (CPU and GPU), kept out of test_util.hpp so the other tests need not
// include the wavelet headers.
#pragma once

#include <cstdint>
#include <vector>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "wavelet/frame_format.hpp"

namespace vlec::test {

// Rewrites the wavelet header of frame `s` (flags byte and samples checksum)
// and re-seals its header checksum, so that only the samples checksum can
// reject the frame.
inline std::vector<uint8_t> with_header(std::vector<uint8_t> s, uint8_t flags, uint64_t samples_checksum) {
  const wavelet::ParsedWavelet w = wavelet::parse_wavelet_frame(s.data(), s.size(), 0);
  const uint64_t area = w.frame.header_area_bytes();
  s[48 + 26] = flags;
  store_le64(&s[48 + 40], samples_checksum);
  store_le64(&s[area - 8], checksum64(s.data(), area - 8));
  return s;
}

}  // namespace vlec::test
