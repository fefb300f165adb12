// bench/wavelet_gpu_bench_compress.cu: wavelet_gpu_bench's GPU writer
// (see wavelet_gpu_bench.cu and wavelet_gpu_bench.hpp): device::
// wavelet_compress of a u16 8192 x 8192 image, issue 5's target >= 100 GS/s.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bench_timing.cuh"
#include "cuda/codebook_gpu.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/dwt53_gpu.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/huffman_encode.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_checksum.hpp"
#include "cuda/wavelet_encode_kernels.hpp"
#include "cuda/wavelet_kernels.hpp"
#include "cuda/wavelet_payload_copy.hpp"
#include "vlec/device_wavelet.hpp"
#include "wavelet_gpu_bench.hpp"

namespace vlec::bench {

using cuda::DeviceBuffer;

bool compress_only = false;
std::string alternate_only;

namespace {

namespace wg = cuda::wavelet_gpu;

// The writer under another setting against the defaults, runs of the two
// alternated (bench::paired_median_ms): medians, and whether the setting's
// frame is still the CPU writer's.
void alternate_settings(const uint8_t* d_samples, const WaveletImage& im, const std::vector<uint8_t>& frame,
                        uint8_t* d_gframe, std::size_t cap, uint8_t* d_etemp, std::size_t etemp, int repeat,
                        cudaStream_t stream) {
  std::size_t gbytes = 0;
  auto timed_compress = [&](const char* what, const char* against, auto&& set, auto&& reset) {
    if (!alternate_only.empty() && std::string(what).find(alternate_only) == std::string::npos) return;
    auto once = [&] {
      gbytes = device::wavelet_compress(d_samples, im, d_gframe, cap, d_etemp, etemp, stream);
    };
    const auto [base_ms, ms] = bench::paired_median_ms(repeat, stream, once, [&] {
      set();
      once();
      reset();
    });
    set();
    once();
    reset();
    std::vector<uint8_t> out(gbytes);
    CUDA_CHECK(cudaMemcpy(out.data(), d_gframe, gbytes, cudaMemcpyDeviceToHost));
    std::printf("  GPU compress with %s: %.3f ms (%s, alternated with it: %.3f ms), frame %s the CPU writer's\n",
                what, ms, against, base_ms, out == frame ? "==" : "!=");
  };
  timed_compress("a frame a group on the side streams", "every group's frame in one batch",
                 [] { wg::batched_frames = false; }, [] { wg::batched_frames = true; });
  timed_compress("a frame a group on the side streams, enqueued from one host thread", "one batch",
                 [] { wg::batched_frames = false, wg::threaded_frame_enqueue = false; },
                 [] { wg::batched_frames = true, wg::threaded_frame_enqueue = true; });
  timed_compress("codebooks of 1,025-2,048 symbols by the 8,192-symbol block", "a 256-thread block",
                 [] { cuda::set_codebook_mid_block(false); }, [] { cuda::set_codebook_mid_block(true); });
  timed_compress("the embedded frames enqueued from one host thread", "a thread per side stream",
                 [] { wg::threaded_frame_enqueue = false; }, [] { wg::threaded_frame_enqueue = true; });
  const unsigned streams = wg::encode_side_streams;
  const std::string streams_above = std::to_string(streams) + " side streams";
  timed_compress("the embedded frames on 4 side streams", streams_above.c_str(),
                 [] { wg::encode_side_streams = 4; }, [&] { wg::encode_side_streams = streams; });
  timed_compress("the embedded frames on 8 side streams", streams_above.c_str(),
                 [] { wg::encode_side_streams = 8; }, [&] { wg::encode_side_streams = streams; });
  timed_compress("a histogram pass over each Huffman group's symbols", "histograms from the statistics",
                 [] { wg::histograms_from_statistics = false; }, [] { wg::histograms_from_statistics = true; });
  timed_compress("the subband tops by their own pass", "tops taken by the transform",
                 [] { wg::tops_in_transform = false; }, [] { wg::tops_in_transform = true; });
  timed_compress("each codebook built at the head of its frame", "codebooks built beside the symbols kernel",
                 [] { wg::codebooks_beside_symbols = false; }, [] { wg::codebooks_beside_symbols = true; });
  timed_compress("the checksum and the finest levels' histograms in order on one stream",
                 "beside the coarser levels", [] { wg::overlapped_statistics = false; },
                 [] { wg::overlapped_statistics = true; });
  const unsigned early = wg::early_histogram_levels;
  timed_compress("the transform's levels on the caller's stream, the early histograms at the side streams' priority",
                 "the levels first (greatest priority; histograms at the least)",
                 [] { wg::transform_chain_first = false; }, [] { wg::transform_chain_first = true; });
  timed_compress("only level 1's histograms early", "levels 1-2's", [] { wg::early_histogram_levels = 1; },
                 [&] { wg::early_histogram_levels = early; });
  timed_compress("levels 1-3's histograms early", "levels 1-2's", [] { wg::early_histogram_levels = 3; },
                 [&] { wg::early_histogram_levels = early; });
  timed_compress("every symbols tile walked", "tiles of one row straight", [] { wg::symbols_row_tiles = false; },
                 [] { wg::symbols_row_tiles = true; });
  const unsigned block_tiles = wg::symbols_block_tiles;
  const std::string tiles_above = std::to_string(block_tiles) + " tiles a block";
  timed_compress("a symbols block a tile", tiles_above.c_str(), [] { wg::symbols_block_tiles = 1; },
                 [&] { wg::symbols_block_tiles = block_tiles; });
  timed_compress("a symbols block 8 tiles", tiles_above.c_str(), [] { wg::symbols_block_tiles = 8; },
                 [&] { wg::symbols_block_tiles = block_tiles; });
  timed_compress("the encoder's words across ranges completed by lookahead rows", "by a fix-up after a barrier",
                 [] { cuda::encode_boundary_fix_up = false; }, [] { cuda::encode_boundary_fix_up = true; });
  timed_compress("u16 codes looked up where the global table may be read", "from shared memory alone",
                 [] { cuda::encode_shared_table = false; }, [] { cuda::encode_shared_table = true; });
  timed_compress("the payload copied after the wait for the frames' sizes", "during it, on a side stream",
                 [] { wg::early_payload_copies = false; }, [] { wg::early_payload_copies = true; });
  // (These two compare ways of building the codebooks after the decisions.)
  wg::codebooks_behind_shift_rule = false;
  timed_compress("the codebooks' histograms ahead of the symbols kernel (codebooks after the decisions)",
                 "prepared and derived after its launch", [] { wg::histograms_after_symbols_launch = false; },
                 [] { wg::histograms_after_symbols_launch = true; });
  timed_compress("a codebook launch a group, on the side streams (codebooks after the decisions)",
                 "one launch a block shape", [] { wg::batched_codebooks = false; },
                 [] { wg::batched_codebooks = true; });
  wg::codebooks_behind_shift_rule = true;
  timed_compress("the groups' codebooks built after the decisions", "every candidate's behind the shift rule",
                 [] { wg::codebooks_behind_shift_rule = false; }, [] { wg::codebooks_behind_shift_rule = true; });
  timed_compress("the shift rule enqueued after a wait for the statistics", "right behind them",
                 [] { wg::shift_rule_behind_statistics = false; }, [] { wg::shift_rule_behind_statistics = true; });
  timed_compress("the samples checksum beside the transform", "after it, beside the shift rule",
                 [] { wg::late_samples_checksum = false; }, [] { wg::late_samples_checksum = true; });
  timed_compress("8 tiles a histogram block in every list", "fewer in short lists",
                 [] { wg::histogram_tiles_by_list = false; }, [] { wg::histogram_tiles_by_list = true; });
  timed_compress("the wide histogram tile by tile", "two tiles of a row at once",
                 [] { wg::wide_histogram_tile_pairs = false; }, [] { wg::wide_histogram_tile_pairs = true; });
  timed_compress("the payload copied by cub::DeviceMemcpy::Batched", "by vlec's kernel",
                 [] { wg::hand_payload_copy = false; }, [] { wg::hand_payload_copy = true; });
  timed_compress("the host's reads a copy a piece", "one batch a wait",
                 [] { cuda::batched_device_reads = false; }, [] { cuda::batched_device_reads = true; });
  timed_compress("side streams at the default priority", "at the greatest",
                 [] { cuda::side_streams_high_priority = false; }, [] { cuda::side_streams_high_priority = true; });
  timed_compress("the run counts read before the frames are enqueued", "Huffman frames enqueued at once",
                 [] { wg::speculative_huffman_frames = false; }, [] { wg::speculative_huffman_frames = true; });
  const cuda::dwt::Tuning tuning = wg::dwt_tuning;
  timed_compress("the 5/3 kernel taking the tops at any register count", "built for 6 blocks an SM",
                 [] { wg::dwt_tuning.tops_six_blocks = false; }, [&] { wg::dwt_tuning = tuning; });
  timed_compress("every 5/3 level at 8 row pairs a warp", "coarse levels with fewer",
                 [] { wg::dwt_tuning.min_warps = 0; }, [&] { wg::dwt_tuning = tuning; });
  timed_compress("the samples checksum a block of loads at a time", "8 blocks",
                 [] { cuda::checksum_blocks_in_flight = 1; },
                 [] { cuda::checksum_blocks_in_flight = cuda::kBlocksInFlight; });
}

}  // namespace

void run_compress(const Input& in, const WaveletImage& im, const std::vector<uint8_t>& frame, float copy_ms,
                  int repeat, cudaStream_t stream) {
  const std::size_t n = im.samples(), bytes = 2 * n;
  DeviceBuffer<uint8_t> d_out(bytes);
  std::vector<uint8_t> gpu_out(bytes);
  DeviceBuffer<uint8_t> d_samples(bytes);
  CUDA_CHECK(cudaMemcpy(d_samples.get(), in.samples.data(), bytes, cudaMemcpyHostToDevice));
  const std::size_t cap = device::wavelet_compress_capacity(im, 0);
  const std::size_t etemp = device::wavelet_compress_temp_bytes(im);
  DeviceBuffer<uint8_t> d_gframe(cap), d_etemp(etemp);
  std::size_t gbytes = 0;
  const float enc_ms = bench::median_ms(repeat, stream, [&] {
    gbytes = device::wavelet_compress(d_samples.get(), im, d_gframe.get(), cap, d_etemp.get(), etemp, stream);
  });
  std::vector<uint8_t> gframe(gbytes);
  CUDA_CHECK(cudaMemcpy(gframe.data(), d_gframe.get(), gbytes, cudaMemcpyDeviceToHost));
  std::size_t diff = 0;
  while (diff < std::min(gframe.size(), frame.size()) && gframe[diff] == frame[diff]) ++diff;
  const bool same = gframe == frame;
  std::printf("  GPU compress: %.3f ms, %.1f GS/s (%.1f GB/s of samples), %.3f of the copy's speed; temp %.0f MiB; "
              "frame %zu bytes, %s the CPU writer's",
              enc_ms, n / enc_ms / 1e6, bytes / enc_ms / 1e6, copy_ms / enc_ms, etemp / 1048576.0, gbytes,
              same ? "==" : "!=");
  if (!same) std::printf(" (first difference at byte %zu of %zu)", diff, frame.size());
  std::printf("\n");
  if (!compress_only || !alternate_only.empty())
    alternate_settings(d_samples.get(), im, frame, d_gframe.get(), cap, d_etemp.get(), etemp, repeat, stream);
  // The encoder's steps: host time between its points, and the GPU's
  // span of each step's work (events at the points; cuda/
  // wavelet_encode_kernels.hpp, EncodePoint); medians.
  wg::EncodePhases ph;
  for (auto& e : ph.gpu) CUDA_CHECK(cudaEventCreate(&e));
  wg::encode_phases = &ph;
  std::vector<std::vector<double>> host(wg::EncodePhases::kCount - 1);
  struct Span {
    wg::EncodePoint from, to;
    const char* name;
  };
  const Span spans[] = {{wg::kStart, wg::kStatsEnqueued, "step 1 (checksum, 5/3, tops, histograms)"},
                        {wg::kStatsRead, wg::kShiftsEnqueued, "shift rule"},
                        {wg::kDecided, wg::kSymbolsEnqueued, "symbols, low bits, runs"},
                        {wg::kCodecsChosen, wg::kFramesEnqueued, "embedded frames"},
                        {wg::kFramesRead, wg::kEnd, "header + copies"}};
  std::vector<std::vector<float>> gpu(std::size(spans));
  for (int r = 0; r < repeat; ++r) {
    device::wavelet_compress(d_samples.get(), im, d_gframe.get(), cap, d_etemp.get(), etemp, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (unsigned i = 0; i + 1 < wg::EncodePhases::kCount; ++i) host[i].push_back(1e3 * (ph.at[i + 1] - ph.at[i]));
    for (std::size_t i = 0; i < std::size(spans); ++i) {
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, ph.gpu[spans[i].from], ph.gpu[spans[i].to]));
      gpu[i].push_back(ms);
    }
  }
  // One more compress with every group's events: when, after the
  // writer's decisions, each group's codebook began and ended on its side
  // stream and its frame's work ended (the GPU's clock).
  for (unsigned g = 0; g < wg::EncodePhases::kGroups; ++g)
    for (cudaEvent_t* e : {&ph.book_begin[g], &ph.book_end[g], &ph.frame_end[g]}) CUDA_CHECK(cudaEventCreate(e));
  CUDA_CHECK(cudaEventCreate(&ph.candidate_books_begin));
  CUDA_CHECK(cudaEventCreate(&ph.candidate_books_end));
  device::wavelet_compress(d_samples.get(), im, d_gframe.get(), cap, d_etemp.get(), etemp, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  auto after_decisions = [&](cudaEvent_t e) {  // ms (negative: before them); NaN where the event was not recorded
    float ms = 0;
    if (cudaEventElapsedTime(&ms, ph.gpu[wg::kDecided], e) != cudaSuccess) {
      (void)cudaGetLastError();
      ms = std::numeric_limits<float>::quiet_NaN();
    }
    return ms;
  };
  // (The candidates' codebooks and the groups' events, read before the
  // step-1 run below records the decisions' event again.)
  const float books_from = after_decisions(ph.candidate_books_begin);
  const float books_to = after_decisions(ph.candidate_books_end);
  const float symbols_done = after_decisions(ph.gpu[wg::kSymbolsEnqueued]),
              frames_done = after_decisions(ph.gpu[wg::kFramesEnqueued]);
  std::vector<float> book_from(wg::EncodePhases::kGroups), book_to(wg::EncodePhases::kGroups),
      frame_to(wg::EncodePhases::kGroups);
  for (unsigned g = 0; g < std::min(ph.groups, wg::EncodePhases::kGroups); ++g) {
    book_from[g] = after_decisions(ph.book_begin[g]);
    book_to[g] = after_decisions(ph.book_end[g]);
    frame_to[g] = after_decisions(ph.frame_end[g]);
  }
  CUDA_CHECK(cudaEventDestroy(ph.candidate_books_begin));
  CUDA_CHECK(cudaEventDestroy(ph.candidate_books_end));
  ph.candidate_books_begin = ph.candidate_books_end = nullptr;
  // Step 1's timeline (plane 0; ms after the compress's start event).
  for (unsigned k = 0; k < wg::EncodePhases::kLevels; ++k)
    for (cudaEvent_t* e : {&ph.level_end[k], &ph.early_end[k]}) CUDA_CHECK(cudaEventCreate(e));
  CUDA_CHECK(cudaEventCreate(&ph.late_end));
  device::wavelet_compress(d_samples.get(), im, d_gframe.get(), cap, d_etemp.get(), etemp, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  auto after_start = [&](cudaEvent_t e) {  // ms; negative where the event was not recorded
    float ms = -1;
    if (cudaEventElapsedTime(&ms, ph.gpu[wg::kStart], e) != cudaSuccess) {
      (void)cudaGetLastError();
      ms = -1;
    }
    return ms;
  };
  std::printf("  step 1's timeline (ms after the start; plane 0): 5/3 levels done at");
  for (unsigned k = 0; k < wg::EncodePhases::kLevels; ++k) {
    const float ms = after_start(ph.level_end[k]);
    if (ms >= 0) std::printf(" %.3f", ms);
  }
  std::printf("; early levels' histograms done at");
  for (unsigned k = 0; k < wg::EncodePhases::kLevels; ++k) {
    const float ms = after_start(ph.early_end[k]);
    if (ms >= 0) std::printf(" %.3f", ms);
  }
  std::printf("; late list's histograms done at %.3f; step 1 enqueued (all joined) at %.3f; shift rule done at %.3f\n",
              after_start(ph.late_end), after_start(ph.gpu[wg::kStatsEnqueued]),
              after_start(ph.gpu[wg::kShiftsEnqueued]));
  for (unsigned k = 0; k < wg::EncodePhases::kLevels; ++k)
    for (cudaEvent_t* e : {&ph.level_end[k], &ph.early_end[k]}) {
      CUDA_CHECK(cudaEventDestroy(*e));
      *e = nullptr;
    }
  CUDA_CHECK(cudaEventDestroy(ph.late_end));
  ph.late_end = nullptr;
  std::printf("  one GPU compress, each group's work on its side stream (ms after the decisions' event; the "
              "candidates' codebooks behind the shift rule %.3f-%.3f; symbols kernel done at %.3f, frames joined at "
              "%.3f; a group's book nan-nan: its candidate's):",
              books_from, books_to, symbols_done, frames_done);
  for (unsigned g = 0; g < std::min(ph.groups, wg::EncodePhases::kGroups); ++g)
    std::printf("%s g%u (%.2f M symbols, s%u) book %.3f-%.3f frame end %.3f", g ? ";" : "", g, ph.count[g] / 1e6,
                ph.stream_of[g], book_from[g], book_to[g], frame_to[g]);
  std::printf("\n");
  wg::encode_phases = nullptr;
  for (auto& e : ph.gpu) CUDA_CHECK(cudaEventDestroy(e));
  for (unsigned g = 0; g < wg::EncodePhases::kGroups; ++g)
    for (cudaEvent_t e : {ph.book_begin[g], ph.book_end[g], ph.frame_end[g]}) CUDA_CHECK(cudaEventDestroy(e));
  static const char* const kSteps[] = {"step 1 enqueued", "wait 1", "shift rule enqueued", "wait 2",
                                       "host decisions", "symbols enqueued", "wait 3", "codec choices",
                                       "embedded frames enqueued", "wait 4", "header + copies enqueued"};
  static_assert(std::size(kSteps) == wg::EncodePhases::kCount - 1, "a name per step");
  auto median = [](auto& v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("  inside the GPU compress, host clock (medians):");
  for (std::size_t i = 0; i < host.size(); ++i) std::printf("%s %s %.3f ms", i ? ";" : "", kSteps[i], median(host[i]));
  std::printf("\n  inside the GPU compress, GPU span of each step's work (events, medians):");
  for (std::size_t i = 0; i < gpu.size(); ++i) std::printf("%s %s %.3f ms", i ? ";" : "", spans[i].name, median(gpu[i]));
  std::printf("\n");
  const std::size_t dtemp = device::wavelet_decompress_temp_bytes(d_gframe.get(), gbytes);
  DeviceBuffer<uint8_t> d_dtemp(dtemp);
  device::wavelet_decompress(d_gframe.get(), gbytes, d_out.get(), bytes, d_dtemp.get(), dtemp, stream);
  CUDA_CHECK(cudaMemcpy(gpu_out.data(), d_out.get(), bytes, cudaMemcpyDeviceToHost));
  std::printf("  GPU-written frame decoded on the GPU: %s the original\n",
              std::memcmp(gpu_out.data(), in.samples.data(), bytes) == 0 ? "==" : "!=");
}

}  // namespace vlec::bench
