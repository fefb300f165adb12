// bench/wavelet_ratio.cpp: lossless ratio of the wavelet codec on real
// PGM/PPM images, beside vlec huffman on the raw samples, and the writer's
// free choices (levels, grouping, shift search, colour transform) measured
// one at a time, so the defaults in docs/FORMAT.md §10.6 rest on numbers.
//
//   wavelet_ratio [--variants] FILE.pgm|ppm ...
//
// Ratios are original file bytes / stream bytes. Every stream is decoded and
// compared with the input before its size is reported. Times are medians of
// 3 runs on all threads (compress / decompress of the wavelet default).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "vlec/vlec.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet/codec.hpp"
#include "wavelet/pnm.hpp"

namespace {

using Bytes = std::vector<uint8_t>;
using Clock = std::chrono::steady_clock;

struct Variant {
  const char* name;
  unsigned levels;
  bool rct;
  vlec::wavelet::EncoderTuning tuning;
};

std::vector<Variant> variants(bool all) {
  std::vector<Variant> v;
  v.push_back({"default", 0, true, {}});
  if (!all) return v;
  for (unsigned l : {3u, 4u, 5u, 6u, 7u, 8u}) {
    static char names[8][16];
    std::snprintf(names[l - 3], sizeof names[0], "levels=%u", l);
    v.push_back({names[l - 3], l, true, {}});
  }
  vlec::wavelet::EncoderTuning per_level;
  per_level.grouping = vlec::wavelet::Grouping::per_level;
  v.push_back({"per-level groups", 0, true, per_level});
  vlec::wavelet::EncoderTuning finest;
  finest.grouping = vlec::wavelet::Grouping::split_finest;
  v.push_back({"split finest 2", 0, true, finest});
  vlec::wavelet::EncoderTuning min_shift;
  min_shift.shift_search = 0;
  v.push_back({"smallest shift", 0, true, min_shift});
  v.push_back({"no RCT", 0, false, {}});
  for (const uint32_t c : {8192u, 4096u}) {
    static char names[2][24];
    char* name = names[c == 8192 ? 0 : 1];
    std::snprintf(name, sizeof names[0], "chunks %u", c);
    vlec::wavelet::EncoderTuning chunks;
    chunks.chunk_elements = c;
    v.push_back({name, 0, true, chunks});
  }
  return v;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int main(int argc, char** argv) {
  bool all = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--variants") == 0)
      all = true;
    else
      files.push_back(argv[i]);
  }
  const std::vector<Variant> vs = variants(all);
  std::vector<uint64_t> total_size(vs.size(), 0);
  uint64_t total_in = 0, total_huff = 0;
  std::printf("%-44s %11s %9s %9s", "image", "bytes", "huffman", "wavelet");
  for (std::size_t k = 1; k < vs.size(); ++k) std::printf(" %9.9s", vs[k].name);
  std::printf(" %8s %8s\n", "enc MB/s", "dec MB/s");
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    const Bytes file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const vlec::pnm::Parsed p = vlec::pnm::parse(file.data(), file.size());
    const Bytes samples = vlec::pnm::host_samples(file.data(), p);
    vlec::CompressOptions h;
    h.codec = vlec::CodecChoice::huffman;
    h.dtype = p.image.dtype;
    const std::size_t huff = vlec::compress(samples.data(), samples.size(), h).size();
    total_in += file.size();
    total_huff += huff;
    const std::string name = f.substr(f.rfind('/') == std::string::npos ? 0 : f.rfind('/') + 1);
    std::printf("%-44.44s %11zu %9.3f", name.c_str(), file.size(), double(file.size()) / huff);
    double enc = 0, dec = 0;
    for (std::size_t k = 0; k < vs.size(); ++k) {
      vlec::WaveletOptions o;
      o.levels = vs[k].levels;
      o.colour_transform = vs[k].rct;
      vlec::pnm::set_container(file.data(), p, o);
      std::vector<double> te, td;
      Bytes stream;
      for (int r = 0; r < (k == 0 ? 3 : 1); ++r) {
        auto t0 = Clock::now();
        stream = vlec::wavelet::compress(samples.data(), p.image, o, vs[k].tuning);
        te.push_back(seconds_since(t0));
        t0 = Clock::now();
        const Bytes back = vlec::decompress(stream.data(), stream.size());
        td.push_back(seconds_since(t0));
        if (back != file) {
          std::fprintf(stderr, "%s: %s does not round-trip\n", f.c_str(), vs[k].name);
          return 1;
        }
      }
      std::sort(te.begin(), te.end());
      std::sort(td.begin(), td.end());
      if (k == 0) enc = te[te.size() / 2], dec = td[td.size() / 2];
      total_size[k] += stream.size();
      std::printf(" %9.3f", double(file.size()) / stream.size());
    }
    std::printf(" %8.1f %8.1f\n", file.size() / enc / 1e6, file.size() / dec / 1e6);
  }
  std::printf("%-44s %11llu %9.3f", "TOTAL", static_cast<unsigned long long>(total_in), double(total_in) / total_huff);
  for (std::size_t k = 0; k < vs.size(); ++k) std::printf(" %9.3f", double(total_in) / total_size[k]);
  std::printf("\n");
  return 0;
}
