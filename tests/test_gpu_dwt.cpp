// tests/test_gpu_dwt.cpp: the GPU 5/3 wavelet transform (vlec/device_dwt.hpp)
// against the CPU transform (vlec/dwt.hpp), which defines the answer: the
// GPU coefficients must equal the CPU's one for one, and the GPU inverse
// must give back the samples, for every sample type, level counts 0..8 and
// 32, 1D/2D/3D shapes (1 x 1 up to 4097 x 4099, odd, prime, sizes below
// 2^levels, axes of length 1), on data shaped like real images (gradients,
// texture, noise, edges) and on worst-case ranges (full-range noise,
// alternating extremes), with every kernel variant (fused/unfused, vector
// and scalar memory access, several rows per warp) and misaligned buffers.
// Bad data (i32 samples outside the range, coefficients no forward
// transform made) must be reported through the error word and thrown as the
// CPU throws. Every case prints its seed. Skips without a GPU.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/dwt53_gpu.hpp"
#include "dwt_test_util.hpp"
#include "test_util.hpp"
#include "vlec/device_dwt.hpp"
#include "vlec/dwt.hpp"

namespace vlec {
namespace {

using dwt_test::for_each_type;
using dwt_test::type_hi;
using dwt_test::type_lo;

using cuda::DeviceBuffer;
using cuda::dwt::Tuning;
using device::DwtSample;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

template <typename T> DwtSample sample_type() {
  if (std::is_same_v<T, uint8_t>) return DwtSample::u8;
  if (std::is_same_v<T, uint16_t>) return DwtSample::u16;
  if (std::is_same_v<T, int16_t>) return DwtSample::i16;
  return DwtSample::i32;
}

std::string name(DwtShape s) { return std::to_string(s.nx) + "x" + std::to_string(s.ny) + "x" + std::to_string(s.nz); }

// image: a gradient, a texture, a disc and bars with sharp edges, and noise,
// clipped to the type; noise: uniform over the whole range; extremes: lo and
// hi in a checkerboard with random flips (the largest coefficients).
template <typename T>
std::vector<T> make(const std::string& pattern, DwtShape s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t lo = type_lo<T>(), hi = type_hi<T>();
  const double range = double(hi - lo);
  std::vector<T> v(s.samples());
  const double f = 0.05 + (rng() % 100) / 400.0;
  for (std::size_t z = 0; z < s.nz; ++z)
    for (std::size_t y = 0; y < s.ny; ++y)
      for (std::size_t x = 0; x < s.nx; ++x) {
        T& out = v[x + s.nx * (y + s.ny * z)];
        if (pattern == "image") {
          const double g = 0.2 + 0.5 * (double(x) / (s.nx + 1) + double(y) / (s.ny + 1) + double(z) / (s.nz + 1)) / 3;
          const double tex = 0.08 * std::sin(f * x) * std::cos(0.7 * f * y + 0.3 * z);
          const double dx = double(x) - 0.4 * s.nx, dy = double(y) - 0.6 * s.ny;
          const double disc = dx * dx + dy * dy < 0.05 * double(s.nx * s.nx + s.ny * s.ny) ? 0.25 : 0.0;
          const double bars = (x / 9 + y / 13) % 3 == 0 ? -0.15 : 0.0;
          const double noise = (double(rng() % 2001) - 1000) / 1000 * 0.01;
          const double val = double(lo) + range * (g + tex + disc + bars + noise);
          out = static_cast<T>(std::clamp<int64_t>(std::llround(val), lo, hi));
        } else if (pattern == "noise") {
          out = static_cast<T>(lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)));
        } else {
          const bool up = ((x + y + z) % 2 == 0) != (rng() % 16 == 0);
          out = static_cast<T>(up ? hi : lo);
        }
      }
  return v;
}

