// cuda/wavelet_shift_gpu.cu: see wavelet_shift_gpu.hpp. Two kernels,
// each spread over the whole GPU (the first version, one block per
// candidate walking its bins, was bound by the latency of its loads: 0.9 ms
// for a 512 x 512 u16 image's 28 candidates):
//  1. merge: every block first completes its candidate's descriptor (its
//     top, the largest of its parts' tops; k0, bins and shifts to try), so
//     the host enqueues the rule without reading the tops first; block 0
//     stores it and zeroes the candidate's sums. Then one thread per bin of
//     the candidate's histogram at its k0, the sum of the parts' bins it
//     covers, each part merged down from its own k0 (what merge_stats()
//     computes), and the block's inclusive prefix sums (cub::BlockScan)
//     with the block's total, so that any merged bin of any shift is one
//     difference of two prefix sums, each a block's sum plus the totals of
//     the candidate's blocks before it;
//  2. summary: for every candidate and every shift it may try, one thread
//     per 4 merged bins (four threads a codebook presence group, ORed by
//     shuffles), a block reduction, and one set of integer atomics per
//     block into the (candidate, shift) Summary; the candidate's last block
//     to finish (a ticket) computes estimated_bits() of each shift and
//     pick_shift(), which ignores the estimates after its stop, as the host
//     never computes them.
// Until session 35 a describe kernel of its own came first, a summary
// thread took 16 merged bins (a presence group), loading each bin's two
// prefix sums as it went, and the summary's grid held 16 blocks of every
// shift searched, most of them without bins. H200, u16 8192^2, Nsight
// Compute (different calls, so within a machine's variance): describe +
// merge + summary 5.8 + 8.1 + 18.3 us -> merge + summary 14.3 + 17.6 on
// the MR slice, 5.6 + 9.8 + 28.0 -> 15.3 + 20.0 on the smooth image (the
// describe step costs each merge block about what its launch cost; the
// slots are the gain: at 4 bins a thread and the full grid the summary
// took 25.9 / 28.2 us); the rule's GPU span 0.037 -> 0.034 ms (MR), 0.043
// -> 0.036-0.037 (smooth), hdr_room16 0.070-0.072 either way. (Merge blocks of 8 bins a
// thread, 16 a candidate instead of 64, were no faster on the MR slice and
// slower on the smooth image, 15.5 -> 22.3 us: a thread's bins, each summed
// from 2^d finer bins, are a serial walk.)
// Session 33: these were a memset, the merge, CUB's two-kernel scan over
// the candidates' bins, the summary and a pick kernel, enqueued after a
// host round trip for the tops; on a u16 8192^2 image the GPU span was
// 0.063 ms for ~0.035 ms of kernels.
#include "cuda/wavelet_shift_gpu.hpp"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

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
constexpr unsigned kMergeBlocks = kHistBins / kMergeThreads;  // merge blocks (and block totals) per candidate
// The summary: 4 merged bins a thread (a codebook presence group is 4
// threads), 4,096 a block.
constexpr unsigned kSummaryThreads = 1024;
constexpr unsigned kSummaryItems = 4;
constexpr unsigned kGroupThreads = sr::kBinsPerCodebookGroup / kSummaryItems;
constexpr uint32_t kSummaryBins = kSummaryThreads * kSummaryItems;  // merged bins per block
static_assert(kGroupThreads == 4, "a presence group is four lanes");
constexpr unsigned kShifts = sr::kMaxShift + 1;
constexpr std::size_t kAlign = 256;
static_assert(kMergeBlocks == 64, "a warp's lanes take two block totals each");

// One (candidate, shift) Summary, summed by atomics.
struct SummarySums {
  unsigned long long n, cost_fx;
  unsigned symbols, groups, alphabet, pad;
};

struct Temp {
  unsigned long long* prefix;  // candidate c's bin u at c * kHistBins + u: its merge block's inclusive sum
  unsigned long long* totals;  // candidate c's merge block b at c * kMergeBlocks + b: the block's sum
  SummarySums* sums;           // candidate c's shift k0 + j at c * kShifts + j
  unsigned* done;              // candidate c's summary blocks finished
  std::size_t total;
};

