// cuda/wavelet_encode.cu: the GPU writer of wavelet frames
// (vlec/device_wavelet.hpp; docs/FORMAT.md §10), byte for byte the CPU
// writer's frame (wavelet/encode.cpp).
//
// The data stays on the GPU; the decisions are made on the host with the
// CPU writer's own code (wavelet/encode_plan.hpp) from small statistics:
//  1. samples checksum (segmented, of a byte-swapped copy for big-endian
//     output); planes split (+ RCT) and forward 5/3 per plane
//     (cuda/dwt53_gpu.hpp, which takes each 2D subband's largest zigzag value
//     as it stores it; tops_kernel where it cannot); per subband box its
//     histogram at k0 on the GPU (the checksum's word is read with the
//     frames' sizes). Wait 1 reads the tops; then every group the writer may form (each level whole or
//     split, the merged coarse groups) gets the shift rule's answer on the
//     GPU from its boxes' histograms (cuda/wavelet_shift_gpu.hpp), and
//     wait 2 reads those answers (16 bytes a group).
//  2. Host: the groups, splits and shifts (plan_encode, group_shift), the
//     same calls the CPU writer makes, on the same answers.
//  3. One kernel writes every group's symbols and packed low bits and counts
//     its symbol runs. Before it, one kernel derives every group's symbol
//     histogram from the shift rule's merged bins; beside it, on the side
//     streams, each group's Huffman codebook is built from that histogram.
//  4. Every group's embedded frame (with its codebook from step 3, or by
//     device::compress with its codec), on the side streams (groups are
//     independent), enqueued at once as Huffman frames; wait 3 reads the
//     run counts and the frames' sizes. Groups with long runs (runs <= n /
//     3) need cpu::choose_codec over their symbols: those are copied to the
//     host (one more wait each), and those whose codec is not Huffman are
//     coded again (one more wait).
//  5. Host: the header area (finish_header); then the header area, and every
//     group's frame and low bits by one batched copy, into the output. The
//     copy is enqueued before wait 4 where it can be
//     (cuda/wavelet_payload_copy.hpp): its table comes from the sizes on
//     the device, and it runs on a side stream during the wait.
// So 3 waits for a photograph; each reads a few bytes to a few KB.
//
// Temp storage is sized from the shape alone (the query cannot see the
// data): every region holds the largest of the groupings the writer may
// choose (each level whole or split), symbols of 2 bytes and 24 low bits per
// coefficient, each group's frame temp for any codec. The embedded frames share the
// coefficients' region (the symbols kernel has consumed it before the
// first frame is written).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cuda/backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_compress.hpp"
#include "cuda/dwt53_gpu.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_checksum.hpp"
#include "cuda/wavelet_encode_kernels.hpp"
#include "cuda/wavelet_encode_layout.hpp"
#include "cuda/wavelet_kernels.hpp"
#include "cuda/wavelet_payload_copy.hpp"
#include "cuda/wavelet_shift_gpu.hpp"
#include "dwt/dwt53.hpp"
#include "vlec/device_dwt.hpp"
#include "vlec/device_wavelet.hpp"
#include "vlec/vlec.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/encode_plan.hpp"
#include "wavelet/samples_checksum.hpp"

