// bench/rle_bench.cu: GPU benchmark of vlec's run-length coder (src/cuda/rle_gpu.hpp).
//
// On 1 GiB (--size MiB) of u8 byte runs (generator "runs": mean run length 6,
// deterministic by --seed) it times, with CUDA events (median of --repeat runs
// after two warm-ups): the parle encoder, the chunked encoder, the default,
// cub::DeviceRunLengthEncode::Encode on the same data (the baseline: one
// global stream of runs, no chunks, no 65,536 split, u32 counts) and the
// decoder. Encoders are given as GB/s of input, the decoder as GB/s of output,
// and both as a fraction of a device-to-device cudaMemcpy of the same size
// measured in the same run. Every GPU result is checked byte for byte against
// the CPU reference (rle::encode_runs in the §6 layout).
//
// Then whole rle frames through the device API (vlec/device.hpp): "frame
// enc" is device::compress with codec rle (runs, raw fallback, index with
// XXH3 per chunk, header and header checksum; the frame compared with the CPU
// backend's compress_frame), "frame dec" is device::decompress (header read to
// the host and checked, chunks decoded, padding and checksums verified, one
// synchronisation), both as GB/s of uncompressed data; "rle+huf enc/dec" the
// same for rle+huffman frames (default RLE strategy).
#include <cuda_runtime.h>

#include <cub/device/device_run_length_encode.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cpu/frame_codec.hpp"
#include "cuda/rle_gpu.hpp"
#include "vlec/device.hpp"
#include "gen/generators.hpp"
#include "rle/rle.hpp"
#include "bench_timing.cuh"

namespace gen = vlec::gen;
namespace rle = vlec::rle;
using vlec::to_string;
namespace vc = vlec::cuda;

