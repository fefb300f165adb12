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
//     frames' sizes; levels 1-2's histograms beside the coarser levels, the
//     chain of levels at the greatest stream priority, the histograms at
//     the least). Right behind it, every group the writer may form
//     (each level whole or split, the merged coarse groups) gets the shift
//     rule's answer on the GPU from its boxes' tops and histograms
//     (cuda/wavelet_shift_gpu.hpp), and wait 2 reads those answers and
//     the groups' descriptors (56 bytes a group). Until session 33 a wait
//     1 read the tops first, and the GPU idled while the host enqueued the
//     rule. Behind the rule, on side streams, every such group's Huffman
//     codebook of up to 8,192 symbols is built from its histogram at the
//     rule's shift (cuda/wavelet_candidate_books.hpp) while the host waits
//     and decides (since session 37; until then after the decisions, in
//     step 3).
//  2. Host: the groups, splits and shifts (plan_encode, group_shift), the
//     same calls the CPU writer makes, on the same answers.
//  3. One kernel writes every group's symbols and packed low bits and counts
//     its symbol runs. A group whose candidate's codebook was built behind
//     the rule takes it; for any other (wider alphabets), one kernel
//     derives its symbol histogram from the shift rule's merged bins after
//     the symbols kernel's launch and, beside that kernel on the side
//     streams, its codebook is built from it.
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
// Each wait reads a few bytes to a few KB (wait 1 is gone since session 33).
//
// Temp storage is sized from the shape alone (the query cannot see the
// data): every region holds the largest of the groupings the writer may
// choose (each level whole or split), symbols of 2 bytes and 24 low bits per
// coefficient, each group's frame temp for any codec. The embedded frames share the
// coefficients' region (the symbols kernel has consumed it before the
// first frame is written).
//
// The steps are the member functions of WaveletEncodeRun
// (wavelet_encode_run.hpp): steps 1 and 2 here, 3 to 5 in
// wavelet_encode_frames.cu.
#include <algorithm>
#include <chrono>
#include <map>
#include <vector>

#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cuda/backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/dwt53_gpu.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_candidate_books.hpp"
#include "cuda/wavelet_checksum.hpp"
#include "cuda/wavelet_encode_kernels.hpp"
#include "cuda/wavelet_encode_layout.hpp"
#include "cuda/wavelet_kernels.hpp"
#include "cuda/wavelet_encode_run.hpp"
#include "cuda/wavelet_shift_gpu.hpp"
#include "dwt/dwt53.hpp"
#include "vlec/device_dwt.hpp"
#include "vlec/device_wavelet.hpp"
#include "vlec/vlec.hpp"
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
bool wavelet_gpu::transform_chain_first = true;
bool wavelet_gpu::wide_histogram_tile_pairs = true;
bool wavelet_gpu::speculative_huffman_frames = true;
bool wavelet_gpu::batched_frames = true;
bool wavelet_gpu::late_samples_checksum = true;
bool wavelet_gpu::shift_rule_behind_statistics = true;
bool wavelet_gpu::histograms_after_symbols_launch = true;
bool wavelet_gpu::batched_codebooks = true;
bool wavelet_gpu::codebooks_behind_shift_rule = true;
uint32_t wavelet_gpu::candidate_books_max_alphabet = ~0u;

namespace wg = wavelet_gpu;

void encode_group_mark(cudaEvent_t (wg::EncodePhases::*e)[wg::EncodePhases::kGroups], std::size_t g,
                       cudaStream_t stream) {
  if (!wg::encode_phases || g >= wg::EncodePhases::kGroups || !(wg::encode_phases->*e)[g]) return;
  CUDA_CHECK(cudaEventRecord((wg::encode_phases->*e)[g], stream));
}

void encode_phase(wg::EncodePoint i, cudaStream_t stream) {
  if (!wg::encode_phases) return;
  wg::encode_phases->at[i] = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (wg::encode_phases->gpu[i]) CUDA_CHECK(cudaEventRecord(wg::encode_phases->gpu[i], stream));
}

namespace {

using device::DwtSample;
using wavelet::Box;
using namespace wavelet_layout;

void check_image(const WaveletImage& im) {
  SAFETY_CHECK(im.width < kMaxAxis && im.height < kMaxAxis && im.depth < kMaxAxis, ErrorCode::unavailable,
               "the GPU writes wavelet frames with axes below 2^30 samples, not ", im.width, " x ", im.height, " x ",
               im.depth);
}

}  // namespace

