// bench/wavelet_gpu_bench_decode.cu: wavelet_gpu_bench's decoder under
// each of its settings, alternated with its defaults (see
// wavelet_gpu_bench.cu and wavelet_gpu_bench.hpp).
#include <cstdio>
#include <string>
#include <vector>

#include "bench_timing.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/dwt53_gpu.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_checksum.hpp"
#include "cuda/wavelet_kernels.hpp"
#include "vlec/device_wavelet.hpp"
#include "vlec/vlec.hpp"
#include "wavelet/codec.hpp"
#include "wavelet_gpu_bench.hpp"

namespace vlec::bench {

using cuda::DeviceBuffer;

void run_decode_settings(const Input& in, const WaveletImage& im, const std::vector<uint8_t>& frame,
                         const std::vector<uint8_t>& cpu_out, const uint8_t* d_frame, void* d_temp,
                         std::size_t temp, float dec_ms, int repeat, cudaStream_t stream) {
  const std::size_t bytes = 2 * im.samples();
  DeviceBuffer<uint8_t> d_out(bytes);
  WaveletOptions cpu_writer;
  cpu_writer.backend = Backend::cpu;
  // One decode's median time under a setting, and whether its output is
  // the CPU decoder's.
  auto timed_decode = [&](bool& same) {
    const float ms = bench::median_ms(repeat, stream, [&] {
      device::wavelet_decompress(d_frame, frame.size(), d_out.get(), bytes, d_temp, temp, stream);
    });
    std::vector<uint8_t> out(bytes);
    CUDA_CHECK(cudaMemcpy(out.data(), d_out.get(), bytes, cudaMemcpyDeviceToHost));
    same = out == cpu_out;
    return ms;
  };
  auto verdict = [](bool same) { return same ? "== the CPU decoder's" : "!= THE CPU DECODER'S"; };
  bool same = false;
  // The same decode with the host's per-group work on the calling thread
  // alone (wavelet_gpu::parallel_group_work), against the threaded plan above.
  const uint64_t work = cuda::wavelet_gpu::parallel_group_work;
  cuda::wavelet_gpu::parallel_group_work = ~uint64_t{0};
  const float serial_ms = timed_decode(same);
  cuda::wavelet_gpu::parallel_group_work = work;
  std::printf("  GPU decompress with the plan's group work on one host thread: %.3f ms (threaded above: %.3f ms)\n",
              serial_ms, dec_ms);
  // The groups' Huffman frames with one launch each on the side streams
  // (wavelet_gpu::batched_group_decode off), against the batched launches above.
  cuda::wavelet_gpu::batched_group_decode = false;
  const float single_ms = timed_decode(same);
  cuda::wavelet_gpu::batched_group_decode = true;
  std::printf("  GPU decompress with one launch a group: %.3f ms (one launch a kernel shape above: %.3f ms), "
              "output %s\n", single_ms, dec_ms, verdict(same));
  // Level 1's details scattered as int32 and read back by the inverse
  // (wavelet_gpu::coded_detail_bands off), against the inverse reading
  // them from the symbols above.
  cuda::wavelet_gpu::coded_detail_bands = false;
  const float scattered_ms = timed_decode(same);
  cuda::wavelet_gpu::coded_detail_bands = true;
  std::printf("  GPU decompress with every coefficient scattered first: %.3f ms (the finest 2D levels' details, "
              "by default levels 1-3's, read from the symbols by the inverse above: %.3f ms), output %s\n",
              scattered_ms, dec_ms, verdict(same));
  // The decoder under another setting against the defaults, runs of the
  // two alternated (bench::paired_median_ms): medians.
  auto decode = [&] {
    device::wavelet_decompress(d_frame, frame.size(), d_out.get(), bytes, d_temp, temp, stream);
  };
  auto timed_setting = [&](const std::string& what, const char* against, auto&& set, auto&& reset) {
    const auto [base_ms, ms] = bench::paired_median_ms(repeat, stream, decode, [&] {
      set();
      decode();
      reset();
    });
    std::printf("  GPU decompress with %s: %.3f ms (%s, alternated with it: %.3f ms)\n", what.c_str(), ms, against,
                base_ms);
  };
  namespace wg = cuda::wavelet_gpu;
  // The embedded chunks' checksums checked in every decode, where by
  // default only a frame that fails another check is decoded again with them.
  timed_setting("every embedded chunk's checksum checked", "checked only if another check fails",
                [] { wg::deferred_chunk_checks = false; }, [] { wg::deferred_chunk_checks = true; });
  // The plan's header reads. By default one round trip: a kernel gathers
  // the first 4 KiB and every embedded header area into mapped pinned
  // memory. Against it: two rounds of copies (the first 4 KiB, then the
  // embedded headers as one batch), a cudaMemcpyAsync a group instead of
  // the batch, only the fixed headers' round batched, no speculation (four
  // waits).
  timed_setting("the plan's headers read by copies in two rounds", "gathered by a kernel in one round trip",
                [] { wg::gathered_header_reads = false; }, [] { wg::gathered_header_reads = true; });
  timed_setting("the plan's header reads a copy a group", "gathered by a kernel",
                [] { wg::gathered_header_reads = false, wg::batched_header_reads = false; },
                [] { wg::gathered_header_reads = true, wg::batched_header_reads = true; });
  timed_setting("only the fixed headers' reads batched", "gathered by a kernel",
                [] { wg::gathered_header_reads = false, wg::batched_area_reads = false; },
                [] { wg::gathered_header_reads = true, wg::batched_area_reads = true; });
  timed_setting("the plan's headers read in four rounds", "gathered by a kernel",
                [] { wg::speculative_header_reads = false; }, [] { wg::speculative_header_reads = true; });
  // Every 5/3 level at pairs_per_warp row pairs a warp (dwt_tuning.min_warps
  // 0), where by default the coarse levels take fewer pairs a warp.
  const cuda::dwt::Tuning tuning = wg::dwt_tuning;
  // The details of the finest 1, 2, 3 or every 2D level read from the
  // symbols by the inverse (wavelet_gpu::coded_detail_levels), and levels
  // 1-3 whatever their bands' size (coded_level_min_samples), against the
  // default.
  const unsigned coded_levels = wg::coded_detail_levels;
  for (const unsigned c : {1u, 2u, 3u, 32u})
    if (c != coded_levels)
      timed_setting(c == 1    ? "level 1's details alone from the symbols"
                    : c == 2  ? "levels 1-2's details from the symbols"
                    : c == 3  ? "levels 1-3's details from the symbols"
                              : "every 2D level's details from the symbols",
                    "the default coded levels", [c] { wg::coded_detail_levels = c; },
                    [coded_levels] { wg::coded_detail_levels = coded_levels; });
  const uint64_t min_samples = wg::coded_level_min_samples;
  timed_setting("levels 1-3's details from the symbols at any band size", "the default coded levels",
                [] { wg::coded_level_min_samples = 0; }, [min_samples] { wg::coded_level_min_samples = min_samples; });
  timed_setting("every 5/3 level at 8 row pairs a warp", "coarse levels with fewer",
                [] { wg::dwt_tuning.min_warps = 0; }, [&] { wg::dwt_tuning = tuning; });
  timed_setting("the coded details decoded where loaded", "prefetched raw, decoded a step later",
                [] { wg::dwt_tuning.coded_raw_prefetch = false; }, [&] { wg::dwt_tuning = tuning; });
  timed_setting("levels without low bits on the raw kernel with the window", "a kernel without it",
                [] { wg::dwt_tuning.coded_shift_free = false; }, [&] { wg::dwt_tuning = tuning; });
  for (const int blocks : {0, 8})
    timed_setting(blocks ? "the raw-prefetch 5/3 kernels built for 8 blocks an SM"
                         : "the raw-prefetch 5/3 kernels at any register count",
                  "built for 7 blocks an SM", [blocks] { wg::dwt_tuning.coded_min_blocks = blocks; },
                  [&] { wg::dwt_tuning = tuning; });
  timed_setting("the samples checksum a block of loads at a time", "8 blocks",
                [] { cuda::checksum_blocks_in_flight = 1; },
                [] { cuda::checksum_blocks_in_flight = cuda::kBlocksInFlight; });
  timed_setting("the end's status reads a copy a group", "one batch",
                [] { cuda::batched_device_reads = false; }, [] { cuda::batched_device_reads = true; });
  timed_setting("side streams at the default priority", "at the greatest",
                [] { cuda::side_streams_high_priority = false; }, [] { cuda::side_streams_high_priority = true; });
  // The host's group work (embedded headers checked, decodes staged) on
  // the thread pool from 2^13 bytes or symbols, against the default bound.
  const uint64_t group_work = wg::parallel_group_work;
  timed_setting("the plan's group work threaded from 2^13", "from the default bound",
                [] { wg::parallel_group_work = uint64_t{1} << 13; }, [&] { wg::parallel_group_work = group_work; });
  // The same image written with smaller embedded chunks (the CPU writer's
  // EncoderTuning::chunk_elements; more warps for the groups' decodes,
  // more bytes), decoded alternately with the default frame.
  for (const uint32_t chunk : {8192u, 4096u}) {
    wavelet::EncoderTuning t;
    t.chunk_elements = chunk;
    const std::vector<uint8_t> small = wavelet::compress(in.samples.data(), im, cpu_writer, t);
    DeviceBuffer<uint8_t> d_small(small.size());
    CUDA_CHECK(cudaMemcpy(d_small.get(), small.data(), small.size(), cudaMemcpyHostToDevice));
    const std::size_t small_temp = device::wavelet_decompress_temp_bytes(d_small.get(), small.size());
    DeviceBuffer<uint8_t> d_small_temp(small_temp);
    const auto [base_ms, ms] = bench::paired_median_ms(repeat, stream, decode, [&] {
      device::wavelet_decompress(d_small.get(), small.size(), d_out.get(), bytes, d_small_temp.get(), small_temp,
                                 stream);
    });
    std::vector<uint8_t> out(bytes);
    CUDA_CHECK(cudaMemcpy(out.data(), d_out.get(), bytes, cudaMemcpyDeviceToHost));
    std::printf("  GPU decompress of the frame written with %u-element chunks (%+.2f %% bytes): %.3f ms (16,384, "
                "alternated with it: %.3f ms), output %s\n",
                chunk, 100.0 * (double(small.size()) / frame.size() - 1), ms, base_ms, verdict(out == cpu_out));
  }
}

}  // namespace vlec::bench
