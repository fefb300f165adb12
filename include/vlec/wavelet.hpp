// vlec/wavelet.hpp: the lossless image and volume codec `wavelet`.
//
// An image (1D signal, 2D image or 3D volume of 1 to 4 planes of u8 or u16
// samples) is transformed plane by plane with the reversible 5/3 wavelet
// transform (vlec/dwt.hpp), after JPEG 2000's reversible colour transform for
// colour; the coefficients are mapped to unsigned integers and each group of
// subbands is entropy-coded with its own codebooks as an ordinary embedded
// vlec frame (huffman, rle+huffman or raw). The result is one vlec frame of
// codec `wavelet` (docs/FORMAT.md §10), which vlec::decompress() and
// vlec::inspect() read like any other frame: decompress() returns the
// samples exactly, interleaved as given (preceded by the container prefix, if
// one was stored).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vlec/error.hpp"
#include "vlec/types.hpp"

namespace vlec {

// Shape of an image. Samples are interleaved, plane fastest (as in PPM):
// sample (p, x, y, z) is at p + planes * (x + width * (y + height * z)),
// in host byte order.
struct WaveletImage {
  std::size_t width = 0, height = 1, depth = 1;
  unsigned planes = 1;       // 1 (gray / volume) .. 4
  DType dtype = DType::u8;   // u8 or u16
  std::size_t samples() const { return width * height * depth * planes; }
};

struct WaveletOptions {
  // Transform levels; 0 = automatic: as many as the shape allows, up to 6
  // (measured on photographs: 5 -> 6 gains 0.1-0.3 %, more gains nothing;
  // docs/FORMAT.md §10.6). Levels beyond what the shape allows are clamped.
  unsigned levels = 0;
  bool colour_transform = true;  // JPEG 2000 reversible colour transform (RCT) on planes 0..2 when planes >= 3
  unsigned threads = 0;          // CPU threads; 0 = all hardware threads
  // cuda: the GPU writes the frame (vlec/device_wavelet.hpp; the same bytes);
  // automatic: the GPU where one is usable, else the CPU; cpu: the CPU.
  Backend backend = Backend::automatic;
  // Bytes that decompress() writes before the samples, stored verbatim (at
  // most kWaveletMaxPrefixBytes): the CLI keeps a PGM/PPM header here, so
  // that `vlec -d` restores the file byte for byte.
  std::vector<uint8_t> container_prefix;
  // Whether decompress() writes u16 samples big-endian (as PGM/PPM stores
  // them) rather than little-endian. Only with dtype u16.
  bool big_endian_output = false;
};

constexpr std::size_t kWaveletMaxPrefixBytes = 65536;

// Largest frame wavelet_compress() writes for this image (and any prefix of
// up to `prefix_bytes` bytes).
std::size_t wavelet_compress_bound(const WaveletImage& image, std::size_t prefix_bytes = kWaveletMaxPrefixBytes);

std::vector<uint8_t> wavelet_compress(const void* samples, const WaveletImage& image,
                                      const WaveletOptions& options = {});
// Into `out`; returns the frame size. Throws output_too_small when `capacity`
// is below the size needed.
std::size_t wavelet_compress(const void* samples, const WaveletImage& image, void* out, std::size_t capacity,
                             const WaveletOptions& options = {});

// Shape of the first frame of a stream, which must be a wavelet frame (its
// header is checked, checksum included; throws vlec::Error otherwise).
WaveletImage wavelet_image(const void* stream, std::size_t bytes);

}  // namespace vlec
