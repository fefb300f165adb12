// cuda/wavelet_candidate_books.cu: see wavelet_candidate_books.hpp. One
// thread a candidate writes its two jobs; the histograms and the codebooks
// are the kernels the writer ran after its decisions (launch_group_histograms,
// the codebook batch kernel), over every candidate at once.
#include "cuda/wavelet_candidate_books.hpp"

#include "common/safety.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_encode_kernels.hpp"

namespace vlec::cuda::wavelet_gpu {

namespace {

constexpr std::size_t kRegionAlign = 256;
std::size_t align_up(std::size_t x) { return (x + kRegionAlign - 1) / kRegionAlign * kRegionAlign; }

// The regions' layout for `candidates` (base null: sizes alone).
CandidateBooks layout(uint8_t* base, std::size_t candidates, std::size_t* total) {
  CandidateBooks b;
  b.capacity = b.max_alphabet = codebook_batch_capacity();
  b.entries = 16;  // after info[4]
  b.lengths = b.entries + 4 * std::size_t{b.capacity};
  b.serialized = (b.lengths + b.capacity + 15) / 16 * 16;
  b.stride = align_up(b.serialized + codebook_serialized_capacity(b.capacity));
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += align_up(bytes);
    return base ? base + here : nullptr;
  };
  b.hist = reinterpret_cast<unsigned long long*>(take(8 * std::size_t{b.capacity} * candidates));
  b.hist_jobs = reinterpret_cast<GroupHistogram*>(take(sizeof(GroupHistogram) * candidates));
  b.book_jobs = reinterpret_cast<CodebookJob*>(take(codebook_jobs_bytes(candidates)));
  b.books = take(b.stride * candidates);
  *total = at;
  return b;
}

// Candidate c's jobs: its group's symbols are zigzag >> shift (the rule's
// answer), so its histogram is the merged bins at j = shift - k0 and its
// alphabet ((bins - 1) >> j) + 1 (GroupShifts::histogram_job). A candidate
// without values, or of a larger alphabet than the batch takes, gets empty
// jobs (alphabet and capacity 0): its group's codebook is built after the
// decisions.
__global__ void candidate_jobs_kernel(const ShiftCandidate* candidates, const ShiftResult* results, uint32_t count,
                                      CandidateBooks at, uint32_t length_limit) {
  const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= count) return;
  const ShiftCandidate k = candidates[c];
  const uint32_t shift = results[c].shift;
  GroupHistogram h;
  CodebookJob b{};
  h.candidate = c;
  if (k.n > 0 && k.bins >= 1 && shift >= k.k0 && shift - k.k0 < 32) {
    const uint32_t j = shift - k.k0, alphabet = ((k.bins - 1) >> j) + 1;
    if (alphabet <= at.max_alphabet) {
      h.out = at.hist + uint64_t{c} * at.capacity;
      h.bins = k.bins;
      h.j = j;
      h.alphabet = alphabet;
      b.hist = reinterpret_cast<const uint64_t*>(h.out);
      b.capacity = alphabet;
      b.length_limit = length_limit;
      b.out = at.book(c);
    }
  }
  at.hist_jobs[c] = h;
  at.book_jobs[c] = b;
}

}  // namespace

std::size_t candidate_books_bytes(std::size_t candidates) {
  std::size_t total = 0;
  layout(nullptr, candidates, &total);
  return total;
}

CandidateBooks carve_candidate_books(void* base, std::size_t candidates) {
  VLEC_REQUIRE(base != nullptr && reinterpret_cast<uintptr_t>(base) % kRegionAlign == 0,
               "the candidates' codebooks need 256-byte aligned storage");
  std::size_t total = 0;
  return layout(static_cast<uint8_t*>(base), candidates, &total);
}

void enqueue_candidate_books(const ShiftCandidate* d_candidates, const ShiftResult* d_results, uint32_t candidates,
                             const void* rule_temp, unsigned length_limit, const CandidateBooks& at,
                             const std::vector<cudaStream_t>& streams, CallEvents& events) {
  if (candidates == 0) return;
  VLEC_REQUIRE(!streams.empty() && length_limit <= 24, "the candidates' codebooks need a stream and a limit of 0-24");
  VLEC_REQUIRE(at.max_alphabet <= at.capacity, "candidates' codebooks of ", at.max_alphabet, " symbols in room for ",
               at.capacity);
  const cudaStream_t first = streams[0];
  constexpr unsigned kThreads = 128;
  candidate_jobs_kernel<<<(candidates + kThreads - 1) / kThreads, kThreads, 0, first>>>(d_candidates, d_results,
                                                                                         candidates, at, length_limit);
  CUDA_CHECK(cudaGetLastError());
  launch_group_histograms(at.hist_jobs, candidates, at.capacity, candidates, rule_temp, first);
  // Every shape's launch after the histograms: the other streams wait for the first.
  if (streams.size() > 1) {
    const cudaEvent_t ready = events.record(first);
    for (std::size_t s = 1; s < streams.size(); ++s) CUDA_CHECK(cudaStreamWaitEvent(streams[s], ready, 0));
  }
  build_codebooks_device_unsorted(at.book_jobs, candidates, streams);
}

}  // namespace vlec::cuda::wavelet_gpu
