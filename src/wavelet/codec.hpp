// wavelet/codec.hpp: the wavelet codec's internal entry points, used by the
// public API (api/api.cpp, encode.cpp), the tests and the ratio measurements.
// EncoderTuning exposes the writer's choices that the format leaves free, so
// that alternatives can be measured on real images without a rebuild.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vlec/vlec.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet/frame_format.hpp"
#include "wavelet/shift_rule.hpp"

namespace vlec::wavelet {

// Levels used for WaveletOptions::levels == 0 (clamped to the shape).
constexpr unsigned kAutoLevels = 6;

// How the detail subbands of a level are grouped (docs/FORMAT.md §10.6).
enum class Grouping {
  adaptive,      // per subband where the size estimate says that pays, else per level
  per_level,     // all detail subbands of a level together
  split_finest,  // per subband at the two finest levels, per level above
};

struct EncoderTuning {
  Grouping grouping = Grouping::adaptive;
  unsigned shift_search = shift_rule::kDefaultSearch; // shifts tried above the smallest that fits the alphabet (0 = the smallest only)
};

std::vector<uint8_t> compress(const void* samples, const WaveletImage& image, const WaveletOptions& options,
                              const EncoderTuning& tuning);

// Decode a parsed wavelet frame into `out` (w.output_bytes() bytes: prefix,
// then samples), verifying every embedded frame and the samples' checksum.
void decompress(const ParsedWavelet& w, uint8_t* out, unsigned threads);

// What inspect() reports for a wavelet frame (embedded frame headers are
// parsed and checked, payloads not decoded).
FrameInfo frame_info(const ParsedWavelet& w);

}  // namespace vlec::wavelet