WaveletEncodeRun::WaveletEncodeRun(const void* d_samples, const WaveletImage& im, void* d_frame, std::size_t capacity,
                                   void* d_temp, cudaStream_t stream, const WaveletOptions& o,
                                   const wavelet::Header& h, const wavelet_layout::Layout& L)
    : d_samples_(d_samples),
      im_(im),
      d_frame_(static_cast<uint8_t*>(d_frame)),
      capacity_(capacity),
      t_(static_cast<uint8_t*>(d_temp)),
      stream_(stream),
      h_(h),
      L_(L),
      threads_(resolve_threads(o.threads, ~std::size_t{0})),
      status_(reinterpret_cast<uint64_t*>(t_ + L.status)),
      sb_(L.shape, h.levels) {}

// 1. Checksum, planes, transform, statistics; the shift rule of every group
// the writer may form, on the GPU (waits 1 and 2).
void WaveletEncodeRun::statistics() {
  const Layout& L = L_;
  uint8_t* const t = t_;
  const cudaStream_t stream = stream_;
  auto* coeffs = reinterpret_cast<int32_t*>(t + L.coeffs);
  const uint64_t total = L.pixels * im_.planes;
  const unsigned width = static_cast<unsigned>(dtype_bytes(im_.dtype));
  const uint64_t sample_bytes = total * width;
  encode_phase(wg::kStart, stream);
  const cudaEvent_t call_start = events_.record(stream);
  CUDA_CHECK(cudaMemsetAsync(status_, 0xFF, 8 * kStatusWords, stream));
  std::map<BoxKey, uint32_t> slot_of;
  for (const StatBox& s : L.boxes) slot_of[key_of(s.plane, s.box)] = s.slot;
  auto* tops = reinterpret_cast<uint32_t*>(t + L.tops);
  if (L.large) CUDA_CHECK(cudaMemsetAsync(tops, 0, 4 * std::size_t{L.large}, stream));
  // Where every level splits x and y of a 2D image, the transform takes
  // the subbands' tops as it stores them (no pass reads the coefficients
  // for them); else tops_kernel does.
  const std::vector<std::vector<cuda::dwt::BandTops>> band_tops =
      transform_tops(sb_, L.shape.nz, im_.planes, slot_of, tops);
  // The boxes' statistics: with the transform's tops and more than one
  // level, the details of level 1 (3/4 of a 2D image) and of level 2 (3/16)
  // are counted on a side stream as soon as each plane's level is done,
  // while the coarser, latency-bound levels run; the samples checksum runs
  // on another side stream from the start. Lists: for each plane, its level
  // 1 and level 2 details, then every other box; each list's tiles are
  // numbered from 0.
  const bool overlap = wg::overlapped_statistics && !band_tops.empty() && h_.levels >= 2;
  const unsigned early_levels = overlap ? std::clamp(wg::early_histogram_levels, 1u, h_.levels - 1) : 0;
  const StatisticsLists lists = statistics_lists(L.boxes, sb_, im_.planes, L.pixels, early_levels);
  const std::vector<wg::EncodeBox>& stat_list = lists.boxes;
  const std::vector<std::size_t>& list_at = lists.at;  // list i: stat_list[list_at[i], list_at[i + 1])
  const std::vector<uint32_t>& list_tiles = lists.tiles;
  auto* stat_boxes = reinterpret_cast<wg::EncodeBox*>(t + L.stat_boxes);
  writes_.add(stat_boxes, stat_list, stream);
  auto* hist = reinterpret_cast<unsigned long long*>(t + L.hist);
  geo_.coeffs = coeffs;
  geo_.width = L.shape.nx;
  geo_.height = L.shape.ny;
  auto histogram = [&](std::size_t list, cudaStream_t on) {
    wg::launch_histogram(geo_, stat_boxes + list_at[list], static_cast<uint32_t>(list_at[list + 1] - list_at[list]),
                         list_tiles[list], tops, hist, on);
  };
  const cudaStream_t hash_stream = overlap ? side_streams()[0] : stream;
  // The transform's chain of levels first: on a side stream of the greatest
  // priority, with the early histograms on one of the least, so that every
  // coarse level's few blocks go ahead of the pending blocks of level 1's
  // histogram as SMs free up.
  const bool chain_first = overlap && wg::transform_chain_first;
  // (Side stream 3: 0-2 hold the checksum, the early histograms where the
  // pools are one, and the rule's descriptors' upload.)
  const cudaStream_t chain = chain_first ? side_streams_at(true)[3] : stream;
  // (The early levels' histograms on a stream each were a tie or slower:
  // session 36.)
  const cudaStream_t early_stream = !overlap ? stream : chain_first ? side_streams_at(false)[1] : side_streams()[1];
  if (chain_first) CUDA_CHECK(cudaStreamWaitEvent(chain, events_.record(stream), 0));
  // The samples checksum, on its side stream. With
  // wavelet_gpu::late_samples_checksum it starts once step 1's kernels are
  // done and runs while the host reads the statistics and decides (the GPU
  // has only the shift rule's small kernels then); its word is read with the
  // frames' sizes. Beside the 5/3's level 1 it took bandwidth from that
  // level, which heads step 1's chain.
  const bool late_hash = overlap && wg::late_samples_checksum;
  auto enqueue_hash = [&] {
    const uint8_t* hashed = static_cast<const uint8_t*>(d_samples_);
    if (h_.big_endian) {  // the frame decompresses to swapped samples: hash those (symbols' region, free until step 3)
      wg::launch_swap16(static_cast<const uint16_t*>(d_samples_), reinterpret_cast<uint16_t*>(t + L.symbols), total,
                        hash_stream);
      hashed = t + L.symbols;
    }
    samples_checksum_device(hashed, sample_bytes, true, status_ + kStatusHash, t + L.hash, L.hash_bytes, hash_stream);
  };
  if (!late_hash) {
    if (overlap) CUDA_CHECK(cudaStreamWaitEvent(hash_stream, events_.record(stream), 0));
    enqueue_hash();
  }
  auto forward = [&](const void* samples, DwtSample type, unsigned p) {
    std::vector<cudaEvent_t> level_done(h_.levels, nullptr);
    for (unsigned k = 0; k < early_levels; ++k) level_done[k] = events_.make();
    wg::EncodePhases* const ph = p == 0 ? wg::encode_phases : nullptr;  // the benchmark's step-1 timeline
    if (ph)
      for (unsigned k = 0; k < std::min(h_.levels, wg::EncodePhases::kLevels); ++k)
        if (ph->level_end[k]) level_done[k] = ph->level_end[k];
    cuda::dwt::forward(samples, type, coeffs + p * L.pixels, L.shape, h_.levels, status_ + kStatusDwt + p, t + L.dwt,
                       L.dwt_bytes, chain, wg::dwt_tuning, band_tops.empty() ? nullptr : band_tops[p].data(),
                       level_done.data());
    for (unsigned k = 0; k < early_levels; ++k) {  // plane p's level k + 1
      CUDA_CHECK(cudaStreamWaitEvent(early_stream, level_done[k], 0));
      histogram(p * early_levels + k, early_stream);
      if (ph && k < wg::EncodePhases::kLevels && ph->early_end[k])
        CUDA_CHECK(cudaEventRecord(ph->early_end[k], early_stream));
    }
  };
  if (im_.planes == 1) {
    forward(d_samples_, im_.dtype == DType::u8 ? DwtSample::u8 : DwtSample::u16, 0);
  } else {
    auto* planar = reinterpret_cast<int32_t*>(t + L.planar);
    wg::launch_split(d_samples_, width, im_.planes, h_.rct, L.pixels, planar, chain);
    for (unsigned p = 0; p < im_.planes; ++p) forward(planar + p * L.pixels, DwtSample::i32, p);
  }
  if (chain_first) CUDA_CHECK(cudaStreamWaitEvent(stream, events_.record(chain), 0));
  const std::size_t late_list = list_at.size() - 2;  // every box when tops_kernel runs (no early lists then)
  if (band_tops.empty())
    wg::launch_tops(geo_, stat_boxes, static_cast<uint32_t>(stat_list.size()), list_tiles[late_list], tops, stream);
  histogram(late_list, stream);
  if (wg::encode_phases && wg::encode_phases->late_end)
    CUDA_CHECK(cudaEventRecord(wg::encode_phases->late_end, stream));
  if (overlap) {
    if (!late_hash) CUDA_CHECK(cudaStreamWaitEvent(stream, events_.record(hash_stream), 0));
    CUDA_CHECK(cudaStreamWaitEvent(stream, events_.record(early_stream), 0));
  }
  // The late checksum starts behind the last kernels on the caller's
  // stream so far; on a side stream of the greatest priority its blocks go
  // first, so behind step 1 it held the shift rule back (session 33: the
  // rule's span 0.073 ms beside it); behind the rule it runs while the host
  // waits and decides, when the GPU has nothing else.
  auto enqueue_late_hash = [&] {
    CUDA_CHECK(cudaStreamWaitEvent(hash_stream, events_.record(stream), 0));
    enqueue_hash();
    hash_done_ = events_.record(hash_stream);
  };
  if (late_hash && !wg::shift_rule_behind_statistics) enqueue_late_hash();
  encode_phase(wg::kStatsEnqueued, stream);
  std::vector<uint64_t> st;
  if (!wg::shift_rule_behind_statistics) {  // the old wait 1 (it read the tops too), for the benchmark
    HostReads first;
    first.add(st, status_, kStatusWords);
    first.wait(stream);
  }
  encode_phase(wg::kStatsRead, stream);  // right after kStatsEnqueued by default: no wait 1 since session 33
  // The shift rule of every group the writer may form, on the GPU, right
  // behind the statistics. The groups and their boxes' slots depend on the
  // shape alone: found while the GPU works, and uploaded beside step 1 on a
  // side stream (not on the caller's, between step 1 and the rule); the
  // kernels take the tops on the device, so the host waits once, for the
  // answers.
  candidates_.emplace(sb_, im_.planes);
  auto* d_candidates = reinterpret_cast<wg::ShiftCandidate*>(t + L.candidates_at);
  auto* d_parts = reinterpret_cast<uint32_t*>(t + L.parts_at);
  const cudaStream_t upload_stream = overlap ? side_streams()[2] : stream;
  if (overlap) CUDA_CHECK(cudaStreamWaitEvent(upload_stream, call_start, 0));  // after the caller's earlier work
  candidates_->upload([&](unsigned p, const Box& b) { return slot_of.at(key_of(p, b)); }, d_candidates, d_parts,
                      writes_, upload_stream);
  if (overlap) CUDA_CHECK(cudaStreamWaitEvent(stream, events_.record(upload_stream), 0));
  auto* results = reinterpret_cast<wg::ShiftResult*>(t + L.results);
  candidates_->launch(d_candidates, d_parts, tops, hist, t + L.scratch, L.scratch_bytes, results, stream);
  if (late_hash && wg::shift_rule_behind_statistics) enqueue_late_hash();
  // Every candidate's codebook, behind the rule on side streams 4-7 (0
  // holds the late checksum, 1-3 step 1's side work), while the host waits
  // for the answers and decides; the frames join them (enqueue_frames).
  if (wg::codebooks_behind_shift_rule && wg::histograms_from_statistics && wg::codebooks_beside_symbols &&
      wg::batched_codebooks) {
    const std::vector<cudaStream_t> books(side_streams().begin() + 4, side_streams().begin() + 8);
    CUDA_CHECK(cudaStreamWaitEvent(books[0], events_.record(stream), 0));
    if (wg::encode_phases && wg::encode_phases->candidate_books_begin)
      CUDA_CHECK(cudaEventRecord(wg::encode_phases->candidate_books_begin, books[0]));
    candidate_books_.emplace(wg::carve_candidate_books(t + L.candidate_books, L.candidates));
    candidate_books_->max_alphabet = std::min(candidate_books_->capacity, wg::candidate_books_max_alphabet);
    wg::enqueue_candidate_books(d_candidates, results, static_cast<uint32_t>(L.candidates), t + L.scratch,
                                frame_options(Codec::huffman, DType::u16).max_code_length, *candidate_books_,
                                books, events_);
    for (std::size_t s = 1; s < books.size(); ++s)
      CUDA_CHECK(cudaStreamWaitEvent(books[0], events_.record(books[s]), 0));
    candidate_books_done_ = events_.record(books[0]);
    if (wg::encode_phases && wg::encode_phases->candidate_books_end)
      CUDA_CHECK(cudaEventRecord(wg::encode_phases->candidate_books_end, books[0]));
  }
  encode_phase(wg::kShiftsEnqueued, stream);
  HostReads reads;
  reads.add(st, status_, kStatusWords);
  reads.add(host_results_, results, candidates_->candidates());
  candidates_->add_reads(reads, d_candidates);
  reads.wait(stream);  // wait 2 (wait 1, for the tops, is gone)
  encode_phase(wg::kShiftsRead, stream);
  for (unsigned p = 0; p < im_.planes; ++p)  // planes of u8/u16 samples (and their RCT) are always in range
    SAFETY_CHECK(st[kStatusDwt + p] == ~0ull, ErrorCode::cuda_error, "the GPU 5/3 transform of plane ", p,
                 " reported sample ", st[kStatusDwt + p], " out of range");
  candidates_->check_descriptors();
}