Temp carve(void* base, std::size_t candidates) {
  Temp t{};
  auto* p = static_cast<uint8_t*>(base);
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += (std::max<std::size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
    return p + here;
  };
  t.prefix = reinterpret_cast<unsigned long long*>(take(8 * candidates * kHistBins));
  t.totals = reinterpret_cast<unsigned long long*>(take(8 * candidates * kMergeBlocks));
  t.sums = reinterpret_cast<SummarySums*>(take(sizeof(SummarySums) * kShifts * candidates));
  t.done = reinterpret_cast<unsigned*>(take(4 * candidates));
  t.total = at;
  return t;
}

// Candidate i's descriptor completed from its parts' tops: its top (the
// largest of its parts'), k0, bins, shifts to try and scratch.
__device__ ShiftCandidate describe(const ShiftCandidate* candidates, uint32_t i, const uint32_t* parts,
                                   const uint32_t* tops, unsigned search) {
  ShiftCandidate c = candidates[i];
  uint32_t top = 0;
  for (uint32_t p = 0; p < c.part_count; ++p) top = max(top, tops[parts[c.part_first + p]]);
  c.top = top;
  c.k0 = sr::smallest_shift(top);
  c.bins = (top >> c.k0) + 1;
  c.count = sr::last_shift(top, c.k0, search) - c.k0 + 1;
  c.scratch = uint64_t{i} * kHistBins;
  return c;
}

// Block (x, c): bins [1024 x, 1024 (x + 1)) of candidate c. Each block
// completes the candidate's descriptor itself (a few tops), and block 0
// stores it and zeroes the candidate's sums for the summary kernel: a
// kernel of its own for that was a launch more on the critical path.
__global__ void __launch_bounds__(kMergeThreads)
    merge_kernel(ShiftCandidate* candidates, const uint32_t* parts, const uint32_t* tops,
                 const unsigned long long* hist, unsigned search, unsigned long long* prefix,
                 unsigned long long* totals, SummarySums* sums, unsigned* done) {
  using Scan = cub::BlockScan<unsigned long long, kMergeThreads>;
  __shared__ typename Scan::TempStorage scan_temp;
  const ShiftCandidate c = describe(candidates, blockIdx.y, parts, tops, search);
  if (blockIdx.x == 0 && threadIdx.x < kShifts) {
    sums[uint64_t{blockIdx.y} * kShifts + threadIdx.x] = SummarySums{};
    if (threadIdx.x == 0) candidates[blockIdx.y] = c, done[blockIdx.y] = 0;
  }
  if (blockIdx.x * kMergeThreads >= c.bins) return;  // the whole block: past the candidate's bins
  const uint32_t u = blockIdx.x * kMergeThreads + threadIdx.x;
  unsigned long long sum = 0;
  if (u < c.bins) {
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
  }
  unsigned long long block_total = 0;
  Scan(scan_temp).InclusiveSum(sum, sum, block_total);
  prefix[c.scratch + u] = sum;
  if (threadIdx.x == 0) totals[uint64_t{blockIdx.y} * kMergeBlocks + blockIdx.x] = block_total;
}

// The candidate's prefix sum of bins [0, r] at k0: its merge block's
// inclusive sum plus the totals of the blocks before (`base`, in shared
// memory, filled by load_bases).
struct CandidatePrefix {
  const unsigned long long* prefix;  // the candidate's first bin
  const unsigned long long* base;    // kMergeBlocks exclusive sums of block totals
  __device__ uint64_t at(uint64_t r) const { return prefix[r] + base[r / kMergeThreads]; }
  // Merged bin b of shift j: bins [b << j, (b + 1) << j) at k0, clamped to `bins`.
  __device__ uint64_t merged(uint32_t b, unsigned j, uint32_t bins) const {
    const uint64_t lo = uint64_t{b} << j;
    const uint64_t hi = min((uint64_t{b} + 1) << j, uint64_t{bins});
    return at(hi - 1) - (lo > 0 ? at(lo - 1) : 0);
  }
};

