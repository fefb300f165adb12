// cuda/wavelet_payload_copy.cu: see wavelet_payload_copy.hpp.
#include "cuda/wavelet_payload_copy.hpp"

#include <cub/block/block_scan.cuh>
#include <cub/device/device_memcpy.cuh>

#include "common/safety.hpp"
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

PayloadCopies::PayloadCopies(std::vector<Group> groups, uint64_t* d_table, void* d_copy_temp,
                             std::size_t copy_temp_bytes)
    : groups_(std::move(groups)), d_table_(d_table), d_copy_temp_(d_copy_temp), copy_temp_bytes_(copy_temp_bytes) {
  piece_.resize(groups_.size());
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    piece_[g] = static_cast<uint32_t>(copies_);
    copies_ += groups_[g].low_bytes ? 2 : 1;
  }
}

void PayloadCopies::copy(cudaStream_t stream) const {
  std::size_t temp_bytes = copy_temp_bytes_;
  CUDA_CHECK(cub::DeviceMemcpy::Batched(d_copy_temp_, temp_bytes, reinterpret_cast<const void* const*>(d_table_),
                                        reinterpret_cast<void* const*>(d_table_ + copies_), d_table_ + 2 * copies_,
                                        static_cast<int64_t>(copies_), stream));
}

void PayloadCopies::enqueue_early(uint64_t header_bytes, uint64_t capacity, uint8_t* out, const uint64_t* d_sizes,
                                  cudaStream_t stream) const {
  VLEC_REQUIRE(groups_.size() <= kEarlyCopyGroups, "the early payload copies take at most ", kEarlyCopyGroups,
               " groups, not ", groups_.size());
  PayloadCopyPlan cp;
  cp.groups = static_cast<uint32_t>(groups_.size());
  cp.copies = static_cast<uint32_t>(copies_);
  cp.header_bytes = header_bytes;
  cp.capacity = capacity;
  cp.out = out;
  cp.sizes = d_sizes;
  cp.table = d_table_;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    cp.frame_src[g] = groups_[g].frame;
    cp.low_src[g] = groups_[g].low;
    cp.low_bytes[g] = groups_[g].low_bytes;
    cp.piece[g] = piece_[g];
  }
  enqueue_payload_table(cp, stream);
  copy(stream);
}

void PayloadCopies::enqueue_late(uint8_t* payload, const std::vector<wavelet::Group>& layout,
                                 cudaStream_t stream) const {
  VLEC_REQUIRE(layout.size() == groups_.size(), "the payload layout names ", layout.size(), " groups, not ",
               groups_.size());
  // The table as payload_table_kernel writes it: sources, destinations, sizes.
  std::vector<uint64_t> table(3 * copies_);
  auto put = [&](uint32_t i, const uint8_t* from, const uint8_t* to, uint64_t n) {
    table[i] = reinterpret_cast<uintptr_t>(from);
    table[copies_ + i] = reinterpret_cast<uintptr_t>(to);
    table[2 * copies_ + i] = n;
  };
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    put(piece_[g], groups_[g].frame, payload + layout[g].frame_offset, layout[g].frame_bytes);
    if (groups_[g].low_bytes) put(piece_[g] + 1, groups_[g].low, payload + layout[g].bits_offset, groups_[g].low_bytes);
  }
  // Pageable: cudaMemcpyAsync returns once the bytes are staged.
  CUDA_CHECK(cudaMemcpyAsync(d_table_, table.data(), 8 * table.size(), cudaMemcpyHostToDevice, stream));
  copy(stream);
}

}  // namespace vlec::cuda::wavelet_gpu
