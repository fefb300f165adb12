// bench/wavelet_gpu_bench.cu: wavelet frames on the GPU (issue 5's target:
// a u16 8192 x 8192 image, >= 100 GS/s each way). For each input (real
// 16-bit PGM/PPM images given on the command line, mirrored and tiled to the
// size, plane 0 of a colour image; and a generated smooth image with
// noise), the CPU writer compresses the frame, and the GPU decoder
// (vlec/device_wavelet.hpp) decodes it from device memory to device memory:
// median after warm-up, in samples per second, beside the device copy of the
// same bytes in the same run (the memory-bound ceiling), the parts of the
// decode measured alone (host plan: header reads; the inverse 5/3; the
// samples checksum, both definitions), the steps inside the pipeline (the
// decoder's phase events), the embedded frames alone through
// device::decompress and re-coded with smaller chunks, the ratio, and the
// GPU's output compared with the CPU decoder's bytes. Then the GPU writer
// (device::wavelet_compress, device to device): median after warm-up, beside
// the same copy, its host-timed steps (the encoder's waits: cuda/
// wavelet_encode_kernels.hpp, encode_phases), its frame compared byte for
// byte with the CPU writer's, and decoded again on the GPU.
//
//   wavelet_gpu_bench [--size 8192] [--repeat 20] [--profile compress|decompress] [--compress-only]
//                     [--symbols-walk] [--symbols-block-tiles N] [--tops-any-registers]
//                     [--cub-payload-copy] [--alternate TEXT] [image.pgm ...]
//
// --symbols-walk makes the writer's symbols kernel walk every tile (for profiling
// that kernel; cuda::wavelet_gpu::symbols_row_tiles), --symbols-block-tiles
// sets its tiles a block (symbols_block_tiles); --tops-any-registers
// builds the writer's 5/3 kernel without its 6-blocks bound (Tuning::tops_six_blocks);
// --cub-payload-copy copies the payload by cub::DeviceMemcpy::Batched
// (hand_payload_copy).
// The decoder's settings alternated with its defaults are in
// wavelet_gpu_bench_decode.cu, the GPU writer in wavelet_gpu_bench_compress.cu.
//
// --compress-only measures only the GPU writer (bench/wavelet_gpu_bench.hpp);
// --alternate TEXT alternates only the writer's settings whose description
// holds TEXT (with --compress-only too).
// --profile runs, per input, two warm-ups and then one GPU compress or
// decompress between cudaProfilerStart and cudaProfilerStop, and nothing
// else on the GPU: for `ncu --profile-from-start off` (kernel by kernel).
#include <cuda_profiler_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.cuh"
#include "wavelet_gpu_bench.hpp"
#include "common/checksum.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/huffman_encode.hpp"
#include "cuda/wavelet_checksum.hpp"
#include "cuda/wavelet_encode_kernels.hpp"
#include "cuda/dwt53_gpu.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_kernels.hpp"
#include "cuda/wavelet_payload_copy.hpp"
#include "format/frame.hpp"
#include "vlec/device.hpp"
#include "wavelet/codec.hpp"
#include "wavelet/frame_format.hpp"
#include "vlec/device_dwt.hpp"
#include "vlec/device_wavelet.hpp"
#include "vlec/vlec.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet/pnm.hpp"

using namespace vlec;
using cuda::DeviceBuffer;
using vlec::bench::Input;

namespace {

// Plane 0 of a 16-bit (or 8-bit, scaled) PGM/PPM, mirrored and tiled to size x size.
bool load_tiled(const std::string& path, std::size_t size, Input& in) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const pnm::Parsed p = pnm::parse(file.data(), file.size());
  const std::vector<uint8_t> s = pnm::host_samples(file.data(), p);
  const std::size_t w = p.image.width, h = p.image.height, planes = p.image.planes;
  auto at = [&](std::size_t x, std::size_t y) -> uint16_t {
    const std::size_t i = planes * (x + w * y);
    if (p.image.dtype == DType::u8) return static_cast<uint16_t>(s[i] << 8);
    uint16_t v;
    std::memcpy(&v, &s[2 * i], 2);
    return v;
  };
  in.name = path.substr(path.find_last_of('/') + 1) + " (" + std::to_string(w) + "x" + std::to_string(h) + ", maxval " +
            std::to_string(p.maxval) + ", mirrored)";
  in.samples.resize(size * size);
  for (std::size_t y = 0; y < size; ++y) {
    const std::size_t my = y % (2 * h), sy = my < h ? my : 2 * h - 1 - my;
    for (std::size_t x = 0; x < size; ++x) {
      const std::size_t mx = x % (2 * w), sx = mx < w ? mx : 2 * w - 1 - mx;
      in.samples[x + size * y] = at(sx, sy);
    }
  }
  return true;
}