// Warp 0 of the block writes candidate `cand`'s exclusive sums of its merge
// blocks' totals to base[0 .. kMergeBlocks) (blocks past its bins: 0). The
// caller synchronizes the block before reading them.
__device__ void load_bases(const unsigned long long* totals, uint32_t cand, uint32_t bins, unsigned long long* base) {
  if (threadIdx.x >= 32) return;
  const unsigned lane = threadIdx.x;
  const uint32_t blocks = (bins + kMergeThreads - 1) / kMergeThreads;
  const unsigned long long* t = totals + uint64_t{cand} * kMergeBlocks;
  const unsigned long long a = 2 * lane < blocks ? t[2 * lane] : 0;
  const unsigned long long b = 2 * lane + 1 < blocks ? t[2 * lane + 1] : 0;
  unsigned long long incl = a + b;
  for (unsigned d = 1; d < 32; d *= 2) {
    const unsigned long long v = __shfl_up_sync(0xFFFFFFFFu, incl, d);
    if (lane >= d) incl += v;
  }
  const unsigned long long before = incl - a - b;
  base[2 * lane] = before;
  base[2 * lane + 1] = before + a;
}

struct MergeSummary {
  __device__ sr::Summary operator()(const sr::Summary& a, const sr::Summary& b) const { return sr::merge(a, b); }
};

// Summary slots of shift j: blocks enough for kHistBins bins merged by j
// shifts. The grid holds these for every shift searched, and no more (a
// grid of kHistBins / kSummaryBins blocks a shift was mostly blocks with no
// bins, each a block launch).
__host__ __device__ constexpr uint32_t summary_slots(unsigned j) {
  const uint32_t slots = ((kHistBins >> j) + kSummaryBins - 1) / kSummaryBins;
  return slots > 0 ? slots : 1;
}

// Summary blocks of a candidate: one per kSummaryBins merged bins of each shift it tries.
__device__ uint32_t summary_blocks(const ShiftCandidate& c) {
  uint32_t blocks = 0;
  for (unsigned j = 0; j < c.count; ++j) blocks += (sr::merged_bins(c.bins, j) + kSummaryBins - 1) / kSummaryBins;
  return blocks;
}

__device__ void pick(const ShiftCandidate& c, const SummarySums* sums, ShiftResult* result) {
  uint64_t estimates[kShifts] = {};
  for (unsigned j = 0; j < c.count; ++j) {
    const SummarySums* m = sums + j;
    sr::Summary s;
    s.n = __ldcg(&m->n);
    s.cost_fx = __ldcg(&m->cost_fx);
    s.symbols = __ldcg(&m->symbols);
    s.groups = __ldcg(&m->groups);
    s.alphabet = __ldcg(&m->alphabet);
    estimates[j] = sr::estimated_bits(s, c.k0 + j);
  }
  ShiftResult r;
  r.shift = sr::pick_shift(estimates, c.count, c.k0, &r.bits);
  *result = r;
}

__global__ void __launch_bounds__(kSummaryThreads)
    summary_kernel(const ShiftCandidate* candidates, const unsigned long long* prefix,
                   const unsigned long long* totals, SummarySums* sums, unsigned* done, ShiftResult* results) {
  using Reduce = cub::BlockReduce<sr::Summary, kSummaryThreads>;
  __shared__ typename Reduce::TempStorage reduce_temp;
  __shared__ unsigned long long base[kMergeBlocks];
  const uint32_t cand = blockIdx.y;
  const ShiftCandidate c = candidates[cand];
  // Block x of shift j, from the slot blockIdx.x: shift j has
  // summary_slots(j) slots, enough for any histogram of kHistBins bins.
  unsigned j = 0;
  uint32_t x = blockIdx.x;
  while (x >= summary_slots(j)) x -= summary_slots(j), ++j;
  if (j >= c.count) return;
  const uint32_t mb = sr::merged_bins(c.bins, j);
  if (x * kSummaryBins >= mb) return;
  load_bases(totals, cand, c.bins, base);
  __syncthreads();
  const CandidatePrefix cp{prefix + c.scratch, base};
  // The thread's merged bins first .. first + 3: five prefix sums, all
  // loaded before any is used (merged bin b is at(hi_b - 1) - at(lo_b - 1),
  // and lo_{b+1} = hi_b unless b is the last). Then shift_rule::summarize's
  // sums over them, the presence group's four threads ORed by shuffles.
  const uint32_t first = x * kSummaryBins + threadIdx.x * kSummaryItems;
  uint64_t at[kSummaryItems + 1];
#pragma unroll
  for (unsigned i = 0; i <= kSummaryItems; ++i) {
    const uint64_t edge = min(uint64_t{first + i} << j, uint64_t{c.bins});  // bins below merged bin first + i
    at[i] = edge > 0 && first + i <= mb ? cp.at(edge - 1) : 0;
  }
  sr::Summary s;
  const uint32_t log2_n = c.n ? sr::log2_fx(c.n) : 0;
  bool present = false;
#pragma unroll
  for (unsigned i = 0; i < kSummaryItems; ++i) {
    const uint64_t count = first + i < mb && c.n ? at[i + 1] - at[i] : 0;
    if (count == 0) continue;
    present = true;
    sr::add_bin(s, first + i, count, log2_n);
  }
  present |= __shfl_xor_sync(0xFFFFFFFFu, present, 1);
  present |= __shfl_xor_sync(0xFFFFFFFFu, present, 2);
  s.groups = present && threadIdx.x % kGroupThreads == 0;
  const sr::Summary total = Reduce(reduce_temp).Reduce(s, MergeSummary());
  if (threadIdx.x != 0) return;
  SummarySums* const mine = sums + uint64_t{cand} * kShifts;
  if (total.symbols) {
    SummarySums& out = mine[j];
    atomicAdd(&out.n, static_cast<unsigned long long>(total.n));
    atomicAdd(&out.cost_fx, static_cast<unsigned long long>(total.cost_fx));
    atomicAdd(&out.symbols, total.symbols);
    atomicAdd(&out.groups, total.groups);
    atomicMax(&out.alphabet, total.alphabet);
  }
  // The last of the candidate's blocks sees every other block's sums (each
  // fenced before its ticket) and picks the shift.
  __threadfence();
  if (atomicAdd(&done[cand], 1u) + 1 != summary_blocks(c)) return;
  __threadfence();
  pick(c, mine, &results[cand]);
}

