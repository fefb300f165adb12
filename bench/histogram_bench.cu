// bench/histogram_bench.cu: GPU benchmark of vlec's symbol histogram
// (src/cuda/histogram_gpu.hpp), every method against CUB on 1 GiB and 64 MiB.
//
// For each dataset (skewed u8, quant1024 u16, quant65536 u16 by default) the
// sample is generated once at the largest size and uploaded; each size takes
// its prefix. Every method's histogram is checked against the CPU's
// huffman::accumulate_histogram (and the out-of-alphabet index against ~0),
// then timed with CUDA events: median of --repeat runs after two warm-ups. A
// run is the whole histogram_device() call (zeroing d_hist included); the row
// `cub-raw` is the bare cub::DeviceHistogram::HistogramEven call into 32-bit
// counters, CUB's own figure. The yardstick is a device-to-device copy of the
// same number of bytes, timed in the same run and reported as bytes copied
// per second (read + write traffic is twice that); "of copy" is the method's
// input GB/s over the copy's. A histogram only reads, so it can exceed 100%.
//
// Usage: histogram_bench [--sizes 1024,64] [--repeat 20] [--seed 1]
//                        [--data skewed,quant1024,quant65536] [--u32]
//   --u32 also runs each u16 dataset widened to u32 (to set automatic for u32).
#include <cuda_runtime.h>

#include <cub/device/device_histogram.cuh>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/histogram_gpu.hpp"
#include "gen/generators.hpp"
#include "huffman/codebook.hpp"
#include "bench_timing.cuh"

// No `using namespace vlec`: vlec::cuda and CUB's ::cuda would be ambiguous.
namespace vc = vlec::cuda;
namespace gen = vlec::gen;
namespace huffman = vlec::huffman;
using vlec::DType;
using vc::HistogramMethod;

