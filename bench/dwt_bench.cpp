// bench/dwt_bench.cpp: throughput of the CPU reversible 5/3 wavelet transform
// (vlec/dwt.hpp), forward and inverse, 5 levels: a 4096 x 4096 u16 image and
// 256^3 u8 and u16 volumes, on 1 thread and on all hardware threads. Reports
// bytes of samples (the input of the forward, the output of the inverse) per
// second. Inverse_* time dwt53_inverse, which first copies the coefficients
// into a fresh buffer (page faults included); InverseInPlace_* times
// dwt53_inverse_inplace, which works in the caller's buffer.
//
//   dwt_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// The data is a smooth field with noise (the transform's speed does not
// depend on the values: no branch looks at them).
#include <benchmark/benchmark.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "vlec/dwt.hpp"

namespace {

using namespace vlec;

template <typename T>
std::vector<T> field(const DwtShape& s) {
  std::vector<T> v(s.samples());
  uint64_t state = 42;
  const double amp = (double(std::numeric_limits<T>::max()) - std::numeric_limits<T>::min()) * 0.4;
  const double mid = (double(std::numeric_limits<T>::max()) + std::numeric_limits<T>::min()) / 2;
  for (std::size_t z = 0; z < s.nz; ++z)
    for (std::size_t y = 0; y < s.ny; ++y)
      for (std::size_t x = 0; x < s.nx; ++x) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const double noise = double(state >> 40) / double(1 << 24) - 0.5;
        v[x + s.nx * (y + s.ny * z)] =
            static_cast<T>(mid + amp * std::sin(x / 37.0 + z / 23.0) * std::cos(y / 51.0) + noise * amp * 0.02);
      }
  return v;
}

unsigned thread_arg(int64_t a) { return a ? static_cast<unsigned>(a) : std::max(1u, std::thread::hardware_concurrency()); }

template <typename T>
void BM_Forward(benchmark::State& state, DwtShape s) {
  const std::vector<T> v = field<T>(s);
  std::vector<int32_t> c(v.size());
  const DwtOptions o{5, thread_arg(state.range(0))};
  for (auto _ : state) {
    dwt53_forward(v.data(), c.data(), s, o);
    benchmark::DoNotOptimize(c.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(v.size() * sizeof(T)));
  state.counters["threads"] = o.threads;
}

template <typename T>
void BM_Inverse(benchmark::State& state, DwtShape s) {
  const std::vector<T> v = field<T>(s);
  std::vector<int32_t> c(v.size());
  const DwtOptions o{5, thread_arg(state.range(0))};
  dwt53_forward(v.data(), c.data(), s, o);
  std::vector<T> back(v.size());
  for (auto _ : state) {
    dwt53_inverse(c.data(), back.data(), s, o);
    benchmark::DoNotOptimize(back.data());
  }
  if (back != v) state.SkipWithError("inverse(forward(x)) != x");
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(v.size() * sizeof(T)));
  state.counters["threads"] = o.threads;
}

// dwt53_inverse_inplace: the coefficients are restored (untimed) before each run.
template <typename T>
void BM_InverseInPlace(benchmark::State& state, DwtShape s) {
  const std::vector<T> v = field<T>(s);
  std::vector<int32_t> c(v.size());
  const DwtOptions o{5, thread_arg(state.range(0))};
  dwt53_forward(v.data(), c.data(), s, o);
  std::vector<int32_t> work(c.size());
  std::vector<T> back(v.size());
  for (auto _ : state) {
    state.PauseTiming();
    std::copy(c.begin(), c.end(), work.begin());
    state.ResumeTiming();
    dwt53_inverse_inplace(work.data(), back.data(), s, o);
    benchmark::DoNotOptimize(back.data());
  }
  if (back != v) state.SkipWithError("inverse(forward(x)) != x");
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(v.size() * sizeof(T)));
  state.counters["threads"] = o.threads;
}

const DwtShape k2D{4096, 4096}, k3D{256, 256, 256};

void Forward_2d_4096x4096_u16(benchmark::State& st) { BM_Forward<uint16_t>(st, k2D); }
void Inverse_2d_4096x4096_u16(benchmark::State& st) { BM_Inverse<uint16_t>(st, k2D); }
void InverseInPlace_2d_4096x4096_u16(benchmark::State& st) { BM_InverseInPlace<uint16_t>(st, k2D); }
void Forward_3d_256_u8(benchmark::State& st) { BM_Forward<uint8_t>(st, k3D); }
void Inverse_3d_256_u8(benchmark::State& st) { BM_Inverse<uint8_t>(st, k3D); }
void Forward_3d_256_u16(benchmark::State& st) { BM_Forward<uint16_t>(st, k3D); }
void Inverse_3d_256_u16(benchmark::State& st) { BM_Inverse<uint16_t>(st, k3D); }

// Argument: threads (0 = all hardware threads).
#define VLEC_DWT_BENCH(f) BENCHMARK(f)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()
VLEC_DWT_BENCH(Forward_2d_4096x4096_u16);
VLEC_DWT_BENCH(Inverse_2d_4096x4096_u16);
VLEC_DWT_BENCH(InverseInPlace_2d_4096x4096_u16);
VLEC_DWT_BENCH(Forward_3d_256_u8);
VLEC_DWT_BENCH(Inverse_3d_256_u8);
VLEC_DWT_BENCH(Forward_3d_256_u16);
VLEC_DWT_BENCH(Inverse_3d_256_u16);

}  // namespace

BENCHMARK_MAIN();
