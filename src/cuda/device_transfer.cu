// cuda/device_transfer.cu: see vlec/device_transfer.hpp.
//
// Why the overlap works: device::compress enqueues everything on its stream
// and leaves the frame's size in device memory, so the host only waits for a
// 16-byte result per slab (size, error) before it can enqueue that slab's
// copy; the copy engine then moves slab s while the SMs compress slab s + 1.
#include "vlec/device_transfer.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "common/safety.hpp"
#include "cuda/cuda_check.hpp"

namespace vlec::device {

namespace {
constexpr unsigned kMaxSlabs = 64;
}  // namespace

struct HostCompressor::State {
  CompressOptions options;
  uint64_t max_elements = 0, slab_elements = 0;
  unsigned slabs = 0;
  std::size_t capacity = 0, temp_bytes = 0;
  uint8_t* d_frames = nullptr;   // slabs x capacity
  uint64_t* d_results = nullptr;  // per slab: frame size, error
  uint8_t* d_temp[2] = {nullptr, nullptr};
  uint64_t* h_results = nullptr;  // pinned mirror of d_results
  cudaStream_t work[2] = {nullptr, nullptr};
  cudaStream_t copy = nullptr;
  cudaEvent_t ready[kMaxSlabs] = {};

  ~State() {
    for (cudaStream_t s : {work[0], work[1], copy})
      if (s) cudaStreamSynchronize(s);
    for (cudaEvent_t e : ready)
      if (e) cudaEventDestroy(e);
    for (cudaStream_t s : {work[0], work[1], copy})
      if (s) cudaStreamDestroy(s);
    cudaFree(d_frames);
    cudaFree(d_results);
    cudaFree(d_temp[0]);
    cudaFree(d_temp[1]);
    cudaFreeHost(h_results);
  }
  uint64_t slab_len(uint64_t elements, unsigned s) const {
    const uint64_t start = s * slab_elements;
    return start >= elements ? 0 : std::min(slab_elements, elements - start);
  }
};

HostCompressor::HostCompressor(uint64_t max_elements, const CompressOptions& options, unsigned slabs)
    : s_(std::make_unique<State>()) {
  VLEC_REQUIRE(slabs >= 1 && slabs <= kMaxSlabs, "slabs must be 1..", kMaxSlabs, ", not ", slabs);
  VLEC_REQUIRE(options.chunk_elements >= 128 && options.chunk_elements % 128 == 0,
               "chunk_elements must be a positive multiple of 128");
  State& s = *s_;
  s.options = options;
  s.max_elements = max_elements;
  // Slabs of whole chunks, so that the slabs' frames hold the same chunks as
  // one frame would, and every slab starts 16-byte aligned.
  const uint64_t chunk = options.chunk_elements;
  const uint64_t chunks = std::max<uint64_t>(1, (max_elements + chunk - 1) / chunk);
  s.slab_elements = std::max<uint64_t>(1, (chunks + slabs - 1) / slabs) * chunk;
  s.slabs = static_cast<unsigned>(std::max<uint64_t>(1, (max_elements + s.slab_elements - 1) / s.slab_elements));
  s.capacity = (compress_capacity(s.slab_elements, options) + 255) / 256 * 256;
  s.temp_bytes = compress_temp_bytes(s.slab_elements, options);
  CUDA_CHECK(cudaMalloc(&s.d_frames, s.capacity * s.slabs));
  CUDA_CHECK(cudaMalloc(&s.d_results, 16 * s.slabs));
  for (auto& t : s.d_temp) CUDA_CHECK(cudaMalloc(&t, std::max<std::size_t>(s.temp_bytes, 1)));
  CUDA_CHECK(cudaMallocHost(&s.h_results, 16 * s.slabs));
  for (auto& w : s.work) CUDA_CHECK(cudaStreamCreateWithFlags(&w, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s.copy, cudaStreamNonBlocking));
  for (unsigned i = 0; i < s.slabs; ++i) CUDA_CHECK(cudaEventCreateWithFlags(&s.ready[i], cudaEventDisableTiming));
}

HostCompressor::~HostCompressor() = default;

unsigned HostCompressor::slabs() const { return s_->slabs; }
uint64_t HostCompressor::slab_elements() const { return s_->slab_elements; }

std::size_t HostCompressor::host_capacity() const {
  // Each slab's frame is at most its raw frame (compress_bound), and at most `capacity`.
  return s_->capacity * s_->slabs;
}

std::size_t HostCompressor::compress(const void* d_in, uint64_t elements, void* h_out, std::size_t capacity) {
  State& s = *s_;
  VLEC_REQUIRE(elements <= s.max_elements, elements, " elements exceed the ", s.max_elements,
               " this HostCompressor was made for");
  const unsigned w = static_cast<unsigned>(dtype_bytes(s.options.dtype));
  const unsigned used = elements == 0 ? 1 : static_cast<unsigned>((elements + s.slab_elements - 1) / s.slab_elements);
  const auto* in = static_cast<const uint8_t*>(d_in);
  for (unsigned i = 0; i < used; ++i) {
    cudaStream_t st = s.work[i % 2];
    device::compress(in + i * s.slab_elements * w, s.slab_len(elements, i), s.d_frames + i * s.capacity, s.capacity,
             s.d_results + 2 * i, s.d_results + 2 * i + 1, s.d_temp[i % 2], s.temp_bytes, st, s.options);
    CUDA_CHECK(cudaMemcpyAsync(s.h_results + 2 * i, s.d_results + 2 * i, 16, cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaEventRecord(s.ready[i], st));
  }
  std::size_t at = 0;
  uint64_t bad_slab = ~0ull;
  for (unsigned i = 0; i < used; ++i) {
    CUDA_CHECK(cudaEventSynchronize(s.ready[i]));
    const uint64_t size = s.h_results[2 * i], error = s.h_results[2 * i + 1];
    if (error != ~0ull || at + size > capacity) {
      bad_slab = i;
      break;
    }
    CUDA_CHECK(cudaMemcpyAsync(static_cast<uint8_t*>(h_out) + at, s.d_frames + i * s.capacity, size,
                               cudaMemcpyDeviceToHost, s.copy));
    at += size;
  }
  for (cudaStream_t st : {s.work[0], s.work[1], s.copy}) CUDA_CHECK(cudaStreamSynchronize(st));
  if (bad_slab != ~0ull) {
    const uint64_t error = s.h_results[2 * bad_slab + 1];
    VLEC_REQUIRE(error != ~1ull, "code length limit ", s.options.max_code_length,
                 " is too short for the number of distinct symbols in the data");
    SAFETY_CHECK(error == ~0ull, ErrorCode::value_out_of_alphabet, "the value at element ",
                 bad_slab * s.slab_elements + error, " is outside the Huffman alphabet (values must be below 65536)");
    SAFETY_CHECK(false, ErrorCode::output_too_small, "the compressed stream needs more than the ", capacity,
                 " bytes given");
  }
  return at;
}

}  // namespace vlec::device
