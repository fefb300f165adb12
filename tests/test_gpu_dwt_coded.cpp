// tests/test_gpu_dwt_coded.cpp: the inverse 5/3's 2D levels reading their
// three detail subbands from a wavelet frame's symbols and low bits
// (cuda/dwt53_gpu.hpp, CodedDetails; used by cuda/wavelet_decode.cu) instead
// of from the coefficient array. The CPU forward transform of image-like
// data gives the coefficients; each detail subband of the coded levels (every 2D level, or
// level 1 alone) is split into symbols (z >> k, one or two bytes) and k low
// bits (FORMAT §10.4-10.5) at a random k and a random place in its group,
// and those subbands of the coefficient array are overwritten with garbage,
// so that only the symbols can give back the samples: the GPU inverse must
// return the original samples for u8, u16 and i32 output, odd and tiny
// shapes, every level count. A symbol whose z needs more than 32 bits must
// be reported through the wide word as the scatter reports it
// (group << 40 | index, the lowest). Every case prints its seed. Skips
// without a GPU.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/dwt53_gpu.hpp"
#include "test_util.hpp"
#include "vlec/device_dwt.hpp"
#include "vlec/dwt.hpp"
#include "dwt/dwt53.hpp"

namespace vlec {
namespace {

using cuda::DeviceBuffer;
using device::DwtSample;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

// A smooth image with texture and noise, in [0, top].
std::vector<int32_t> image_data(const DwtShape& s, int32_t top, std::mt19937_64& rng) {
  std::vector<int32_t> v(s.samples());
  const double f = 0.05 + (rng() % 100) / 300.0;
  for (std::size_t y = 0; y < s.ny; ++y)
    for (std::size_t x = 0; x < s.nx; ++x) {
      const double g = 0.3 + 0.4 * (double(x) / (s.nx + 1) + double(y) / (s.ny + 1)) / 2;
      const double t = 0.1 * std::sin(f * x) * std::cos(0.6 * f * y) + (double(rng() % 2001) - 1000) / 1000 * 0.05;
      v[x + s.nx * y] = static_cast<int32_t>(std::clamp(g + t, 0.0, 1.0) * top);
    }
  return v;
}

uint32_t zigzag(int32_t c) { return c >= 0 ? 2u * static_cast<uint32_t>(c) : 2u * static_cast<uint32_t>(-(c + 1)) + 1u; }

// One detail band as a group: `pad` other values first, then the box's
// values in raster order; symbols of `width` bytes, k low bits each.
struct HostGroup {
  std::vector<uint8_t> symbols;
  std::vector<uint32_t> low;  // low-bit words, a multiple of two (8-byte aligned areas)
  uint32_t width = 1, shift = 0;
  uint64_t index0 = 0;
};

HostGroup make_group(const std::vector<uint32_t>& z, std::size_t pad, std::mt19937_64& rng) {
  uint32_t top = 0;
  for (uint32_t v : z) top = std::max(top, v);
  HostGroup g;
  unsigned k0 = 0;
  while ((top >> k0) >= 65536) ++k0;
  g.shift = std::min(24u, k0 + static_cast<unsigned>(rng() % 5));
  g.width = (top >> g.shift) < 256 && rng() % 3 ? 1 : 2;
  g.index0 = pad;
  std::vector<uint32_t> all(pad);
  for (uint32_t& v : all) v = static_cast<uint32_t>(rng() % 200) << g.shift;  // values of other subbands
  all.insert(all.end(), z.begin(), z.end());
  const std::size_t n = all.size();
  g.symbols.resize(n * g.width);
  g.low.assign((n * g.shift + 63) / 64 * 2, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const uint32_t s = all[i] >> g.shift;
    if (g.width == 1) g.symbols[i] = static_cast<uint8_t>(s);
    else g.symbols[2 * i] = static_cast<uint8_t>(s), g.symbols[2 * i + 1] = static_cast<uint8_t>(s >> 8);
    if (g.shift == 0) continue;  // no low bits (and no words)
    const uint64_t low = all[i] & ((1u << g.shift) - 1), bit = i * g.shift;
    g.low[bit / 32] |= static_cast<uint32_t>(low << (bit % 32));
    if (bit % 32 + g.shift > 32) g.low[bit / 32 + 1] |= static_cast<uint32_t>(low >> (32 - bit % 32));
  }
  return g;
}

struct DeviceGroup {
  DeviceBuffer<uint8_t> symbols;
  DeviceBuffer<uint32_t> low;
  explicit DeviceGroup(const HostGroup& g)
      : symbols(std::max<std::size_t>(g.symbols.size(), 16)), low(std::max<std::size_t>(g.low.size(), 2)) {
    CUDA_CHECK(cudaMemcpy(symbols.get(), g.symbols.data(), g.symbols.size(), cudaMemcpyHostToDevice));
    if (!g.low.empty()) CUDA_CHECK(cudaMemcpy(low.get(), g.low.data(), 4 * g.low.size(), cudaMemcpyHostToDevice));
  }
};

// The detail boxes (x0, y0, nx, ny) of level l (1-based) by kind: HL, LH, HH;
// ext: the level extents (vlec::dwt's).
struct Box4 {
  std::size_t x0, y0, nx, ny;
};
void detail_boxes(const std::vector<DwtShape>& ext, unsigned l, Box4 (&box)[3]) {
  const DwtShape &p = ext[l - 1], &lo = ext[l];
  box[0] = {lo.nx, 0, p.nx - lo.nx, lo.ny};
  box[1] = {0, lo.ny, lo.nx, p.ny - lo.ny};
  box[2] = {lo.nx, lo.ny, p.nx - lo.nx, p.ny - lo.ny};
}

// The inverse with the details of levels 1..groups.size() / 3 coded (group
// 3 (l - 1) + kind - 1 for level l), output type T; returns the samples and
// the error and wide words.
template <typename T>
std::vector<T> coded_inverse(const std::vector<int32_t>& coeffs, const DwtShape& s, unsigned levels,
                             const std::vector<HostGroup>& hg, const std::vector<std::vector<Box4>>& boxes,
                             uint64_t* wide_out, uint64_t* dwt_error) {
  const DwtSample type = std::is_same_v<T, uint8_t> ? DwtSample::u8 : std::is_same_v<T, uint16_t> ? DwtSample::u16
                                                                                                   : DwtSample::i32;
  DeviceBuffer<int32_t> d_c(coeffs.size());
  CUDA_CHECK(cudaMemcpy(d_c.get(), coeffs.data(), 4 * coeffs.size(), cudaMemcpyHostToDevice));
  DeviceBuffer<T> d_s(std::max<std::size_t>(s.samples(), 4));
  DeviceBuffer<uint64_t> d_words(2);
  CUDA_CHECK(cudaMemset(d_words.get(), 0xFF, 16));
  const std::size_t tb = device::dwt53_temp_bytes(s, levels);
  DeviceBuffer<uint8_t> d_temp(std::max<std::size_t>(tb, 1));
  std::vector<std::unique_ptr<DeviceGroup>> dg;
  for (const HostGroup& g : hg) dg.push_back(std::make_unique<DeviceGroup>(g));
  std::vector<cuda::dwt::CodedDetails> cd(hg.size() / 3);
  for (std::size_t i = 0; i < hg.size(); ++i) {
    cuda::dwt::DetailBand& band = cd[i / 3].band[i % 3];
    band.symbols = dg[i]->symbols.get();
    band.low = dg[i]->low.get();
    band.low_words = hg[i].low.size();
    band.index0 = hg[i].index0;
    band.nx = static_cast<uint32_t>(boxes[i / 3][i % 3].nx);
    band.width = hg[i].width;
    band.shift = hg[i].shift;
    band.group = static_cast<uint32_t>(2 * i + 1);
    cd[i / 3].wide = reinterpret_cast<unsigned long long*>(d_words.get()) + 1;
  }
  cuda::dwt::inverse(d_c.get(), d_s.get(), type, s, levels, d_words.get(), d_temp.get(), tb, nullptr,
                     cuda::dwt::Tuning{}, cd.data(), cd.size());
  CUDA_CHECK(cudaDeviceSynchronize());
  uint64_t words[2];
  CUDA_CHECK(cudaMemcpy(words, d_words.get(), 16, cudaMemcpyDeviceToHost));
  *dwt_error = words[0];
  *wide_out = words[1];
  std::vector<T> out(s.samples());
  CUDA_CHECK(cudaMemcpy(out.data(), d_s.get(), sizeof(T) * out.size(), cudaMemcpyDeviceToHost));
  return out;
}

// The 2D levels (those splitting x and y) of shape s: a prefix of the levels.
unsigned xy_levels(const std::vector<DwtShape>& ext) {
  unsigned l = 0;
  while (l + 1 < ext.size() && ext[l].nx > 1 && ext[l].ny > 1) ++l;
  return l;
}

// coded: how many of the 2D levels have their details coded (from level 1).
template <typename T>
void check_shape(const DwtShape& s, unsigned levels, int32_t top, unsigned coded, uint64_t seed) {
  SCOPED_TRACE(std::to_string(s.nx) + "x" + std::to_string(s.ny) + " levels " + std::to_string(levels) + " coded " +
               std::to_string(coded) + " seed " + std::to_string(seed) + " out " + std::to_string(sizeof(T)) +
               " bytes");
  std::mt19937_64 rng(seed);
  const std::vector<int32_t> img = image_data(s, top, rng);
  std::vector<T> samples(img.begin(), img.end());
  std::vector<int32_t> coeffs(s.samples());
  dwt53_forward(samples.data(), coeffs.data(), s, {levels, 0});
  const std::vector<DwtShape> ext = dwt::level_extents(s, levels);
  coded = std::min(coded, xy_levels(ext));
  std::vector<HostGroup> hg;
  std::vector<std::vector<Box4>> boxes;
  for (unsigned l = 1; l <= coded; ++l) {
    Box4 box[3];
    detail_boxes(ext, l, box);
    boxes.emplace_back(box, box + 3);
    for (int b = 0; b < 3; ++b) {
      std::vector<uint32_t> z;
      for (std::size_t y = box[b].y0; y < box[b].y0 + box[b].ny; ++y)
        for (std::size_t x = box[b].x0; x < box[b].x0 + box[b].nx; ++x) {
          z.push_back(zigzag(coeffs[x + s.nx * y]));
          coeffs[x + s.nx * y] = 0x5A5A5A5A;  // only the symbols may give it back
        }
      hg.push_back(make_group(z, rng() % 3 == 0 ? 0 : rng() % 1000, rng));
    }
  }
  uint64_t wide = 0, dwt_error = 0;
  const std::vector<T> got = coded_inverse<T>(coeffs, s, levels, hg, boxes, &wide, &dwt_error);
  EXPECT_EQ(wide, ~uint64_t{0});
  EXPECT_EQ(dwt_error, ~uint64_t{0});
  std::string shifts;
  for (const HostGroup& g : hg) shifts += " " + std::to_string(g.shift) + "/" + std::to_string(g.width);
  EXPECT_TRUE(got == samples) << "shift/width by group:" << shifts;
}

TEST(GpuDwtCoded, DetailsFromSymbols) {
  REQUIRE_GPU();
  const uint64_t seed = test::seed_for(31);
  std::mt19937_64 rng(seed);
  const DwtShape shapes[] = {{2, 2, 1},   {3, 2, 1},   {2, 5, 1},    {7, 3, 1},     {17, 9, 1},    {64, 64, 1},
                             {63, 65, 1}, {257, 131, 1}, {1000, 3, 1}, {3, 700, 1}, {1024, 768, 1}, {2049, 1031, 1}};
  std::size_t cases = 0;
  for (const DwtShape& s : shapes)
    for (unsigned levels : {1u, 2u, 3u, 6u}) {
      // Every 2D level coded (the decoder's choice), or level 1 alone.
      for (unsigned coded : {32u, 1u}) {
        check_shape<uint8_t>(s, levels, 255, coded, rng());
        check_shape<uint16_t>(s, levels, 65535, coded, rng());
        check_shape<uint16_t>(s, levels, 4095, coded, rng());
        check_shape<int32_t>(s, levels, 65535, coded, rng());
        cases += 4;
      }
    }
  std::printf("%zu shapes, level counts, coded levels and output types; seed %llu\n", cases,
              static_cast<unsigned long long>(seed));
}

TEST(GpuDwtCoded, WideValuesAreReported) {
  REQUIRE_GPU();
  const uint64_t seed = test::seed_for(32);
  std::mt19937_64 rng(seed);
  const DwtShape s{301, 97, 1};
  const unsigned levels = 3;
  std::vector<uint16_t> samples(s.samples());
  for (auto& v : samples) v = static_cast<uint16_t>(rng() % 65536);
  std::vector<int32_t> coeffs(s.samples());
  dwt53_forward(samples.data(), coeffs.data(), s, {levels, 0});
  const std::vector<DwtShape> ext = dwt::level_extents(s, levels);
  std::vector<HostGroup> hg;
  std::vector<std::vector<Box4>> boxes;
  for (unsigned l = 1; l <= 2; ++l) {
    Box4 box[3];
    detail_boxes(ext, l, box);
    boxes.emplace_back(box, box + 3);
    for (int b = 0; b < 3; ++b) hg.push_back(make_group(std::vector<uint32_t>(box[b].nx * box[b].ny, 0), 10 * b, rng));
  }
  // k = 20 with two-byte symbols: symbol 4096 makes z = 2^32, the first
  // value more than 32 bits wide. Level 1's LH (group 2 * 1 + 1 = 3) gets two
  // such values, its HH (group 5) and level 2's HL (group 7) one each: the
  // word must name group 3's lower index.
  auto make_wide = [&](HostGroup& g, std::size_t n, std::initializer_list<std::size_t> at) {
    g.shift = 20, g.width = 2;
    const std::size_t total = g.index0 + n;
    g.symbols.assign(2 * total, 0);
    g.low.assign((total * 20 + 63) / 64 * 2, 0);
    for (std::size_t i : at) g.symbols[2 * (g.index0 + i) + 1] = 0x10;  // 4096
  };
  const std::size_t n1 = boxes[0][1].nx * boxes[0][1].ny, n2 = boxes[0][2].nx * boxes[0][2].ny,
                    n3 = boxes[1][0].nx * boxes[1][0].ny;
  make_wide(hg[1], n1, {n1 - 1, 37});
  make_wide(hg[2], n2, {5});
  make_wide(hg[3], n3, {0});
  uint64_t wide = 0, dwt_error = 0;
  coded_inverse<uint16_t>(coeffs, s, levels, hg, boxes, &wide, &dwt_error);
  EXPECT_EQ(wide, (uint64_t{3} << 40) | (hg[1].index0 + 37)) << "seed " << seed;
  std::printf("wide word %llx; seed %llu\n", static_cast<unsigned long long>(wide),
              static_cast<unsigned long long>(seed));
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
