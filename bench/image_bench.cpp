// bench/image_bench.cpp: vlec's lossless `wavelet` codec against OpenJPEG
// (JPEG 2000 lossless, its defaults) and PNG (libpng defaults) on real
// images, in one run, on the same samples, plus vlec's plain Huffman coding
// of the raw samples as the floor the wavelet must beat.
//
//   image_bench [--threads N] [--repeat R] [--backend cpu|cuda|both] FILE...
//
// (--backend defaults to cpu: wavelet frames are coded on the CPU for now.)
//
// FILE is a PGM/PPM (P5/P6, 8- or 16-bit) or a raw volume named
// PATH@WxHxD (u8) or PATH@WxHxD:u16. Every codec's output is decoded and
// compared with the input before its figures are printed. Times are medians
// of R runs after one warm-up, in memory (no file I/O), for vlec and
// OpenJPEG at the same thread count; PNG is timed for scale only. The last
// rows give totals: summed sizes, and the summed median times.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/volume_spec.hpp"
#include "peer_codecs.hpp"
#include "vlec/vlec.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet/pnm.hpp"

namespace {

using vlec::bench::PeerImage;

struct Input {
  std::string name;
  PeerImage image;
  std::size_t depth = 1;  // > 1: a raw volume (no 2D peers)
};

double median_seconds(int repeat, const std::function<void()>& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < repeat; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

Input load_pnm(const std::string& path) {
  const std::vector<uint8_t> b = read_file(path);
  const vlec::pnm::Parsed p = vlec::pnm::parse(b.data(), b.size());
  Input in;
  in.name = path.substr(path.find_last_of('/') + 1);
  PeerImage& im = in.image;
  im.width = p.image.width;
  im.height = p.image.height;
  im.planes = p.image.planes;
  im.wide = p.image.dtype == vlec::DType::u16;
  im.bits = 1;
  while ((1u << im.bits) - 1 < p.maxval) ++im.bits;
  im.samples = vlec::pnm::host_samples(b.data(), p);  // 16-bit samples in host order
  return in;
}

Input load_volume(const std::string& spec) {
  const auto parsed = vlec::parse_volume_spec(spec);
  if (!parsed) throw std::runtime_error(spec + ": bad shape");
  Input in;
  in.name = parsed->path.substr(parsed->path.find_last_of('/') + 1);
  in.image.samples = read_file(parsed->path);
  in.image.width = parsed->width;
  in.image.height = parsed->height;
  in.depth = parsed->depth;
  in.image.wide = parsed->wide;
  in.image.bits = parsed->wide ? 16 : 8;
  if (in.image.samples.size() != parsed->bytes()) throw std::runtime_error(spec + ": size mismatch");
  return in;
}

struct Row {
  std::size_t bytes = 0;
  double comp_s = 0, dec_s = 0;
};

struct Totals {
  std::size_t raw = 0;
  Row wavelet_cpu, wavelet_gpu, huffman, opj, png;
};

void add(Row& to, const Row& r) {
  to.bytes += r.bytes;
  to.comp_s += r.comp_s;
  to.dec_s += r.dec_s;
}

void check_equal(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const char* what) {
  if (a != b) throw std::runtime_error(std::string(what) + ": decoded samples differ from the input");
}

Row run_wavelet(const Input& in, vlec::Backend backend, unsigned threads, int repeat) {
  vlec::WaveletImage wi;
  wi.width = in.image.width;
  wi.height = in.image.height;
  wi.depth = in.depth;
  wi.planes = in.image.planes;
  wi.dtype = in.image.wide ? vlec::DType::u16 : vlec::DType::u8;
  vlec::WaveletOptions o;
  o.threads = threads;
  o.backend = backend;
  std::vector<uint8_t> stream, back;
  Row r;
  r.comp_s = median_seconds(repeat, [&] { stream = vlec::wavelet_compress(in.image.samples.data(), wi, o); });
  vlec::DecompressOptions d;
  d.threads = threads;
  d.backend = backend;
  r.dec_s = median_seconds(repeat, [&] { back = vlec::decompress(stream.data(), stream.size(), d); });
  check_equal(back, in.image.samples, "vlec wavelet");
  r.bytes = stream.size();
  return r;
}

Row run_huffman(const Input& in, unsigned threads, int repeat) {
  vlec::CompressOptions o;
  o.dtype = in.image.wide ? vlec::DType::u16 : vlec::DType::u8;
  o.codec = vlec::CodecChoice::huffman;
  o.threads = threads;
  o.backend = vlec::Backend::cpu;
  std::vector<uint8_t> stream, back;
  Row r;
  r.comp_s = median_seconds(
      repeat, [&] { stream = vlec::compress(in.image.samples.data(), in.image.samples.size(), o); });
  vlec::DecompressOptions d;
  d.threads = threads;
  d.backend = vlec::Backend::cpu;
  r.dec_s = median_seconds(repeat, [&] { back = vlec::decompress(stream.data(), stream.size(), d); });
  check_equal(back, in.image.samples, "vlec huffman");
  r.bytes = stream.size();
  return r;
}

Row run_openjpeg(const Input& in, unsigned threads, int repeat) {
  std::vector<uint8_t> cs;
  PeerImage back;
  Row r;
  r.comp_s = median_seconds(repeat, [&] { cs = vlec::bench::openjpeg_encode(in.image, threads); });
  r.dec_s = median_seconds(repeat, [&] { back = vlec::bench::openjpeg_decode(cs, threads); });
  check_equal(back.samples, in.image.samples, "OpenJPEG");
  r.bytes = cs.size();
  return r;
}

Row run_png(const Input& in, int repeat) {
  std::vector<uint8_t> file;
  Row r;
  r.comp_s = median_seconds(repeat, [&] { file = vlec::bench::png_encode(in.image); });
  r.bytes = file.size();
  return r;
}

void print(const char* codec, const std::string& name, std::size_t raw, std::size_t samples, const Row& r) {
  const double ratio = r.bytes ? static_cast<double>(raw) / static_cast<double>(r.bytes) : 0;
  auto rate = [&](double s) { return s > 0 ? static_cast<double>(samples) / s / 1e6 : 0.0; };
  std::printf("%-34s %-14s %12zu %7.3f %9.3f %9.2f %9.3f %9.2f\n", name.c_str(), codec, r.bytes, ratio,
              r.comp_s * 1e3, rate(r.comp_s), r.dec_s * 1e3, rate(r.dec_s));
}

}  // namespace

int main(int argc, char** argv) {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  int repeat = 5;
  // The wavelet codec codes on the CPU for now (WaveletOptions::backend is
  // accepted and ignored), so GPU rows are asked for explicitly.
  std::string backends = "cpu";
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--backend" && i + 1 < argc) backends = argv[++i];
    else files.push_back(a);
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: image_bench [--threads N] [--repeat R] [--backend cpu|cuda|both] FILE...\n");
    return 1;
  }
  const bool gpu = backends != "cpu" && vlec::cuda_available();
  const bool cpu = backends != "cuda";
  std::printf("# image_bench: threads %u, repeat %d (median after one warm-up), GPU %s\n", threads, repeat,
              gpu ? "yes" : "no");
  std::printf("# speeds in MSamples/s (a sample = one value of one plane); times in ms\n");
  std::printf("%-34s %-14s %12s %7s %9s %9s %9s %9s\n", "file", "codec", "bytes", "ratio", "comp_ms", "comp_MS/s",
              "dec_ms", "dec_MS/s");
  Totals t, t2d;
  try {
    for (const std::string& f : files) {
      const Input in = f.find('@') != std::string::npos ? load_volume(f) : load_pnm(f);
      const std::size_t raw = in.image.samples.size();
      const std::size_t samples = in.image.width * in.image.height * in.depth * in.image.planes;
      const bool image2d = in.depth == 1;
      Totals& tt = image2d ? t2d : t;
      tt.raw += raw;
      std::printf("%-34s %-14s %12zu  (%zux%zux%zu, %u plane(s), %u bits)\n", in.name.c_str(), "raw", raw,
                  in.image.width, in.image.height, in.depth, in.image.planes, in.image.bits);
      if (cpu) {
        const Row r = run_wavelet(in, vlec::Backend::cpu, threads, repeat);
        print("wavelet-cpu", in.name, raw, samples, r);
        add(tt.wavelet_cpu, r);
      }
      if (gpu) {
        const Row r = run_wavelet(in, vlec::Backend::cuda, threads, repeat);
        print("wavelet-gpu", in.name, raw, samples, r);
        add(tt.wavelet_gpu, r);
      }
      const Row h = run_huffman(in, threads, repeat);
      print("huffman", in.name, raw, samples, h);
      add(tt.huffman, h);
      if (image2d) {
        const Row o = run_openjpeg(in, threads, std::min(repeat, 3));
        print("openjpeg", in.name, raw, samples, o);
        add(tt.opj, o);
        const Row p = run_png(in, std::min(repeat, 3));
        print("png", in.name, raw, samples, p);
        add(tt.png, p);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "image_bench: %s\n", e.what());
    return 2;
  }
  for (int pass = 0; pass < 2; ++pass) {
    const Totals& tt = pass == 0 ? t2d : t;
    if (tt.raw == 0) continue;
    const char* what = pass == 0 ? "TOTAL images" : "TOTAL volumes";
    std::printf("%-34s %-14s %12zu\n", what, "raw", tt.raw);
    const std::size_t samples = 0;  // totals give ratios and summed times only
    if (cpu) print("wavelet-cpu", what, tt.raw, samples, tt.wavelet_cpu);
    if (gpu) print("wavelet-gpu", what, tt.raw, samples, tt.wavelet_gpu);
    print("huffman", what, tt.raw, samples, tt.huffman);
    if (pass == 0) {
      print("openjpeg", what, tt.raw, samples, tt.opj);
      print("png", what, tt.raw, samples, tt.png);
      if (cpu && tt.wavelet_cpu.bytes)
        std::printf("# images: wavelet-cpu bytes / openjpeg bytes = %.4f; openjpeg / wavelet-cpu time: compress %.1fx, "
                    "decompress %.1fx\n",
                    static_cast<double>(tt.wavelet_cpu.bytes) / static_cast<double>(tt.opj.bytes),
                    tt.opj.comp_s / tt.wavelet_cpu.comp_s, tt.opj.dec_s / tt.wavelet_cpu.dec_s);
      if (gpu && tt.wavelet_gpu.bytes)
        std::printf("# images: openjpeg / wavelet-gpu time: compress %.1fx, decompress %.1fx\n",
                    tt.opj.comp_s / tt.wavelet_gpu.comp_s, tt.opj.dec_s / tt.wavelet_gpu.dec_s);
      std::printf("# images: png bytes / wavelet-cpu bytes = %.4f\n",
                  cpu && tt.wavelet_cpu.bytes
                      ? static_cast<double>(tt.png.bytes) / static_cast<double>(tt.wavelet_cpu.bytes)
                      : 0.0);
    }
  }
  return 0;
}
