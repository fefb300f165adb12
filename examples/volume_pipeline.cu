// examples/volume_pipeline.cu: the sparse-volume use case end to end (Rutter,
// "Run-length encoding on graphics hardware"): a renderer's 512^3 u8 density
// volume already on the GPU is compressed there, copied to pinned host
// memory, and written to a file; the file is then read, copied back and
// decompressed on the GPU, and checked against the original.
//
//   volume_pipeline [--volume PATH@WxHxD] [--codecs rle,rle+huffman,huffman]
//                   [--slabs N] [--repeat R] [--out FILE] [--seed S]
//
// Without --volume the generator's 512^3 sparse volume is used.
//
// Why it is fast: the volume is cut into N slabs along z, one frame each (a
// vlec stream is a sequence of frames, so the concatenation is one valid
// stream). Slabs are compressed on two streams; as soon as a slab's frame size
// is known (an 8-byte copy), its frame is copied to pinned memory on a third
// stream while the GPU compresses the next slabs, so compression and PCIe
// overlap and only the compressed bytes cross the bus.
//
// It reports, as medians after warm-up: the raw volume's D2H copy, compress +
// D2H of the compressed stream (the latency a renderer waits for), the ratio,
// the file write/read, read-back + H2D + GPU decompression, and the CPU
// backend's ratio and time on the same volume.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/volume_spec.hpp"
#include "cuda/cuda_check.hpp"
#include "gen/generators.hpp"
#include "vlec/device.hpp"
#include "vlec/device_transfer.hpp"
#include "vlec/vlec.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median_ms(int repeat, const std::function<void()>& f) {
  f();
  f();  // two warm-ups
  std::vector<double> t;
  for (int r = 0; r < repeat; ++r) {
    const auto a = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Volume {
  std::string name;
  std::size_t nx = 0, ny = 0, nz = 0;
  std::vector<uint8_t> bytes;
};

Volume load_volume(const std::string& spec) {
  const auto parsed = vlec::parse_volume_spec(spec);
  if (spec.rfind('@') == std::string::npos) throw std::runtime_error("--volume takes PATH@WxHxD");
  if (!parsed) throw std::runtime_error("bad volume shape in " + spec);
  if (parsed->wide) throw std::runtime_error("--volume takes u8 samples only, not " + spec);
  Volume v;
  const std::string& path = parsed->path;
  v.nx = parsed->width;
  v.ny = parsed->height;
  v.nz = parsed->depth;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  v.bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (v.bytes.size() != parsed->bytes()) throw std::runtime_error(path + ": size does not match the shape");
  v.name = path.substr(path.find_last_of('/') + 1);
  return v;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string volume_spec, out_path = "/tmp/vlec-volume.vlec", codecs = "rle,rle+huffman,huffman";
  int repeat = 20;
  std::size_t slabs = 2;
  uint64_t seed = 1;  // the seed `vlec bench --volume generated` uses
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return std::string(argv[++i]);
    };
    if (a == "--volume") volume_spec = next();
    else if (a == "--codecs") codecs = next();
    else if (a == "--slabs") slabs = std::stoul(next());
    else if (a == "--repeat") repeat = std::max(1, std::stoi(next()));
    else if (a == "--out") out_path = next();
    else if (a == "--seed") seed = std::stoull(next());
    else throw std::runtime_error("unknown option " + a);
  }
  slabs = std::clamp<std::size_t>(slabs, 1, 64);
  if (!vlec::cuda_available()) {
    std::printf("volume_pipeline: no GPU; nothing to measure\n");
    return 0;
  }
  Volume vol;
  if (volume_spec.empty()) {
    vlec::gen::Sample s = vlec::gen::make("volume", 0, seed);
    vol.name = "generated sparse volume (seed " + std::to_string(seed) + ")";
    vol.nx = vol.ny = vol.nz = 512;
    vol.bytes = std::move(s.bytes);
  } else {
    vol = load_volume(volume_spec);
  }
  const std::size_t n = vol.bytes.size();
  if (n == 0) throw std::runtime_error("the volume is empty");
  std::size_t zeros = std::count(vol.bytes.begin(), vol.bytes.end(), uint8_t{0});
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# volume_pipeline on %s: %s, %zux%zux%zu u8 (%zu bytes, %.1f %% zero), %zu slab(s), medians of %d\n",
              prop.name, vol.name.c_str(), vol.nx, vol.ny, vol.nz, n, 100.0 * zeros / std::max<std::size_t>(n, 1),
              slabs, repeat);

  uint8_t *d_volume = nullptr, *h_raw = nullptr, *d_back = nullptr;
  CUDA_CHECK(cudaMalloc(&d_volume, n));
  CUDA_CHECK(cudaMalloc(&d_back, n));
  CUDA_CHECK(cudaMallocHost(&h_raw, n));
  CUDA_CHECK(cudaMemcpy(d_volume, vol.bytes.data(), n, cudaMemcpyHostToDevice));

  cudaStream_t copy;
  CUDA_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  const double raw_d2h = median_ms(repeat, [&] {
    CUDA_CHECK(cudaMemcpyAsync(h_raw, d_volume, n, cudaMemcpyDeviceToHost, copy));
    CUDA_CHECK(cudaStreamSynchronize(copy));
  });
  std::printf("raw D2H                      %9.3f ms  %7.1f GB/s  (the baseline; target: compress + D2H <= %.3f ms)\n",
              raw_d2h, n / raw_d2h / 1e6, raw_d2h / 5);

  std::istringstream codec_list(codecs);
  for (std::string name; std::getline(codec_list, name, ',');) {
    const auto choice = vlec::parse_codec(name);
    if (!choice || *choice == vlec::CodecChoice::automatic) throw std::runtime_error("unknown codec " + name);
    const vlec::Codec codec = *choice == vlec::CodecChoice::rle           ? vlec::Codec::rle
                              : *choice == vlec::CodecChoice::rle_huffman ? vlec::Codec::rle_huffman
                              : *choice == vlec::CodecChoice::huffman     ? vlec::Codec::huffman
                                                                          : vlec::Codec::raw;
    vlec::device::CompressOptions o;
    o.codec = codec;
    o.dtype = vlec::DType::u8;
    double comp_d2h = 0, comp_only = 0;
    std::size_t stream_bytes = 0, slab_elements = 0;
    uint8_t* h_stream = nullptr;
    try {
      vlec::device::HostCompressor hc(n, o, static_cast<unsigned>(slabs));
      slab_elements = hc.slab_elements();
      CUDA_CHECK(cudaMallocHost(&h_stream, hc.host_capacity()));
      comp_d2h = median_ms(repeat, [&] { stream_bytes = hc.compress(d_volume, n, h_stream, hc.host_capacity()); });
      // Compression alone (one frame, on the GPU), for the breakdown.
      const std::size_t cap = vlec::device::compress_capacity(n, o), tb = vlec::device::compress_temp_bytes(n, o);
      uint8_t *d_frame = nullptr, *d_t = nullptr;
      uint64_t* d_res = nullptr;
      CUDA_CHECK(cudaMalloc(&d_frame, cap));
      CUDA_CHECK(cudaMalloc(&d_t, std::max<std::size_t>(tb, 1)));
      CUDA_CHECK(cudaMalloc(&d_res, 16));
      comp_only = median_ms(repeat, [&] {
        vlec::device::compress(d_volume, n, d_frame, cap, d_res, d_res + 1, d_t, tb, copy, o);
        CUDA_CHECK(cudaStreamSynchronize(copy));
      });
      CUDA_CHECK(cudaFree(d_frame));
      CUDA_CHECK(cudaFree(d_t));
      CUDA_CHECK(cudaFree(d_res));
    } catch (const vlec::Error& e) {
      std::printf("%-12s on the GPU: %s\n", name.c_str(), e.what());
      if (h_stream) CUDA_CHECK(cudaFreeHost(h_stream));
      continue;
    }

    // The file: written to a temporary name and renamed, then read back.
    const auto w0 = Clock::now();
    {
      const std::string tmp = out_path + ".tmp";
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      f.write(reinterpret_cast<const char*>(h_stream), static_cast<std::streamsize>(stream_bytes));
      f.close();
      if (!f || std::rename(tmp.c_str(), out_path.c_str()) != 0) throw std::runtime_error("cannot write " + out_path);
    }
    const double write_ms = std::chrono::duration<double, std::milli>(Clock::now() - w0).count();
    std::vector<uint8_t> file_bytes;
    {
      std::ifstream f(out_path, std::ios::binary);
      file_bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    if (file_bytes.size() != stream_bytes || std::memcmp(file_bytes.data(), h_stream, stream_bytes) != 0)
      throw std::runtime_error("the file read back differs from the stream written");

    // Back: pinned -> device -> GPU decompression, verified.
    uint8_t* d_stream = nullptr;
    CUDA_CHECK(cudaMalloc(&d_stream, stream_bytes));
    std::memcpy(h_stream, file_bytes.data(), stream_bytes);
    CUDA_CHECK(cudaMemcpy(d_stream, h_stream, stream_bytes, cudaMemcpyHostToDevice));
    const std::size_t dtemp_bytes = vlec::device::decompress_temp_bytes(d_stream, stream_bytes);
    void* d_dtemp = nullptr;
    CUDA_CHECK(cudaMalloc(&d_dtemp, std::max<std::size_t>(dtemp_bytes, 1)));
    std::size_t got = 0;
    const double h2d_dec = median_ms(repeat, [&] {
      CUDA_CHECK(cudaMemcpyAsync(d_stream, h_stream, stream_bytes, cudaMemcpyHostToDevice, copy));
      CUDA_CHECK(cudaStreamSynchronize(copy));
      got = vlec::device::decompress(d_stream, stream_bytes, d_back, n, d_dtemp, dtemp_bytes, copy);
    });
    CUDA_CHECK(cudaMemcpy(h_raw, d_back, n, cudaMemcpyDeviceToHost));
    if (got != n || std::memcmp(h_raw, vol.bytes.data(), n) != 0)
      throw std::runtime_error(name + ": the volume decompressed on the GPU differs from the original");

    // The CPU backend on the same volume, same codec, same frames (one per slab).
    vlec::CompressOptions co;
    co.codec = *choice;
    co.backend = vlec::Backend::cpu;
    std::vector<uint8_t> cpu_stream;
    const double cpu_ms = median_ms(std::min(repeat, 5), [&] {
      cpu_stream.clear();
      for (std::size_t at = 0; at < n; at += slab_elements) {
        const std::vector<uint8_t> f = vlec::compress(vol.bytes.data() + at, std::min(slab_elements, n - at), co);
        cpu_stream.insert(cpu_stream.end(), f.begin(), f.end());
      }
    });
    const std::size_t cpu_bytes = cpu_stream.size();
    const bool same = cpu_bytes == stream_bytes && std::memcmp(cpu_stream.data(), file_bytes.data(), cpu_bytes) == 0;

    std::printf("%-12s GPU compress + D2H %9.3f ms = %.3f of raw D2H (compress alone %.3f ms, %.1f GB/s); "
                "ratio %.3f (%zu bytes); file write %.2f ms; H2D + GPU decompress %.3f ms (verified); "
                "CPU backend: ratio %.3f, %.2f ms%s\n",
                name.c_str(), comp_d2h, comp_d2h / raw_d2h, comp_only, n / comp_only / 1e6,
                static_cast<double>(n) / stream_bytes, stream_bytes, write_ms, h2d_dec,
                static_cast<double>(n) / cpu_bytes, cpu_ms, same ? ", byte-identical to the GPU's" : ", BYTES DIFFER from the GPU's");
    CUDA_CHECK(cudaFree(d_stream));
    CUDA_CHECK(cudaFree(d_dtemp));
    CUDA_CHECK(cudaFreeHost(h_stream));
  }
  CUDA_CHECK(cudaFree(d_volume));
  CUDA_CHECK(cudaFree(d_back));
  CUDA_CHECK(cudaFreeHost(h_raw));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "volume_pipeline: %s\n", e.what());
  return 1;
}
