// bench/dwt_gpu_bench.cu: GPU benchmark of the reversible 5/3 wavelet
// transform (vlec/device_dwt.hpp, src/cuda/dwt53_*.cu).
//
// In one run it measures the device-to-device copy bandwidth (cudaMemcpyAsync
// of --copy-mib MiB; bytes read + written per second), then, for each
// configuration (2D u16 8192 x 8192 with 1 and 5 levels, 2D u8 8192 x 8192,
// 3D u16 512^3 with 1 and 3 levels; --configs picks) and each kernel variant
// (--variants: fused = the default kernel, 8 row pairs per warp, loads of
// the next y step issued before the current one is stored, coarse levels
// with fewer pairs a warp (Tuning::min_warps); fixedppw = every level at
// the same pairs a warp; noprefetch =
// the same without that; ppw16,
// ppw32, ppw64 = other row pairs per warp; scalar = no vector loads/stores;
// unfused = x and y as two kernels through a work buffer), the forward
// (samples -> int32) and the inverse (int32 -> samples): median of --repeat
// timed runs after two warm-ups, with CUDA events. It prints GSamples/s and
// the fraction of the copy bandwidth that the traffic model moves in that
// time. Traffic model (the least any implementation must move): per level k,
// the level's input (the samples at level 1, else the int32 low band of
// level k-1) read once plus as many int32 written once; the inverse the
// same. 3D levels really move more (a work buffer between the xy and z
// passes), and halo reads (~10%) are not counted, so the fraction is the
// useful share of the copy bandwidth. Every variant's result is checked once
// against the CPU transform (coefficients equal, inverse equals the input),
// outside the timing.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_timing.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/dwt53_gpu.hpp"
#include "dwt/dwt53.hpp"
#include "vlec/device_dwt.hpp"
#include "vlec/dwt.hpp"

namespace {

using vlec::DwtShape;
using vlec::bench::median_ms;
using vlec::bench::split;
using vlec::cuda::DeviceBuffer;
using vlec::cuda::dwt::Tuning;
using vlec::device::DwtSample;

struct Config {
  std::string name;
  DwtSample type;
  DwtShape shape;
  unsigned levels;
};

struct Variant {
  std::string name;
  Tuning tuning;
};

std::size_t bytes_of(DwtSample t) { return t == DwtSample::u8 ? 1 : (t == DwtSample::i32 ? 4 : 2); }

// Image-like samples: a gradient, a texture from a small sine table, bars
// with sharp edges, and noise (a xorshift per sample), at the type's range.
std::vector<uint8_t> make_samples(const Config& c, uint64_t seed) {
  const std::size_t n = c.shape.samples(), w = bytes_of(c.type);
  const double hi = c.type == DwtSample::u8 ? 255.0 : 65535.0;
  std::vector<uint8_t> out(n * w);
  float table[256];
  for (int i = 0; i < 256; ++i) table[i] = static_cast<float>(std::sin(i * 2 * M_PI / 256));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t x = i % c.shape.nx, y = i / c.shape.nx % c.shape.ny, z = i / c.shape.nx / c.shape.ny;
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    double v = 0.25 + 0.4 * double(x + y + z) / double(c.shape.nx + c.shape.ny + c.shape.nz);
    v += 0.08 * table[(x * 3 + y * 5) & 255] * table[(y * 2 + z * 7) & 255];
    v += (x / 37 + y / 23) % 4 == 0 ? 0.2 : 0.0;
    v += (double(s % 1001) - 500) / 500 * 0.01;
    const uint32_t q = static_cast<uint32_t>(std::clamp(v, 0.0, 1.0) * hi);
    if (w == 1) out[i] = static_cast<uint8_t>(q);
    else std::memcpy(&out[i * 2], &q, 2);  // little endian
  }
  return out;
}

void cpu_forward(const Config& c, const std::vector<uint8_t>& in, std::vector<int32_t>& out) {
  const vlec::DwtOptions o{c.levels, 0};
  if (c.type == DwtSample::u8) vlec::dwt53_forward(in.data(), out.data(), c.shape, o);
  else vlec::dwt53_forward(reinterpret_cast<const uint16_t*>(in.data()), out.data(), c.shape, o);
}

// Bytes the traffic model moves for one transform (see the file comment).
double traffic_bytes(const Config& c) {
  const std::vector<DwtShape> ext = vlec::dwt::level_extents(c.shape, c.levels);
  double bytes = 0;
  for (std::size_t k = 1; k < ext.size(); ++k) {
    const double n = double(ext[k - 1].samples());
    bytes += n * (k == 1 ? bytes_of(c.type) : 4) + n * 4;
  }
  return bytes;
}

Config parse_config(const std::string& s) {
  if (s == "u16-8192-L1") return {s, DwtSample::u16, {8192, 8192}, 1};
  if (s == "u16-8192-L5") return {s, DwtSample::u16, {8192, 8192}, 5};
  if (s == "u8-8192-L1") return {s, DwtSample::u8, {8192, 8192}, 1};
  if (s == "u8-8192-L5") return {s, DwtSample::u8, {8192, 8192}, 5};
  if (s == "u16-8192-L6") return {s, DwtSample::u16, {8192, 8192}, 6};
  if (s == "u16-512^3-L1") return {s, DwtSample::u16, {512, 512, 512}, 1};
  if (s == "u16-512^3-L3") return {s, DwtSample::u16, {512, 512, 512}, 3};
  std::fprintf(stderr, "unknown config %s\n", s.c_str());
  std::exit(2);
}