Input smooth(std::size_t size) {
  Input in;
  in.name = "generated smooth 16-bit image, gaussian noise sigma 40";
  in.samples.resize(size * size);
  std::mt19937_64 rng(20261122);
  std::normal_distribution<double> g(0.0, 40.0);
  for (std::size_t y = 0; y < size; ++y)
    for (std::size_t x = 0; x < size; ++x) {
      const double v = 30000 + 12000 * std::sin(x * 0.0021) * std::cos(y * 0.0017) + 8000.0 * x / size +
                       3000 * std::sin((x + 2 * y) * 0.03) + g(rng);
      in.samples[x + size * y] = static_cast<uint16_t>(std::clamp(std::lround(v), 0L, 65535L));
    }
  return in;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// --profile: the operation to profile alone ("" runs the whole benchmark).
std::string profile_op;

// One GPU compress or decompress (profile_op) of `in` between
// cudaProfilerStart and cudaProfilerStop, after two warm-ups.
void profile_one(const Input& in, const WaveletImage& im, const std::vector<uint8_t>& frame, cudaStream_t stream) {
  const std::size_t bytes = 2 * im.samples();
  DeviceBuffer<uint8_t> d_samples(bytes), d_frame(frame.size());
  CUDA_CHECK(cudaMemcpy(d_samples.get(), in.samples.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_frame.get(), frame.data(), frame.size(), cudaMemcpyHostToDevice));
  const std::size_t cap = device::wavelet_compress_capacity(im, 0);
  const std::size_t etemp = device::wavelet_compress_temp_bytes(im);
  const std::size_t dtemp = device::wavelet_decompress_temp_bytes(d_frame.get(), frame.size());
  DeviceBuffer<uint8_t> d_gframe(cap), d_temp(std::max(etemp, dtemp));
  auto once = [&] {
    if (profile_op == "compress")
      device::wavelet_compress(d_samples.get(), im, d_gframe.get(), cap, d_temp.get(), etemp, stream);
    else
      device::wavelet_decompress(d_frame.get(), frame.size(), d_samples.get(), bytes, d_temp.get(), dtemp, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  once();
  once();
  CUDA_CHECK(cudaProfilerStart());
  const auto t0 = std::chrono::steady_clock::now();
  once();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CUDA_CHECK(cudaProfilerStop());
  std::printf("  profiled one GPU %s: %.3f ms (host clock, under the profiler)\n", profile_op.c_str(), ms);
}

void run(const Input& in, std::size_t size, int repeat, cudaStream_t stream) {
  WaveletImage im;
  im.width = size, im.height = size, im.planes = 1, im.dtype = DType::u16;
  const std::size_t n = im.samples(), bytes = 2 * n;
  auto t0 = std::chrono::steady_clock::now();
  WaveletOptions cpu_writer;
  cpu_writer.backend = Backend::cpu;
  const std::vector<uint8_t> frame = wavelet_compress(in.samples.data(), im, cpu_writer);
  const double cpu_compress_s = seconds_since(t0);
  std::printf("\n%s\n  %zu x %zu u16: frame %zu bytes, ratio %.3f; CPU compress %.1f ms (%.2f GS/s)\n", in.name.c_str(),
              size, size, frame.size(), double(bytes) / frame.size(), 1e3 * cpu_compress_s, n / cpu_compress_s / 1e9);
  if (!profile_op.empty()) {
    profile_one(in, im, frame, stream);
    return;
  }
  if (bench::compress_only) {
    DeviceBuffer<uint8_t> d_a(bytes), d_b(bytes);
    CUDA_CHECK(cudaMemcpy(d_a.get(), in.samples.data(), bytes, cudaMemcpyHostToDevice));
    const float copy_ms = bench::median_ms(repeat, stream, [&] {
      CUDA_CHECK(cudaMemcpyAsync(d_b.get(), d_a.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    });
    std::printf("  device copy of the same %zu bytes: %.3f ms, %.1f GB/s (read + write), %.1f GS/s\n", bytes, copy_ms,
                2 * bytes / copy_ms / 1e6, n / copy_ms / 1e6);
    run_compress(in, im, frame, copy_ms, repeat, stream);
    return;
  }
  t0 = std::chrono::steady_clock::now();
  DecompressOptions cpu;
  cpu.backend = Backend::cpu;
  const std::vector<uint8_t> cpu_out = decompress(frame.data(), frame.size(), cpu);
  const double cpu_decompress_s = seconds_since(t0);
  std::printf("  CPU decompress %.1f ms (%.2f GS/s)\n", 1e3 * cpu_decompress_s, n / cpu_decompress_s / 1e9);

  DeviceBuffer<uint8_t> d_frame(frame.size()), d_out(bytes), d_copy(bytes);
  CUDA_CHECK(cudaMemcpy(d_frame.get(), frame.data(), frame.size(), cudaMemcpyHostToDevice));
  const std::size_t temp = device::wavelet_decompress_temp_bytes(d_frame.get(), frame.size());
  DeviceBuffer<uint8_t> d_temp(temp);
  const float dec_ms = bench::median_ms(repeat, stream, [&] {
    device::wavelet_decompress(d_frame.get(), frame.size(), d_out.get(), bytes, d_temp.get(), temp, stream);
  });
  std::vector<uint8_t> gpu_out(bytes);
  CUDA_CHECK(cudaMemcpy(gpu_out.data(), d_out.get(), bytes, cudaMemcpyDeviceToHost));
  const bool same_cpu = gpu_out == cpu_out;
  const bool same_orig = std::memcmp(gpu_out.data(), in.samples.data(), bytes) == 0;
  const float copy_ms = bench::median_ms(repeat, stream, [&] {
    CUDA_CHECK(cudaMemcpyAsync(d_copy.get(), d_out.get(), bytes, cudaMemcpyDeviceToDevice, stream));
  });
  std::printf("  GPU decompress: %.3f ms, %.1f GS/s (%.1f GB/s of samples); temp %.0f MiB; output %s the CPU "
              "decoder's, %s the original\n",
              dec_ms, n / dec_ms / 1e6, bytes / dec_ms / 1e6, temp / 1048576.0, same_cpu ? "==" : "!=",
              same_orig ? "==" : "!=");
  std::printf("  device copy of the same %zu bytes: %.3f ms, %.1f GB/s (read + write), %.1f GS/s\n", bytes, copy_ms,
              2 * bytes / copy_ms / 1e6, n / copy_ms / 1e6);
  run_decode_settings(in, im, frame, cpu_out, d_frame.get(), d_temp.get(), temp, dec_ms, repeat, stream);

  // The parts inside the pipeline: events recorded by the decoder between
  // its steps (cuda/wavelet_kernels.hpp, phase_events); medians. With level
  // 1's details from the symbols (the default), then scattered first.
  for (const bool coded : {true, false}) {
    cuda::wavelet_gpu::coded_detail_bands = coded;
    cuda::wavelet_gpu::PhaseEvents ev;
    for (auto& e : ev.events) CUDA_CHECK(cudaEventCreate(&e));
    cuda::wavelet_gpu::phase_events = &ev;
    std::vector<std::vector<float>> parts(cuda::wavelet_gpu::PhaseEvents::kCount - 1);
    std::vector<float> enqueue;
    constexpr unsigned kMarks = cuda::wavelet_gpu::PhaseEvents::kHostMarks;
    std::vector<std::vector<float>> marks(kMarks + 1);  // host time between the enqueue's steps
    // The whole call on the host clock: plan, enqueue, the end's wait, the checks, the call.
    std::vector<std::vector<float>> whole(5);
    constexpr unsigned kPlanMarks = cuda::wavelet_gpu::PhaseEvents::kPlanMarks;
    std::vector<std::vector<float>> plan(kPlanMarks + 1);  // host time between the plan's steps
    for (int r = 0; r < repeat; ++r) {
      device::wavelet_decompress(d_frame.get(), frame.size(), d_out.get(), bytes, d_temp.get(), temp, stream);
      const int64_t steps[] = {ev.host_call_ns, ev.host_planned_ns, ev.host_enqueued_ns, ev.host_synced_ns,
                               ev.host_done_ns};
      for (unsigned i = 0; i + 1 < std::size(steps); ++i)
        whole[i].push_back(static_cast<float>(steps[i + 1] - steps[i]) / 1e6f);
      whole[4].push_back(static_cast<float>(ev.host_done_ns - ev.host_call_ns) / 1e6f);
      enqueue.push_back(static_cast<float>(ev.host_enqueued_ns - ev.host_start_ns) / 1e6f);
      for (unsigned i = 0; i <= kPlanMarks; ++i) {
        const int64_t from = i ? ev.plan_mark_ns[i - 1] : ev.host_call_ns;
        const int64_t to = i < kPlanMarks ? ev.plan_mark_ns[i] : ev.host_planned_ns;
        plan[i].push_back(static_cast<float>(to - from) / 1e6f);
      }
      int64_t at = ev.host_start_ns;
      for (unsigned i = 0; i <= kMarks; ++i) {
        const int64_t next = i < kMarks ? ev.host_mark_ns[i] : ev.host_enqueued_ns;
        marks[i].push_back(static_cast<float>(next - at) / 1e6f);
        at = next;
      }
      for (unsigned i = 0; i + 1 < cuda::wavelet_gpu::PhaseEvents::kCount; ++i) {
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev.events[i], ev.events[i + 1]));
        parts[i].push_back(ms);
      }
    }
    cuda::wavelet_gpu::phase_events = nullptr;
    static const char* const kNames[] = {"embedded frames (enqueue + decode)", "scatter", "inverse 5/3",
                                         "join (RCT, range, interleave)", "samples checksum"};
    std::printf("  inside the GPU decode%s (event to event, medians):", coded ? "" : ", every coefficient scattered");
    for (std::size_t i = 0; i < parts.size(); ++i) {
      std::sort(parts[i].begin(), parts[i].end());
      std::printf("%s %s %.3f ms", i ? ";" : "", kNames[i], parts[i][parts[i].size() / 2]);
    }
    std::sort(enqueue.begin(), enqueue.end());
    std::printf("; the embedded frames' enqueue on the host %.3f ms\n", enqueue[enqueue.size() / 2]);
    // One line of host-step medians: "title: name t ms; name t ms ...".
    auto print_medians = [](const char* title, const char* const* names, std::vector<std::vector<float>>& steps) {
      std::printf("    %s (medians):", title);
      for (std::size_t i = 0; i < steps.size(); ++i) {
        std::sort(steps[i].begin(), steps[i].end());
        std::printf("%s %s %.3f ms", i ? ";" : "", names[i], steps[i][steps[i].size() / 2]);
      }
      std::printf("\n");
    };
    static const char* const kMarkNames[] = {"coded levels planned", "decodes staged", "uploads enqueued",
                                             "tables' build launched", "batch staged", "decodes launched"};
    static_assert(std::size(kMarkNames) == kMarks + 1, "a name per host step");
    print_medians("its host steps", kMarkNames, marks);
    static const char* const kPlanNames[] = {"first read", "wavelet header parsed", "embedded headers read",
                                             "second round read", "embedded headers checked", "temp layout"};
    static_assert(std::size(kPlanNames) == kPlanMarks + 1, "a name per plan step");
    print_medians("its plan on the host", kPlanNames, plan);
    static const char* const kWholeNames[] = {"plan", "to the last launch", "the end's wait", "checks", "the call"};
    print_medians("the whole call on the host", kWholeNames, whole);
    for (auto& e : ev.events) CUDA_CHECK(cudaEventDestroy(e));
    cuda::wavelet_gpu::coded_detail_bands = true;
  }
  // The inverse 5/3 level by level (cuda::dwt::inverse_level_events; the
  // last plane's), with every coefficient scattered first, and with the
  // details of the finest 1, 2 or 3 levels or of every 2D level read from
  // the symbols (wavelet_gpu::coded_detail_levels); medians, and the whole
  // decode's (host clock).
  {
    std::vector<cudaEvent_t> lev(kDwtMaxLevels + 1);
    for (auto& e : lev) CUDA_CHECK(cudaEventCreate(&e));
    struct Config {
      bool coded;
      unsigned levels;
      bool raw_prefetch;
      bool shift_free;  // levels without low bits on their own raw-prefetch kernel (the default)
      const char* name;
      int min_blocks = 7;  // Tuning::coded_min_blocks
    };
    const Config configs[] = {
        {false, 0, true, true, "every coefficient scattered"},
        {true, 1, true, true, "level 1's details from the symbols"},
        {true, 2, true, true, "levels 1-2's details from the symbols"},
        {true, 3, true, true, "levels 1-3's details from the symbols"},
        {true, 3, false, true, "levels 1-3's details from the symbols, each decoded where loaded"},
        {true, 3, true, false,
         "levels 1-3's details from the symbols, levels without low bits on the kernel with the window"},
        {true, 32, true, true, "every 2D level's details from the symbols"},
        {true, 3, true, true, "levels 1-3's details from the symbols, raw-prefetch kernels at any register count", 0},
        {true, 3, true, true, "levels 1-3's details from the symbols, raw-prefetch kernels for 8 blocks an SM", 8}};
    const unsigned keep_levels = cuda::wavelet_gpu::coded_detail_levels;
    const cuda::dwt::Tuning keep_tuning = cuda::wavelet_gpu::dwt_tuning;
    for (const Config& c : configs) {
      cuda::wavelet_gpu::coded_detail_bands = c.coded;
      cuda::wavelet_gpu::coded_detail_levels = c.levels;
      cuda::wavelet_gpu::dwt_tuning.coded_raw_prefetch = c.raw_prefetch;
      cuda::wavelet_gpu::dwt_tuning.coded_shift_free = c.shift_free;
      cuda::wavelet_gpu::dwt_tuning.coded_min_blocks = c.min_blocks;
      std::vector<std::vector<float>> t(kDwtMaxLevels);
      std::vector<float> total;
      std::size_t used = 0;
      for (int r = 0; r < repeat; ++r) {
        for (auto& e : lev) CUDA_CHECK(cudaEventRecord(e, stream));  // unset levels read 0
        cuda::dwt::inverse_level_events = lev.data();
        const auto t0 = std::chrono::steady_clock::now();
        device::wavelet_decompress(d_frame.get(), frame.size(), d_out.get(), bytes, d_temp.get(), temp, stream);
        total.push_back(std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count());
        cuda::dwt::inverse_level_events = nullptr;
        for (std::size_t j = 0; j < kDwtMaxLevels; ++j) {
          float ms = 0;
          CUDA_CHECK(cudaEventElapsedTime(&ms, lev[j], lev[j + 1]));
          t[j].push_back(std::max(ms, 0.0f));
          if (ms > 0) used = std::max(used, j + 1);
        }
      }
      std::vector<uint8_t> out(bytes);
      CUDA_CHECK(cudaMemcpy(out.data(), d_out.get(), bytes, cudaMemcpyDeviceToHost));
      std::sort(total.begin(), total.end());
      std::printf("  inverse by level (coarsest first), %s:", c.name);
      float sum = 0;
      for (std::size_t j = 0; j < used; ++j) {
        std::sort(t[j].begin(), t[j].end());
        sum += t[j][t[j].size() / 2];
        std::printf(" %.3f", t[j][t[j].size() / 2]);
      }
      std::printf(" ms (sum %.3f); decode %.3f ms, output %s\n", sum, total[total.size() / 2],
                  out == cpu_out ? "== the CPU decoder's" : "!= THE CPU DECODER'S");
    }
    cuda::wavelet_gpu::coded_detail_bands = true;
    cuda::wavelet_gpu::coded_detail_levels = keep_levels;
    cuda::wavelet_gpu::dwt_tuning = keep_tuning;
    for (auto& e : lev) CUDA_CHECK(cudaEventDestroy(e));
  }
  // The embedded frames alone, as one stream of ordinary frames through device::decompress.
  {
    const wavelet::ParsedWavelet w = wavelet::parse_wavelet_frame(frame.data(), frame.size(), 0);
    std::vector<uint8_t> frames;
    uint64_t symbols = 0;
    std::size_t huffman_groups = 0;
    for (const wavelet::Group& g : w.header.groups) {
      const uint8_t* at = w.payload + g.frame_offset;
      frames.insert(frames.end(), at, at + g.frame_bytes);
      const format::FrameHeader fh = format::read_fixed_header(at, g.frame_bytes, 0);
      symbols += fh.elements * fh.width;
      huffman_groups += fh.codec == Codec::huffman;
    }
    DeviceBuffer<uint8_t> d_frames(frames.size()), d_sym(symbols + 16 * w.header.groups.size());
    CUDA_CHECK(cudaMemcpy(d_frames.get(), frames.data(), frames.size(), cudaMemcpyHostToDevice));
    const std::size_t t = device::decompress_temp_bytes(d_frames.get(), frames.size());
    DeviceBuffer<uint8_t> d_t(std::max<std::size_t>(t, 16));
    try {
      const float ms = bench::median_ms(repeat, stream, [&] {
        device::decompress(d_frames.get(), frames.size(), d_sym.get(), d_sym.size(), d_t.get(), d_t.size(), stream);
      });
      std::printf("  embedded frames alone (%zu groups, %zu huffman, %llu symbol bytes) by device::decompress: "
                  "%.3f ms, %.1f GB/s of symbols\n",
                  w.header.groups.size(), huffman_groups, static_cast<unsigned long long>(symbols), ms,
                  symbols / ms / 1e6);
    } catch (const Error& e) {
      std::printf("  embedded frames alone: %s\n", e.what());
    }
    // The same symbols with smaller chunks (a writer's choice the format
    // allows): one warp decodes one chunk, so 65,536-element chunks leave
    // few warps per SM on one image.
    DecompressOptions cpu_opts;
    cpu_opts.backend = Backend::cpu;
    for (uint32_t chunk : {16384u, 4096u}) {
      std::vector<uint8_t> restream;
      std::size_t group_index = 0;
      for (const wavelet::Group& g : w.header.groups) {
        const uint8_t* at = w.payload + g.frame_offset;
        const format::FrameHeader fh = format::read_fixed_header(at, g.frame_bytes, 0);
        const std::vector<uint8_t> sym = decompress(at, g.frame_bytes, cpu_opts);
        CompressOptions co;
        co.dtype = fh.width == 1 ? DType::u8 : DType::u16;
        co.codec = fh.codec == Codec::huffman ? CodecChoice::huffman
                   : fh.codec == Codec::rle ? CodecChoice::rle
                   : fh.codec == Codec::rle_huffman ? CodecChoice::rle_huffman : CodecChoice::raw;
        co.chunk_elements = chunk;
        const std::vector<uint8_t> f2 = compress(sym.data(), sym.size(), co);
        restream.insert(restream.end(), f2.begin(), f2.end());
        ++group_index;
      }
      DeviceBuffer<uint8_t> d_re(restream.size());
      CUDA_CHECK(cudaMemcpy(d_re.get(), restream.data(), restream.size(), cudaMemcpyHostToDevice));
      const std::size_t t2 = device::decompress_temp_bytes(d_re.get(), restream.size());
      DeviceBuffer<uint8_t> d_t2(std::max<std::size_t>(t2, 16));
      try {
        const float ms = bench::median_ms(repeat, stream, [&] {
          device::decompress(d_re.get(), restream.size(), d_sym.get(), d_sym.size(), d_t2.get(), d_t2.size(), stream);
        });
        std::printf("  the same symbols in %u-element chunks: %zu bytes (%+.2f %%), device::decompress %.3f ms, "
                    "%.1f GB/s\n",
                    chunk, restream.size(), 100.0 * (double(restream.size()) - double(frames.size())) / frames.size(),
                    ms, symbols / ms / 1e6);
      } catch (const Error& e) {
        std::printf("  %u-element chunks: %s\n", chunk, e.what());
      }
    }
  }
  // Parts alone.
  std::vector<double> plan_ms;
  for (int i = 0; i < 5; ++i) {
    t0 = std::chrono::steady_clock::now();
    (void)device::wavelet_decompressed_size(d_frame.get(), frame.size());
    plan_ms.push_back(1e3 * seconds_since(t0));
  }
  std::sort(plan_ms.begin(), plan_ms.end());
  const vlec::StreamInfo info = inspect(frame.data(), frame.size());
  std::printf("  host plan (header area + %llu embedded headers read and checked): %.3f ms\n",
              static_cast<unsigned long long>(info.frames.at(0).chunks), plan_ms[2]);
  const DwtShape shape{size, size, 1};
  const unsigned levels = 6;
  DeviceBuffer<uint8_t> d_dwt_temp(std::max<std::size_t>(device::dwt53_temp_bytes(shape, levels), 16));
  DeviceBuffer<int32_t> d_coeffs(n), d_i32(n);
  DeviceBuffer<uint64_t> d_err(2);
  device::dwt53_forward(d_out.get(), device::DwtSample::u16, d_coeffs.get(), shape,
                        levels, d_err.get(), d_dwt_temp.get(), d_dwt_temp.size(), stream);
  const float idwt_ms = bench::median_ms(repeat, stream, [&] {
    device::dwt53_inverse(d_coeffs.get(), d_i32.get(), device::DwtSample::i32, shape, levels, d_err.get(),
                          d_dwt_temp.get(), d_dwt_temp.size(), stream);
  });
  std::printf("  inverse 5/3 alone (i32 out, 6 levels): %.3f ms\n", idwt_ms);
  for (bool segmented : {false, true}) {
    DeviceBuffer<uint8_t> t(cuda::samples_checksum_temp_bytes(bytes, segmented));
    const float ms = bench::median_ms(repeat, stream, [&] {
      cuda::samples_checksum_device(d_out.get(), bytes, segmented, d_err.get(), t.get(), t.size(), stream);
    });
    uint64_t h = 0;
    CUDA_CHECK(cudaMemcpy(&h, d_err.get(), 8, cudaMemcpyDeviceToHost));
    std::printf("  samples checksum alone, %s: %.3f ms%s\n", segmented ? "segmented (flag bit 2)" : "sequential",
                ms, segmented ? "" : (h == checksum64(cpu_out.data(), bytes) ? " (== host XXH3)" : " (!= host XXH3)"));
  }
  {  // The segmented checksum with its warps' loads a block at a time, alternated with the default.
    DeviceBuffer<uint8_t> t(cuda::samples_checksum_temp_bytes(bytes, true));
    float ms[2] = {0, 0};
    for (int round = 0; round < 2; ++round)
      for (const unsigned blocks : {1u, cuda::kBlocksInFlight}) {
        cuda::checksum_blocks_in_flight = blocks;
        ms[blocks == 1 ? 0 : 1] = bench::median_ms(repeat, stream, [&] {
          cuda::samples_checksum_device(d_out.get(), bytes, true, d_err.get(), t.get(), t.size(), stream);
        });
      }
    cuda::checksum_blocks_in_flight = cuda::kBlocksInFlight;
    std::printf("  samples checksum alone, segmented, a block of loads a warp at a time: %.3f ms (%u blocks: %.3f ms; "
                "%.0f GB/s)\n",
                ms[0], cuda::kBlocksInFlight, ms[1], bytes / ms[1] / 1e6);
  }

  run_compress(in, im, frame, copy_ms, repeat, stream);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t size = 8192;
  int repeat = 20;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--size" && i + 1 < argc) size = std::stoul(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc) repeat = std::stoi(argv[++i]);
    else if (a == "--profile" && i + 1 < argc) profile_op = argv[++i];
    else if (a == "--compress-only") bench::compress_only = true;
    else if (a == "--alternate" && i + 1 < argc) bench::alternate_only = argv[++i];
    else if (a == "--symbols-walk") cuda::wavelet_gpu::symbols_row_tiles = false;  // (for profiling the other kernel)
    else if (a == "--symbols-block-tiles" && i + 1 < argc)
      cuda::wavelet_gpu::symbols_block_tiles = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a == "--tops-any-registers") cuda::wavelet_gpu::dwt_tuning.tops_six_blocks = false;  // (profiling)
    else if (a == "--cub-payload-copy") cuda::wavelet_gpu::hand_payload_copy = false;  // (profiling)
    else files.push_back(a);
  }
  if (!profile_op.empty() && profile_op != "compress" && profile_op != "decompress") {
    std::fprintf(stderr, "--profile takes compress or decompress, not %s\n", profile_op.c_str());
    return 2;
  }
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("wavelet_gpu_bench: %s, %zu x %zu u16, median of %d after 2 warm-ups\n", prop.name, size, size, repeat);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  try {
    for (const std::string& f : files) {
      Input in;
      if (load_tiled(f, size, in)) run(in, size, repeat, stream);
      else std::printf("\n%s: cannot read, skipped\n", f.c_str());
    }
    run(smooth(size), size, repeat, stream);
  } catch (const Error& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  return 0;
}
