// bench/gpu_sweep.cu: where the GPU backend overtakes the CPU backend.
//
// One skewed-byte sample (the `skewed` generator) of the largest size is made
// once; each size in the sweep is a prefix of it. For every size the program
// times, in the same run and on the same bytes:
//   GPU  vlec::device::compress (histogram + codebook + encode + header, data
//        already on the device) and vlec::device::decompress (header checks on
//        the host, every chunk decoded and verified on the device);
//   CPU  vlec::compress / vlec::decompress with the CPU backend on every
//        hardware thread, data in host memory.
// Medians after warm-up (more repetitions for small sizes); GPU times with
// CUDA events around the whole call. Every stream is decoded and compared
// with the input, and the GPU's compressed bytes with the CPU's.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/frame_device.hpp"
#include "gen/generators.hpp"
#include "vlec/device.hpp"
#include "vlec/vlec.hpp"
#include "bench_timing.cuh"

using namespace vlec;

namespace {

template <typename F>
double median_seconds_cpu(int repeat, F&& run) {
  run();
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t max_bytes = uint64_t{4} << 30;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--max-mib" && i + 1 < argc) max_bytes = std::stoull(argv[++i]) << 20;
    else if (a == "--seed" && i + 1 < argc) seed = std::stoull(argv[++i]);
    else {
      std::fprintf(stderr, "usage: gpu_sweep [--max-mib N (4096)] [--seed S (1)]\n");
      return 1;
    }
  }
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const gen::Sample sample = gen::make("skewed", max_bytes, seed);
  std::printf("gpu_sweep: synthetic 'skewed' u8, seed %llu, prefixes of %llu bytes; GPU %s (%d SMs); CPU backend on "
              "%u threads\n",
              (unsigned long long)seed, (unsigned long long)max_bytes, prop.name, prop.multiProcessorCount, threads);
  std::printf("GB/s of uncompressed data; GPU: device-resident calls (vlec/device.hpp); CPU: host buffers\n\n");
  std::printf("%12s %6s %7s | %10s %10s | %10s %10s | %8s %8s\n", "bytes", "reps", "ratio", "GPU comp", "GPU dec",
              "CPU comp", "CPU dec", "comp x", "dec x");

  cuda::DeviceBuffer<uint8_t> d_in(max_bytes), d_out(max_bytes);
  CUDA_CHECK(cudaMemcpy(d_in.get(), sample.bytes.data(), max_bytes, cudaMemcpyHostToDevice));
  int status = 0;
  for (uint64_t n = 64 << 10; n <= max_bytes; n *= 4) {
    const int reps = static_cast<int>(std::clamp<uint64_t>((uint64_t{2} << 30) / n, 5, 50));
    // GPU
    device::CompressOptions dco;
    cuda::DeviceBuffer<uint8_t> d_frame(device::compress_capacity(n, dco)), d_temp(device::compress_temp_bytes(n, dco));
    cuda::DeviceBuffer<uint64_t> d_info(2);
    const double gc = 1e-3 * bench::median_ms(reps, [&] {
      device::compress(d_in.get(), n, d_frame.get(), d_frame.size(), d_info.get(), d_info.get() + 1, d_temp.get(),
                       d_temp.size(), nullptr, dco);
    });
    uint64_t info[2];
    CUDA_CHECK(cudaMemcpy(info, d_info.get(), 16, cudaMemcpyDeviceToHost));
    const std::size_t frame_bytes = info[0];
    cuda::DeviceBuffer<uint8_t> d_dtemp(std::max<std::size_t>(1, device::decompress_temp_bytes(d_frame.get(), frame_bytes)));
    std::size_t written = 0;
    const double gd = 1e-3 * bench::median_ms(reps, [&] {
      written = device::decompress(d_frame.get(), frame_bytes, d_out.get(), n, d_dtemp.get(), d_dtemp.size(), nullptr);
    });
    std::vector<uint8_t> gpu_frame(frame_bytes), back(n);
    CUDA_CHECK(cudaMemcpy(gpu_frame.data(), d_frame.get(), frame_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(back.data(), d_out.get(), n, cudaMemcpyDeviceToHost));
    // CPU
    CompressOptions co;
    co.codec = CodecChoice::huffman;
    co.backend = Backend::cpu;
    co.threads = threads;
    DecompressOptions dopt;
    dopt.backend = Backend::cpu;
    dopt.threads = threads;
    std::vector<uint8_t> packed(compress_bound(n, co)), plain(n);
    std::size_t packed_bytes = 0, plain_bytes = 0;
    const double cc = median_seconds_cpu(reps, [&] {
      packed_bytes = compress(sample.bytes.data(), n, packed.data(), packed.size(), co);
    });
    const double cd = median_seconds_cpu(reps, [&] {
      plain_bytes = decompress(packed.data(), packed_bytes, plain.data(), plain.size(), dopt);
    });
    const bool same = packed_bytes == frame_bytes && std::equal(gpu_frame.begin(), gpu_frame.end(), packed.begin());
    const bool ok = written == n && plain_bytes == n && std::equal(back.begin(), back.end(), sample.bytes.begin()) &&
                    std::equal(plain.begin(), plain.end(), sample.bytes.begin());
    auto gbs = [&](double s) { return n / s / 1e9; };
    std::printf("%12llu %6d %7.4f | %10.2f %10.2f | %10.2f %10.2f | %8.2f %8.2f %s%s\n", (unsigned long long)n, reps,
                double(n) / frame_bytes, gbs(gc), gbs(gd), gbs(cc), gbs(cd), cc / gc, cd / gd,
                ok ? "round trips ok" : "ROUND TRIP FAILED", same ? ", GPU bytes = CPU bytes" : ", GPU BYTES DIFFER");
    std::fflush(stdout);
    if (!ok || !same) status = 2;
  }
  return status;
}
