// bench/gpu_bench.cu: GPU benchmark of vlec's decoder on 1 GiB inputs.
//
// For each dataset and chunk size: compress on the CPU backend (the bytes
// every backend writes), upload the frame, then time the GPU decode kernel
// with CUDA events (median of --repeat runs after two warm-ups) and verify the
// output byte for byte. The device-to-device copy bandwidth measured in the
// same run is the yardstick: every figure is also given as its fraction.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "cpu/frame_codec.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/huffman_encode.hpp"
#include "cuda/frame_decode.hpp"
#include "cuda/device_codebook.hpp"
#include "cuda/frame_device.hpp"
#include "cuda/huffman_decode.hpp"
#include "cuda/histogram_gpu.hpp"
#include "cuda/codebook_gpu.hpp"
#include "format/frame.hpp"
#include "gen/generators.hpp"
#include "vlec/device.hpp"
#include "bench_timing.cuh"
#include "given_book_encoder.cuh"

using namespace vlec;

namespace {

using vlec::bench::median_ms;
using vlec::bench::split;

struct Args {
  std::size_t mib = 1024;
  int repeat = 20;
  uint64_t seed = 1;
  std::vector<std::string> data = {"skewed", "quant1024", "quant65536"};
  std::vector<uint32_t> chunks = {16384, 32768, 65536, 131072};
  std::vector<uint32_t> limits = {0};       // Huffman length limits (0 = automatic)
  std::vector<unsigned> variants;           // decoder alternatives to time (HuffmanDecodeArgs::variant)
  bool decode_only = false;                 // time the decoder alone (no encoders, no compress pipeline)
  bool defaults_only = false;               // no decoder variants, no pavle or reduce_shuffle (A/B runs)
};

// What each HuffmanDecodeArgs::variant is (cuda/huffman_decode.cu).
const char* variant_name(unsigned v) {
  switch (v) {
    case 1: return "1 previous (64-bit buffer):";
    case 2: return "2 split buffer, no prefetch:";
    case 3: return "3 split, 3 register windows:";
    case 4: return "4 default at 4 blocks/SM:";
    case 5: return "5 windows moved per refill:";
  }
  return "0 default (split, prefetch, 5/SM):";
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
    else if (a == "--decode-only") args.decode_only = true;
    else if (a == "--defaults-only") args.defaults_only = true;
    else if (a == "--no-boundary-fix-up") cuda::encode_boundary_fix_up = false;
    else if (a == "--variants") {
      args.variants.clear();
      for (const std::string& v : split(value())) args.variants.push_back(std::stoul(v));
    }
    else if (a == "--chunks" || a == "--limits") {
      std::vector<uint32_t>& list = a == "--chunks" ? args.chunks : args.limits;
      list.clear();
      for (const std::string& c : split(value())) list.push_back(std::stoul(c));
    } else {
      std::fprintf(stderr, "usage: gpu_bench [--size MiB] [--repeat N] [--seed S] [--data a,b] [--chunks n,m] [--limits l,m] "
                           "[--variants 1,2,3,4] [--decode-only] [--defaults-only] [--no-boundary-fix-up]\n");
      return 1;
    }
  }
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, %.0f MiB; seed %llu; median of %d runs after 2 warm-ups\n", prop.name,
              prop.multiProcessorCount, prop.totalGlobalMem / 1048576.0, (unsigned long long)args.seed, args.repeat);

  // The yardstick: a device-to-device copy of the same size.
  const std::size_t bytes = args.mib << 20;
  cuda::DeviceBuffer<uint8_t> src(bytes), dst(bytes);
  CUDA_CHECK(cudaMemset(src.get(), 1, bytes));
  const float copy_ms = median_ms(args.repeat, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice));
  });
  const double copy_gbs = bytes / copy_ms / 1e6;  // GB/s of bytes copied
  std::printf("device copy: %.1f GB/s copied (%.1f GB/s read+write)\n\n", copy_gbs, 2 * copy_gbs);
  std::printf("%-12s %-5s %8s %4s %8s %7s %10s %12s %9s %10s %12s %9s %s\n", "data", "type", "chunk", "warp", "ratio",
              "maxlen", "decode ms", "decode GB/s", "of copy", "encode ms", "encode GB/s", "of copy", "verified");

  for (const std::string& name : args.data) {
    // "file:PATH" benchmarks a file's bytes as u8 (e.g. the Canterbury corpus concatenated).
    gen::Sample sample;
    if (name.rfind("file:", 0) == 0) {
      std::FILE* f = std::fopen(name.c_str() + 5, "rb");
      if (!f) {
        std::fprintf(stderr, "gpu_bench: cannot open %s\n", name.c_str() + 5);
        return 1;
      }
      for (int ch; (ch = std::fgetc(f)) != EOF;) sample.bytes.push_back(static_cast<uint8_t>(ch));
      std::fclose(f);
      sample.dtype = DType::u8;
      if (sample.bytes.empty() || sample.bytes.size() > bytes) {
        std::fprintf(stderr, "gpu_bench: %s is empty or larger than --size\n", name.c_str() + 5);
        return 1;
      }
    } else {
      sample = gen::make(name, bytes, args.seed);
    }
    const unsigned width = static_cast<unsigned>(sample.dtype);
    const uint64_t elements = sample.bytes.size() / width;
    cuda::DeviceBuffer<uint8_t> d_in(sample.bytes.size());
    CUDA_CHECK(cudaMemcpy(d_in.get(), sample.bytes.data(), sample.bytes.size(), cudaMemcpyHostToDevice));
    for (uint32_t limit : args.limits)
    for (uint32_t chunk : args.chunks) {
      cpu::FrameParams p;
      p.codec = Codec::huffman;
      p.dtype = sample.dtype;
      p.chunk_elements = chunk;
      p.max_code_length = limit;
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<uint8_t> frame = cpu::compress_frame(sample.bytes.data(), elements, p);
      const double cpu_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const format::ParsedFrame f = format::parse_frame(frame.data(), frame.size(), 0);
      const uint64_t payload = f.header.frame_bytes - f.header.header_area_bytes();
      cuda::DeviceBuffer<uint8_t> d_payload(payload);
      CUDA_CHECK(cudaMemcpy(d_payload.get(), f.payload, payload, cudaMemcpyHostToDevice));
      cuda::DeviceBuffer<uint8_t> d_dtemp(cuda::frame_decode_temp_bytes(f));
      const cuda::HuffmanDecodeArgs a = cuda::prepare_frame_decode(f, d_payload.get(), dst.get(), d_dtemp.get(),
                                                                   d_dtemp.size(), 0);
      {
      const unsigned per_warp = 1;  // chunks per warp
      CUDA_CHECK(cudaMemset(dst.get(), 0xA5, bytes));  // poison: every byte must be written
      const float ms = median_ms(args.repeat, [&] { cuda::launch_huffman_decode(a, 0); });
      std::vector<uint8_t> back(sample.bytes.size());
      CUDA_CHECK(cudaMemcpy(back.data(), dst.get(), back.size(), cudaMemcpyDeviceToHost));
      bool ok = back == sample.bytes;
      try {
        cuda::check_frame_decode(f, d_dtemp.get());  // every chunk verified on the GPU, checksum included
      } catch (const Error& e) {
        std::printf("GPU decoder reported: %s\n", e.what());
        ok = false;
      }
      const double gbs = sample.bytes.size() / ms / 1e6;
      // Decoder variants on the same frame, each verified the same way: one
      // block per 8 chunks instead of resident blocks, and the pair table
      // switched the other way where the codebook has one.
      auto variant = [&](const char* what, const cuda::HuffmanDecodeArgs& v) {
        CUDA_CHECK(cudaMemset(dst.get(), 0xA5, bytes));
        const float v_ms = median_ms(args.repeat, [&] { cuda::launch_huffman_decode(v, 0); });
        std::vector<uint8_t> v_back(sample.bytes.size());
        CUDA_CHECK(cudaMemcpy(v_back.data(), dst.get(), v_back.size(), cudaMemcpyDeviceToHost));
        bool v_ok = v_back == sample.bytes;
        try {
          cuda::check_frame_decode(f, d_dtemp.get());
        } catch (const Error&) {
          v_ok = false;
        }
        const double v_gbs = sample.bytes.size() / v_ms / 1e6;
        std::printf("%-12s %-5s %8u      decoder variant %-34s %8.3f ms %8.1f GB/s %6.1f%% of copy, %s\n", name.c_str(),
                    std::string(to_string(sample.dtype)).c_str(), chunk, what, v_ms, v_gbs, 100 * v_gbs / copy_gbs,
                    v_ok ? "decode ok" : "DECODE WRONG");
      };
      if (!args.defaults_only) {
        cuda::HuffmanDecodeArgs v = a;
        v.resident_blocks = false;
        variant("one block per 8 chunks:", v);
        if (a.table.pair) {  // (set only where used: this switches the pair table off, on an 11-bit single table)
          v = a;
          v.table.use_pairs = !a.table.use_pairs;
          variant(a.table.use_pairs ? "pair table off:" : "pair table on:", v);
        }
        if (a.table.sub_entries > 0) {  // the second level read from global memory, then the default again
          cuda::set_decode_sub_shared(false);
          variant("second level in global memory:", a);
          cuda::set_decode_sub_shared(true);
          variant("second level where it fits (again):", a);
        }
        // The measured alternatives, then the default again: the order of
        // the timings shows in the figures (docs/ARCHITECTURE.md), so the
        // default is timed first and last.
        if (!args.variants.empty()) {
          for (unsigned vn : args.variants) {
            v = a;
            v.variant = vn;
            variant(variant_name(vn), v);
          }
          variant(variant_name(0), a);
        }
      }
      if (args.decode_only) {
        std::printf("%-12s %-5s %8u %4u %8.4f %7u %10.3f %12.1f %8.1f%% %s\n", name.c_str(),
                    std::string(to_string(sample.dtype)).c_str(), chunk, per_warp,
                    double(sample.bytes.size()) / frame.size(), f.codebooks[0].max_length, ms, gbs,
                    100 * gbs / copy_gbs, ok ? "decode ok" : "DECODE WRONG");
        std::fflush(stdout);
        if (!ok) return 2;
        continue;
      }
      // Encode with the given codebook: the whole frame on the GPU, checked against the CPU's bytes.
      const cuda::UploadedCodebook book(f.codebooks[0], sample.dtype);
      bench::GivenBookEncoder enc(d_in.get(), elements, sample.dtype, chunk, book.view());
      const float enc_ms = median_ms(args.repeat, [&] { enc.run(); });
      bool same = enc.frame() == frame;
      const double enc_gbs = sample.bytes.size() / enc_ms / 1e6;
      std::printf("%-12s %-5s %8u %4u %8.4f %7u %10.3f %12.1f %8.1f%% %10.3f %12.1f %8.1f%% %s%s   (CPU encode %.2f s)\n",
                  name.c_str(), std::string(to_string(sample.dtype)).c_str(), chunk, per_warp,
                  double(sample.bytes.size()) / frame.size(), f.codebooks[0].max_length, ms, gbs, 100 * gbs / copy_gbs,
                  enc_ms, enc_gbs, 100 * enc_gbs / copy_gbs, ok ? "decode ok" : "DECODE WRONG",
                  same ? ", encode = CPU bytes" : ", ENCODE DIFFERS", cpu_s);
      // An encode with other settings, same codebook: its median time, and
      // whether its frame is the CPU's.
      auto timed_encode = [&](const cuda::FrameEncodeArgs& fa, float& ms) {
        enc.clear_frame();
        ms = median_ms(args.repeat, [&] { enc.run(fa); });
        return enc.frame() == frame;
      };
      // u16 and u32 codebooks of at most 1,024 symbols: the default encoder with
      // every lookup able to go to the global table, then the default again.
      if (width > 1) {
        uint32_t bound = 0;  // the codebook's alphabet bound, info[2]
        CUDA_CHECK(cudaMemcpy(&bound, book.view().info + 2, 4, cudaMemcpyDeviceToHost));
        if (bound <= 1024) {
          for (const bool shared : {false, true}) {
            cuda::encode_shared_table = shared;
            float v_ms = 0;
            const bool v_same = timed_encode(enc.args(), v_ms);
            const double v_gbs = sample.bytes.size() / v_ms / 1e6;
            std::printf("%-12s %-5s %8u      default encoder, codes %-28s %8.3f ms %8.1f GB/s %6.1f%% of copy, %s\n",
                        name.c_str(), std::string(to_string(sample.dtype)).c_str(), chunk,
                        shared ? "from shared memory (again):" : "where global may be read:", v_ms, v_gbs,
                        100 * v_gbs / copy_gbs, v_same ? "= CPU bytes" : "DIFFERS FROM CPU");
            same = same && v_same;
          }
        }
      }
      // The other encoders (the lanes encoder, the papers') beside the default, same codebook, same bytes required.
      for (const cuda::EncodeStrategy st : {cuda::EncodeStrategy::warp, cuda::EncodeStrategy::lanes,
                                            cuda::EncodeStrategy::pavle, cuda::EncodeStrategy::reduce_shuffle}) {
        if (args.defaults_only) break;
        if (st == enc.args().strategy) continue;  // the headline encode
        cuda::FrameEncodeArgs es = enc.args();
        es.strategy = st;
        float st_ms = 0;
        const bool st_same = timed_encode(es, st_ms);
        const double st_gbs = sample.bytes.size() / st_ms / 1e6;
        std::printf("%-12s %-5s %8u      encoder %-14s (given codebook): %8.3f ms %8.1f GB/s %6.1f%% of copy, %s\n",
                    name.c_str(), std::string(to_string(sample.dtype)).c_str(), chunk,
                    st == cuda::EncodeStrategy::warp    ? "warp"
                    : st == cuda::EncodeStrategy::lanes ? "lanes"
                    : st == cuda::EncodeStrategy::pavle ? "pavle"
                                                        : "reduce_shuffle",
                    st_ms, st_gbs,
                    100 * st_gbs / copy_gbs, st_same ? "= CPU bytes" : "DIFFERS FROM CPU");
        same = same && st_same;
      }
      // Full compress: GPU histogram + codebook + encoder + header, no host round trip.
      device::CompressOptions dco;
      dco.dtype = sample.dtype;
      dco.chunk_elements = chunk;
      dco.max_code_length = limit;
      cuda::DeviceBuffer<uint8_t> d_full(device::compress_capacity(elements, dco)),
          d_full_temp(device::compress_temp_bytes(elements, dco));
      cuda::DeviceBuffer<uint64_t> d_out(2);
      // Times device::compress and checks its frame against the CPU's.
      auto timed_full = [&](const char* what) {
        const float ms = median_ms(args.repeat, [&] {
          device::compress(d_in.get(), elements, d_full.get(), d_full.size(), d_out.get(), d_out.get() + 1,
                           d_full_temp.get(), d_full_temp.size(), nullptr, dco);
        });
        uint64_t out[2];
        CUDA_CHECK(cudaMemcpy(out, d_out.get(), 16, cudaMemcpyDeviceToHost));
        std::vector<uint8_t> got(std::min<uint64_t>(out[0], d_full.size()));
        CUDA_CHECK(cudaMemcpy(got.data(), d_full.get(), got.size(), cudaMemcpyDeviceToHost));
        const bool equal = got == frame && out[1] == ~0ull;
        const double gbs = sample.bytes.size() / ms / 1e6;
        std::printf("%-12s %-5s %8u      %s: %8.3f ms %8.1f GB/s %6.1f%% of copy, %s\n", name.c_str(),
                    std::string(to_string(sample.dtype)).c_str(), chunk, what, ms, gbs, 100 * gbs / copy_gbs,
                    equal ? "= CPU bytes" : "DIFFERS FROM CPU");
        return equal;
      };
      bool full_same = true;
      if (sample.dtype == DType::u8 || sample.dtype == DType::u16) {
        // The chunks' checksums taken by the encoder (bytes before session 26, u16 before session 28).
        cuda::hash_chunks_with_histogram = false;
        full_same = timed_full("full compress, chunks hashed by the encoder pass A  ");
        cuda::hash_chunks_with_histogram = true;
      }
      if (sample.dtype == DType::u8 && cuda::histogram_chunk_hashes_fit(d_in.get(), chunk)) {
        // The byte pass's other kernel (u8_chunk_hash_by_warps_max_bytes).
        const uint32_t bound = cuda::u8_chunk_hash_by_warps_max_bytes;
        const bool by_warps = chunk <= bound;
        cuda::u8_chunk_hash_by_warps_max_bytes = by_warps ? 0 : UINT32_MAX;
        full_same = timed_full(by_warps ? "full compress, byte hashing pass with a fold warp  "
                                        : "full compress, byte hashing pass by whole chunks   ") &&
                    full_same;
        cuda::u8_chunk_hash_by_warps_max_bytes = bound;
      }
      if (sample.dtype == DType::u16 && 2 * chunk > cuda::u16_hashed_chunk_max_bytes) {
        // The u16 chunks' checksums taken with the histogram where by default the encoder takes them.
        const uint32_t bound = cuda::u16_hashed_chunk_max_bytes;
        cuda::u16_hashed_chunk_max_bytes = UINT32_MAX;
        full_same = timed_full("full compress, chunks hashed by the u16 histogram   ") && full_same;
        cuda::u16_hashed_chunk_max_bytes = bound;
      }
      full_same = timed_full("full compress (histogram + codebook + encode + header)") && full_same;
      // The first two stages of that pipeline on their own: the histogram of
      // the whole input, and the codebook built from it on the device.
      {
        cuda::DeviceBuffer<uint64_t> d_hist(cuda::kHistogramBins), d_bad(1);
        cuda::DeviceBuffer<uint8_t> d_htemp(std::max<std::size_t>(1, cuda::histogram_temp_bytes(elements, sample.dtype)));
        const float hist_ms = median_ms(args.repeat, [&] {
          cuda::histogram_device(d_in.get(), elements, sample.dtype, d_hist.get(), d_bad.get(), d_htemp.get(),
                                 d_htemp.size(), 0);
        });
        const uint32_t cap = sample.dtype == DType::u8 ? 256u : 65536u;
        cuda::DeviceBuffer<uint8_t> d_lengths(cap), d_ser(cuda::codebook_serialized_capacity(cap)),
            d_btemp(std::max<std::size_t>(1, cuda::codebook_temp_bytes(cap)));
        cuda::DeviceBuffer<uint32_t> d_entries(cap), d_info(4);
        const cuda::DeviceCodebookOut out{d_lengths.get(), d_entries.get(), d_ser.get(), d_info.get()};
        const float book_ms = median_ms(args.repeat, [&] {
          cuda::build_codebook_device(d_hist.get(), cap, limit, d_btemp.get(), d_btemp.size(), out, 0);
        });
        const double hist_gbs = sample.bytes.size() / hist_ms / 1e6;
        const bool u16_hash = sample.dtype == DType::u16 && cuda::histogram_u16_chunk_hashes_fit(d_in.get(), 2 * chunk);
        if ((sample.dtype == DType::u8 && cuda::histogram_chunk_hashes_fit(d_in.get(), chunk)) || u16_hash) {
          cuda::DeviceBuffer<uint64_t> d_sums((elements + chunk - 1) / chunk);
          const float hash_ms = median_ms(args.repeat, [&] {
            if (u16_hash)
              cuda::histogram_u16_chunk_hashes(d_in.get(), elements, 2 * chunk, d_hist.get(), d_bad.get(), d_sums.get(),
                                               0);
            else
              cuda::histogram_u8_chunk_hashes(d_in.get(), elements, chunk, d_hist.get(), d_bad.get(), d_sums.get(), 0);
          });
          const double gbs = sample.bytes.size() / hash_ms / 1e6;
          std::printf("%-12s %-5s %8u      stages: histogram with the chunks' XXH3 %8.3f ms %8.1f GB/s %6.1f%% of copy\n",
                      name.c_str(), std::string(to_string(sample.dtype)).c_str(), chunk, hash_ms, gbs,
                      100 * gbs / copy_gbs);
          if (!u16_hash) {  // the byte pass's other kernel
            const uint32_t bound = cuda::u8_chunk_hash_by_warps_max_bytes;
            const bool by_warps = chunk <= bound;
            cuda::u8_chunk_hash_by_warps_max_bytes = by_warps ? 0 : UINT32_MAX;
            const float other_ms = median_ms(args.repeat, [&] {
              cuda::histogram_u8_chunk_hashes(d_in.get(), elements, chunk, d_hist.get(), d_bad.get(), d_sums.get(), 0);
            });
            cuda::u8_chunk_hash_by_warps_max_bytes = bound;
            const double other = sample.bytes.size() / other_ms / 1e6;
            std::printf("%-12s %-5s %8u      stages: the same by %-14s %8.3f ms %8.1f GB/s %6.1f%% of copy\n",
                        name.c_str(), std::string(to_string(sample.dtype)).c_str(), chunk,
                        by_warps ? "a fold warp" : "whole chunks", other_ms, other, 100 * other / copy_gbs);
          }
        }
        std::printf("%-12s %-5s %8u      stages: histogram %8.3f ms %8.1f GB/s %6.1f%% of copy; codebook (%u-symbol "
                    "capacity) %7.1f us\n",
                    name.c_str(), std::string(to_string(sample.dtype)).c_str(), chunk, hist_ms, hist_gbs,
                    100 * hist_gbs / copy_gbs, cap, 1000 * book_ms);
      }
      std::fflush(stdout);
      if (!same || !full_same) return 3;
      if (!ok) return 2;
      }
    }
  }
  return 0;
}
