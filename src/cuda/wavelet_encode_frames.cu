// cuda/wavelet_encode_frames.cu: steps 3 to 5 of the GPU wavelet writer
// (WaveletEncodeRun, wavelet_encode_run.hpp; the steps are described in
// wavelet_encode.cu): every group's symbols, low bits and runs by one kernel
// with the groups' codebooks built beside it on the side streams, the
// groups' embedded frames side by side, then the header area and the
// payload copied into the output in place.
#include <algorithm>
#include <optional>
#include <vector>

#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cuda/backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_compress.hpp"
#include "cuda/frame_device.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_encode_run.hpp"
#include "cuda/wavelet_kernels.hpp"
#include "vlec/vlec.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/encode_plan.hpp"

namespace vlec::cuda {

namespace wg = wavelet_gpu;
using namespace wavelet_layout;

namespace {

template <typename T>
void copy_to_device(void* dst, const std::vector<T>& src, cudaStream_t stream) {
  // Pageable sources: cudaMemcpyAsync returns once the bytes are staged.
  if (!src.empty()) CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
}

}  // namespace

uint32_t WaveletEncodeRun::alphabet_of(std::size_t g) const {
  return static_cast<uint32_t>(std::min<uint64_t>(plan_.stats[g].top >> shifts_[g], 65535)) + 1;
}

// Side stream s takes groups s, s + used, ... (their codebooks, then their
// frames). A group's frame is several launches, ~40 us of the host's
// time: with wavelet_gpu::threaded_frame_enqueue a host thread per side
// stream enqueues its groups (each thread on the caller's device). (Dealt
// out largest first instead, the finest levels' groups heading the
// streams, the compress was no faster: session 22, a tie on all three
// 8192^2 images; the step is bound by the encoder's total work.)
template <class Job>
void WaveletEncodeRun::on_side_streams(Job&& job) {
  parallel_for(used_, wg::threaded_frame_enqueue ? static_cast<unsigned>(used_) : 1, [&](std::size_t s) {
    if (wg::threaded_frame_enqueue) CUDA_CHECK(cudaSetDevice(device_));
    for (std::size_t g = s; g < G_; g += used_) job(g, side_[s]);
  });
}

// Each group whose candidate's codebook was built behind the shift rule
// takes it: the group's symbols are its candidate's values at the rule's
// shift, so the candidate's histogram is the group's. A group whose shift
// or alphabet is not its candidate's (never, as the decisions stand: the
// shift is the rule's answer) or whose alphabet is wider than the batch's
// has its codebook built below, after the decisions.
void WaveletEncodeRun::group_books() {
  candidate_book_of_.assign(G_, std::nullopt);
  if (!candidate_books_) return;
  for (std::size_t g = 0; g < G_; ++g) {
    if (counts_[g] == 0) continue;
    // (The job the candidate's kernel wrote, as the host derives it.)
    const wg::GroupHistogram h =
        candidates_->histogram_job(plan_.specs[g].plane, sb_.boxes(plan_.specs[g]), shifts_[g], nullptr);
    if (h.candidate >= host_results_.size() || host_results_[h.candidate].shift != shifts_[g] ||
        h.alphabet != alphabet_of(g) || h.alphabet > candidate_books_->max_alphabet)
      continue;
    candidate_book_of_[g] = candidate_books_->book(h.candidate);
  }
}

// 3. Symbols, low bits, runs; beside them, every group's codebook.
void WaveletEncodeRun::symbols() {
  const Layout& L = L_;
  uint8_t* const t = t_;
  const cudaStream_t stream = stream_;
  const std::size_t G = G_;
  encode_phase(wg::kDecided, stream);
  early_books_ = wg::histograms_from_statistics && wg::codebooks_beside_symbols;
  // Built beside the symbols kernel, the codebooks' histograms are derived
  // on a side stream after its launch, and the host prepares them after it
  // too (~16 group lookups), so the kernel waits for neither after the
  // decisions (the shift rule's prefix sums they read are done: wait 2
  // synchronized the caller's stream).
  const bool late_histograms = early_books_ && wg::histograms_after_symbols_launch;
  auto launch_symbols_kernel = [&] {
    // Big-endian output hashes a swapped copy in the symbols' region: the
    // late checksum must be done with it (else it joins in frames()).
    if (hash_done_ && h_.big_endian) CUDA_CHECK(cudaStreamWaitEvent(stream, hash_done_, 0));
    const uint32_t sym_tile_count = wg::number_tiles(sym_boxes_.data(), sym_boxes_.size());
    writes_.add(t + L.sym_boxes, sym_boxes_, stream);
    writes_.add(t + L.groups, groups_, stream);
    runs_ = reinterpret_cast<unsigned long long*>(t + L.runs);
    CUDA_CHECK(cudaMemsetAsync(runs_, 0, 8 * G, stream));
    if (low_used_) CUDA_CHECK(cudaMemsetAsync(t + L.low, 0, low_used_, stream));
    wg::launch_symbols(geo_, reinterpret_cast<const wg::EncodeBox*>(t + L.sym_boxes),
                       static_cast<uint32_t>(sym_boxes_.size()), sym_tile_count,
                       reinterpret_cast<const wg::EncodeGroup*>(t + L.groups), runs_,
                       wg::mostly_row_tiles(sym_boxes_.data(), sym_boxes_.size()), stream);
  };
  if (late_histograms) launch_symbols_kernel();
  group_books();
  const std::size_t streams = std::clamp<std::size_t>(wg::encode_side_streams, 1, kSideStreams);
  side_.assign(side_streams().begin(), side_streams().begin() + streams);
  used_ = std::min<std::size_t>(side_.size(), G);
  CUDA_CHECK(cudaGetDevice(&device_));
  if (wg::encode_phases) {
    wg::encode_phases->groups = static_cast<unsigned>(G);
    wg::encode_phases->candidate_book_groups = 0;
    for (std::size_t g = 0; g < G; ++g) wg::encode_phases->candidate_book_groups += candidate_book_of_[g] ? 1 : 0;
    for (std::size_t g = 0; g < std::min<std::size_t>(G, wg::EncodePhases::kGroups); ++g) {
      wg::encode_phases->stream_of[g] = static_cast<unsigned>(g % used_);
      wg::encode_phases->count[g] = counts_[g];
    }
  }
  // Each group's frame temp, large enough for any codec (chosen after the runs are read).
  temp_at_.assign(G, 0);
  temp_bytes_of_.assign(G, 0);
  std::size_t temps_used = 0;
  for (std::size_t g = 0; g < G; ++g) {
    temp_at_[g] = temps_used;
    temp_bytes_of_[g] = frame_temp_for(counts_[g]);
    temps_used += temp_bytes_of_[g];
  }
  SAFETY_CHECK(temps_used <= L.frame_temp_bytes, ErrorCode::cuda_error, "wavelet frame temps exceeded");
  // The groups' histograms from their statistics (GroupShifts' merged bins),
  // all in one launch: no histogram pass per group.
  given_hist_.assign(G, nullptr);
  std::vector<wg::GroupHistogram> hist_jobs;
  if (wg::histograms_from_statistics) {
    auto* group_hist = reinterpret_cast<unsigned long long*>(t + L.group_hist);
    for (std::size_t g = 0; g < G; ++g) {
      if (counts_[g] == 0 || candidate_book_of_[g]) continue;  // (its candidate's codebook is built)
      unsigned long long* out = group_hist + g * std::size_t{wg::kHistBins};
      hist_jobs.push_back(
          candidates_->histogram_job(plan_.specs[g].plane, sb_.boxes(plan_.specs[g]), shifts_[g], out));
      SAFETY_CHECK(hist_jobs.back().alphabet == alphabet_of(g), ErrorCode::cuda_error, "wavelet group ", g,
                   ": its histogram's alphabet differs from its statistics'");
      given_hist_[g] = reinterpret_cast<const uint64_t*>(out);
    }
  }
  auto enqueue_histograms = [&](cudaStream_t on) {
    if (hist_jobs.empty()) return cudaEvent_t{};  // no group's codebook left to build
    candidates_->enqueue_histograms(hist_jobs, reinterpret_cast<wg::GroupHistogram*>(t + L.hist_jobs),
                                   t + L.scratch, writes_, on);
    return events_.record(on);
  };
  cudaEvent_t histograms_done = late_histograms ? nullptr : enqueue_histograms(stream);
  if (!late_histograms) launch_symbols_kernel();
  // The codebooks (Huffman, as every group of a photograph turns out) on the
  // side streams while the symbols kernel runs: each is one block's
  // latency-bound work (30-100 us), which otherwise heads its frame's chain.
  if (early_books_ && !hist_jobs.empty()) {
    // Side stream 1 (0 may still hold the late samples checksum).
    if (late_histograms) histograms_done = enqueue_histograms(side_[std::min<std::size_t>(1, side_.size() - 1)]);
    for (std::size_t s = 0; s < used_; ++s) CUDA_CHECK(cudaStreamWaitEvent(side_[s], histograms_done, 0));
    // Batched: every codebook of up to 8,192 symbols by a launch per block
    // shape, from this thread. A thread per side stream and a launch a
    // codebook put the last codebook's start 0.09-0.24 ms after the
    // decisions, past the symbols kernel's end (H200, session 34).
    std::vector<bool> batched(G, false);
    if (wg::batched_codebooks && used_ > 0) {
      std::vector<CodebookJob> jobs;
      for (std::size_t g = 0; g < G; ++g) {
        if (!given_hist_[g]) continue;
        const std::optional<CodebookJob> job =
            codebook_job_from_histogram(given_hist_[g], counts_[g], t + L.frame_temp + temp_at_[g], temp_bytes_of_[g],
                                        frame_options(Codec::huffman, types_[g]), alphabet_of(g));
        if (!job) continue;
        jobs.push_back(*job);
        batched[g] = true;
      }
      SAFETY_CHECK(codebook_jobs_bytes(jobs.size()) <= L.book_jobs_bytes, ErrorCode::cuda_error,
                   "wavelet codebook batch of ", jobs.size(), " jobs");
      // A block shape a side stream: 1 to 4 (0 may hold the late checksum).
      std::vector<cudaStream_t> books;
      for (std::size_t s = 1; s <= 4; ++s) books.push_back(side_[s % used_]);
      for (std::size_t g = 0; g < G; ++g)
        if (batched[g]) encode_group_mark(&wg::EncodePhases::book_begin, g, books[0]);
      build_codebooks_device(
          jobs, t + L.book_jobs, L.book_jobs_bytes,
          [&](void* dst, const void* src, std::size_t bytes, cudaStream_t on) {
            writes_.add_bytes(dst, src, bytes, on);
          },
          books);
      // Every side stream after every shape's launch (a group's frame off
      // the batch goes to its own side stream): side stream 0 joins the
      // shapes' streams, the others wait for it.
      for (std::size_t s = 1; s < std::min<std::size_t>(5, used_); ++s)
        CUDA_CHECK(cudaStreamWaitEvent(side_[0], events_.record(side_[s]), 0));
      for (std::size_t g = 0; g < G; ++g)
        if (batched[g]) encode_group_mark(&wg::EncodePhases::book_end, g, side_[0]);
      const cudaEvent_t books_done = events_.record(side_[0]);
      for (std::size_t s = 1; s < used_; ++s) CUDA_CHECK(cudaStreamWaitEvent(side_[s], books_done, 0));
    }
    bool unbatched = false;
    for (std::size_t g = 0; g < G; ++g) unbatched |= given_hist_[g] && !batched[g];
    if (unbatched)
      on_side_streams([&](std::size_t g, cudaStream_t st) {
        if (batched[g] || !given_hist_[g]) return;
        encode_group_mark(&wg::EncodePhases::book_begin, g, st);
        build_codebook_from_histogram(given_hist_[g], counts_[g], t + L.frame_temp + temp_at_[g], temp_bytes_of_[g],
                                      st, frame_options(Codec::huffman, types_[g]), alphabet_of(g));
        encode_group_mark(&wg::EncodePhases::book_end, g, st);
      });
  }
  encode_phase(wg::kSymbolsEnqueued, stream);
}

WaveletEncodeRun::GroupFrame WaveletEncodeRun::group_frame(std::size_t g) const {
  GroupFrame f;
  f.options = frame_options(codecs_[g], types_[g]);
  f.in = t_ + L_.symbols + sym_at_[g];
  f.frame = t_ + L_.coeffs + frame_at_[g];
  f.capacity = device::compress_capacity(counts_[g], f.options);
  f.temp = t_ + L_.frame_temp + temp_at_[g];
  f.temp_bytes = temp_bytes_of_[g];
  f.size = sizes_ + 2 * g;
  f.book = candidate_book_of_[g] ? &*candidate_book_of_[g] : nullptr;
  return f;
}

bool WaveletEncodeRun::codebook_built(std::size_t g) const {
  return codecs_[g] == Codec::huffman && (candidate_book_of_[g] || (given_hist_[g] && early_books_));
}

void WaveletEncodeRun::encode_group(std::size_t g, cudaStream_t st) {
  const GroupFrame f = group_frame(g);
  if (codebook_built(g))
    encode_with_built_codebook(f.in, counts_[g], f.frame, f.capacity, f.size, f.size + 1, f.temp, f.temp_bytes, st,
                               f.options, alphabet_of(g), f.book);
  else if (codecs_[g] == Codec::huffman && given_hist_[g])
    compress_with_histogram(f.in, counts_[g], given_hist_[g], f.frame, f.capacity, f.size, f.size + 1, f.temp,
                            f.temp_bytes, st, f.options, alphabet_of(g));
  else
    compress_bounded_alphabet(f.in, counts_[g], f.frame, f.capacity, f.size, f.size + 1, f.temp, f.temp_bytes, st,
                              f.options, alphabet_of(g));
  encode_group_mark(&wg::EncodePhases::frame_end, g, st);
}

// The run-heavy groups' codecs, by the CPU writer's rule (one symbol read
// each); returns the groups whose codec is not Huffman.
std::vector<std::size_t> WaveletEncodeRun::choose_codecs() {
  std::vector<std::size_t> others;
  std::vector<uint8_t> symbols;
  for (std::size_t g = 0; g < G_; ++g) {
    if (wavelet::runs_pick_huffman(host_runs_[g], counts_[g])) continue;
    read_now(symbols, t_ + L_.symbols + sym_at_[g], counts_[g] * dtype_bytes(types_[g]), stream_);
    codecs_[g] = wavelet::embedded_codec(host_runs_[g], counts_[g], symbols.data(), types_[g], threads_);
    if (codecs_[g] != Codec::huffman) others.push_back(g);
  }
  return others;
}

void WaveletEncodeRun::enqueue_frames() {
  // The candidates' codebooks, built behind the shift rule (done ~0.1 ms
  // after the decisions, before the symbols kernel: H200, u16 8192^2).
  if (candidate_books_done_) CUDA_CHECK(cudaStreamWaitEvent(stream_, candidate_books_done_, 0));
  if (enqueue_frame_batch()) return;
  fork_side_streams(events_, stream_, used_);
  on_side_streams([&](std::size_t g, cudaStream_t st) { encode_group(g, st); });
  join_side_streams(events_, stream_, used_);
  encode_phase(wg::kFramesEnqueued, stream_);
}

// Every group's Huffman frame as one batch on the caller's stream
// (wavelet_gpu::batched_frames, cuda/frame_batch.cu): the upload of their
// descriptors and a launch per step for all of them, behind the symbols
// kernel and the codebooks (the side streams joined). A frame a group on the
// side streams took five to ten launches each, whose enqueue (0.27 ms for 16
// groups, from 16 host threads) outlasted the symbols kernel, so the frames
// waited for the host. False where a group cannot go in the batch (its
// codec is not Huffman, its codebook not built beside the symbols kernel).
bool WaveletEncodeRun::enqueue_frame_batch() {
  if (!wg::batched_frames) return false;
  std::vector<FrameBatchItem> items;
  for (std::size_t g = 0; g < G_; ++g) {
    if (!codebook_built(g)) return false;
    const GroupFrame f = group_frame(g);
    std::optional<FrameBatchItem> item = built_codebook_frame(
        f.in, counts_[g], f.frame, f.capacity, f.size, f.size + 1, f.temp, f.temp_bytes, f.options, alphabet_of(g),
        f.book);
    if (!item) return false;
    items.push_back(*item);
  }
  join_side_streams(events_, stream_, used_);  // the codebooks
  encode_frames_device(items, t_ + L_.frame_batch, L_.frame_batch_bytes, writes_, stream_);
  for (std::size_t g = 0; g < G_; ++g) encode_group_mark(&wg::EncodePhases::frame_end, g, stream_);
  encode_phase(wg::kFramesEnqueued, stream_);
  return true;
}

// Early copies: the header area's size from the writer's own code (it does
// not depend on the frames' sizes), the table from the sizes on the device,
// the copy on side stream 0 until it is joined after the wait.
void WaveletEncodeRun::enqueue_early_copies() {
  wavelet::Header probe = h_;
  uint64_t unused = 0;
  header_bytes_ =
      wavelet::finish_header(probe, plan_.specs, shifts_, counts_, std::vector<uint64_t>(G_, 0), &unused).size();
  fork_side_streams(events_, stream_, 1);
  payload_copies_->enqueue_early(header_bytes_, capacity_, d_frame_, sizes_, side_streams()[0]);
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
void WaveletEncodeRun::frames() {
  const Layout& L = L_;
  uint8_t* const t = t_;
  const cudaStream_t stream = stream_;
  const std::size_t G = G_;
  sizes_ = reinterpret_cast<uint64_t*>(t + L.sizes);
  frame_at_.assign(G, 0);
  std::size_t frames_used = 0;
  for (std::size_t g = 0; g < G; ++g) {  // capacity does not depend on the codec
    frame_at_[g] = frames_used;
    frames_used += round_up(device::compress_capacity(counts_[g], frame_options(Codec::huffman, types_[g])));
  }
  SAFETY_CHECK(frames_used <= L.coeffs_bytes, ErrorCode::cuda_error, "wavelet frames region exceeded");
  codecs_.assign(G, Codec::huffman);
  // The late samples checksum joins here, before its word is read (long
  // done: it ran beside the symbols kernel at the latest).
  if (hash_done_) CUDA_CHECK(cudaStreamWaitEvent(stream, hash_done_, 0));
  std::vector<uint64_t> host_sizes, hash_word;
  // The payload's pieces (cuda/wavelet_payload_copy.hpp): a frame a group,
  // then its low bits if any.
  std::vector<wg::PayloadCopies::Group> pieces(G);
  for (std::size_t g = 0; g < G; ++g)
    pieces[g] = {t + L.coeffs + frame_at_[g], t + L.low + low_at_[g], wavelet::low_bits_bytes(counts_[g], shifts_[g])};
  payload_copies_.emplace(std::move(pieces), reinterpret_cast<uint64_t*>(t + L.copy_table), t + L.copy_temp,
                          L.copy_temp_bytes);
  SAFETY_CHECK(payload_copies_->copies() <= L.max_copies, ErrorCode::cuda_error, "wavelet payload of ",
               payload_copies_->copies(), " pieces is above the bound ", L.max_copies);
  early_ = wg::early_payload_copies && wg::speculative_huffman_frames && G <= wg::kEarlyCopyGroups;
  if (wg::speculative_huffman_frames) {
    encode_phase(wg::kSymbolsRead, stream);
    encode_phase(wg::kCodecsChosen, stream);
    enqueue_frames();
    if (early_) enqueue_early_copies();
    HostReads r;
    r.add(host_runs_, runs_, G);
    r.add(host_sizes, sizes_, 2 * G);
    r.add(hash_word, status_ + kStatusHash, 1);
    r.wait(stream);  // wait 3 and 4 at once
    // The caller's stream takes the early copies in now: whatever follows
    // (the header area, a group coded again, the caller's next work) comes
    // after them, and an error thrown below leaves nothing pending.
    if (early_) join_side_streams(events_, stream, 1);
    encode_phase(wg::kFramesRead, stream);
    const std::vector<std::size_t> again = choose_codecs();
    if (!again.empty()) {  // run-heavy groups (sparse volumes): coded again in their own codec, in place
      for (std::size_t g : again) encode_group(g, stream);
      read_now(host_sizes, sizes_, 2 * G, stream);  // the other groups' entries are as read above
      early_ = false;  // the sizes changed: the payload is copied again below
    }
  } else {
    read_now(host_runs_, runs_, G, stream);  // wait 3
    encode_phase(wg::kSymbolsRead, stream);
    choose_codecs();
    encode_phase(wg::kCodecsChosen, stream);
    enqueue_frames();
    HostReads r;
    r.add(host_sizes, sizes_, 2 * G);
    r.add(hash_word, status_ + kStatusHash, 1);
    r.wait(stream);  // wait 4
    encode_phase(wg::kFramesRead, stream);
  }
  // The samples checksum, read with the frames' sizes whichever stream and
  // moment it ran at (the frames' step has joined every side stream).
  h_.samples_checksum = hash_word.at(0);
  frame_bytes_.assign(G, 0);
  for (std::size_t g = 0; g < G; ++g) {
    SAFETY_CHECK(host_sizes[2 * g + 1] == ~0ull, ErrorCode::cuda_error, "wavelet group ", g,
                 ": the device frame coder reported ", host_sizes[2 * g + 1]);
    frame_bytes_[g] = host_sizes[2 * g];
  }
}

// 5. Header area, then the groups' frames and low bits, in place.
std::size_t WaveletEncodeRun::finish() {
  uint64_t frame_total = 0;
  const std::vector<uint8_t> area =
      wavelet::finish_header(h_, plan_.specs, shifts_, counts_, frame_bytes_, &frame_total);
  SAFETY_CHECK(frame_total <= capacity_, ErrorCode::output_too_small, "wavelet frame needs ", frame_total,
               " bytes but the output buffer holds ", capacity_);
  // The header area, then the groups' frames and low bits by one batched
  // copy. The host arrays are pageable: the last wait has left the stream
  // empty, so staging them costs no wait, and they need not outlive the call.
  copy_to_device(d_frame_, area, stream_);
  if (early_) {  // the payload's copies ran during the wait, placed as finish_header placed them
    SAFETY_CHECK(area.size() == header_bytes_, ErrorCode::cuda_error, "wavelet header area of ", area.size(),
                 " bytes where the early copies took ", header_bytes_);
    encode_phase(wg::kEnd, stream_);
    return frame_total;
  }
  payload_copies_->enqueue_late(d_frame_ + area.size(), h_.groups, stream_);
  encode_phase(wg::kEnd, stream_);
  return frame_total;
}

}  // namespace vlec::cuda
