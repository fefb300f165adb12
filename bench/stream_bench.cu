// bench/stream_bench.cu: the host-buffer API with host data, through the
// GPU in pieces (cuda/host_stream.hpp) against the CPU backend on all cores,
// both ways, on inputs of many GiB. --occupy-gib holds that much device
// memory for the whole run, so that the input is larger than the GPU memory
// left to vlec: the streamed path must then carry it through piece by piece.
// The host-to-device copy from pinned memory is timed in the same run: it is
// the bound of a host-to-host pipeline through the GPU.
//
// usage: stream_bench [--gib N] [--occupy-gib N] [--repeat R] [--threads T] [generator...]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/checksum.hpp"
#include "common/parallel.hpp"
#include "cuda/host_stream.hpp"
#include "gen/generators.hpp"
#include "vlec/vlec.hpp"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <typename F>
double median_seconds(int repeat, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    const double t0 = now();
    f();
    t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A hash of a large buffer on all threads (XXH3 of 64 MiB parts, combined).
uint64_t big_hash(const uint8_t* p, std::size_t n) {
  constexpr std::size_t kPart = std::size_t{64} << 20;
  const std::size_t parts = (n + kPart - 1) / kPart;
  std::vector<uint64_t> h(parts + 1, n);
  vlec::parallel_for(parts, 0, [&](std::size_t i) {
    h[i] = vlec::checksum64(p + i * kPart, std::min(kPart, n - i * kPart));
  });
  return vlec::checksum64(h.data(), 8 * h.size());
}

}  // namespace

int main(int argc, char** argv) {
  double gib = 8, occupy_gib = 0;
  int repeat = 3;
  unsigned threads = 0;
  std::vector<std::string> gens;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gib" && i + 1 < argc) gib = std::atof(argv[++i]);
    else if (a == "--occupy-gib" && i + 1 < argc) occupy_gib = std::atof(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) threads = static_cast<unsigned>(std::atoi(argv[++i]));
    else gens.push_back(a);
  }
  if (gens.empty()) gens = {"skewed", "quant1024"};
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::printf("stream_bench: no GPU\n");
    return 0;
  }
  void* occupied = nullptr;
  if (occupy_gib > 0 && cudaMalloc(&occupied, static_cast<std::size_t>(occupy_gib * (1 << 30))) != cudaSuccess) {
    std::printf("stream_bench: could not occupy %.1f GiB\n", occupy_gib);
    return 1;
  }
  std::size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  std::printf("stream_bench: %s, %.1f GiB device memory, %.1f GiB free to vlec; %u host threads; median of %d\n",
              prop.name, total_bytes / 1073741824.0, free_bytes / 1073741824.0,
              vlec::resolve_threads(threads, 1 << 20), repeat);
  {  // the bound: pinned host memory to the device and back, 1 GiB
    const std::size_t n = std::size_t{1} << 30;
    void *h = nullptr, *d = nullptr;
    if (cudaHostAlloc(&h, n, cudaHostAllocDefault) == cudaSuccess && cudaMalloc(&d, n) == cudaSuccess) {
      std::memset(h, 1, n);
      const double up = median_seconds(repeat, [&] { cudaMemcpy(d, h, n, cudaMemcpyHostToDevice); });
      const double down = median_seconds(repeat, [&] { cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost); });
      std::printf("pinned copies, 1 GiB: host to device %.1f GB/s, device to host %.1f GB/s\n", n / up / 1e9,
                  n / down / 1e9);
    }
    cudaFree(d);
    cudaFreeHost(h);
  }
  for (const std::string& g : gens) {
    // A 1 GiB sample of the generator, repeated: the generators are serial,
    // the codec's work does not depend on where the bytes came from.
    const vlec::gen::Sample s = vlec::gen::make(g, std::size_t{1} << 30, 1);
    const std::size_t bytes = static_cast<std::size_t>(gib * (1 << 30)) / 65536 * 65536;
    std::unique_ptr<uint8_t[]> in(new uint8_t[bytes]);
    vlec::parallel_for((bytes + s.bytes.size() - 1) / s.bytes.size(), 0, [&](std::size_t i) {
      const std::size_t at = i * s.bytes.size();
      std::memcpy(in.get() + at, s.bytes.data(), std::min(s.bytes.size(), bytes - at));
    });
    vlec::CompressOptions o{vlec::CodecChoice::huffman, s.dtype};
    o.threads = threads;
    const std::size_t bound = vlec::compress_bound(bytes, o);
    std::unique_ptr<uint8_t[]> frame(new uint8_t[bound]);
    std::printf("%s (%s, %zu bytes = %.2f GiB; streamed through the GPU: %s)\n", g.c_str(),
                std::string(vlec::to_string(s.dtype)).c_str(), bytes, bytes / 1073741824.0, vlec::cuda::stream_in_pieces(bytes) ? "yes" : "no");
    std::size_t n = 0;
    o.backend = vlec::Backend::cuda;
    const double gc = median_seconds(repeat, [&] { n = vlec::compress(in.get(), bytes, frame.get(), bound, o); });
    const uint64_t gpu_hash = big_hash(frame.get(), n);
    const std::size_t gpu_n = n;
    o.backend = vlec::Backend::cpu;
    const double cc = median_seconds(repeat, [&] { n = vlec::compress(in.get(), bytes, frame.get(), bound, o); });
    const bool same = n == gpu_n && big_hash(frame.get(), n) == gpu_hash;
    std::printf("  compress   GPU %8.1f ms %7.2f GB/s | CPU (%u threads) %8.1f ms %7.2f GB/s | ratio %.3f | frames %s\n",
                gc * 1e3, bytes / gc / 1e9, vlec::resolve_threads(threads, 1 << 20), cc * 1e3, bytes / cc / 1e9,
                double(bytes) / n, same ? "identical" : "DIFFER");
    const uint64_t in_hash = big_hash(in.get(), bytes);
    in.reset();  // the output takes its place
    std::unique_ptr<uint8_t[]> out(new uint8_t[bytes]);
    vlec::DecompressOptions d;
    d.threads = threads;
    d.backend = vlec::Backend::cuda;
    const double gd = median_seconds(repeat, [&] { vlec::decompress(frame.get(), n, out.get(), bytes, d); });
    const bool gpu_ok = big_hash(out.get(), bytes) == in_hash;
    std::memset(out.get(), 0, 4096);
    d.backend = vlec::Backend::cpu;
    const double cd = median_seconds(repeat, [&] { vlec::decompress(frame.get(), n, out.get(), bytes, d); });
    const bool cpu_ok = big_hash(out.get(), bytes) == in_hash;
    std::printf("  decompress GPU %8.1f ms %7.2f GB/s | CPU %8.1f ms %7.2f GB/s | output %s / %s\n", gd * 1e3,
                bytes / gd / 1e9, cd * 1e3, bytes / cd / 1e9, gpu_ok ? "== input" : "WRONG", cpu_ok ? "== input" : "WRONG");
    if (!same || !gpu_ok || !cpu_ok) return 1;
  }
  cudaFree(occupied);
  return 0;
}
