// fuzz/fuzz_seeds.cpp: writes the seed corpus for the fuzz targets: small
// valid streams of every codec (raw, huffman, rle, rle+huffman, wavelet) and
// element type, several chunks each with a partial last chunk, some with a
// noise chunk stored raw (as tests/corruption_util.hpp's kSpecs), a few
// Huffman length limits (the K = 4, 2, 1 decode paths), wavelet images and
// volumes of 1 to 4 planes, and multi-frame streams.
//
//   fuzz_seeds OUTDIR
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gen/generators.hpp"
#include "vlec/vlec.hpp"
#include "vlec/wavelet.hpp"

using namespace vlec;
using Bytes = std::vector<uint8_t>;

namespace {

std::string g_dir;
int g_count = 0;

void put(const std::string& name, const Bytes& b) {
  const std::string path = g_dir + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(b.data(), 1, b.size(), f) != b.size() || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
  ++g_count;
  std::printf("%-48s %6zu bytes\n", name.c_str(), b.size());
}

Bytes convert(const Bytes& in, unsigned from, unsigned to) { return gen::convert_width(in, from, to); }

Bytes sample(const std::string& name, std::size_t elements, DType t, uint64_t seed) {
  return gen::make_elements(name, elements, t, seed);
}

struct Spec {
  const char* generator;
  DType dtype;
  CodecChoice codec;
  std::size_t elements;
  uint32_t chunk;
  int noise_chunk;
  unsigned max_code_length;
};

const Spec kSpecs[] = {
    {"text", DType::u8, CodecChoice::raw, 700, 256, -1, 0},
    {"quant1024", DType::u16, CodecChoice::raw, 333, 128, -1, 0},
    {"skewed", DType::u8, CodecChoice::huffman, 1539, 512, 1, 0},
    {"skewed", DType::u8, CodecChoice::huffman, 1100, 512, -1, 8},
    {"text", DType::u8, CodecChoice::huffman, 1600, 512, -1, 0},
    {"quant1024", DType::u16, CodecChoice::huffman, 641, 128, -1, 0},
    {"quant65536", DType::u16, CodecChoice::huffman, 900, 256, -1, 20},
    {"quant1024", DType::u32, CodecChoice::huffman, 385, 128, -1, 0},
    {"quant1024", DType::u16, CodecChoice::huffman, 700, 256, -1, 12},
    {"runs", DType::u8, CodecChoice::rle, 1500, 256, 3, 0},
    {"runs", DType::u16, CodecChoice::rle, 700, 128, 1, 0},
    {"runs", DType::u32, CodecChoice::rle, 500, 128, 2, 0},
    {"runs", DType::u64, CodecChoice::rle, 300, 128, 0, 0},
    {"runs", DType::u8, CodecChoice::rle_huffman, 1200, 256, 2, 0},
    {"runs", DType::u16, CodecChoice::rle_huffman, 641, 128, -1, 0},
    {"runs", DType::u32, CodecChoice::rle_huffman, 513, 128, -1, 0},
    {"runs", DType::u64, CodecChoice::rle_huffman, 385, 128, -1, 0},
    {"runs", DType::u8, CodecChoice::rle_huffman, 2000, 1024, -1, 20},
    {"skewed", DType::u8, CodecChoice::automatic, 3000, 1024, -1, 0},
    {"quant1024", DType::u8, CodecChoice::wavelet, 900, 0, -1, 0},
    {"quant1024", DType::u16, CodecChoice::wavelet, 700, 0, -1, 0},
};

Bytes frame_of(const Spec& s, uint64_t seed) {
  const std::size_t w = dtype_bytes(s.dtype);
  Bytes data = sample(s.generator, s.elements, s.dtype, seed);
  if (s.noise_chunk >= 0) {
    const bool huff = s.codec == CodecChoice::huffman || s.codec == CodecChoice::rle_huffman;
    const std::size_t nw = huff ? 1 : w;
    const std::size_t first = std::size_t{s.chunk} * s.noise_chunk;
    const std::size_t count = std::min<std::size_t>(s.chunk, s.elements - first);
    const Bytes noise = convert(sample("uniform", count * nw, DType::u8, seed + 1), unsigned(nw), unsigned(w));
    std::copy(noise.begin(), noise.end(), data.begin() + first * w);
  }
  CompressOptions o;
  o.codec = s.codec;
  o.dtype = s.dtype;
  o.chunk_elements = s.chunk;
  o.threads = 1;
  o.backend = Backend::cpu;
  o.max_code_length = s.max_code_length;
  return compress(data.data(), data.size(), o);
}

// A smooth image with edges and a little noise, `planes` correlated planes.
Bytes image_samples(const WaveletImage& im, uint64_t seed) {
  Bytes out(im.samples() * dtype_bytes(im.dtype));
  const Bytes noise = sample("uniform", im.samples(), DType::u8, seed);
  const unsigned top = im.dtype == DType::u8 ? 255 : 4095;
  std::size_t i = 0;
  for (std::size_t z = 0; z < im.depth; ++z)
    for (std::size_t y = 0; y < im.height; ++y)
      for (std::size_t x = 0; x < im.width; ++x)
        for (unsigned p = 0; p < im.planes; ++p, ++i) {
          unsigned v = (x * 3 + y * 2 + z * 5 + p * 20) % (top / 2);
          if (x > im.width / 2 && y < im.height / 3) v += top / 3;
          v += noise[i] % 7;
          v = std::min(v, top);
          if (im.dtype == DType::u8) out[i] = uint8_t(v);
          else out[2 * i] = uint8_t(v), out[2 * i + 1] = uint8_t(v >> 8);
        }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  std::vector<Bytes> frames;
  for (std::size_t i = 0; i < std::size(kSpecs); ++i) {
    const Spec& s = kSpecs[i];
    const Bytes f = frame_of(s, 1000 * (i + 1));
    const FrameInfo info = inspect(f.data(), f.size()).frames.at(0);
    put("s" + std::to_string(i) + "_" + std::string(to_string(info.codec)) + "_" + std::string(to_string(s.dtype)) +
            "_" + s.generator + "_n" + std::to_string(s.elements),
        f);
    frames.push_back(f);
  }
  struct Img { std::size_t w, h, d; unsigned planes; DType t; unsigned levels; bool be; std::size_t prefix; };
  const Img imgs[] = {
      {24, 17, 1, 1, DType::u8, 0, false, 0},   {16, 12, 1, 3, DType::u8, 0, false, 15},
      {20, 9, 1, 4, DType::u8, 2, false, 0},    {19, 13, 1, 1, DType::u16, 0, true, 0},
      {12, 10, 1, 3, DType::u16, 3, false, 0},  {8, 7, 6, 1, DType::u16, 0, false, 0},
      {6, 5, 4, 2, DType::u8, 1, false, 3},     {300, 1, 1, 1, DType::u8, 0, false, 0},
      {40, 30, 1, 1, DType::u8, 0, false, 0},
  };
  for (std::size_t i = 0; i < std::size(imgs); ++i) {
    const Img& m = imgs[i];
    WaveletImage im;
    im.width = m.w, im.height = m.h, im.depth = m.d, im.planes = m.planes, im.dtype = m.t;
    WaveletOptions o;
    o.levels = m.levels;
    o.threads = 1;
    o.backend = Backend::cpu;
    o.big_endian_output = m.be;
    for (std::size_t k = 0; k < m.prefix; ++k) o.container_prefix.push_back(uint8_t("P5\n16 12\n255\n..."[k % 16]));
    const Bytes f = wavelet_compress(image_samples(im, 77 + i).data(), im, o);
    put("w" + std::to_string(i) + "_" + std::to_string(m.w) + "x" + std::to_string(m.h) + "x" + std::to_string(m.d) +
            "_p" + std::to_string(m.planes) + (m.t == DType::u8 ? "_u8" : "_u16"),
        f);
    frames.push_back(f);
  }
  // Multi-frame streams: neighbours of the list above, and all codecs in one.
  for (std::size_t i = 0; i + 1 < frames.size(); i += 3) {
    Bytes s = frames[i];
    s.insert(s.end(), frames[i + 1].begin(), frames[i + 1].end());
    put("m" + std::to_string(i), s);
  }
  {
    Bytes s;
    for (std::size_t i : {std::size_t{0}, std::size_t{5}, std::size_t{12}, std::size_t{14}, std::size(kSpecs) + 3})
      if (i < frames.size()) s.insert(s.end(), frames[i].begin(), frames[i].end());
    put("m_mixed", s);
  }
  {  // A frame of zero elements.
    CompressOptions o;
    o.codec = CodecChoice::raw;
    o.threads = 1;
    o.backend = Backend::cpu;
    put("empty_raw", compress(nullptr, 0, o));
  }
  std::printf("%d seeds written to %s\n", g_count, g_dir.c_str());
  return 0;
}