namespace vlec::cuda {

wavelet_gpu::EncodePhases* wavelet_gpu::encode_phases = nullptr;
bool wavelet_gpu::threaded_frame_enqueue = true;
unsigned wavelet_gpu::encode_side_streams = kEncodeSideStreams;
bool wavelet_gpu::histograms_from_statistics = true;
bool wavelet_gpu::tops_in_transform = true;
bool wavelet_gpu::codebooks_beside_symbols = true;
bool wavelet_gpu::overlapped_statistics = true;
unsigned wavelet_gpu::early_histogram_levels = 2;
bool wavelet_gpu::wide_histogram_tile_pairs = true;
bool wavelet_gpu::speculative_huffman_frames = true;
bool wavelet_gpu::late_samples_checksum = true;

namespace {

namespace wg = wavelet_gpu;

// The benchmark's per-group events (EncodePhases): e[g] on stream, if created.
void group_mark(cudaEvent_t (wg::EncodePhases::*e)[wg::EncodePhases::kGroups], std::size_t g, cudaStream_t stream) {
  if (!wg::encode_phases || g >= wg::EncodePhases::kGroups || !(wg::encode_phases->*e)[g]) return;
  CUDA_CHECK(cudaEventRecord((wg::encode_phases->*e)[g], stream));
}

void phase(wg::EncodePoint i, cudaStream_t stream) {
  if (!wg::encode_phases) return;
  wg::encode_phases->at[i] = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (wg::encode_phases->gpu[i]) CUDA_CHECK(cudaEventRecord(wg::encode_phases->gpu[i], stream));
}
using wavelet::Box;
using wavelet::GroupSpec;
using wavelet::Subbands;
using wavelet::ValueStats;

using namespace wavelet_layout;

template <typename T>
void copy_to_device(void* dst, const std::vector<T>& src, cudaStream_t stream) {
  // Pageable sources: cudaMemcpyAsync returns once the bytes are staged.
  if (!src.empty()) CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
}

void check_image(const WaveletImage& im) {
  SAFETY_CHECK(im.width < kMaxAxis && im.height < kMaxAxis && im.depth < kMaxAxis, ErrorCode::unavailable,
               "the GPU writes wavelet frames with axes below 2^30 samples, not ", im.width, " x ", im.height, " x ",
               im.depth);
}

}  // namespace

}  // namespace vlec::cuda

