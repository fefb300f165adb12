// cuda/wavelet_encode_run.hpp: one call of the GPU wavelet writer
// (device::wavelet_compress) as an object whose member functions are the
// writer's steps, in order (the steps are described in wavelet_encode.cu):
// statistics() and decide() in wavelet_encode.cu, symbols(), frames() and
// finish() in wavelet_encode_frames.cu. What one step leaves for a later one
// (the plan, the groups' regions, the side streams, the frames' sizes) is a
// member; the rest stays local to its step. Internal to those two files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <cuda_runtime.h>

#include "cuda/host_staging.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_candidate_books.hpp"
#include "cuda/wavelet_encode_kernels.hpp"
#include "cuda/wavelet_encode_layout.hpp"
#include "cuda/wavelet_payload_copy.hpp"
#include "cuda/wavelet_shift_gpu.hpp"
#include "vlec/device_wavelet.hpp"
#include "wavelet/encode_plan.hpp"
#include "wavelet/frame_format.hpp"
#include "wavelet/layout.hpp"

namespace vlec::cuda {

// The benchmark's marks (wavelet_gpu::EncodePhases): a step's host time and
// event, and a group's events on its side stream.
void encode_phase(wavelet_gpu::EncodePoint i, cudaStream_t stream);
void encode_group_mark(cudaEvent_t (wavelet_gpu::EncodePhases::*e)[wavelet_gpu::EncodePhases::kGroups], std::size_t g,
                       cudaStream_t stream);

class WaveletEncodeRun {
 public:
  // The arguments as device::wavelet_compress checked them; d_temp holds L.total bytes.
  WaveletEncodeRun(const void* d_samples, const WaveletImage& im, void* d_frame, std::size_t capacity, void* d_temp,
                   cudaStream_t stream, const WaveletOptions& o, const wavelet::Header& h,
                   const wavelet_layout::Layout& L);
  void statistics();      // 1. checksum, planes, transform, statistics; waits 1 and 2
  void decide();          // 2. the writer's groups, splits and shifts
  void symbols();         // 3. symbols, low bits, runs; every group's codebook beside them
  void frames();          // 4. the embedded frames; waits 3 and 4
  std::size_t finish();   // 5. the header area and the payload, in place; the frame's size

 private:
  uint32_t alphabet_of(std::size_t g) const;  // every symbol of group g is at most top >> shift
  template <class Job>
  void on_side_streams(Job&& job);            // job(group, its side stream), a host thread a stream
  // Group g's frame: its options (its codec's), symbols, frame region and
  // capacity, temp, and size and report words.
  struct GroupFrame {
    device::CompressOptions options;
    const void* in;
    void* frame;
    std::size_t capacity;
    void* temp;
    std::size_t temp_bytes;
    uint64_t* size;
    const DeviceCodebookOut* book;  // its candidate's codebook, or null: built in its temp
  };
  GroupFrame group_frame(std::size_t g) const;
  void group_books();  // candidate_book_of_, after the decisions
  bool codebook_built(std::size_t g) const;  // a Huffman group whose codebook step 3 built beside the symbols
  void encode_group(std::size_t g, cudaStream_t st);
  std::vector<std::size_t> choose_codecs();  // the run-heavy groups' codecs; those not Huffman
  void enqueue_frames();
  bool enqueue_frame_batch();  // every group's frame in one batch, if it can take them all
  void enqueue_early_copies();

  // The call.
  const void* d_samples_;
  const WaveletImage& im_;
  uint8_t* d_frame_;
  std::size_t capacity_;
  uint8_t* t_;  // temp storage, carved by L_
  cudaStream_t stream_;
  wavelet::Header h_;
  const wavelet_layout::Layout L_;
  unsigned threads_;
  uint64_t* status_;
  HostWrites writes_;  // descriptor uploads; every one is waited for by a later wait
  CallEvents events_;
  const wavelet::Subbands sb_;
  // Step 1's, for steps 2 and 3.
  wavelet_gpu::PlaneGeometry geo_;
  cudaEvent_t hash_done_ = nullptr;  // late samples checksum: its end, joined before its word is read
  // Every group the writer may form: made in step 1 once its GPU work is
  // enqueued, so that its host time overlaps that work (made before the
  // first launch, it would delay every launch by that time).
  std::optional<GroupShifts> candidates_;
  std::vector<wavelet_gpu::ShiftResult> host_results_;
  // Every candidate's codebook built behind the rule (wavelet_gpu::
  // codebooks_behind_shift_rule), and the end of that work.
  std::optional<wavelet_gpu::CandidateBooks> candidate_books_;
  cudaEvent_t candidate_books_done_ = nullptr;
  // Step 2's: the plan and each group's shift, symbol type, symbols and low bits.
  wavelet::EncodePlan plan_;
  std::size_t G_ = 0;
  std::vector<unsigned> shifts_;
  std::vector<uint64_t> counts_;
  std::vector<DType> types_;
  std::vector<wavelet_gpu::EncodeGroup> groups_;
  std::vector<wavelet_gpu::EncodeBox> sym_boxes_;
  std::vector<std::size_t> sym_at_, low_at_;
  std::size_t low_used_ = 0;
  // Step 3's: side streams, each group's frame temp and histogram.
  int device_ = 0;
  std::vector<cudaStream_t> side_;
  std::size_t used_ = 0;  // side streams in use
  std::vector<std::size_t> temp_at_, temp_bytes_of_;
  std::vector<const uint64_t*> given_hist_;
  // Group g's codebook, where its candidate's (built behind the rule) is
  // its own: from group_books().
  std::vector<std::optional<DeviceCodebookOut>> candidate_book_of_;
  bool early_books_ = false;
  unsigned long long* runs_ = nullptr;
  // Step 4's: the frames, their codecs and sizes, the payload's copies.
  uint64_t* sizes_ = nullptr;
  std::vector<std::size_t> frame_at_;
  std::vector<Codec> codecs_;
  std::vector<uint64_t> host_runs_;
  std::optional<wavelet_gpu::PayloadCopies> payload_copies_;
  bool early_ = false;  // the payload copied during wait 3
  std::size_t header_bytes_ = 0;
  std::vector<uint64_t> frame_bytes_;
};

}  // namespace vlec::cuda
