// cuda/wavelet_shift_gpu.hpp: the wavelet writer's shift rule
// (wavelet/shift_rule.hpp, FORMAT §10.6) evaluated on the GPU for every
// group the writer may form, so that the host reads a shift and an estimate
// per group instead of histograms.
//
// Why: the writer's decisions (which levels split into subbands, each
// group's shift) are made on the host by the CPU writer's code
// (wavelet/encode_plan.hpp). On 16-bit images each decision read a
// histogram of up to 65,536 bins and walked its non-empty bins once per
// candidate shift, for every subband and level of every plane: on an H100's
// host, 2.3 ms of a 512 x 512 u16 image's 3.8 ms compress, plus 0.6 ms to
// copy the bins. The candidates are known from the shape alone (each level
// whole or split, the merged coarse groups), so the GPU merges each one's
// subbands' histograms at the group's k0 (one thread a bin) with their
// prefix sums (a block scan per 1,024 bins), and sums the rule's per-bin
// terms for every shift at once (one thread per 16 merged bins, each merged
// bin a difference of two prefix sums; atomics across blocks); the
// candidate's last block picks the shift, ignoring the estimates after
// pick_shift()'s stop. The candidates' tops, k0 and bins are taken on the
// GPU too, so the writer enqueues all of this right behind the transform
// and reads the answers in one wait (it read the tops in a wait of their
// own until session 33). Every term is an integer, so the sums, and the
// answers, are the host's
// (tests/test_gpu_wavelet_encode.cpp compares whole frames with the CPU
// writer's; GpuShiftRule compares the answers with choose_shift()).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "common/safety.hpp"
#include "wavelet/group_io.hpp"
#include "wavelet/layout.hpp"

namespace vlec::cuda {

class HostReads;
class HostWrites;

namespace wavelet_gpu {

// One group the writer may form: the union of `part_count` subband boxes
// (their histogram slots at parts[part_first ...]). The host fills n and
// the parts; launch_shift_estimates fills in the rest on the GPU from the
// boxes' tops.
struct ShiftCandidate {
  uint64_t n = 0;          // coefficients
  uint64_t scratch = 0;    // first entry of its merged histogram in the scratch array (candidate * kHistBins)
  uint32_t part_first = 0, part_count = 0;
  uint32_t top = 0;        // largest zigzag value of the union
  uint32_t k0 = 0, bins = 0, count = 0;  // smallest shift, bins at k0, shifts to try (k0 .. k0 + count - 1)
};
struct ShiftResult {
  uint64_t bits = 0;  // the chosen shift's estimate (pick_shift's best_bits)
  uint32_t shift = 0;
  uint32_t pad = 0;
};

// Temporary storage of launch_shift_estimates for `candidates` candidates.
std::size_t shift_estimates_temp_bytes(std::size_t candidates);

// results[c] = the shift rule over candidate c, trying at most `search`
// shifts above its k0. Box slot s has its largest zigzag value at tops[s]
// and its histogram at k0(tops[s]) at hist[s * kHistBins]. The kernels
// first complete each candidate's descriptor (top, k0, bins, count,
// scratch) in place, so nothing here waits for the host.
void launch_shift_estimates(ShiftCandidate* candidates, uint32_t count, const uint32_t* parts, const uint32_t* tops,
                            const unsigned long long* hist, unsigned search, ShiftResult* results, void* temp,
                            std::size_t temp_bytes, cudaStream_t stream);

// One group's symbol histogram, from its candidate's merged bins at k0 (the
// prefix sums launch_shift_estimates leaves in its temp): out[b], b <
// alphabet, counts the values whose zigzag >> (k0 + j) is b, which is what
// a histogram pass over the group's symbols would count. The embedded
// frames' codebooks are built from these, with no pass over the symbols.
struct GroupHistogram {
  unsigned long long* out = nullptr;
  uint32_t candidate = 0;  // the candidate's index in launch_shift_estimates
  uint32_t bins = 0, j = 0, alphabet = 0;
};
// The jobs' histograms, after launch_shift_estimates with `candidates`
// candidates on the same temp.
void launch_group_histograms(const GroupHistogram* jobs, uint32_t count, uint32_t max_alphabet, uint32_t candidates,
                             const void* temp, cudaStream_t stream);

}  // namespace wavelet_gpu

// The candidates of one image: every group of wavelet::plan_groups with each
// level whole and with each level split, deduplicated.
class GroupShifts {
 public:
  using BoxKey = std::vector<uint64_t>;  // plane, then x0 y0 z0 nx ny nz of each box, boxes sorted

