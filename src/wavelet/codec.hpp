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

// Elements per chunk of every embedded frame (docs/FORMAT.md §10.6). A GPU
// decodes a chunk with one warp, row after row: with 65,536-element chunks a
// u16 8192 x 8192 image had ~1,000 chunks (a fifth of an H100's resident
// warps) and most groups of a small image one chunk, one warp. 16,384 decode
// the embedded frames 2-2.5x faster for +0.4 to +1.5 % of frame size
// (wavelet_gpu_bench); 4,096 would cost +2 to +8 %.
constexpr uint32_t kEmbeddedChunkElements = 16384;

// How the detail subbands of a level are grouped (docs/FORMAT.md §10.6).
enum class Grouping {
  adaptive,      // per subband where the size estimate says that pays, else per level
  per_level,     // all detail subbands of a level together
  split_finest,  // per subband at the two finest levels, per level above
};

struct EncoderTuning {
  Grouping grouping = Grouping::adaptive;
  unsigned shift_search = shift_rule::kDefaultSearch; // shifts tried above the smallest that fits the alphabet (0 = the smallest only)
  uint32_t chunk_elements = kEmbeddedChunkElements;    // the embedded frames' chunk size (FORMAT §10.6)
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
