// cuda/wavelet_shift_gpu.cu: see wavelet_shift_gpu.hpp. Three kernels and
// a CUB scan, every one spread over the whole GPU (the first version, one
// block per candidate walking its bins, was bound by the latency of its
// loads: 0.9 ms for a 512 x 512 u16 image's 28 candidates):
//  1. merge: one thread per bin of a candidate's histogram at its k0, the
//     sum of the parts' bins it covers, each part merged down from its own
//     k0 (what merge_stats() computes);
//  2. inclusive prefix sums over all candidates' bins (cub::DeviceScan), so
//     that any merged bin of any shift is one difference;
//  3. summary: for every candidate and every shift it may try, one thread
//     per 16 merged bins (a codebook presence group, so partial Summaries
//     combine with shift_rule::merge), a block reduction, and one set of
//     integer atomics per block into the (candidate, shift) Summary;
//  4. pick: one thread per candidate, estimated_bits() of each shift and
//     pick_shift(), which ignores the estimates after its stop, as the host
//     never computes them.
#include "cuda/wavelet_shift_gpu.hpp"

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_scan.cuh>

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

constexpr unsigned kMergeThreads = 1024;
constexpr unsigned kSummaryThreads = 256;
constexpr uint32_t kSummaryBins = kSummaryThreads * sr::kBinsPerCodebookGroup;  // merged bins per block
constexpr unsigned kShifts = sr::kMaxShift + 1;
constexpr std::size_t kAlign = 256;

// One (candidate, shift) Summary, summed by atomics.
struct SummarySums {
  unsigned long long n, cost_fx;
  unsigned symbols, groups, alphabet, pad;
};

struct Temp {
  unsigned long long* merged;
  unsigned long long* prefix;
  SummarySums* sums;
  void* scan;
  std::size_t scan_bytes, total;
};

Temp carve(void* base, std::size_t entries, std::size_t candidates) {
  Temp t{};
  auto* p = static_cast<uint8_t*>(base);
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += (std::max<std::size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
    return p + here;
  };
  t.merged = reinterpret_cast<unsigned long long*>(take(8 * entries));
  t.prefix = reinterpret_cast<unsigned long long*>(take(8 * entries));
  t.sums = reinterpret_cast<SummarySums*>(take(sizeof(SummarySums) * kShifts * candidates));
  CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, t.scan_bytes, t.merged, t.prefix, std::max<std::size_t>(entries, 1)));
  t.scan = take(t.scan_bytes);
  t.total = at;
  return t;
}

__global__ void __launch_bounds__(kMergeThreads)
    merge_kernel(const ShiftCandidate* candidates, const uint32_t* parts, const uint32_t* tops,
                 const unsigned long long* hist, unsigned long long* merged) {
  const ShiftCandidate c = candidates[blockIdx.y];
  const uint32_t u = blockIdx.x * kMergeThreads + threadIdx.x;
  if (u >= c.bins) return;
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
  merged[c.scratch + u] = sum;
}

struct MergeSummary {
  __device__ sr::Summary operator()(const sr::Summary& a, const sr::Summary& b) const { return sr::merge(a, b); }
};

__global__ void __launch_bounds__(kSummaryThreads)
    summary_kernel(const ShiftCandidate* candidates, const unsigned long long* prefix, SummarySums* sums) {
  using Reduce = cub::BlockReduce<sr::Summary, kSummaryThreads>;
  __shared__ typename Reduce::TempStorage reduce_temp;
  const ShiftCandidate c = candidates[blockIdx.z];
  const unsigned j = blockIdx.y;
  if (j >= c.count) return;
  const uint32_t mb = sr::merged_bins(c.bins, j);
  if (blockIdx.x * kSummaryBins >= mb) return;
  // Merged bin b of shift j: bins [b << j, (b + 1) << j) at k0, clamped to the candidate's.
  auto bin = [&](uint32_t b) -> uint64_t {
    const uint64_t lo = c.scratch + (uint64_t{b} << j);
    const uint64_t hi = c.scratch + min((uint64_t{b} + 1) << j, uint64_t{c.bins});
    return prefix[hi - 1] - (lo > 0 ? prefix[lo - 1] : 0);
  };
  const uint32_t first = blockIdx.x * kSummaryBins + threadIdx.x * sr::kBinsPerCodebookGroup;
  sr::Summary s;
  if (first < mb) s = sr::summarize(bin, first, min(mb, first + sr::kBinsPerCodebookGroup), c.n);
  const sr::Summary total = Reduce(reduce_temp).Reduce(s, MergeSummary());
  if (threadIdx.x == 0 && total.symbols) {
    SummarySums& out = sums[uint64_t{blockIdx.z} * kShifts + j];
    atomicAdd(&out.n, static_cast<unsigned long long>(total.n));
    atomicAdd(&out.cost_fx, static_cast<unsigned long long>(total.cost_fx));
    atomicAdd(&out.symbols, total.symbols);
    atomicAdd(&out.groups, total.groups);
    atomicMax(&out.alphabet, total.alphabet);
  }
}

__global__ void pick_kernel(const ShiftCandidate* candidates, uint32_t count, const SummarySums* sums,
                            ShiftResult* results) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const ShiftCandidate c = candidates[i];
  uint64_t estimates[kShifts] = {};
  for (unsigned j = 0; j < c.count; ++j) {
    const SummarySums& m = sums[uint64_t{i} * kShifts + j];
    sr::Summary s;
    s.n = m.n;
    s.cost_fx = m.cost_fx;
    s.symbols = m.symbols;
    s.groups = m.groups;
    s.alphabet = m.alphabet;
    estimates[j] = sr::estimated_bits(s, c.k0 + j);
  }
  ShiftResult r;
  r.shift = sr::pick_shift(estimates, c.count, c.k0, &r.bits);
  results[i] = r;
}

