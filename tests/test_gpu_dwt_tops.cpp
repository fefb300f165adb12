// tests/test_gpu_dwt_tops.cpp: the forward 5/3's 2D levels taking each
// subband's largest zigzag value as they store it (cuda/dwt53_gpu.hpp,
// BandTops; the wavelet writer's subband tops, cuda/wavelet_encode.cu). For
// odd, even and tiny shapes, every level count and u8 / u16 / i32 input,
// the tops must equal the maxima the CPU finds over the CPU transform's
// subbands (the level's LL at the last level, HL, LH, HH at every level),
// and the coefficients the CPU's. Image-like data with noise, and extremes
// (all zero, a single outlier, the i32 range the transform takes). Every
// case prints its seed. Skips without a GPU.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/dwt53_gpu.hpp"
#include "dwt/dwt53.hpp"
#include "test_util.hpp"
#include "vlec/device_dwt.hpp"
#include "vlec/dwt.hpp"

namespace vlec {
namespace {

using cuda::DeviceBuffer;
using device::DwtSample;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

uint32_t zigzag(int32_t c) { return c >= 0 ? 2u * static_cast<uint32_t>(c) : 2u * static_cast<uint32_t>(-(c + 1)) + 1u; }

// The largest zigzag value of the box [x0, x0 + nx) x [y0, y0 + ny).
uint32_t box_top(const std::vector<int32_t>& c, std::size_t width, std::size_t x0, std::size_t y0, std::size_t nx,
                 std::size_t ny) {
  uint32_t top = 0;
  for (std::size_t y = y0; y < y0 + ny; ++y)
    for (std::size_t x = x0; x < x0 + nx; ++x) top = std::max(top, zigzag(c[x + width * y]));
  return top;
}

enum class Data { image, zero, outlier, extreme };

template <typename T>
std::vector<T> make_data(const DwtShape& s, Data d, std::mt19937_64& rng) {
  const double top = std::is_same_v<T, uint8_t> ? 255 : std::is_same_v<T, uint16_t> ? 65535 : double(kDwtMaxI32);
  std::vector<T> v(s.samples());
  const double f = 0.05 + (rng() % 100) / 300.0;
  for (std::size_t y = 0; y < s.ny; ++y)
    for (std::size_t x = 0; x < s.nx; ++x) {
      double u = 0;
      switch (d) {
        case Data::image:
          u = 0.5 + 0.3 * std::sin(f * x) * std::cos(0.7 * f * y) + (double(rng() % 2001) - 1000) / 1000 * 0.05;
          break;
        case Data::zero: u = 0; break;
        case Data::outlier: u = 0.25; break;
        case Data::extreme: u = rng() % 2 ? 1.0 : 0.0; break;
      }
      const double val =
          std::is_same_v<T, int32_t> ? (2 * std::clamp(u, 0.0, 1.0) - 1) * top : std::clamp(u, 0.0, 1.0) * top;
      v[x + s.nx * y] = static_cast<T>(std::lround(val));
    }
  if (d == Data::outlier && !v.empty()) v[rng() % v.size()] = static_cast<T>(top);
  if (std::is_same_v<T, int32_t> && d == Data::extreme && !v.empty()) {
    v[0] = static_cast<T>(kDwtMinI32);
    v[v.size() - 1] = static_cast<T>(kDwtMaxI32);
  }
  return v;
}

template <typename T>
void check_tops(const DwtShape& s, unsigned levels, Data d, uint64_t seed) {
  SCOPED_TRACE(std::to_string(s.nx) + "x" + std::to_string(s.ny) + " levels " + std::to_string(levels) + " data " +
               std::to_string(static_cast<int>(d)) + " in " + std::to_string(sizeof(T)) + " bytes, seed " +
               std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<T> samples = make_data<T>(s, d, rng);
  std::vector<int32_t> want(s.samples());
  dwt53_forward(samples.data(), want.data(), s, {levels, 0});
  const std::vector<DwtShape> ext = dwt::level_extents(s, levels);
  const unsigned L = static_cast<unsigned>(ext.size() - 1);
  for (unsigned k = 1; k <= L; ++k)
    ASSERT_TRUE(ext[k - 1].nx > 1 && ext[k - 1].ny > 1) << "level " << k << " must split x and y";
  const DwtSample type = std::is_same_v<T, uint8_t> ? DwtSample::u8 : std::is_same_v<T, uint16_t> ? DwtSample::u16
                                                                                                   : DwtSample::i32;
  DeviceBuffer<T> d_s(std::max<std::size_t>(samples.size(), 4));
  CUDA_CHECK(cudaMemcpy(d_s.get(), samples.data(), sizeof(T) * samples.size(), cudaMemcpyHostToDevice));
  DeviceBuffer<int32_t> d_c(std::max<std::size_t>(s.samples(), 4));
  DeviceBuffer<uint64_t> d_err(1);
  DeviceBuffer<uint32_t> d_tops(4 * L + 1);
  CUDA_CHECK(cudaMemset(d_tops.get(), 0, 4 * (4 * L + 1)));
  const std::size_t tb = device::dwt53_temp_bytes(s, levels);
  DeviceBuffer<uint8_t> d_temp(std::max<std::size_t>(tb, 16));
  std::vector<cuda::dwt::BandTops> bt(L);
  for (unsigned k = 1; k <= L; ++k)
    for (int b = 0; b < 4; ++b)
      if (b > 0 || k == L) bt[k - 1].band[b] = d_tops.get() + 4 * (k - 1) + b;
  cuda::dwt::forward(d_s.get(), type, d_c.get(), s, levels, d_err.get(), d_temp.get(), tb, nullptr,
                     cuda::dwt::Tuning{}, bt.data());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> got(4 * L + 1);
  CUDA_CHECK(cudaMemcpy(got.data(), d_tops.get(), 4 * got.size(), cudaMemcpyDeviceToHost));
  std::vector<int32_t> coeffs(s.samples());
  CUDA_CHECK(cudaMemcpy(coeffs.data(), d_c.get(), 4 * coeffs.size(), cudaMemcpyDeviceToHost));
  ASSERT_TRUE(coeffs == want) << "the coefficients differ from the CPU's";
  for (unsigned k = 1; k <= L; ++k) {
    const DwtShape &p = ext[k - 1], &lo = ext[k];
    const uint32_t expect[4] = {k == L ? box_top(want, s.nx, 0, 0, lo.nx, lo.ny) : 0,
                                box_top(want, s.nx, lo.nx, 0, p.nx - lo.nx, lo.ny),
                                box_top(want, s.nx, 0, lo.ny, lo.nx, p.ny - lo.ny),
                                box_top(want, s.nx, lo.nx, lo.ny, p.nx - lo.nx, p.ny - lo.ny)};
    for (int b = 0; b < 4; ++b) EXPECT_EQ(got[4 * (k - 1) + b], expect[b]) << "level " << k << " band " << b;
  }
  EXPECT_EQ(got[4 * L], 0u) << "a word past the bands was written";
}

TEST(GpuDwtTops, SubbandTopsEqualTheCpuMaxima) {
  REQUIRE_GPU();
  const uint64_t seed = test::seed_for(33);
  std::mt19937_64 rng(seed);
  const DwtShape shapes[] = {{2, 2, 1},    {3, 2, 1},    {2, 5, 1},      {7, 3, 1},      {17, 9, 1},
                             {64, 64, 1},  {63, 65, 1},  {257, 131, 1},  {1024, 768, 1}, {2049, 1031, 1},
                             {4097, 9, 1}, {9, 3001, 1}, {1000, 1001, 1}};
  std::size_t cases = 0;
  for (const DwtShape& s : shapes) {
    const unsigned most = static_cast<unsigned>(dwt::level_extents(s, kDwtMaxLevels).size() - 1);
    const std::vector<DwtShape> all = dwt::level_extents(s, most);
    unsigned xy = 0;  // the levels that split x and y (the tops are taken there only)
    while (xy < most && all[xy].nx > 1 && all[xy].ny > 1) ++xy;
    for (unsigned levels : {1u, 2u, 3u, 6u}) {
      if (levels > xy) continue;
      for (Data d : {Data::image, Data::zero, Data::outlier, Data::extreme}) {
        check_tops<uint8_t>(s, levels, d, rng());
        check_tops<uint16_t>(s, levels, d, rng());
        check_tops<int32_t>(s, levels, d, rng());
        cases += 3;
      }
    }
  }
  std::printf("%zu shapes, level counts, data and input types; seed %llu\n", cases,
              static_cast<unsigned long long>(seed));
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
