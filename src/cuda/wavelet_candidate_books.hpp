// cuda/wavelet_candidate_books.hpp: the Huffman codebook of every group the
// wavelet writer may form, built on the GPU right behind the shift rule,
// before the host has read the rule's answers or made its decisions.
//
// Why: until session 37 each chosen group's codebook was built after the
// decisions (step 3, cuda/wavelet_encode_frames.cu): the host derived the
// jobs (~0.05-0.09 ms of its time after the decisions), and the batch ran
// beside the symbols kernel's ~30,000 blocks, so the last codebook ended
// 0.19-0.22 ms after the decisions, behind the symbols kernel, and the
// frames' encoder waited for it (H200, u16 8192^2). Behind the rule the GPU
// has little else to do while the host waits for the answers and decides
// (the late samples checksum). Each candidate's shift, alphabet and
// capacity class are on the device then: a kernel writes every candidate's
// histogram job (its symbols' histogram from the rule's merged bins at its
// chosen shift, as GroupShifts::histogram_job would) and codebook job, and
// each block shape is launched over every candidate, a block leaving at
// once where its candidate's alphabet is not of its shape
// (build_codebooks_device_unsorted). The codebook of a histogram is the
// same wherever it is built, so the frames are the CPU writer's.
// Measured (H200, u16 8192^2, session 37): the host's step 3 went 0.115 ->
// 0.03 ms and the codebooks end ~0.1 ms after the decisions, before the
// symbols kernel, but the compress is a tie: the symbols kernel, not the
// codebooks, was the path. This is the first half of letting the frames'
// encoder start right after the decisions (docs/ARCHITECTURE.md, session
// 37): without the symbols kernel the compress is now ~0.08 ms faster.
//
// Candidates of more than codebook_batch_capacity() symbols (or none) get
// no codebook here: their groups are built after the decisions, as before.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/codebook_gpu.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_shift_gpu.hpp"

namespace vlec::cuda::wavelet_gpu {

// Where candidate c's histogram, codebook and jobs lie in their regions.
struct CandidateBooks {
  unsigned long long* hist = nullptr;  // [candidates * capacity]
  GroupHistogram* hist_jobs = nullptr; // [candidates]
  CodebookJob* book_jobs = nullptr;    // [candidates]
  uint8_t* books = nullptr;            // [candidates * stride]
  uint32_t capacity = 0;               // a codebook's entries (codebook_batch_capacity())
  uint32_t max_alphabet = 0;           // the largest alphabet built (capacity, unless a test lowers it)
  std::size_t stride = 0;              // bytes a candidate's codebook
  std::size_t entries = 0, lengths = 0, serialized = 0;  // offsets in a candidate's codebook (info at 0)

  // Candidate c's codebook, as its job writes it (entries for `capacity` symbols).
  __host__ __device__ DeviceCodebookOut book(uint32_t c) const {
    uint8_t* b = books + c * stride;
    return {b + lengths, reinterpret_cast<uint32_t*>(b + entries), b + serialized, reinterpret_cast<uint32_t*>(b)};
  }
};

// Bytes of the regions for `candidates` candidates, and their carving from
// `base` (256-byte aligned), each region 256-byte aligned.
std::size_t candidate_books_bytes(std::size_t candidates);
CandidateBooks carve_candidate_books(void* base, std::size_t candidates);

// Behind launch_shift_estimates on `streams[0]` (which must follow it): each
// candidate's histogram and codebook jobs, its histogram, then its codebook
// (a block shape a stream, streams[i % size], each made to wait for the
// first by an event of `events`). `rule_temp`: the rule's temp
// (its prefix sums); length_limit as CompressOptions::max_code_length.
// Nothing here waits for the host.
void enqueue_candidate_books(const ShiftCandidate* d_candidates, const ShiftResult* d_results, uint32_t candidates,
                             const void* rule_temp, unsigned length_limit, const CandidateBooks& at,
                             const std::vector<cudaStream_t>& streams, CallEvents& events);

}  // namespace vlec::cuda::wavelet_gpu