constexpr unsigned kGroupHistThreads = 256;

__global__ void __launch_bounds__(kGroupHistThreads)
    group_histograms_kernel(const GroupHistogram* jobs, const unsigned long long* prefix,
                            const unsigned long long* totals) {
  __shared__ unsigned long long base[kMergeBlocks];
  const GroupHistogram h = jobs[blockIdx.y];
  if (blockIdx.x * kGroupHistThreads >= h.alphabet) return;
  load_bases(totals, h.candidate, h.bins, base);
  __syncthreads();
  const uint32_t b = blockIdx.x * kGroupHistThreads + threadIdx.x;
  if (b >= h.alphabet) return;
  const CandidatePrefix cp{prefix + uint64_t{h.candidate} * kHistBins, base};
  h.out[b] = cp.merged(b, h.j, h.bins);  // symbol b
}

}  // namespace

void launch_group_histograms(const GroupHistogram* jobs, uint32_t count, uint32_t max_alphabet, uint32_t candidates,
                             const void* temp, cudaStream_t stream) {
  if (count == 0) return;
  VLEC_REQUIRE(count < 65536, "too many wavelet groups for one launch: ", count);
  const Temp t = carve(const_cast<void*>(temp), candidates);
  group_histograms_kernel<<<dim3((max_alphabet + kGroupHistThreads - 1) / kGroupHistThreads, count),
                            kGroupHistThreads, 0, stream>>>(jobs, t.prefix, t.totals);
  CUDA_CHECK(cudaGetLastError());
}

std::size_t shift_estimates_temp_bytes(std::size_t candidates) { return carve(nullptr, candidates).total; }