namespace vlec::device {

std::size_t wavelet_compress_capacity(const WaveletImage& image, std::size_t prefix_bytes) {
  return wavelet_compress_bound(image, prefix_bytes);
}

std::size_t wavelet_compress_temp_bytes(const WaveletImage& image, const WaveletOptions& options) {
  const wavelet::Header h = wavelet::writer_header(image, options);
  cuda::check_image(image);
  return cuda::make_layout(image, h.levels).total;
}

std::size_t wavelet_compress(const void* d_samples, const WaveletImage& im, void* d_frame_v, std::size_t capacity,
                             void* d_temp_v, std::size_t temp_bytes, Stream stream, const WaveletOptions& o) {
  using namespace cuda;
  wavelet::Header h = wavelet::writer_header(im, o);
  check_image(im);
  const Layout L = make_layout(im, h.levels);
  VLEC_REQUIRE(d_samples != nullptr && reinterpret_cast<uintptr_t>(d_samples) % 16 == 0,
               "the samples must be 16-byte aligned device memory");
  VLEC_REQUIRE(d_frame_v != nullptr && reinterpret_cast<uintptr_t>(d_frame_v) % 8 == 0,
               "the frame buffer must be 8-byte aligned device memory");
  VLEC_REQUIRE(temp_bytes >= L.total, "temporary storage of ", temp_bytes, " bytes is below the ", L.total, " needed");
  VLEC_REQUIRE(d_temp_v != nullptr && reinterpret_cast<uintptr_t>(d_temp_v) % kAlign == 0,
               "temporary storage must be 256-byte aligned (as cudaMalloc returns it)");
  const unsigned threads = resolve_threads(o.threads, ~std::size_t{0});
  auto* t = static_cast<uint8_t*>(d_temp_v);
  auto* d_frame = static_cast<uint8_t*>(d_frame_v);
  auto* status = reinterpret_cast<uint64_t*>(t + L.status);
  auto* coeffs = reinterpret_cast<int32_t*>(t + L.coeffs);
  const uint64_t total = L.pixels * im.planes;
  const unsigned width = static_cast<unsigned>(dtype_bytes(im.dtype));
  const uint64_t sample_bytes = total * width;

  HostWrites writes;  // descriptor uploads; every one is waited for by a later wait
  // 1. Checksum, planes, transform, statistics.
  phase(wg::kStart, stream);
  CUDA_CHECK(cudaMemsetAsync(status, 0xFF, 8 * kStatusWords, stream));
  const Subbands sb(L.shape, h.levels);
  std::map<BoxKey, uint32_t> slot_of;
  for (const StatBox& s : L.boxes) slot_of[key_of(s.plane, s.box)] = s.slot;
  auto* tops = reinterpret_cast<uint32_t*>(t + L.tops);
  if (L.large) CUDA_CHECK(cudaMemsetAsync(tops, 0, 4 * std::size_t{L.large}, stream));
  // Where every level splits x and y of a 2D image, the transform takes
  // the subbands' tops as it stores them (no pass reads the coefficients
  // for them); else tops_kernel does.
  const std::vector<std::vector<cuda::dwt::BandTops>> band_tops =
      transform_tops(sb, L.shape.nz, im.planes, slot_of, tops);
  // The boxes' statistics: with the transform's tops and more than one
  // level, the details of level 1 (3/4 of a 2D image) and of level 2 (3/16)
  // are counted on a side stream as soon as each plane's level is done,
  // while the coarser, latency-bound levels run; the samples checksum runs
  // on another side stream from the start. Lists: for each plane, its level
  // 1 and level 2 details, then every other box; each list's tiles are
  // numbered from 0.
  const bool overlap = wg::overlapped_statistics && !band_tops.empty() && h.levels >= 2;
  const unsigned early_levels = overlap ? std::clamp(wg::early_histogram_levels, 1u, h.levels - 1) : 0;
  const StatisticsLists lists = statistics_lists(L.boxes, sb, im.planes, L.pixels, early_levels);
  const std::vector<wg::EncodeBox>& stat_list = lists.boxes;
  const std::vector<std::size_t>& list_at = lists.at;  // list i: stat_list[list_at[i], list_at[i + 1])
  const std::vector<uint32_t>& list_tiles = lists.tiles;
  auto* stat_boxes = reinterpret_cast<wg::EncodeBox*>(t + L.stat_boxes);
  writes.add(stat_boxes, stat_list, stream);
  auto* hist = reinterpret_cast<unsigned long long*>(t + L.hist);
  wg::PlaneGeometry geo;
  geo.coeffs = coeffs;
  geo.width = L.shape.nx;
  geo.height = L.shape.ny;
  auto histogram = [&](std::size_t list, cudaStream_t on) {
    wg::launch_histogram(geo, stat_boxes + list_at[list], static_cast<uint32_t>(list_at[list + 1] - list_at[list]),
                         list_tiles[list], tops, hist, on);
  };
  CallEvents events;
  const cudaStream_t hash_stream = overlap ? side_streams()[0] : stream;
  const cudaStream_t early_stream = overlap ? side_streams()[1] : stream;
  // The samples checksum, on its side stream. With
  // wavelet_gpu::late_samples_checksum it starts once step 1's kernels are
  // done and runs while the host reads the statistics and decides (the GPU
  // has only the shift rule's small kernels then); its word is read with the
  // frames' sizes. Beside the 5/3's level 1 it took bandwidth from that
  // level, which heads step 1's chain.
  const bool late_hash = overlap && wg::late_samples_checksum;
  auto enqueue_hash = [&] {
    const uint8_t* hashed = static_cast<const uint8_t*>(d_samples);
    if (h.big_endian) {  // the frame decompresses to swapped samples: hash those (symbols' region, free until step 3)
      wg::launch_swap16(static_cast<const uint16_t*>(d_samples), reinterpret_cast<uint16_t*>(t + L.symbols), total,
                        hash_stream);
      hashed = t + L.symbols;
    }
    samples_checksum_device(hashed, sample_bytes, true, status + kStatusHash, t + L.hash, L.hash_bytes, hash_stream);
  };
  if (!late_hash) {
    if (overlap) CUDA_CHECK(cudaStreamWaitEvent(hash_stream, events.record(stream), 0));
    enqueue_hash();
  }
  auto forward = [&](const void* samples, DwtSample type, unsigned p) {
    std::vector<cudaEvent_t> level_done(h.levels, nullptr);
    for (unsigned k = 0; k < early_levels; ++k) level_done[k] = events.make();
    cuda::dwt::forward(samples, type, coeffs + p * L.pixels, L.shape, h.levels, status + kStatusDwt + p, t + L.dwt,
                       L.dwt_bytes, stream, wg::dwt_tuning, band_tops.empty() ? nullptr : band_tops[p].data(),
                       level_done.data());
    for (unsigned k = 0; k < early_levels; ++k) {  // plane p's level k + 1
      CUDA_CHECK(cudaStreamWaitEvent(early_stream, level_done[k], 0));
      histogram(p * early_levels + k, early_stream);
    }
  };
  if (im.planes == 1) {
    forward(d_samples, im.dtype == DType::u8 ? DwtSample::u8 : DwtSample::u16, 0);
  } else {
    auto* planar = reinterpret_cast<int32_t*>(t + L.planar);
    wg::launch_split(d_samples, width, im.planes, h.rct, L.pixels, planar, stream);
    for (unsigned p = 0; p < im.planes; ++p) forward(planar + p * L.pixels, DwtSample::i32, p);
  }
  const std::size_t late_list = list_at.size() - 2;  // every box when tops_kernel runs (no early lists then)
  if (band_tops.empty())
    wg::launch_tops(geo, stat_boxes, static_cast<uint32_t>(stat_list.size()), list_tiles[late_list], tops, stream);
  histogram(late_list, stream);
  if (overlap) {
    if (!late_hash) CUDA_CHECK(cudaStreamWaitEvent(stream, events.record(hash_stream), 0));
    CUDA_CHECK(cudaStreamWaitEvent(stream, events.record(early_stream), 0));
  }
  cudaEvent_t hash_done = nullptr;  // late_hash: the checksum's end, which the symbols kernel waits for
  if (late_hash) {
    CUDA_CHECK(cudaStreamWaitEvent(hash_stream, events.record(stream), 0));
    enqueue_hash();
    hash_done = events.record(hash_stream);
  }
  std::vector<uint64_t> st;
  std::vector<uint32_t> host_tops;
  HostReads reads;
  reads.add(st, status, kStatusWords);
  reads.add(host_tops, tops, L.large);
  phase(wg::kStatsEnqueued, stream);
  // Every group the writer may form and its boxes' slots depend on the
  // shape alone: found while the GPU works, not after wait 1.
  GroupShifts candidates(sb, im.planes);
  candidates.resolve_slots([&](unsigned p, const Box& b) { return slot_of.at(key_of(p, b)); });
  reads.wait(stream);  // wait 1
  phase(wg::kStatsRead, stream);
  for (unsigned p = 0; p < im.planes; ++p)  // planes of u8/u16 samples (and their RCT) are always in range
    SAFETY_CHECK(st[kStatusDwt + p] == ~0ull, ErrorCode::cuda_error, "the GPU 5/3 transform of plane ", p,
                 " reported sample ", st[kStatusDwt + p], " out of range");
  // The shift rule of every group the writer may form, on the GPU.
  auto* results = reinterpret_cast<wg::ShiftResult*>(t + L.results);
  candidates.enqueue(host_tops, reinterpret_cast<wg::ShiftCandidate*>(t + L.candidates_at),
                     reinterpret_cast<uint32_t*>(t + L.parts_at), tops, hist, t + L.scratch, L.scratch_bytes, results,
                     writes, stream);
  std::vector<wg::ShiftResult> host_results;
  reads.add(host_results, results, candidates.candidates());
  phase(wg::kShiftsEnqueued, stream);
  reads.wait(stream);  // wait 2
  phase(wg::kShiftsRead, stream);

  // 2. The writer's decisions, by the CPU writer's code, on the GPU's answers
  // (a few dozen lookups: on one thread, as threads would cost more to start).
  const wavelet::EncodePlan plan = wavelet::plan_encode(
      sb, im.planes, 1, {},
      [&](unsigned p, const std::vector<Box>& boxes) { return candidates.stats(p, boxes, host_results); },
      /*unions=*/true);
  const std::size_t G = plan.specs.size();
  SAFETY_CHECK(G <= L.max_groups, ErrorCode::cuda_error, "wavelet plan of ", G, " groups is above the bound ",
               L.max_groups);
  std::vector<unsigned> shifts(G);
  std::vector<uint64_t> counts(G);
  std::vector<DType> types(G);
  std::vector<wg::EncodeGroup> groups(G);
  std::vector<wg::EncodeBox> sym_boxes;
  std::vector<std::size_t> sym_at(G), low_at(G);
  std::size_t sym_used = 0, low_used = 0;
  for (std::size_t g = 0; g < G; ++g) {
    shifts[g] = wavelet::group_shift(plan.stats[g], {});
    types[g] = wavelet::symbol_type(plan.stats[g].top, shifts[g]);
    const GroupSpec& s = plan.specs[g];
    uint64_t n = 0, prev = ~0ull;
    for (const Box& b : sb.boxes(s)) {
      wg::EncodeBox e = encode_box(b, s.plane * L.pixels);
      e.dest = n;
      e.prev = prev;
      e.group = static_cast<uint32_t>(g);
      sym_boxes.push_back(e);
      n += b.samples();
      prev = e.plane_base + (b.x0 + b.nx - 1) + L.shape.nx * ((b.y0 + b.ny - 1) + L.shape.ny * (b.z0 + b.nz - 1));
    }
    counts[g] = n;
    sym_at[g] = sym_used;
    low_at[g] = low_used;
    sym_used += round_up(n * dtype_bytes(types[g]));
    low_used += round_up(wavelet::low_bits_bytes(n, shifts[g]));
    groups[g].symbols = t + L.symbols + sym_at[g];
    groups[g].low = reinterpret_cast<uint32_t*>(t + L.low + low_at[g]);
    groups[g].width = static_cast<uint32_t>(dtype_bytes(types[g]));
    groups[g].shift = shifts[g];
  }
  SAFETY_CHECK(sym_used <= L.symbols_bytes && low_used <= L.low_bytes && sym_boxes.size() <= L.boxes.size(),
               ErrorCode::cuda_error, "wavelet encode regions exceeded");

  // 3. Symbols, low bits, runs; beside them, every group's codebook.
  phase(wg::kDecided, stream);
  const std::size_t streams = std::clamp<std::size_t>(wg::encode_side_streams, 1, kSideStreams);
  const std::vector<cudaStream_t> side(side_streams().begin(), side_streams().begin() + streams);
  const std::size_t used = std::min<std::size_t>(side.size(), G);
  // Side stream s takes groups s, s + used, ... (their codebooks, then their
  // frames). A group's frame is several launches, ~40 us of the host's
  // time: with wavelet_gpu::threaded_frame_enqueue a host thread per side
  // stream enqueues its groups (each thread on the caller's device). (Dealt
  // out largest first instead, the finest levels' groups heading the
  // streams, the compress was no faster: session 22, a tie on all three
  // 8192^2 images; the step is bound by the encoder's total work.)
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (wg::encode_phases) {
    wg::encode_phases->groups = static_cast<unsigned>(G);
    for (std::size_t g = 0; g < std::min<std::size_t>(G, wg::EncodePhases::kGroups); ++g) {
      wg::encode_phases->stream_of[g] = static_cast<unsigned>(g % used);
      wg::encode_phases->count[g] = counts[g];
    }
  }
  auto on_side_streams = [&](auto&& job) {  // job(group, its stream)
    parallel_for(used, wg::threaded_frame_enqueue ? static_cast<unsigned>(used) : 1, [&](std::size_t s) {
      if (wg::threaded_frame_enqueue) CUDA_CHECK(cudaSetDevice(device));
      for (std::size_t g = s; g < G; g += used) job(g, side[s]);
    });
  };
  // Every symbol is at most top >> shift: the codebook builder's kernel fits that alphabet.
  auto alphabet_of = [&](std::size_t g) {
    return static_cast<uint32_t>(std::min<uint64_t>(plan.stats[g].top >> shifts[g], 65535)) + 1;
  };
  // Each group's frame temp, large enough for any codec (chosen after the runs are read).
  std::vector<std::size_t> temp_at(G), temp_bytes_of(G);
  std::size_t temps_used = 0;
  for (std::size_t g = 0; g < G; ++g) {
    temp_at[g] = temps_used;
    temp_bytes_of[g] = frame_temp_for(counts[g]);
    temps_used += temp_bytes_of[g];
  }
  SAFETY_CHECK(temps_used <= L.frame_temp_bytes, ErrorCode::cuda_error, "wavelet frame temps exceeded");
  // The groups' histograms from their statistics (GroupShifts' merged bins),
  // all in one launch: no histogram pass per group.
  std::vector<const uint64_t*> given_hist(G, nullptr);
  if (wg::histograms_from_statistics) {
    std::vector<wg::GroupHistogram> hist_jobs;
    auto* group_hist = reinterpret_cast<unsigned long long*>(t + L.group_hist);
    for (std::size_t g = 0; g < G; ++g) {
      if (counts[g] == 0) continue;
      unsigned long long* out = group_hist + g * std::size_t{wg::kHistBins};
      hist_jobs.push_back(candidates.histogram_job(plan.specs[g].plane, sb.boxes(plan.specs[g]), shifts[g], out));
      SAFETY_CHECK(hist_jobs.back().alphabet == alphabet_of(g), ErrorCode::cuda_error, "wavelet group ", g,
                   ": its histogram's alphabet differs from its statistics'");
      given_hist[g] = reinterpret_cast<const uint64_t*>(out);
    }
    candidates.enqueue_histograms(hist_jobs, reinterpret_cast<wg::GroupHistogram*>(t + L.hist_jobs), t + L.scratch,
                                  writes, stream);
  }
  const cudaEvent_t histograms_done = events.record(stream);
  // (Big-endian output hashes a swapped copy in the symbols' region.)
  if (hash_done) CUDA_CHECK(cudaStreamWaitEvent(stream, hash_done, 0));
  const uint32_t sym_tile_count = wg::number_tiles(sym_boxes.data(), sym_boxes.size());
  writes.add(t + L.sym_boxes, sym_boxes, stream);
  writes.add(t + L.groups, groups, stream);
  auto* runs = reinterpret_cast<unsigned long long*>(t + L.runs);
  CUDA_CHECK(cudaMemsetAsync(runs, 0, 8 * G, stream));
  if (low_used) CUDA_CHECK(cudaMemsetAsync(t + L.low, 0, low_used, stream));
  wg::launch_symbols(geo, reinterpret_cast<const wg::EncodeBox*>(t + L.sym_boxes),
                     static_cast<uint32_t>(sym_boxes.size()), sym_tile_count,
                     reinterpret_cast<const wg::EncodeGroup*>(t + L.groups), runs,
                     wg::mostly_row_tiles(sym_boxes.data(), sym_boxes.size()), stream);
  // The codebooks (Huffman, as every group of a photograph turns out) on the
  // side streams while the symbols kernel runs: each is one block's
  // latency-bound work (30-100 us), which otherwise heads its frame's chain.
  const bool early_books = wg::histograms_from_statistics && wg::codebooks_beside_symbols;
  if (early_books) {
    for (std::size_t s = 0; s < used; ++s) CUDA_CHECK(cudaStreamWaitEvent(side[s], histograms_done, 0));
    on_side_streams([&](std::size_t g, cudaStream_t st) {
      group_mark(&wg::EncodePhases::book_begin, g, st);
      if (given_hist[g])
        build_codebook_from_histogram(given_hist[g], counts[g], t + L.frame_temp + temp_at[g], temp_bytes_of[g], st,
                                      frame_options(Codec::huffman, types[g]), alphabet_of(g));
      group_mark(&wg::EncodePhases::book_end, g, st);
    });
  }
  // 4. The embedded frames, side by side (the coefficients' region is free
  // once the symbols kernel is done). A group's codec is Huffman unless its
  // symbols run long (runs <= n / 3: then cpu::choose_codec decides on the
  // host). With wavelet_gpu::speculative_huffman_frames every group's
  // Huffman frame is enqueued at once, behind the symbols kernel, and the
  // run counts come back with the frames' sizes (one wait where there were
  // two, and the host's enqueue overlaps the symbols kernel); a group whose
  // runs say otherwise is chosen for and, if not Huffman, coded again. The
  // frame is the same either way: only the order of the work changes.
  auto* sizes = reinterpret_cast<uint64_t*>(t + L.sizes);
  std::vector<std::size_t> frame_at(G);
  std::size_t frames_used = 0;
  for (std::size_t g = 0; g < G; ++g) {  // capacity does not depend on the codec
    frame_at[g] = frames_used;
    frames_used += round_up(device::compress_capacity(counts[g], frame_options(Codec::huffman, types[g])));
  }
  SAFETY_CHECK(frames_used <= L.coeffs_bytes, ErrorCode::cuda_error, "wavelet frames region exceeded");
  std::vector<Codec> codecs(G, Codec::huffman);
  auto encode_group = [&](std::size_t g, cudaStream_t st) {
    const device::CompressOptions fo = frame_options(codecs[g], types[g]);
    const void* in = t + L.symbols + sym_at[g];
    void* frame = t + L.coeffs + frame_at[g];
    const std::size_t capacity = device::compress_capacity(counts[g], fo);
    void* temp = t + L.frame_temp + temp_at[g];
    const std::size_t group_temp_bytes = temp_bytes_of[g];
    uint64_t* size = sizes + 2 * g;
    if (codecs[g] == Codec::huffman && given_hist[g] && early_books)
      encode_with_built_codebook(in, counts[g], frame, capacity, size, size + 1, temp, group_temp_bytes, st, fo,
                                 alphabet_of(g));
    else if (codecs[g] == Codec::huffman && given_hist[g])
      compress_with_histogram(in, counts[g], given_hist[g], frame, capacity, size, size + 1, temp, group_temp_bytes,
                              st, fo, alphabet_of(g));
    else
      compress_bounded_alphabet(in, counts[g], frame, capacity, size, size + 1, temp, group_temp_bytes, st, fo,
                                alphabet_of(g));
    group_mark(&wg::EncodePhases::frame_end, g, st);
  };
  // The run-heavy groups' codecs, by the CPU writer's rule (one symbol read
  // each); returns the groups whose codec is not Huffman.
  std::vector<uint64_t> host_runs;
  auto choose_codecs = [&] {
    std::vector<std::size_t> others;
    std::vector<uint8_t> symbols;
    for (std::size_t g = 0; g < G; ++g) {
      if (wavelet::runs_pick_huffman(host_runs[g], counts[g])) continue;
      read_now(symbols, t + L.symbols + sym_at[g], counts[g] * dtype_bytes(types[g]), stream);
      codecs[g] = wavelet::embedded_codec(host_runs[g], counts[g], symbols.data(), types[g], threads);
      if (codecs[g] != Codec::huffman) others.push_back(g);
    }
    return others;
  };
  auto enqueue_frames = [&] {
    fork_side_streams(events, stream, used);
    on_side_streams(encode_group);
    join_side_streams(events, stream, used);
    phase(wg::kFramesEnqueued, stream);
  };
  std::vector<uint64_t> host_sizes, hash_word;
  // The payload's pieces (cuda/wavelet_payload_copy.hpp): a frame a group,
  // then its low bits if any.
  std::vector<wg::PayloadCopies::Group> pieces(G);
  for (std::size_t g = 0; g < G; ++g)
    pieces[g] = {t + L.coeffs + frame_at[g], t + L.low + low_at[g], wavelet::low_bits_bytes(counts[g], shifts[g])};
  const wg::PayloadCopies payload_copies(std::move(pieces), reinterpret_cast<uint64_t*>(t + L.copy_table),
                                         t + L.copy_temp, L.copy_temp_bytes);
  SAFETY_CHECK(payload_copies.copies() <= L.max_copies, ErrorCode::cuda_error, "wavelet payload of ",
               payload_copies.copies(), " pieces is above the bound ", L.max_copies);
  // Early copies: the header area's size from the writer's own code (it
  // does not depend on the frames' sizes), the table from the sizes on the
  // device, the copy on side stream 0 until it is joined after the wait.
  bool early = wg::early_payload_copies && wg::speculative_huffman_frames && G <= wg::kEarlyCopyGroups;
  std::size_t header_bytes = 0;
  auto enqueue_early_copies = [&] {
    wavelet::Header probe = h;
    uint64_t unused = 0;
    header_bytes = wavelet::finish_header(probe, plan.specs, shifts, counts, std::vector<uint64_t>(G, 0), &unused).size();
    fork_side_streams(events, stream, 1);
    payload_copies.enqueue_early(header_bytes, capacity, d_frame, sizes, side_streams()[0]);
  };
  phase(wg::kSymbolsEnqueued, stream);
  if (wg::speculative_huffman_frames) {
    phase(wg::kSymbolsRead, stream);
    phase(wg::kCodecsChosen, stream);
    enqueue_frames();
    if (early) enqueue_early_copies();
    HostReads r;
    r.add(host_runs, runs, G);
    r.add(host_sizes, sizes, 2 * G);
    r.add(hash_word, status + kStatusHash, 1);
    r.wait(stream);  // wait 3 and 4 at once
    // The caller's stream takes the early copies in now: whatever follows
    // (the header area, a group coded again, the caller's next work) comes
    // after them, and an error thrown below leaves nothing pending.
    if (early) join_side_streams(events, stream, 1);
    phase(wg::kFramesRead, stream);
    const std::vector<std::size_t> again = choose_codecs();
    if (!again.empty()) {  // run-heavy groups (sparse volumes): coded again in their own codec, in place
      for (std::size_t g : again) encode_group(g, stream);
      read_now(host_sizes, sizes, 2 * G, stream);  // the other groups' entries are as read above
      early = false;  // the sizes changed: the payload is copied again below
    }
  } else {
    read_now(host_runs, runs, G, stream);  // wait 3
    phase(wg::kSymbolsRead, stream);
    choose_codecs();
    phase(wg::kCodecsChosen, stream);
    enqueue_frames();
    HostReads r;
    r.add(host_sizes, sizes, 2 * G);
    r.add(hash_word, status + kStatusHash, 1);
    r.wait(stream);  // wait 4
    phase(wg::kFramesRead, stream);
  }
  // The samples checksum, read with the frames' sizes whichever stream and
  // moment it ran at (the frames' step has joined every side stream).
  h.samples_checksum = hash_word.at(0);
  std::vector<uint64_t> frame_bytes(G);
  for (std::size_t g = 0; g < G; ++g) {
    SAFETY_CHECK(host_sizes[2 * g + 1] == ~0ull, ErrorCode::cuda_error, "wavelet group ", g,
                 ": the device frame coder reported ", host_sizes[2 * g + 1]);
    frame_bytes[g] = host_sizes[2 * g];
  }

  // 5. Header area, then the groups' frames and low bits, in place.
  uint64_t frame_total = 0;
  const std::vector<uint8_t> area = wavelet::finish_header(h, plan.specs, shifts, counts, frame_bytes, &frame_total);
  SAFETY_CHECK(frame_total <= capacity, ErrorCode::output_too_small, "wavelet frame needs ", frame_total,
               " bytes but the output buffer holds ", capacity);
  // The header area, then the groups' frames and low bits by one batched
  // copy. The host arrays are pageable: the last wait has left the stream
  // empty, so staging them costs no wait, and they need not outlive the call.
  copy_to_device(d_frame, area, stream);
  if (early) {  // the payload's copies ran during the wait, placed as finish_header placed them
    SAFETY_CHECK(area.size() == header_bytes, ErrorCode::cuda_error, "wavelet header area of ", area.size(),
                 " bytes where the early copies took ", header_bytes);
    phase(wg::kEnd, stream);
    return frame_total;
  }
  payload_copies.enqueue_late(d_frame + area.size(), h.groups, stream);
  phase(wg::kEnd, stream);
  return frame_total;
}

}  // namespace vlec::device
