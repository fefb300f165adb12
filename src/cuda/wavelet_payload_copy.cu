// cuda/wavelet_payload_copy.cu: see wavelet_payload_copy.hpp.
#include "cuda/wavelet_payload_copy.hpp"

#include <cub/block/block_scan.cuh>

#include "cuda/cuda_check.hpp"

namespace vlec::cuda::wavelet_gpu {

namespace {

constexpr unsigned kThreads = kEarlyCopyGroups;  // a thread a group

// One block: thread g reads group g's frame size and status, a block scan
// places the groups one after the other (frame, then low bits), and each
// thread writes its group's one or two pieces.
__global__ void __launch_bounds__(kThreads) payload_table_kernel(const PayloadCopyPlan p) {
  using Scan = cub::BlockScan<uint64_t, kThreads>;
  __shared__ typename Scan::TempStorage scan;
  const unsigned g = threadIdx.x;
  const bool mine = g < p.groups;
  const uint64_t frame = mine ? p.sizes[2 * g] : 0;
  const bool done = !mine || p.sizes[2 * g + 1] == ~0ull;
  // Each size is bounded before the sum so that it cannot wrap.
  const bool bounded = frame <= p.capacity && (mine ? p.low_bytes[g] : 0) <= p.capacity;
  const uint64_t span = mine && bounded ? frame + p.low_bytes[g] : 0;
  uint64_t at = 0, total = 0;
  Scan(scan).ExclusiveSum(span, at, total);
  const bool fits = __syncthreads_and(done && bounded) && p.header_bytes <= p.capacity &&
                    total <= p.capacity - p.header_bytes;
  if (!mine) return;
  uint64_t* src = p.table;
  uint64_t* dst = p.table + p.copies;
  uint64_t* bytes = p.table + 2 * p.copies;
  const uint32_t i = p.piece[g];
  src[i] = reinterpret_cast<uint64_t>(p.frame_src[g]);
  dst[i] = reinterpret_cast<uint64_t>(p.out + p.header_bytes + at);
  bytes[i] = fits ? frame : 0;
  if (p.low_bytes[g]) {
    src[i + 1] = reinterpret_cast<uint64_t>(p.low_src[g]);
    dst[i + 1] = reinterpret_cast<uint64_t>(p.out + p.header_bytes + at + frame);
    bytes[i + 1] = fits ? p.low_bytes[g] : 0;
  }
}

}  // namespace

void enqueue_payload_table(const PayloadCopyPlan& plan, cudaStream_t stream) {
  payload_table_kernel<<<1, kThreads, 0, stream>>>(plan);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda::wavelet_gpu