constexpr unsigned kGroupHistThreads = 256;

__global__ void __launch_bounds__(kGroupHistThreads)
    group_histograms_kernel(const GroupHistogram* jobs, const unsigned long long* prefix) {
  const GroupHistogram h = jobs[blockIdx.y];
  const uint32_t b = blockIdx.x * kGroupHistThreads + threadIdx.x;
  if (b >= h.alphabet) return;
  // Symbol b: bins [b << j, (b + 1) << j) at k0, clamped to the candidate's.
  const uint64_t lo = h.scratch + (uint64_t{b} << h.j);
  const uint64_t hi = h.scratch + min((uint64_t{b} + 1) << h.j, uint64_t{h.bins});
  h.out[b] = prefix[hi - 1] - (lo > 0 ? prefix[lo - 1] : 0);
}

}  // namespace

void launch_group_histograms(const GroupHistogram* jobs, uint32_t count, uint32_t max_alphabet, uint64_t entries,
                             uint32_t candidates, const void* temp, cudaStream_t stream) {
  if (count == 0) return;
  VLEC_REQUIRE(count < 65536, "too many wavelet groups for one launch: ", count);
  const Temp t = carve(const_cast<void*>(temp), entries, candidates);
  group_histograms_kernel<<<dim3((max_alphabet + kGroupHistThreads - 1) / kGroupHistThreads, count),
                            kGroupHistThreads, 0, stream>>>(jobs, t.prefix);
  CUDA_CHECK(cudaGetLastError());
}

std::size_t shift_estimates_temp_bytes(std::size_t entries, std::size_t candidates) {
  return carve(nullptr, entries, candidates).total;
}

void launch_shift_estimates(const ShiftCandidate* candidates, uint32_t count, uint64_t entries, const uint32_t* parts,
                            const uint32_t* tops, const unsigned long long* hist, ShiftResult* results, void* temp,
                            std::size_t temp_bytes, cudaStream_t stream) {
  if (count == 0) return;
  VLEC_REQUIRE(count < 65536, "too many wavelet group candidates for one launch: ", count);
  Temp t = carve(temp, entries, count);
  VLEC_REQUIRE(temp_bytes >= t.total, "temporary storage of ", temp_bytes, " bytes is below the ", t.total, " needed");
  CUDA_CHECK(cudaMemsetAsync(t.sums, 0, sizeof(SummarySums) * kShifts * count, stream));
  merge_kernel<<<dim3(kHistBins / kMergeThreads, count), kMergeThreads, 0, stream>>>(candidates, parts, tops, hist,
                                                                                    t.merged);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cub::DeviceScan::InclusiveSum(t.scan, t.scan_bytes, t.merged, t.prefix, entries, stream));
  summary_kernel<<<dim3(kHistBins / kSummaryBins, kShifts, count), kSummaryThreads, 0, stream>>>(candidates, t.prefix,
                                                                                               t.sums);
  CUDA_CHECK(cudaGetLastError());
  pick_kernel<<<(count + 127) / 128, 128, 0, stream>>>(candidates, count, t.sums, results);
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

std::size_t GroupShifts::temp_bytes() const {
  return wavelet_gpu::shift_estimates_temp_bytes(scratch_bound(), sets_.size());
}

void GroupShifts::enqueue_slots(const std::vector<std::vector<uint32_t>>& slots, const std::vector<uint32_t>& tops,
                                wavelet_gpu::ShiftCandidate* d_candidates, uint32_t* d_parts, const uint32_t* d_tops,
                                const unsigned long long* d_hist, void* d_temp, std::size_t temp_bytes,
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
  entries_ = scratch;
  writes.add(d_candidates, host_, stream);
  writes.add(d_parts, parts, stream);
  wavelet_gpu::launch_shift_estimates(d_candidates, static_cast<uint32_t>(host_.size()), scratch, d_parts, d_tops,
                                      d_hist, d_results, d_temp, temp_bytes, stream);
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

wavelet_gpu::GroupHistogram GroupShifts::histogram_job(unsigned plane, const std::vector<wavelet::Box>& boxes,
                                                       unsigned shift, unsigned long long* out) const {
  const auto it = index_.find(key_of(plane, boxes));
  VLEC_REQUIRE(it != index_.end() && it->second < host_.size(),
               "the wavelet writer asked for a group the GPU did not evaluate");
  const wavelet_gpu::ShiftCandidate& c = host_[it->second];
  VLEC_REQUIRE(shift >= c.k0 && shift - c.k0 < 32, "a wavelet group's shift ", shift, " below its smallest ", c.k0);
  wavelet_gpu::GroupHistogram h;
  h.out = out;
  h.scratch = c.scratch;
  h.bins = c.bins;
  h.j = shift - c.k0;
  h.alphabet = ((c.bins - 1) >> h.j) + 1;
  return h;
}

void GroupShifts::enqueue_histograms(const std::vector<wavelet_gpu::GroupHistogram>& jobs,
                                     wavelet_gpu::GroupHistogram* d_jobs, const void* d_temp, HostWrites& writes,
                                     cudaStream_t stream) const {
  if (jobs.empty()) return;
  uint32_t widest = 0;
  for (const wavelet_gpu::GroupHistogram& h : jobs) widest = std::max(widest, h.alphabet);
  writes.add(d_jobs, jobs, stream);
  wavelet_gpu::launch_group_histograms(d_jobs, static_cast<uint32_t>(jobs.size()), widest, entries_,
                                       static_cast<uint32_t>(host_.size()), d_temp, stream);
}

}  // namespace vlec::cuda