Variant parse_variant(const std::string& s) {
  if (s == "fused") return {s, Tuning{}};
  if (s == "fixedppw") {  // every level at pairs_per_warp (no smaller runs for the coarse levels)
    Tuning t;
    t.min_warps = 0;
    return {s, t};
  }
  if (s == "ppw16") return {s, Tuning{16, true, true}};
  if (s == "ppw32") return {s, Tuning{32, true, true}};
  if (s == "ppw64") return {s, Tuning{64, true, true}};
  if (s == "scalar") return {s, Tuning{8, false, true}};
  if (s == "unfused") return {s, Tuning{8, true, false}};
  if (s == "noprefetch") return {s, Tuning{8, true, true, false}};
  std::fprintf(stderr, "unknown variant %s\n", s.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 20;
  std::size_t copy_mib = 1024;
  bool verify = true;
  std::string configs = "u16-8192-L1,u16-8192-L5,u8-8192-L1,u16-512^3-L1,u16-512^3-L3";
  std::string variants = "fused,fixedppw,noprefetch,ppw16,ppw32,ppw64,scalar,unfused";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--repeat") repeat = std::max(1, std::stoi(next()));
    else if (a == "--copy-mib") copy_mib = std::stoul(next());
    else if (a == "--configs") configs = next();
    else if (a == "--variants") variants = next();
    else if (a == "--no-verify") verify = false;
    else {
      std::fprintf(stderr, "usage: dwt_gpu_bench [--repeat N] [--copy-mib M] [--configs a,b] [--variants a,b] [--no-verify]\n"
                           "configs: u16-8192-L1 u16-8192-L5 u16-8192-L6 u8-8192-L1 u8-8192-L5 u16-512^3-L1 u16-512^3-L3\n"
                           "variants: fused fixedppw noprefetch ppw16 ppw32 ppw64 scalar unfused\n");
      return 2;
    }
  }
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));

  double copy_gbs = 0;
  {
    const std::size_t bytes = copy_mib << 20;
    DeviceBuffer<uint8_t> a(bytes), b(bytes);
    CUDA_CHECK(cudaMemsetAsync(a.get(), 1, bytes, stream));
    const float ms = median_ms(repeat, stream, [&] {
      CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    });
    copy_gbs = 2.0 * bytes / (ms * 1e-3) / 1e9;
    std::printf("copy D2D %zu MiB: %.3f ms, %.1f GB/s (read + written)\n", copy_mib, ms, copy_gbs);
  }
  std::printf("%-14s %-8s %-8s %9s %9s %9s %7s  %s\n", "config", "variant", "dir", "ms", "GS/s", "GB/s", "copy%", "check");

  for (const std::string& cs : split(configs)) {
    const Config c = parse_config(cs);
    const std::size_t n = c.shape.samples(), w = bytes_of(c.type);
    const std::vector<uint8_t> host = make_samples(c, 7);
    std::vector<int32_t> want;
    if (verify) {
      want.resize(n);
      const auto t0 = std::chrono::steady_clock::now();
      cpu_forward(c, host, want);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("# %s: CPU forward (reference) %.3f s\n", c.name.c_str(), s);
    }
    DeviceBuffer<uint8_t> d_in(n * w), d_back(n * w);
    DeviceBuffer<int32_t> d_coeffs(n);
    DeviceBuffer<uint64_t> d_err(1);
    CUDA_CHECK(cudaMemcpy(d_in.get(), host.data(), n * w, cudaMemcpyHostToDevice));
    const double traffic = traffic_bytes(c);
    for (const std::string& vs : split(variants)) {
      const Variant v = parse_variant(vs);
      const std::size_t tb = vlec::cuda::dwt::temp_bytes(c.shape, c.levels, v.tuning);
      DeviceBuffer<uint8_t> d_temp(tb);
      auto fwd = [&] {
        vlec::cuda::dwt::forward(d_in.get(), c.type, d_coeffs.get(), c.shape, c.levels, d_err.get(), d_temp.get(), tb,
                                 stream, v.tuning);
      };
      auto inv = [&] {
        vlec::cuda::dwt::inverse(d_coeffs.get(), d_back.get(), c.type, c.shape, c.levels, d_err.get(), d_temp.get(),
                                 tb, stream, v.tuning);
      };
      // Check once, outside the timing.
      std::string fcheck = "-", icheck = "-";
      if (verify) {
        fwd();
        vlec::device::dwt53_throw_if_error(d_err.get(), false, c.type, c.shape, stream);
        std::vector<int32_t> got(n);
        CUDA_CHECK(cudaMemcpy(got.data(), d_coeffs.get(), n * 4, cudaMemcpyDeviceToHost));
        fcheck = got == want ? "= CPU" : "MISMATCH";
        CUDA_CHECK(cudaMemcpy(d_coeffs.get(), want.data(), n * 4, cudaMemcpyHostToDevice));
        inv();
        vlec::device::dwt53_throw_if_error(d_err.get(), true, c.type, c.shape, stream);
        std::vector<uint8_t> back(n * w);
        CUDA_CHECK(cudaMemcpy(back.data(), d_back.get(), n * w, cudaMemcpyDeviceToHost));
        icheck = back == host ? "= input" : "MISMATCH";
      }
      const float fms = median_ms(repeat, stream, fwd);
      const float ims = median_ms(repeat, stream, inv);
      for (int dir = 0; dir < 2; ++dir) {
        const double ms = dir ? ims : fms;
        const double gbs = traffic / (ms * 1e-3) / 1e9;
        std::printf("%-14s %-8s %-8s %9.3f %9.1f %9.1f %6.1f%%  %s\n", c.name.c_str(), v.name.c_str(),
                    dir ? "inverse" : "forward", ms, n / (ms * 1e-3) / 1e9, gbs, 100 * gbs / copy_gbs,
                    (dir ? icheck : fcheck).c_str());
      }
      std::fflush(stdout);
    }
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}
