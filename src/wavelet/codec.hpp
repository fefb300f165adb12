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

namespace vlec::wavelet {

// Levels used for WaveletOptions::levels == 0 (clamped to the shape).
constexpr unsigned kAutoLevels = 6;

struct EncoderTuning {
  bool split_finest = true;  // each detail subband of the two finest levels is a group of its own
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
