// cuda/wavelet_shift_gpu.cu: see wavelet_shift_gpu.hpp. One block of 512
// threads per candidate group: first its histogram at k0 (each bin the sum
// of the parts' bins it covers, each part merged down from its own k0, as
// merge_stats() does), then shift after shift the rule's Summary, each
// thread over whole 16-bin groups of the merged bins (so its partial sums
// combine with shift_rule::merge), a block reduction, and thread 0's
// estimate and stop test: exactly the loop of wavelet/coefficients.cpp's
// choose_shift().
#include "cuda/wavelet_shift_gpu.hpp"

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <array>

#include "common/safety.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/wavelet_encode_kernels.hpp"
#include "wavelet/codec.hpp"
#include "wavelet/shift_rule.hpp"

namespace vlec::cuda {

namespace wavelet_gpu {

namespace {

namespace sr = wavelet::shift_rule;

constexpr unsigned kThreads = 512;

struct MergeSummary {
  __device__ sr::Summary operator()(const sr::Summary& a, const sr::Summary& b) const { return sr::merge(a, b); }
};

__global__ void __launch_bounds__(kThreads)
    shift_estimates_kernel(const ShiftCandidate* candidates, const uint32_t* parts, const uint32_t* tops,
                           const unsigned long long* hist, unsigned long long* scratch, ShiftResult* results) {
  using Reduce = cub::BlockReduce<sr::Summary, kThreads>;
  __shared__ typename Reduce::TempStorage reduce_temp;
  __shared__ uint64_t estimates[sr::kMaxShift + 1];
  __shared__ unsigned computed;
  const ShiftCandidate c = candidates[blockIdx.x];
  unsigned long long* merged = scratch + c.scratch;
  // The union's histogram at its k0.
  for (uint32_t u = threadIdx.x; u < c.bins; u += kThreads) {
    uint64_t sum = 0;
    for (uint32_t p = 0; p < c.part_count; ++p) {
      const uint32_t slot = parts[c.part_first + p];
      const uint32_t top = tops[slot];
      const unsigned k0 = sr::smallest_shift(top);
      const unsigned d = c.k0 - k0;
      const uint64_t bins = (uint64_t{top} >> k0) + 1;
      const unsigned long long* h = hist + uint64_t{slot} * kHistBins;
      const uint64_t end = min((uint64_t{u} + 1) << d, bins);
      for (uint64_t b = uint64_t{u} << d; b < end; ++b) sum += h[b];
    }
    merged[u] = sum;
  }
  __syncthreads();  // the merged bins (global memory) are read by the whole block below

  uint64_t best = 0;
  unsigned worse = 0;
  unsigned j = 0;
  for (; j < c.count; ++j) {
    const uint32_t mb = sr::merged_bins(c.bins, j);
    sr::Summary s;
    for (uint32_t g = threadIdx.x * sr::kBinsPerCodebookGroup; g < mb; g += kThreads * sr::kBinsPerCodebookGroup) {
      const uint32_t end = min(mb, g + sr::kBinsPerCodebookGroup);
      s = sr::merge(s, sr::summarize([&](uint32_t b) { return sr::merged_bin(merged, c.bins, b, j); }, g, end, c.n));
    }
    const sr::Summary total = Reduce(reduce_temp).Reduce(s, MergeSummary());
    if (threadIdx.x == 0) {
      const uint64_t e = sr::estimated_bits(total, c.k0 + j);
      estimates[j] = e;
      if (j == 0 || e < best) {
        best = e;
        worse = 0;
      } else {
        ++worse;
      }
      computed = worse >= 2 ? j + 1 : 0;  // stop after the second shift in a row that does not improve
    }
    __syncthreads();
    if (computed) break;
  }
  if (threadIdx.x == 0) {
    const unsigned n = computed ? computed : c.count;
    ShiftResult r;
    r.shift = sr::pick_shift(estimates, n, c.k0, &r.bits);
    results[blockIdx.x] = r;
  }
}

}  // namespace

void launch_shift_estimates(const ShiftCandidate* candidates, uint32_t count, const uint32_t* parts,
                            const uint32_t* tops, const unsigned long long* hist, unsigned long long* scratch,
                            ShiftResult* results, cudaStream_t stream) {
  if (count == 0) return;
  shift_estimates_kernel<<<count, kThreads, 0, stream>>>(candidates, parts, tops, hist, scratch, results);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace wavelet_gpu

GroupShifts::BoxKey GroupShifts::key_of(unsigned plane, const std::vector<wavelet::Box>& boxes) {
  std::vector<std::array<uint64_t, 6>> sorted;
  for (const wavelet::Box& b : boxes) sorted.push_back({b.x0, b.y0, b.z0, b.nx, b.ny, b.nz});
  std::sort(sorted.begin(), sorted.end());
  BoxKey key{plane};
  for (const auto& b : sorted) key.insert(key.end(), b.begin(), b.end());
  return key;
}

GroupShifts::GroupShifts(const wavelet::Subbands& sb, unsigned planes) {
  for (int split = 0; split < 2; ++split)
    for (const wavelet::GroupSpec& s :
         wavelet::plan_groups(sb, planes, [&](unsigned, unsigned) { return split == 1; })) {
      std::vector<wavelet::Box> boxes = sb.boxes(s);
      if (boxes.empty()) continue;
      if (index_.emplace(key_of(s.plane, boxes), sets_.size()).second) {
        parts_ += boxes.size();
        sets_.push_back({s.plane, std::move(boxes)});
      }
    }
}

std::size_t GroupShifts::scratch_bound() const { return sets_.size() * std::size_t{wavelet_gpu::kHistBins}; }

void GroupShifts::enqueue_slots(const std::vector<std::vector<uint32_t>>& slots, const std::vector<uint32_t>& tops,
                                wavelet_gpu::ShiftCandidate* d_candidates, uint32_t* d_parts, const uint32_t* d_tops,
                                const unsigned long long* d_hist, unsigned long long* d_scratch,
                                wavelet_gpu::ShiftResult* d_results, HostWrites& writes, cudaStream_t stream) {
  namespace sr = wavelet::shift_rule;
  const unsigned search = wavelet::EncoderTuning{}.shift_search;
  host_.assign(sets_.size(), {});
  std::vector<uint32_t> parts;
  uint64_t scratch = 0;
  for (std::size_t c = 0; c < sets_.size(); ++c) {
    wavelet_gpu::ShiftCandidate& d = host_[c];
    d.part_first = static_cast<uint32_t>(parts.size());
    d.part_count = static_cast<uint32_t>(slots[c].size());
    for (std::size_t i = 0; i < slots[c].size(); ++i) {
      parts.push_back(slots[c][i]);
      d.top = std::max(d.top, tops.at(slots[c][i]));
      d.n += sets_[c].boxes[i].samples();
    }
    d.k0 = sr::smallest_shift(d.top);
    d.bins = (d.top >> d.k0) + 1;
    d.count = sr::last_shift(d.top, d.k0, search) - d.k0 + 1;
    d.scratch = scratch;
    scratch += d.bins;
  }
  VLEC_REQUIRE(scratch <= scratch_bound() && parts.size() == parts_, "wavelet shift candidates exceed their storage");
  writes.add(d_candidates, host_, stream);
  writes.add(d_parts, parts, stream);
  wavelet_gpu::launch_shift_estimates(d_candidates, static_cast<uint32_t>(host_.size()), d_parts, d_tops, d_hist,
                                      d_scratch, d_results, stream);
}

wavelet::ValueStats GroupShifts::stats(unsigned plane, const std::vector<wavelet::Box>& boxes,
                                       const std::vector<wavelet_gpu::ShiftResult>& results) const {
  const auto it = index_.find(key_of(plane, boxes));
  VLEC_REQUIRE(it != index_.end() && it->second < results.size() && it->second < host_.size(),
               "the wavelet writer asked for a group the GPU did not evaluate");
  const wavelet_gpu::ShiftCandidate& c = host_[it->second];
  wavelet::ValueStats v;
  v.n = c.n;
  v.top = c.top;
  v.cached_search = wavelet::EncoderTuning{}.shift_search;
  v.cached_shift = results[it->second].shift;
  v.cached_bits = results[it->second].bits;
  return v;
}

}  // namespace vlec::cuda
