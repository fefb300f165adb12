// tests/wavelet_test_util.hpp: helpers shared by the wavelet frame tests
// (CPU and GPU), kept out of test_util.hpp so the other tests need not
// include the wavelet headers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet/frame_format.hpp"

namespace vlec::test {

// What decompress() of a wavelet frame must return: the container prefix,
// then the samples in the order the options asked for.
inline std::vector<uint8_t> expected(const std::vector<uint8_t>& data, const WaveletImage& im,
                                     const WaveletOptions& o) {
  std::vector<uint8_t> out = o.container_prefix;
  std::vector<uint8_t> s = data;
  if (o.big_endian_output && im.dtype == DType::u16)
    for (std::size_t i = 0; i + 1 < s.size(); i += 2) std::swap(s[i], s[i + 1]);
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

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

// Test images of the GPU wavelet tests (decoder and encoder).

inline WaveletImage image(std::size_t w, std::size_t h, std::size_t d, unsigned planes, DType t) {
  WaveletImage im;
  im.width = w, im.height = h, im.depth = d, im.planes = planes, im.dtype = t;
  return im;
}

inline std::string name(const WaveletImage& im) {
  return std::to_string(im.width) + "x" + std::to_string(im.height) + "x" + std::to_string(im.depth) + " p" +
         std::to_string(im.planes) + (im.dtype == DType::u8 ? " u8" : " u16");
}

// Like a photograph: gradient, texture, rectangles with sharp edges, noise;
// planes correlated like colour channels. `noise` in units of 1/255 of the range.
inline std::vector<uint8_t> photo(const WaveletImage& im, uint64_t seed, double noise = 2.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, noise);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double top = im.dtype == DType::u8 ? 255.0 : 65535.0;
  struct Rect { double x0, y0, x1, y1, v; };
  std::vector<Rect> rects;
  for (int i = 0; i < 5; ++i) {
    const double a = u(rng), b = u(rng), c = u(rng), d = u(rng);
    rects.push_back({std::min(a, b), std::min(c, d), std::max(a, b), std::max(c, d), u(rng)});
  }
  const double fx = 0.05 + 0.2 * u(rng), fy = 0.05 + 0.2 * u(rng);
  std::vector<uint8_t> out(im.samples() * dtype_bytes(im.dtype));
  std::size_t i = 0;
  for (std::size_t z = 0; z < im.depth; ++z)
    for (std::size_t y = 0; y < im.height; ++y)
      for (std::size_t x = 0; x < im.width; ++x) {
        const double nx = double(x) / double(im.width), ny = double(y) / double(im.height);
        double base = 0.3 + 0.3 * nx + 0.2 * ny + 0.05 * std::sin(fx * x + 0.3 * z) * std::cos(fy * y);
        for (const Rect& r : rects)
          if (nx >= r.x0 && nx < r.x1 && ny >= r.y0 && ny < r.y1) base = 0.5 * base + 0.5 * r.v;
        for (unsigned p = 0; p < im.planes; ++p, ++i) {
          const double v = std::clamp(std::round(top * base * (0.8 + 0.1 * p) + gauss(rng) * top / 255.0), 0.0, top);
          if (im.dtype == DType::u8) out[i] = static_cast<uint8_t>(v);
          else store_le16(&out[2 * i], static_cast<uint16_t>(v));
        }
      }
  return out;
}

// Full-range noise: large coefficients, shifted low bits on u16.
inline std::vector<uint8_t> noise(const WaveletImage& im, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> out(im.samples() * dtype_bytes(im.dtype));
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

// A sparse volume: one blob in empty space (long zero runs: rle embedded frames).
inline std::vector<uint8_t> sparse(const WaveletImage& im, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> n(0, 40);
  std::vector<uint8_t> out(im.samples() * dtype_bytes(im.dtype), 0);
  const double cx = im.width * 0.4, cy = im.height * 0.6, cz = im.depth * 0.5, r = std::max(3.0, im.width / 5.0);
  for (std::size_t z = 0; z < im.depth; ++z)
    for (std::size_t y = 0; y < im.height; ++y)
      for (std::size_t x = 0; x < im.width; ++x) {
        const double d = std::sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz));
        if (d > r) continue;
        for (unsigned p = 0; p < im.planes; ++p) {
          const std::size_t i = p + im.planes * (x + im.width * (y + im.height * z));
          const int v = static_cast<int>(200 - 100 * d / r) + n(rng);
          if (im.dtype == DType::u8) out[i] = static_cast<uint8_t>(std::min(v, 255));
          else store_le16(&out[2 * i], static_cast<uint16_t>(v * 200 + n(rng)));
        }
      }
  return out;
}

}  // namespace vlec::test