  GroupShifts(const wavelet::Subbands& sb, unsigned planes);
  std::size_t candidates() const { return sets_.size(); }
  std::size_t parts() const { return parts_; }
  // Temporary storage of the kernels for any data.
  std::size_t temp_bytes() const;

  // Two halves, neither waiting for the host. upload: the candidates'
  // descriptors as the shape gives them (`slot_of(plane, box)` gives a
  // box's histogram slot) to `d_candidates` and `d_parts`, which may be
  // enqueued before the tops are counted; launch: the kernels, behind the
  // work that writes `d_tops` and `d_hist`, writing `d_results`.
  template <typename SlotOf>
  void upload(SlotOf&& slot_of, wavelet_gpu::ShiftCandidate* d_candidates, uint32_t* d_parts, HostWrites& writes,
              cudaStream_t stream) {
    std::vector<std::vector<uint32_t>> slots(sets_.size());
    for (std::size_t c = 0; c < sets_.size(); ++c)
      for (const wavelet::Box& b : sets_[c].boxes) slots[c].push_back(slot_of(sets_[c].plane, b));
    upload_slots(slots, d_candidates, d_parts, writes, stream);
  }
  void launch(wavelet_gpu::ShiftCandidate* d_candidates, const uint32_t* d_parts, const uint32_t* d_tops,
              const unsigned long long* d_hist, void* d_temp, std::size_t temp_bytes,
              wavelet_gpu::ShiftResult* d_results, cudaStream_t stream) const;
  // The read of the descriptors the GPU completed (with the results' read,
  // in one wait), then their check against the shape: stats() and
  // histogram_job() need both.
  void add_reads(HostReads& reads, const wavelet_gpu::ShiftCandidate* d_candidates);
  void check_descriptors() const;

  // After the wait: the statistics plan_encode asks for (n, top and the
  // shift rule's answer; no histogram), from the host copy of the results.
  wavelet::ValueStats stats(unsigned plane, const std::vector<wavelet::Box>& boxes,
                            const std::vector<wavelet_gpu::ShiftResult>& results) const;

  // After enqueue: the histogram job of the group of `boxes` at `shift`
  // (at least its k0) into `out`.
  wavelet_gpu::GroupHistogram histogram_job(unsigned plane, const std::vector<wavelet::Box>& boxes, unsigned shift,
                                            unsigned long long* out) const;
  // Uploads the jobs to d_jobs and enqueues their kernel (d_temp: enqueue's).
  void enqueue_histograms(const std::vector<wavelet_gpu::GroupHistogram>& jobs, wavelet_gpu::GroupHistogram* d_jobs,
                          const void* d_temp, HostWrites& writes, cudaStream_t stream) const;

 private:
  struct Set {
    unsigned plane;
    std::vector<wavelet::Box> boxes;
  };
  static BoxKey key_of(unsigned plane, const std::vector<wavelet::Box>& boxes);
  void upload_slots(const std::vector<std::vector<uint32_t>>& slots, wavelet_gpu::ShiftCandidate* d_candidates,
                    uint32_t* d_parts, HostWrites& writes, cudaStream_t stream);

  std::vector<Set> sets_;
  std::map<BoxKey, std::size_t> index_;
  std::vector<wavelet_gpu::ShiftCandidate> shape_;  // as enqueued (n, parts)
  std::vector<wavelet_gpu::ShiftCandidate> host_;   // as the GPU completed them (add_reads)
  std::size_t parts_ = 0;
};

}  // namespace vlec::cuda