namespace {

using vlec::bench::median_ms;
using vlec::bench::split;

struct Args {
  std::size_t mib = 1024;
  int repeat = 10;
  uint64_t seed = 1;
  std::vector<std::string> data = {"runs"};
  std::vector<uint32_t> chunks = {65536, 1u << 20};
};

// The CPU reference: per-chunk run counts and the packed payload.
struct Reference {
  std::vector<uint32_t> runs;
  std::vector<uint8_t> payload;
};

Reference cpu_reference(const uint8_t* data, uint64_t n, unsigned w, uint32_t C) {
  Reference r;
  std::vector<uint8_t> vals(uint64_t{C} * w);
  std::vector<uint16_t> lens(C);
  for (uint64_t c = 0; c * C < n; ++c) {
    const uint64_t m = std::min<uint64_t>(C, n - c * C);
    const std::size_t R = rle::encode_runs(data + c * C * w, m, w, vals.data(), lens.data());
    const std::size_t at = r.payload.size();
    r.payload.resize(at + (rle::payload_bytes(R, w) + 3) / 4 * 4, 0);
    std::memcpy(r.payload.data() + at, vals.data(), R * w);
    std::memcpy(r.payload.data() + at + rle::lengths_offset(R, w), lens.data(), 2 * R);
    r.runs.push_back(static_cast<uint32_t>(R));
  }
  return r;
}

template <typename T>
std::vector<T> download(const T* d, std::size_t count) {
  std::vector<T> h(count);
  if (count) CUDA_CHECK(cudaMemcpy(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--size") args.mib = std::stoul(value());
    else if (a == "--repeat") args.repeat = std::stoi(value());
    else if (a == "--seed") args.seed = std::stoull(value());
    else if (a == "--data") args.data = split(value());
    else if (a == "--chunks") {
      args.chunks.clear();
      for (const std::string& c : split(value())) args.chunks.push_back(std::stoul(c));
    } else {
      std::fprintf(stderr, "usage: rle_bench [--size MiB] [--repeat N] [--seed S] [--data runs,volume] [--chunks n,m]\n");
      return 1;
    }
  }
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, %.0f MiB; seed %llu; median of %d runs after 2 warm-ups\n", prop.name,
              prop.multiProcessorCount, prop.totalGlobalMem / 1048576.0, (unsigned long long)args.seed, args.repeat);

  const std::size_t bytes = args.mib << 20;
  vc::DeviceBuffer<uint8_t> dst(bytes);
  bool all_ok = true;
  for (const std::string& name : args.data) {
    const gen::Sample sample = gen::make(name, bytes, args.seed);
    const unsigned w = static_cast<unsigned>(sample.dtype);
    const uint64_t n = sample.bytes.size() / w, in_bytes = n * w;
    vc::DeviceBuffer<uint8_t> d_in(std::max<uint64_t>(in_bytes, 16));
    CUDA_CHECK(cudaMemcpy(d_in.get(), sample.bytes.data(), in_bytes, cudaMemcpyHostToDevice));

    // The yardstick: a device-to-device copy of the input's size.
    const float copy_ms = median_ms(args.repeat, [&] {
      CUDA_CHECK(cudaMemcpyAsync(dst.get(), d_in.get(), in_bytes, cudaMemcpyDeviceToDevice));
    });
    const double copy_gbs = in_bytes / copy_ms / 1e6;
    std::printf("\n%s (%s, %llu elements): device copy %.1f GB/s copied (%.1f GB/s read+write)\n", name.c_str(),
                to_string(sample.dtype).data(), (unsigned long long)n, copy_gbs, 2 * copy_gbs);
    auto report = [&](const char* what, uint32_t chunk, float ms, uint64_t per_bytes, const char* verdict) {
      const double gbs = per_bytes / ms / 1e6;
      std::printf("  %-16s chunk %8u  %9.3f ms  %8.1f GB/s  %5.2f of copy  %s\n", what, chunk, ms, gbs, gbs / copy_gbs,
                  verdict);
    };

    {  // Baseline: CUB's run-length encoder over the whole input (u8 only: values of the input type).
      vc::DeviceBuffer<uint8_t> uniq(in_bytes + 16);
      vc::DeviceBuffer<uint32_t> counts(n + 1), num(1);
      std::size_t tb = 0;
      const uint8_t* in8 = d_in.get();
      if (w == 1 && n < (uint64_t{1} << 31)) {
        CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, tb, in8, uniq.get(), counts.get(), num.get(),
                                                      static_cast<int>(n)));
        vc::DeviceBuffer<uint8_t> t(tb);
        const float ms = median_ms(args.repeat, [&] {
          CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(t.get(), tb, in8, uniq.get(), counts.get(), num.get(),
                                                        static_cast<int>(n)));
        });
        report("cub::RLE (base)", 0, ms, in_bytes, "(not chunked)");
      }
    }

    for (uint32_t C : args.chunks) {
      const auto t0 = std::chrono::steady_clock::now();
      const Reference ref = cpu_reference(sample.bytes.data(), n, w, C);
      const double cpu_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const uint64_t chunks = vc::rle_chunk_count(n, C);
      const std::size_t cap = std::max<std::size_t>(vc::rle_payload_capacity(n, w, C), 16);
      std::printf(" chunk %u: %llu chunks, payload %.1f MB (ratio %.3f), CPU reference %.2f s (%.2f GB/s)\n", C,
                  (unsigned long long)chunks, ref.payload.size() / 1e6, double(in_bytes) / ref.payload.size(), cpu_s,
                  in_bytes / cpu_s / 1e9);
      vc::DeviceBuffer<uint32_t> runs(chunks), stored(chunks), status(chunks);
      vc::DeviceBuffer<uint64_t> poff(chunks + 1), roff(chunks + 1);
      vc::DeviceBuffer<uint8_t> payload(cap);
      const vc::RleStrategy def = vc::default_rle_strategy(n, C);
      const vc::RleStrategy order[] = {vc::RleStrategy::parle, vc::RleStrategy::chunked, def};
      for (int k = 0; k < 3; ++k) {
        const vc::RleStrategy s = order[k];
        vc::DeviceBuffer<uint8_t> temp(std::max<std::size_t>(vc::rle_encode_temp_bytes(n, w, C, s), 16));
        vc::RleEncodeArgs a;
        a.in = d_in.get();
        a.elements = n;
        a.width = w;
        a.chunk_elements = C;
        a.runs = runs.get();
        a.stored_bytes = stored.get();
        a.payload_offsets = poff.get();
        a.run_offsets = roff.get();
        a.payload = payload.get();
        CUDA_CHECK(cudaMemset(payload.get(), 0xA5, cap));
        const float ms = median_ms(args.repeat, [&] { vc::rle_encode(a, temp.get(), temp.size(), 0, s); });
        CUDA_CHECK(cudaDeviceSynchronize());
        const bool ok = download(runs.get(), chunks) == ref.runs &&
                        download(poff.get(), chunks + 1).back() == ref.payload.size() &&
                        download(payload.get(), ref.payload.size()) == ref.payload;
        all_ok = all_ok && ok;
        report((k == 2 ? "default=" + std::string(vc::to_string(s)) : std::string(vc::to_string(s))).c_str(), C,
               ms, in_bytes,
               ok ? "verified" : "MISMATCH");
      }
      // Decode the payload just written (identical to the CPU's, verified above).
      vc::RleDecodeArgs d;
      d.payload = payload.get();
      d.payload_bytes = ref.payload.size();
      d.offsets = poff.get();
      d.stored_bytes = stored.get();
      d.runs = runs.get();
      d.elements = n;
      d.width = w;
      d.chunk_elements = C;
      d.out = dst.get();
      d.status = status.get();
      CUDA_CHECK(cudaMemset(dst.get(), 0, in_bytes));
      const float ms = median_ms(args.repeat, [&] { vc::rle_decode(d, 0); });
      CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<uint32_t> st = download(status.get(), chunks);
      const bool ok = std::all_of(st.begin(), st.end(), [](uint32_t v) { return v == 0; }) &&
                      download(dst.get(), in_bytes) == sample.bytes;
      all_ok = all_ok && ok;
      report("decode", C, ms, in_bytes, ok ? "verified" : "MISMATCH");

      // Whole frames through the device API.
      vlec::cpu::FrameParams fp;
      fp.codec = vlec::Codec::rle;
      fp.dtype = sample.dtype;
      fp.chunk_elements = C;
      const std::vector<uint8_t> cpu_frame = vlec::cpu::compress_frame(sample.bytes.data(), n, fp);
      fp.codec = vlec::Codec::rle_huffman;
      const std::vector<uint8_t> cpu_rh = vlec::cpu::compress_frame(sample.bytes.data(), n, fp);
      const vlec::device::RleStrategy fs[] = {vlec::device::RleStrategy::parle, vlec::device::RleStrategy::chunked,
                                              vlec::device::RleStrategy::automatic};
      for (vlec::device::RleStrategy f : fs) {
        // parle and chunked for rle; the default strategy for rle+huffman.
        const bool rh = f == vlec::device::RleStrategy::automatic;
        const std::vector<uint8_t>& expect = rh ? cpu_rh : cpu_frame;
        vlec::device::CompressOptions o;
        o.codec = rh ? vlec::Codec::rle_huffman : vlec::Codec::rle;
        o.dtype = sample.dtype;
        o.chunk_elements = C;
        o.rle_strategy = f;
        if (f == vlec::device::RleStrategy::parle && n > UINT32_MAX) continue;
        vc::DeviceBuffer<uint8_t> frame(vlec::device::compress_capacity(n, o)),
            ftemp(vlec::device::compress_temp_bytes(n, o));
        vc::DeviceBuffer<uint64_t> result(2);
        const float enc_ms = median_ms(args.repeat, [&] {
          vlec::device::compress(d_in.get(), n, frame.get(), frame.size(), result.get(), result.get() + 1, ftemp.get(),
                                 ftemp.size(), nullptr, o);
        });
        CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<uint64_t> r = download(result.get(), 2);
        const bool enc_ok = r[1] == ~0ull && r[0] == expect.size() && download(frame.get(), r[0]) == expect;
        all_ok = all_ok && enc_ok;
        const std::string name = rh ? "rle+huf enc" : std::string("frame enc ") + (f == vlec::device::RleStrategy::parle ? "parle" : "chunked");
        report(name.c_str(), C, enc_ms, in_bytes, enc_ok ? "verified (= CPU frame)" : "MISMATCH");
      }
      for (const std::vector<uint8_t>* fr : {&cpu_frame, &cpu_rh}) {
        const std::vector<uint8_t>& cpu_frame = *fr;
        const bool rh = fr == &cpu_rh;
        vc::DeviceBuffer<uint8_t> d_frame(cpu_frame.size());
        CUDA_CHECK(cudaMemcpy(d_frame.get(), cpu_frame.data(), cpu_frame.size(), cudaMemcpyHostToDevice));
        vc::DeviceBuffer<uint8_t> dtemp(
            std::max<std::size_t>(vlec::device::decompress_temp_bytes(d_frame.get(), cpu_frame.size()), 16));
        CUDA_CHECK(cudaMemset(dst.get(), 0, in_bytes));
        std::size_t got = 0;
        const float dec_ms = median_ms(args.repeat, [&] {
          got = vlec::device::decompress(d_frame.get(), cpu_frame.size(), dst.get(), bytes, dtemp.get(), dtemp.size(),
                                         nullptr);
        });
        const bool dec_ok = got == in_bytes && download(dst.get(), in_bytes) == sample.bytes;
        all_ok = all_ok && dec_ok;
        std::printf("  %s frame: %.1f MB (ratio %.3f)\n", rh ? "rle+huffman" : "rle", cpu_frame.size() / 1e6,
                    double(in_bytes) / cpu_frame.size());
        report(rh ? "rle+huf dec" : "frame dec", C, dec_ms, in_bytes, dec_ok ? "verified" : "MISMATCH");
      }
    }
  }
  std::printf("\n%s\n", all_ok ? "all results verified against the CPU" : "SOME RESULTS DIFFER FROM THE CPU");
  return all_ok ? 0 : 2;
}
