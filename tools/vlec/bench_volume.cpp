// tools/vlec/bench_volume.cpp: `vlec bench --volume`, the sparse-volume use
// case (Rutter): how long a renderer waits to get a u8 volume that is on the
// GPU into host memory compressed (GPU compression, then the copy of the
// compressed bytes, overlapped slab by slab: vlec/device_transfer.hpp),
// against copying the raw volume; the ratio; and the CPU backend on the same
// volume, same codec and same frames. examples/volume_pipeline.cu does the
// same with the file write, the read back and the GPU decompression.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bench.hpp"
#include "common/volume_spec.hpp"
#include "exit_codes.hpp"
#include "gen/generators.hpp"
#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA
#include <cuda_runtime.h>

#include "vlec/device_transfer.hpp"
#endif

namespace vlec::cli {

namespace {

std::vector<uint8_t> load_volume(const std::string& spec, std::string& name) {
  if (spec == "generated" || spec.empty()) {
    name = "generated 512^3 sparse volume (seed 1)";
    return gen::make("volume", 0, 1).bytes;
  }
  const auto parsed = parse_volume_spec(spec);
  if (!parsed || parsed->wide) throw CliError(kExitUsage, "--volume takes 'generated' or PATH@WxHxD (u8 samples)");
  const std::string& path = parsed->path;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw CliError(kExitInput, "cannot read " + path);
  std::vector<uint8_t> v{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  if (v.size() != parsed->bytes())
    throw CliError(kExitInput, path + " holds " + std::to_string(v.size()) + " bytes, not " + parsed->shape);
  name = path + " (" + parsed->shape + " u8)";
  return v;
}

}  // namespace

int run_volume_bench(const BenchSettings& s) {
  std::string name;
  const std::vector<uint8_t> vol = load_volume(s.volume, name);
  const std::size_t n = vol.size();
  const std::size_t zeros = static_cast<std::size_t>(std::count(vol.begin(), vol.end(), uint8_t{0}));
  std::printf("volume: %s, %zu bytes, %.1f %% zero; medians of %u runs\n", name.c_str(), n,
              n ? 100.0 * zeros / n : 0.0, s.repeat);
  const std::vector<std::string> codecs = {"rle", "rle+huffman", "huffman"};
  std::printf("%-12s %-8s %12s %8s %11s %11s %s\n", "codec", "backend", "bytes", "ratio", "time_ms", "of_raw_D2H",
              "what");
#ifdef VLEC_WITH_CUDA
  const bool gpu = vlec::cuda_available() && s.codec.backend != "cpu";
#else
  const bool gpu = false;
#endif
  double raw_ms = 0;
  constexpr unsigned kSlabs = 2;  // HostCompressor's default, measured best
#ifdef VLEC_WITH_CUDA
  uint8_t *d_vol = nullptr, *h_buf = nullptr;
  if (gpu) {
    if (cudaMalloc(&d_vol, std::max<std::size_t>(n, 1)) != cudaSuccess ||
        cudaMallocHost(&h_buf, std::max<std::size_t>(n, 1) + (1 << 20) * kSlabs) != cudaSuccess)
      throw CliError(kExitOther, "cannot allocate GPU or pinned memory for the volume");
    cudaMemcpy(d_vol, vol.data(), n, cudaMemcpyHostToDevice);
    raw_ms = 1e3 * median_seconds(s.repeat, [&] { cudaMemcpy(h_buf, d_vol, n, cudaMemcpyDeviceToHost); });
    std::printf("%-12s %-8s %12zu %8.3f %11.3f %11.3f %s\n", "raw", "cuda", n, 1.0, raw_ms, 1.0,
                "D2H copy of the raw volume to pinned memory");
  }
#endif
  for (const std::string& c : codecs) {
    CompressOptions co;
    co.codec = *parse_codec(c);
    co.backend = Backend::cpu;
    co.threads = static_cast<unsigned>(std::max(0, s.codec.threads));
    std::vector<uint8_t> cpu_stream;
    // The CPU writes the same frames as the GPU slabs (one frame per slab of whole chunks).
    const std::size_t chunk = kDefaultChunkElements;
    const std::size_t slab = std::max<std::size_t>(1, ((n + chunk - 1) / chunk + kSlabs - 1) / kSlabs) * chunk;
    const double cpu_ms = 1e3 * median_seconds(s.repeat, [&] {
      cpu_stream.clear();
      std::size_t at = 0;
      do {  // an empty volume is one empty frame, as on the GPU
        const std::vector<uint8_t> f = vlec::compress(vol.data() + at, std::min(slab, n - at), co);
        cpu_stream.insert(cpu_stream.end(), f.begin(), f.end());
        at += slab;
      } while (at < n);
    });
    std::printf("%-12s %-8s %12zu %8.3f %11.3f %11s %s\n", c.c_str(), "cpu", cpu_stream.size(),
                static_cast<double>(n) / static_cast<double>(std::max<std::size_t>(cpu_stream.size(), 1)), cpu_ms,
                gpu ? std::to_string(cpu_ms / raw_ms).substr(0, 6).c_str() : "-",
                "CPU compress (volume in host memory)");
#ifdef VLEC_WITH_CUDA
    if (!gpu) continue;
    device::CompressOptions o;
    o.codec = co.codec == CodecChoice::rle ? Codec::rle : co.codec == CodecChoice::rle_huffman ? Codec::rle_huffman
                                                                                               : Codec::huffman;
    try {
      device::HostCompressor hc(n, o, kSlabs);
      if (hc.host_capacity() > n + (1 << 20) * kSlabs) throw CliError(kExitOther, "pinned buffer too small");
      std::size_t bytes = 0;
      const double ms = 1e3 * median_seconds(s.repeat, [&] { bytes = hc.compress(d_vol, n, h_buf, hc.host_capacity()); });
      const bool same = bytes == cpu_stream.size() && std::memcmp(h_buf, cpu_stream.data(), bytes) == 0;
      if (!same) throw CliError(kExitOther, c + ": the GPU stream differs from the CPU backend's");
      std::printf("%-12s %-8s %12zu %8.3f %11.3f %11.3f %s\n", c.c_str(), "cuda", bytes,
                  static_cast<double>(n) / static_cast<double>(std::max<std::size_t>(bytes, 1)), ms, ms / raw_ms,
                  "GPU compress + D2H of the stream (byte-identical to the CPU's)");
    } catch (const vlec::Error& e) {
      std::printf("%-12s %-8s %s\n", c.c_str(), "cuda", e.what());
    }
#endif
  }
#ifdef VLEC_WITH_CUDA
  if (gpu) {
    cudaFree(d_vol);
    cudaFreeHost(h_buf);
  }
#endif
  return kExitSuccess;
}

}  // namespace vlec::cli