void launch_shift_estimates(ShiftCandidate* candidates, uint32_t count, const uint32_t* parts, const uint32_t* tops,
                            const unsigned long long* hist, unsigned search, ShiftResult* results, void* temp,
                            std::size_t temp_bytes, cudaStream_t stream) {
  if (count == 0) return;
  VLEC_REQUIRE(count < 65536, "too many wavelet group candidates for one launch: ", count);
  VLEC_REQUIRE(search + 1 <= kShifts, "a shift search of ", search, " is above the format's ", kShifts - 1);
  const Temp t = carve(temp, count);
  VLEC_REQUIRE(temp_bytes >= t.total, "temporary storage of ", temp_bytes, " bytes is below the ", t.total, " needed");
  merge_kernel<<<dim3(kMergeBlocks, count), kMergeThreads, 0, stream>>>(candidates, parts, tops, hist, search,
                                                                       t.prefix, t.totals, t.sums, t.done);
  CUDA_CHECK(cudaGetLastError());
  // A candidate tries at most search + 1 shifts (last_shift()).
  uint32_t slots = 0;
  for (unsigned j = 0; j <= search; ++j) slots += summary_slots(j);
  summary_kernel<<<dim3(slots, count), kSummaryThreads, 0, stream>>>(
      candidates, t.prefix, t.totals, t.sums, t.done, results);
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

std::size_t GroupShifts::temp_bytes() const { return wavelet_gpu::shift_estimates_temp_bytes(sets_.size()); }

void GroupShifts::upload_slots(const std::vector<std::vector<uint32_t>>& slots,
                               wavelet_gpu::ShiftCandidate* d_candidates, uint32_t* d_parts, HostWrites& writes,
                               cudaStream_t stream) {
  // What the shape gives (n and the parts); the kernels fill in the rest.
  shape_.assign(sets_.size(), {});
  host_.clear();
  std::vector<uint32_t> parts;
  for (std::size_t c = 0; c < sets_.size(); ++c) {
    wavelet_gpu::ShiftCandidate& d = shape_[c];
    d.part_first = static_cast<uint32_t>(parts.size());
    d.part_count = static_cast<uint32_t>(slots[c].size());
    for (std::size_t i = 0; i < slots[c].size(); ++i) {
      parts.push_back(slots[c][i]);
      d.n += sets_[c].boxes[i].samples();
    }
  }
  VLEC_REQUIRE(parts.size() == parts_, "wavelet shift candidates exceed their storage");
  writes.add(d_candidates, shape_, stream);
  writes.add(d_parts, parts, stream);
}

void GroupShifts::launch(wavelet_gpu::ShiftCandidate* d_candidates, const uint32_t* d_parts, const uint32_t* d_tops,
                         const unsigned long long* d_hist, void* d_temp, std::size_t temp_bytes,
                         wavelet_gpu::ShiftResult* d_results, cudaStream_t stream) const {
  VLEC_REQUIRE(shape_.size() == sets_.size(), "the wavelet shift candidates were not uploaded");
  wavelet_gpu::launch_shift_estimates(d_candidates, static_cast<uint32_t>(shape_.size()), d_parts, d_tops, d_hist,
                                      wavelet::EncoderTuning{}.shift_search, d_results, d_temp, temp_bytes, stream);
}

void GroupShifts::add_reads(HostReads& reads, const wavelet_gpu::ShiftCandidate* d_candidates) {
  reads.add(host_, d_candidates, sets_.size());
}

void GroupShifts::check_descriptors() const {
  namespace sr = wavelet::shift_rule;
  const unsigned search = wavelet::EncoderTuning{}.shift_search;
  SAFETY_CHECK(host_.size() == shape_.size(), ErrorCode::cuda_error, "the wavelet shift candidates were not read back");
  for (std::size_t i = 0; i < host_.size(); ++i) {
    const wavelet_gpu::ShiftCandidate& c = host_[i];
    const wavelet_gpu::ShiftCandidate& s = shape_[i];
    const unsigned k0 = sr::smallest_shift(c.top);
    SAFETY_CHECK(c.n == s.n && c.part_first == s.part_first && c.part_count == s.part_count && c.k0 == k0 &&
                     c.bins == (c.top >> k0) + 1 && c.count == sr::last_shift(c.top, k0, search) - k0 + 1 &&
                     c.scratch == i * uint64_t{wavelet_gpu::kHistBins},
                 ErrorCode::cuda_error, "the GPU's description of wavelet shift candidate ", i,
                 " does not match its shape (top ", c.top, ")");
  }
}

wavelet::ValueStats GroupShifts::stats(unsigned plane, const std::vector<wavelet::Box>& boxes,
                                       const std::vector<wavelet_gpu::ShiftResult>& results) const {
  const auto it = index_.find(key_of(plane, boxes));
  VLEC_REQUIRE(it != index_.end() && it->second < results.size() && it->second < host_.size(),
               "the wavelet writer asked for a group the GPU did not evaluate (or its description was not read)");
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
  h.candidate = static_cast<uint32_t>(it->second);
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
  wavelet_gpu::launch_group_histograms(d_jobs, static_cast<uint32_t>(jobs.size()), widest,
                                       static_cast<uint32_t>(sets_.size()), d_temp, stream);
}

}  // namespace vlec::cuda
