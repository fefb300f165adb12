// bench/peer_codecs.hpp: the lossless image codecs vlec's `wavelet` codec is
// measured against, driven in memory so that their timings hold only coding:
//
//  - OpenJPEG (libopenjp2), JPEG 2000 Part 1 in its default lossless mode:
//    reversible 5/3 wavelet, 6 resolutions, 64x64 code-blocks, one quality
//    layer, the reversible colour transform on 3-plane images, EBCOT context
//    modelling and the MQ arithmetic coder. This is what `opj_compress`
//    writes with no options, as a raw J2K codestream.
//  - libpng at its default settings (zlib level 6, adaptive filters).
//
// Images are interleaved samples (plane fastest), 8- or 16-bit, host order.
// Every function throws std::runtime_error when the library reports failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vlec::bench {

struct PeerImage {
  std::size_t width = 0, height = 0;
  unsigned planes = 1;  // 1 (gray) or 3 (RGB)
  unsigned bits = 8;    // significant bits per sample: 1..16 (maxval = 2^bits - 1 for PNM)
  bool wide = false;    // samples are 16-bit (else 8-bit)
  std::vector<uint8_t> samples;  // width * height * planes samples, host order
};

// JPEG 2000 lossless codestream of the image, OpenJPEG's defaults, `threads`
// worker threads (OpenJPEG 2.5 codes code-blocks in parallel).
std::vector<uint8_t> openjpeg_encode(const PeerImage& image, unsigned threads);
// Decode a codestream from openjpeg_encode; the result has the same shape.
PeerImage openjpeg_decode(const std::vector<uint8_t>& codestream, unsigned threads);

// PNG file of the image at libpng's default compression.
std::vector<uint8_t> png_encode(const PeerImage& image);

}  // namespace vlec::bench