// 2. The writer's decisions, by the CPU writer's code, on the GPU's answers
// (a few dozen lookups: on one thread, as threads would cost more to start).
void WaveletEncodeRun::decide() {
  const Layout& L = L_;
  uint8_t* const t = t_;
  plan_ = wavelet::plan_encode(
      sb_, im_.planes, 1, {},
      [&](unsigned p, const std::vector<Box>& boxes) { return candidates_->stats(p, boxes, host_results_); },
      /*unions=*/true);
  const std::size_t G = G_ = plan_.specs.size();
  SAFETY_CHECK(G <= L.max_groups, ErrorCode::cuda_error, "wavelet plan of ", G, " groups is above the bound ",
               L.max_groups);
  shifts_.assign(G, 0);
  counts_.assign(G, 0);
  types_.assign(G, DType::u8);
  groups_.assign(G, wg::EncodeGroup{});
  sym_at_.assign(G, 0);
  low_at_.assign(G, 0);
  std::size_t sym_used = 0;
  low_used_ = 0;
  for (std::size_t g = 0; g < G; ++g) {
    shifts_[g] = wavelet::group_shift(plan_.stats[g], {});
    types_[g] = wavelet::symbol_type(plan_.stats[g].top, shifts_[g]);
    const wavelet::GroupSpec& s = plan_.specs[g];
    uint64_t n = 0, prev = ~0ull;
    for (const Box& b : sb_.boxes(s)) {
      wg::EncodeBox e = encode_box(b, s.plane * L.pixels);
      e.dest = n;
      e.prev = prev;
      e.group = static_cast<uint32_t>(g);
      sym_boxes_.push_back(e);
      n += b.samples();
      prev = e.plane_base + (b.x0 + b.nx - 1) + L.shape.nx * ((b.y0 + b.ny - 1) + L.shape.ny * (b.z0 + b.nz - 1));
    }
    counts_[g] = n;
    sym_at_[g] = sym_used;
    low_at_[g] = low_used_;
    sym_used += round_up(n * dtype_bytes(types_[g]));
    low_used_ += round_up(wavelet::low_bits_bytes(n, shifts_[g]));
    groups_[g].symbols = t + L.symbols + sym_at_[g];
    groups_[g].low = reinterpret_cast<uint32_t*>(t + L.low + low_at_[g]);
    groups_[g].width = static_cast<uint32_t>(dtype_bytes(types_[g]));
    groups_[g].shift = shifts_[g];
  }
  SAFETY_CHECK(sym_used <= L.symbols_bytes && low_used_ <= L.low_bytes && sym_boxes_.size() <= L.boxes.size(),
               ErrorCode::cuda_error, "wavelet encode regions exceeded");
}

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
  const wavelet::Header h = wavelet::writer_header(im, o);
  check_image(im);
  const Layout L = make_layout(im, h.levels);
  VLEC_REQUIRE(d_samples != nullptr && reinterpret_cast<uintptr_t>(d_samples) % 16 == 0,
               "the samples must be 16-byte aligned device memory");
  VLEC_REQUIRE(d_frame_v != nullptr && reinterpret_cast<uintptr_t>(d_frame_v) % 8 == 0,
               "the frame buffer must be 8-byte aligned device memory");
  VLEC_REQUIRE(temp_bytes >= L.total, "temporary storage of ", temp_bytes, " bytes is below the ", L.total, " needed");
  VLEC_REQUIRE(d_temp_v != nullptr && reinterpret_cast<uintptr_t>(d_temp_v) % kAlign == 0,
               "temporary storage must be 256-byte aligned (as cudaMalloc returns it)");
  WaveletEncodeRun run(d_samples, im, d_frame_v, capacity, d_temp_v, stream, o, h, L);
  run.statistics();
  run.decide();
  run.symbols();
  run.frames();
  return run.finish();
}

}  // namespace vlec::device