// GPU forward == CPU forward and GPU inverse == samples, for one case.
// `offset` elements shift the device buffers off their 16-byte alignment.
template <typename T>
void check_case(const std::vector<T>& v, DwtShape s, unsigned levels, const Tuning& tu, const std::string& what,
                std::size_t offset = 0) {
  SCOPED_TRACE(what + " shape " + name(s) + " levels " + std::to_string(levels) + " fused " +
               std::to_string(tu.fuse_xy) + " vector " + std::to_string(tu.vector_io) + " pairs " +
               std::to_string(tu.pairs_per_warp) + " prefetch " + std::to_string(tu.prefetch) + " offset " + std::to_string(offset));
  const std::size_t n = s.samples();
  std::vector<int32_t> want(n);
  dwt53_forward(v.data(), want.data(), s, {levels, 0});
  DeviceBuffer<T> d_in(n + offset + 1), d_back(n + offset + 1);
  DeviceBuffer<int32_t> d_coeffs(n + offset + 1);
  DeviceBuffer<uint64_t> d_err(1);
  const std::size_t tb = cuda::dwt::temp_bytes(s, levels, tu);
  DeviceBuffer<uint8_t> d_temp(tb);
  CUDA_CHECK(cudaMemcpy(d_in.get() + offset, v.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const DwtSample t = sample_type<T>();
  cuda::dwt::forward(d_in.get() + offset, t, d_coeffs.get() + offset, s, levels, d_err.get(), d_temp.get(), tb,
                     nullptr, tu);
  EXPECT_NO_THROW(device::dwt53_throw_if_error(d_err.get(), false, t, s, nullptr));
  std::vector<int32_t> got(n);
  CUDA_CHECK(cudaMemcpy(got.data(), d_coeffs.get() + offset, n * sizeof(int32_t), cudaMemcpyDeviceToHost));
  const auto mismatch = std::mismatch(got.begin(), got.end(), want.begin());
  if (mismatch.first != got.end()) {
    const std::size_t i = static_cast<std::size_t>(mismatch.first - got.begin());
    ADD_FAILURE() << "forward: coefficient " << i << " (x " << i % s.nx << ", y " << i / s.nx % s.ny << ", z "
                  << i / s.nx / s.ny << ") is " << got[i] << ", the CPU's " << want[i];
    return;
  }
  cuda::dwt::inverse(d_coeffs.get() + offset, d_back.get() + offset, t, s, levels, d_err.get(), d_temp.get(), tb,
                     nullptr, tu);
  EXPECT_NO_THROW(device::dwt53_throw_if_error(d_err.get(), true, t, s, nullptr));
  std::vector<T> back(n);
  CUDA_CHECK(cudaMemcpy(back.data(), d_back.get() + offset, n * sizeof(T), cudaMemcpyDeviceToHost));
  const auto bad = std::mismatch(back.begin(), back.end(), v.begin());
  if (bad.first != back.end()) {
    const std::size_t i = static_cast<std::size_t>(bad.first - back.begin());
    ADD_FAILURE() << "inverse: sample " << i << " is " << int64_t(back[i]) << ", was " << int64_t(v[i]);
  }
  // The coefficients are left untouched by the inverse.
  std::vector<int32_t> after(n);
  CUDA_CHECK(cudaMemcpy(after.data(), d_coeffs.get() + offset, n * sizeof(int32_t), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(after == want) << "the inverse changed its input";
}

const std::vector<DwtShape>& small_shapes() {
  static const std::vector<DwtShape> s = [] {
    std::vector<DwtShape> v;
    for (std::size_t n : {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 33, 64, 97, 129, 241, 242, 480, 481, 1000}) v.push_back({n});
    for (auto [x, y] : std::vector<std::pair<std::size_t, std::size_t>>{
             {1, 1}, {1, 2}, {2, 1}, {1, 37}, {37, 1}, {2, 2}, {2, 3}, {3, 2}, {5, 5}, {7, 13}, {16, 16}, {17, 31},
             {64, 65}, {127, 3}, {3, 127}, {129, 130}, {45, 33}, {240, 9}, {241, 17}, {248, 40}, {256, 256},
             {8, 700}, {483, 35}})
      v.push_back({x, y});
    for (auto [x, y, z] : std::vector<std::tuple<std::size_t, std::size_t, std::size_t>>{
             {1, 1, 1}, {2, 2, 2}, {3, 5, 7}, {1, 1, 9}, {9, 1, 1}, {1, 9, 1}, {5, 1, 7}, {2, 3, 1}, {16, 16, 16},
             {17, 9, 33}, {33, 32, 31}, {40, 3, 2}, {1, 200, 3}})
      v.push_back({x, y, z});
    return v;
  }();
  return s;
}

TEST(GpuDwt53, MatchesCpuEveryShapeLevelAndType) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 501;
  std::printf("GpuDwt53.MatchesCpuEveryShapeLevelAndType seed %llu\n", static_cast<unsigned long long>(seed));
  std::size_t cases = 0;
  for_each_type([&](auto tag) {
    using T = decltype(tag);
    for (const DwtShape& s : small_shapes()) {
      const char* pattern = cases % 3 == 0 ? "image" : (cases % 3 == 1 ? "noise" : "extremes");
      const std::vector<T> v = make<T>(pattern, s, seed + cases);
      for (unsigned levels : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, kDwtMaxLevels}) {
        check_case(v, s, levels, Tuning{}, std::string(pattern) + " seed " + std::to_string(seed + cases));
        if (HasFailure()) return;
      }
      ++cases;
    }
  });
  std::printf("%zu shape/type cases x 10 level counts\n", cases);
}

// Random shapes, types, patterns and level counts, every kernel variant.
TEST(GpuDwt53, RandomShapesAndVariants) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 502;
  std::printf("GpuDwt53.RandomShapesAndVariants seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  // Every variant but the default keeps its row pairs a warp at every level
  // (min_warps 0): on these small shapes the default's coarse-level rule
  // would take nearly every level to one pair a warp.
  auto fixed = [](int ppw, bool vec, bool fuse, bool prefetch) { return Tuning{ppw, vec, fuse, prefetch, 0}; };
  const Tuning variants[] = {Tuning{},
                             fixed(16, true, false, true),
                             fixed(16, false, true, true),
                             fixed(1, true, true, true),
                             fixed(7, true, true, false),
                             fixed(64, true, true, true),
                             fixed(2, false, true, false),
                             fixed(8, true, true, true)};
  for (int c = 0; c < 120; ++c) {
    DwtShape s;
    const int dims = 1 + static_cast<int>(rng() % 3);
    const std::size_t cap = dims == 1 ? 20000 : (dims == 2 ? 700 : 40);
    s.nx = 1 + rng() % cap;
    if (dims >= 2) s.ny = 1 + rng() % cap;
    if (dims == 3) s.nz = 1 + rng() % cap;
    if (rng() % 4 == 0) s.nx = (s.nx + 7) / 8 * 8;  // the vector path
    const unsigned levels = static_cast<unsigned>(rng() % 9);
    const Tuning& tu = variants[rng() % 8];
    const std::size_t offset = rng() % 5 == 0 ? 1 + rng() % 3 : 0;
    const char* pattern = c % 3 == 0 ? "noise" : (c % 3 == 1 ? "image" : "extremes");
    const uint64_t cs = seed * 1000 + static_cast<uint64_t>(c);
    const std::string what = std::string(pattern) + " seed " + std::to_string(cs);
    switch (rng() % 4) {
      case 0: check_case(make<uint8_t>(pattern, s, cs), s, levels, tu, what, offset); break;
      case 1: check_case(make<uint16_t>(pattern, s, cs), s, levels, tu, what, offset); break;
      case 2: check_case(make<int16_t>(pattern, s, cs), s, levels, tu, what, offset); break;
      default: check_case(make<int32_t>(pattern, s, cs), s, levels, tu, what, offset); break;
    }
    if (HasFailure()) return;
  }
}

// Large shapes: the acceptance size's shape class, odd and prime sizes, many
// strips and row chunks per warp, each once per variant.
TEST(GpuDwt53, LargeShapes) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 503;
  std::printf("GpuDwt53.LargeShapes seed %llu\n", static_cast<unsigned long long>(seed));
  const std::vector<uint16_t> big = make<uint16_t>("image", {4097, 4099}, seed);
  check_case(big, {4097, 4099}, 5, Tuning{}, "image u16 4097x4099");
  check_case(big, {4097, 4099}, 1, Tuning{16, false, false}, "image u16 4097x4099");
  const std::vector<uint16_t> img = make<uint16_t>("image", {2048, 1536}, seed + 1);
  check_case(img, {2048, 1536}, 1, Tuning{}, "image u16 2048x1536");
  check_case(img, {2048, 1536}, 2, Tuning{16, true, true, false}, "image u16 2048x1536");
  check_case(img, {2048, 1536}, 6, Tuning{}, "image u16 2048x1536");
  check_case(img, {2048, 1536}, 3, Tuning{32, true, false}, "image u16 2048x1536");
  check_case(make<uint8_t>("image", {1920, 1080}, seed + 2), {1920, 1080}, 4, Tuning{}, "image u8 1920x1080");
  check_case(make<int16_t>("noise", {1023, 777}, seed + 3), {1023, 777}, 8, Tuning{}, "noise i16 1023x777");
  check_case(make<int32_t>("extremes", {1024, 1000}, seed + 4), {1024, 1000}, 2, Tuning{}, "extremes i32 1024x1000");
  check_case(make<uint16_t>("image", {130, 67, 33}, seed + 5), {130, 67, 33}, 4, Tuning{}, "image u16 130x67x33");
  check_case(make<uint8_t>("noise", {128, 128, 128}, seed + 6), {128, 128, 128}, 3, Tuning{}, "noise u8 128^3");
  check_case(make<int32_t>("image", {1000003}, seed + 7), {1000003}, 8, Tuning{}, "image i32 1000003");
}

TEST(GpuDwt53, TempBytes) {
  // Host-side only: 1 level of a 2D shape needs nothing; 3D needs a full buffer.
  EXPECT_EQ(device::dwt53_temp_bytes({8192, 8192}, 1), 0u);
  EXPECT_EQ(device::dwt53_temp_bytes({8192, 8192}, 0), 0u);
  EXPECT_EQ(device::dwt53_temp_bytes({8192, 8192}, 2), 4096u * 4096u * 4u);
  EXPECT_EQ(device::dwt53_temp_bytes({8192, 8192}, 5), 4096u * 4096u * 4u + 2048u * 2048u * 4u);
  EXPECT_GE(device::dwt53_temp_bytes({64, 64, 64}, 1), 64u * 64u * 64u * 4u);
  EXPECT_EQ(device::dwt53_temp_bytes({0, 5}, 3), 0u);
  EXPECT_THROW(device::dwt53_temp_bytes({4, 4}, kDwtMaxLevels + 1), Error);
}

void expect_error(const std::function<void()>& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing \"" << fragment << "\"";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(GpuDwt53, ReportsBadData) {
  REQUIRE_GPU();
  const DwtShape s{48, 40};
  const std::size_t n = s.samples();
  DeviceBuffer<int32_t> d_c(n), d_s(n);
  DeviceBuffer<uint8_t> d_s8(n);
  DeviceBuffer<uint64_t> d_err(1);
  const std::size_t tb = device::dwt53_temp_bytes(s, 3);
  DeviceBuffer<uint8_t> d_temp(tb);
  // i32 samples outside the range: the first one is named, as on the CPU.
  std::vector<int32_t> v(n, 7);
  v[1000] = kDwtMaxI32 + 1;
  v[1500] = kDwtMinI32 - 5;
  CUDA_CHECK(cudaMemcpy(d_s.get(), v.data(), n * 4, cudaMemcpyHostToDevice));
  device::dwt53_forward(d_s.get(), DwtSample::i32, d_c.get(), s, 3, d_err.get(), d_temp.get(), tb, nullptr);
  expect_error([&] { device::dwt53_throw_if_error(d_err.get(), false, DwtSample::i32, s, nullptr); },
               "index 1000 (x 40, y 20, z 0)");
  // Coefficients no forward transform made: every type, every level count.
  std::mt19937_64 rng(test::base_seed() + 504);
  std::printf("GpuDwt53.ReportsBadData seed %llu\n", static_cast<unsigned long long>(test::base_seed() + 504));
  std::vector<int32_t> huge(n, std::numeric_limits<int32_t>::max());
  CUDA_CHECK(cudaMemcpy(d_c.get(), huge.data(), n * 4, cudaMemcpyHostToDevice));
  for (unsigned levels : {0u, 1u, 3u}) {
    device::dwt53_inverse(d_c.get(), d_s8.get(), DwtSample::u8, s, levels, d_err.get(), d_temp.get(), tb, nullptr);
    expect_error([&] { device::dwt53_throw_if_error(d_err.get(), true, DwtSample::u8, s, nullptr); },
                 "not a forward transform of u8 samples");
    device::dwt53_inverse(d_c.get(), d_s.get(), DwtSample::i32, s, levels, d_err.get(), d_temp.get(), tb, nullptr);
    expect_error([&] { device::dwt53_throw_if_error(d_err.get(), true, DwtSample::i32, s, nullptr); },
                 "outside [-33554432, 33554431]");
  }
  // A small change to the coefficients of a saturated u8 image: rejected,
  // where the CPU rejects it, and the CPU and GPU agree on whether it is.
  for (int trial = 0; trial < 20; ++trial) {
    const DwtShape t{1 + rng() % 60, 1 + rng() % 60, 1 + rng() % 3};
    std::vector<uint8_t> img(t.samples(), 255);
    std::vector<int32_t> c(t.samples());
    dwt53_forward(img.data(), c.data(), t, {2, 0});
    c[rng() % c.size()] += (rng() % 2 ? 1 : -1) * static_cast<int32_t>(1 + rng() % 1000);
    std::vector<uint8_t> out(t.samples());
    bool cpu_rejects = false;
    try {
      dwt53_inverse(c.data(), out.data(), t, {2, 0});
    } catch (const Error&) {
      cpu_rejects = true;
    }
    DeviceBuffer<int32_t> dc(c.size());
    DeviceBuffer<uint8_t> ds(c.size());
    const std::size_t tt = device::dwt53_temp_bytes(t, 2);
    DeviceBuffer<uint8_t> dtmp(tt);
    CUDA_CHECK(cudaMemcpy(dc.get(), c.data(), c.size() * 4, cudaMemcpyHostToDevice));
    device::dwt53_inverse(dc.get(), ds.get(), DwtSample::u8, t, 2, d_err.get(), dtmp.get(), tt, nullptr);
    bool gpu_rejects = false;
    try {
      device::dwt53_throw_if_error(d_err.get(), true, DwtSample::u8, t, nullptr);
    } catch (const Error&) {
      gpu_rejects = true;
    }
    EXPECT_EQ(cpu_rejects, gpu_rejects) << "trial " << trial << " shape " << name(t);
  }
  // Random coefficients never crash; any error is invalid_argument.
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<int32_t> r(n);
    for (int32_t& x : r) x = static_cast<int32_t>(rng());
    CUDA_CHECK(cudaMemcpy(d_c.get(), r.data(), n * 4, cudaMemcpyHostToDevice));
    device::dwt53_inverse(d_c.get(), d_s8.get(), DwtSample::u8, s, 3, d_err.get(), d_temp.get(), tb, nullptr);
    try {
      device::dwt53_throw_if_error(d_err.get(), true, DwtSample::u8, s, nullptr);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    }
  }
}

TEST(GpuDwt53, RejectsBadArguments) {
  REQUIRE_GPU();
  const DwtShape s{64, 64};
  DeviceBuffer<int32_t> d_c(s.samples()), d_s(s.samples());
  DeviceBuffer<uint64_t> d_err(1);
  const std::size_t tb = device::dwt53_temp_bytes(s, 3);
  DeviceBuffer<uint8_t> d_temp(tb);
  expect_error([&] { device::dwt53_forward(d_s.get(), DwtSample::i32, d_c.get(), s, 3, d_err.get(), d_temp.get(), tb - 1, nullptr); },
               "temp storage");
  expect_error([&] { device::dwt53_forward(nullptr, DwtSample::i32, d_c.get(), s, 3, d_err.get(), d_temp.get(), tb, nullptr); },
               "null buffer");
  expect_error([&] { device::dwt53_inverse(d_c.get(), d_s.get(), DwtSample::i32, s, 3, nullptr, d_temp.get(), tb, nullptr); },
               "null buffer");
  expect_error([&] { device::dwt53_forward(d_s.get(), DwtSample::i32, d_c.get(), s, kDwtMaxLevels + 1, d_err.get(), d_temp.get(), tb, nullptr); },
               "levels");
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
