// cuda/wavelet_payload_copy.cu: see wavelet_payload_copy.hpp.
#include "cuda/wavelet_payload_copy.hpp"

#include <cub/block/block_scan.cuh>
#include <cub/device/device_memcpy.cuh>

#include "common/safety.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/launch_cache.hpp"

namespace vlec::cuda::wavelet_gpu {

bool hand_payload_copy = true;

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

// ---- the payload copy by hand (wavelet_gpu::hand_payload_copy) ----------
//
// Every piece's destination is cut at 16-byte boundaries of the address
// space; a unit is one 16-byte destination block of one piece. A unit
// wholly inside its piece is one 16-byte store of bytes from the two
// aligned 16-byte source vectors around them (funnel shifts; the source
// and destination of a piece need not share an alignment: the low bits and
// frames land at any byte). The piece's first and last units, which may
// share their block with the neighbouring pieces, go byte by byte. The
// table is read from the device (it may be written there by
// payload_table_kernel), so every block finds the units of each piece
// itself: a scan of the pieces' unit counts in shared memory.
constexpr unsigned kCopyThreads = 256;
constexpr unsigned kMaxCopyPieces = 2 * kEarlyCopyGroups;

__device__ __forceinline__ uint64_t units_of(uint64_t dst, uint64_t n) {
  return n ? ((dst + n + 15) / 16 - dst / 16) : 0;
}

__global__ void __launch_bounds__(kCopyThreads) payload_copy_kernel(const uint64_t* table, uint32_t copies) {
  using Scan = cub::BlockScan<uint64_t, kCopyThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ uint64_t s_first[kMaxCopyPieces + 1];  // the pieces' first units; [copies]: all units
  const uint64_t* const src = table;
  const uint64_t* const dst = table + copies;
  const uint64_t* const bytes = table + 2 * copies;
  uint64_t carry = 0;
  for (uint32_t base = 0; base < copies; base += kCopyThreads) {
    const uint32_t i = base + threadIdx.x;
    const uint64_t u = i < copies ? units_of(dst[i], bytes[i]) : 0;
    uint64_t at = 0, total = 0;
    Scan(scan).ExclusiveSum(u, at, total);
    if (i < copies) s_first[i] = carry + at;
    carry += total;
    __syncthreads();  // the scan's storage is reused
  }
  if (threadIdx.x == 0) s_first[copies] = carry;
  __syncthreads();
  const uint64_t units = carry;
  for (uint64_t unit = blockIdx.x * uint64_t{kCopyThreads} + threadIdx.x; unit < units;
       unit += uint64_t{gridDim.x} * kCopyThreads) {
    uint32_t lo = 0, hi = copies;  // the last piece whose first unit is at most `unit`
    while (hi - lo > 1) {
      const uint32_t mid = (lo + hi) / 2;
      if (s_first[mid] <= unit) lo = mid; else hi = mid;
    }
    const uint64_t d0 = dst[lo], n = bytes[lo];
    const uint64_t block = (d0 / 16 + (unit - s_first[lo])) * 16;  // the unit's destination block (address)
    const uint8_t* const piece = reinterpret_cast<const uint8_t*>(src[lo]);
    if (block >= d0 && block + 16 <= d0 + n) {
      const uint64_t s = reinterpret_cast<uint64_t>(piece + (block - d0));
      const unsigned r = static_cast<unsigned>(s % 16), q = r / 4, b = 8 * (r % 4);
      const uint4 v0 = *reinterpret_cast<const uint4*>(s - r);
      const uint4 v1 = r ? *reinterpret_cast<const uint4*>(s - r + 16) : v0;
      uint32_t w[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w}, o[4];
#pragma unroll
      for (unsigned k = 0; k < 4; ++k) {
        const uint32_t a = q == 0 ? w[k] : q == 1 ? w[k + 1] : q == 2 ? w[k + 2] : w[k + 3];
        const uint32_t c = q == 0 ? w[k + 1] : q == 1 ? w[k + 2] : q == 2 ? w[k + 3] : w[k + 4];
        o[k] = __funnelshift_r(a, c, b);
      }
      *reinterpret_cast<uint4*>(block) = make_uint4(o[0], o[1], o[2], o[3]);
    } else {
      for (uint64_t at = max(block, d0); at < min(block + 16, d0 + n); ++at)
        *reinterpret_cast<uint8_t*>(at) = piece[at - d0];
    }
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
  if (hand_payload_copy && copies_ <= kMaxCopyPieces) {
    const unsigned grid = resident_blocks(reinterpret_cast<const void*>(payload_copy_kernel), kCopyThreads);
    payload_copy_kernel<<<grid, kCopyThreads, 0, stream>>>(d_table_, static_cast<uint32_t>(copies_));
    CUDA_CHECK(cudaGetLastError());
    return;
  }
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