namespace {

using vlec::bench::median_ms;
using vlec::bench::split;

struct Args {
  std::vector<std::size_t> mib = {1024, 64};
  int repeat = 20;
  uint64_t seed = 1;
  std::vector<std::string> data = {"skewed", "quant1024", "quant65536"};
  bool u32 = false;
};

// The bare CUB call into 32-bit counters (no zeroing of d_hist, no conversion).
struct CubRaw {
  const void* in = nullptr;
  int n = 0;
  DType t = DType::u8;
  unsigned* counts = nullptr;
  void* temp = nullptr;
  std::size_t bytes = 0;
  cudaError_t call(cudaStream_t s) {
    const int levels = t == DType::u8 ? 257 : 65537, upper = levels - 1;
    if (t == DType::u8)
      return cub::DeviceHistogram::HistogramEven(temp, bytes, static_cast<const uint8_t*>(in), counts, levels, 0,
                                                 upper, n, s);
    if (t == DType::u16)
      return cub::DeviceHistogram::HistogramEven(temp, bytes, static_cast<const uint16_t*>(in), counts, levels, 0,
                                                 upper, n, s);
    return cub::DeviceHistogram::HistogramEven(temp, bytes, static_cast<const uint32_t*>(in), counts, levels, 0,
                                               upper, n, s);
  }
};

void print_row(std::size_t mib, const std::string& name, DType t, const std::string& method, float ms,
               double bytes, double copy_gbs, const char* verified) {
  const double gbs = bytes / ms / 1e6;
  std::printf("%6zu MiB  %-11s %-4s %-30s %9.3f %9.1f %8.1f%%  %s\n", mib, name.c_str(),
              std::string(to_string(t)).c_str(), method.c_str(), ms, gbs, 100 * gbs / copy_gbs, verified);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--sizes") {
      args.mib.clear();
      for (const std::string& s : split(value())) args.mib.push_back(std::stoul(s));
    } else if (a == "--repeat") {
      args.repeat = std::max(1, std::stoi(value()));
    } else if (a == "--seed") {
      args.seed = std::stoull(value());
    } else if (a == "--data") {
      args.data = split(value());
    } else if (a == "--u32") {
      args.u32 = true;
    } else {
      std::fprintf(stderr,
                   "usage: histogram_bench [--sizes MiB,MiB] [--repeat N] [--seed S] [--data a,b] [--u32]\n");
      return 1;
    }
  }
  if (args.mib.empty() || args.data.empty()) return 1;
  const std::size_t max_bytes = *std::max_element(args.mib.begin(), args.mib.end()) << 20;

  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, %.0f MiB; seed %llu; median of %d runs after 2 warm-ups\n", prop.name,
              prop.multiProcessorCount, prop.totalGlobalMem / 1048576.0, (unsigned long long)args.seed, args.repeat);
  std::printf("automatic = %s (u8), %s (u16), %s (u32)\n",
              vc::to_string(vc::resolve_histogram_method(DType::u8, HistogramMethod::automatic)),
              vc::to_string(vc::resolve_histogram_method(DType::u16, HistogramMethod::automatic)),
              vc::to_string(vc::resolve_histogram_method(DType::u32, HistogramMethod::automatic)));

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::size_t in_capacity = (args.u32 ? 2 : 1) * max_bytes;  // room for u16 widened to u32
  vc::DeviceBuffer<uint8_t> d_in(in_capacity), d_copy(max_bytes);
  vc::DeviceBuffer<uint64_t> d_hist(vc::kHistogramBins), d_bad(1);
  vc::DeviceBuffer<unsigned> d_counts(vc::kHistogramBins);
  std::vector<uint64_t> gpu_hist(vc::kHistogramBins);

  // The yardstick for each size: a device-to-device copy of that many bytes.
  std::vector<double> copy_gbs(args.mib.size());
  CUDA_CHECK(cudaMemset(d_in.get(), 1, in_capacity));
  for (std::size_t k = 0; k < args.mib.size(); ++k) {
    const std::size_t bytes = args.mib[k] << 20;
    const float ms = median_ms(args.repeat, stream, [&] {
      CUDA_CHECK(cudaMemcpyAsync(d_copy.get(), d_in.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    });
    copy_gbs[k] = bytes / ms / 1e6;
    std::printf("device copy of %zu MiB: %.1f GB/s copied (%.1f GB/s read+write), %.3f ms\n", args.mib[k],
                copy_gbs[k], 2 * copy_gbs[k], ms);
  }
  std::printf("\n%10s  %-11s %-4s %-30s %9s %9s %9s  %s\n", "size", "data", "type", "method", "ms", "GB/s in",
              "of copy", "verified");

  bool all_ok = true;
  for (const std::string& name : args.data) {
    gen::Sample sample = gen::make(name, max_bytes, args.seed);
    const uint64_t total_elements = sample.elements();
    const std::size_t gen_width = dtype_bytes(sample.dtype);
    std::vector<std::pair<DType, std::vector<uint8_t>>> variants;
    if (args.u32 && sample.dtype == DType::u16) {
      const std::size_t n = sample.bytes.size() / 2;
      std::vector<uint8_t> wide(n * 4, 0);
      for (std::size_t i = 0; i < n; ++i) std::memcpy(&wide[4 * i], &sample.bytes[2 * i], 2);
      variants.emplace_back(sample.dtype, std::move(sample.bytes));
      variants.emplace_back(DType::u32, std::move(wide));
    } else {
      variants.emplace_back(sample.dtype, std::move(sample.bytes));
    }
    for (const auto& variant : variants) {
      const DType t = variant.first;
      const std::vector<uint8_t>& data = variant.second;
      const unsigned width = static_cast<unsigned>(dtype_bytes(t));
      CUDA_CHECK(cudaMemcpy(d_in.get(), data.data(), data.size(), cudaMemcpyHostToDevice));
      for (std::size_t k = 0; k < args.mib.size(); ++k) {
        // The same element count for u32 as for its u16 original: twice the bytes.
        const uint64_t elements = std::min<uint64_t>((args.mib[k] << 20) / gen_width, total_elements);
        const double in_bytes = double(elements) * width;
        huffman::Histogram cpu;
        huffman::accumulate_histogram(data.data(), elements, t, cpu);
        cpu.resize(vc::kHistogramBins, 0);

        for (HistogramMethod m : {HistogramMethod::replicated_shared, HistogramMethod::global_atomic,
                                  HistogramMethod::cub, HistogramMethod::automatic}) {
          const std::size_t temp_bytes = vc::histogram_temp_bytes(elements, t, m);
          vc::DeviceBuffer<uint8_t> d_temp(temp_bytes);
          auto run = [&] {
            vc::histogram_device(d_in.get(), elements, t, d_hist.get(), d_bad.get(), d_temp.get(), temp_bytes,
                                   stream, m);
          };
          run();
          CUDA_CHECK(cudaStreamSynchronize(stream));
          uint64_t bad = 0;
          CUDA_CHECK(cudaMemcpy(gpu_hist.data(), d_hist.get(), gpu_hist.size() * 8, cudaMemcpyDeviceToHost));
          CUDA_CHECK(cudaMemcpy(&bad, d_bad.get(), 8, cudaMemcpyDeviceToHost));
          const bool ok = gpu_hist == cpu && bad == ~uint64_t{0};
          all_ok &= ok;
          const float ms = median_ms(args.repeat, stream, run);
          std::string label = vc::to_string(m);
          if (m == HistogramMethod::automatic)
            label += std::string(" (") + vc::to_string(vc::resolve_histogram_method(t, m)) + ")";
          print_row(args.mib[k], name, t, label, ms, in_bytes, copy_gbs[k], ok ? "yes" : "NO");
        }

        if (elements < (uint64_t{1} << 31)) {  // CUB's own figure: one call, 32-bit counters
          CubRaw raw{d_in.get(), static_cast<int>(elements), t, d_counts.get(), nullptr, 0};
          CUDA_CHECK(raw.call(stream));  // size query
          vc::DeviceBuffer<uint8_t> d_temp(std::max<std::size_t>(raw.bytes, 1));
          raw.temp = d_temp.get();
          const float ms = median_ms(args.repeat, stream, [&] { CUDA_CHECK(raw.call(stream)); });
          std::vector<unsigned> counts(vc::kHistogramBins, 0);
          const std::size_t bins = t == DType::u8 ? 256 : vc::kHistogramBins;
          CUDA_CHECK(cudaMemcpy(counts.data(), d_counts.get(), bins * 4, cudaMemcpyDeviceToHost));
          bool ok = true;
          for (std::size_t b = 0; b < vc::kHistogramBins; ++b) ok &= counts[b] == cpu[b];
          all_ok &= ok;
          print_row(args.mib[k], name, t, "cub-raw (HistogramEven)", ms, in_bytes, copy_gbs[k], ok ? "yes" : "NO");
        }
      }
    }
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  std::printf(all_ok ? "\nall histograms verified\n" : "\nVERIFICATION FAILED\n");
  return all_ok ? 0 : 2;
}
