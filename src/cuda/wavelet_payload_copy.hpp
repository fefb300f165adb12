// cuda/wavelet_payload_copy.hpp: the GPU wavelet writer's payload copies
// (every group's embedded frame and low bits into the output, after the
// header area) enqueued before the host knows the frames' sizes.
//
// Why: the payload layout is a prefix sum of sizes the device already holds
// (frame bytes, then low bits, group after group: wavelet::finish_header),
// and the header area's size does not depend on them. So one small kernel
// writes the batched copy's table from the sizes on the device, and the
// copy (cub::DeviceMemcpy::Batched) runs on a side stream while the host
// waits for the sizes and writes the header area, instead of after both.
// The host still lays the payload out itself, with the writer's code, for
// the header; the kernel only places the copies the same way.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "wavelet/frame_format.hpp"

namespace vlec::cuda::wavelet_gpu {

// Groups the early copies take (the plan rides in the kernel's parameters);
// frames with more take the copies after the wait, as before.
constexpr std::size_t kEarlyCopyGroups = 256;

struct PayloadCopyPlan {
  uint32_t groups = 0;
  uint32_t copies = 0;          // pieces: a frame per group, and low bits where a group has them
  uint64_t header_bytes = 0;    // the header area's size: where the payload starts
  uint64_t capacity = 0;        // the output's size in bytes
  uint8_t* out = nullptr;       // device: the frame being written
  const uint64_t* sizes = nullptr;  // device: [2g] group g's frame bytes, [2g + 1] its coder's status (~0 = done)
  uint64_t* table = nullptr;    // device: sources [copies], destinations [copies], bytes [copies]
  const uint8_t* frame_src[kEarlyCopyGroups];
  const uint8_t* low_src[kEarlyCopyGroups];
  uint64_t low_bytes[kEarlyCopyGroups];
  uint32_t piece[kEarlyCopyGroups];  // index of group g's frame piece (its low bits follow it)
};

// Whether the payload's pieces are copied by vlec's own kernel (one launch:
// 16-byte stores, each from the two aligned source vectors around its bytes;
// the default) or by cub::DeviceMemcpy::Batched (three launches). The
// benchmark compares. Not thread-safe.
extern bool hand_payload_copy;

// Writes plan.table on `stream`: every piece's source, destination and size
// (all sizes 0 where a coder failed or the frame would not fit `capacity`:
// the host then reports the error after its wait, and nothing was written).
void enqueue_payload_table(const PayloadCopyPlan& plan, cudaStream_t stream);

// The payload's pieces, a frame a group and then its low bits if it has
// any, and their one batched copy (cub::DeviceMemcpy::Batched: 2G
// cudaMemcpyAsync calls cost the host ~0.2 ms at 8192^2), its table at
// d_table (sources, destinations, sizes) and its temp in the writer's temp.
class PayloadCopies {
 public:
  struct Group {
    const uint8_t* frame;  // device: its embedded frame
    const uint8_t* low;    // device: its low bits
    uint64_t low_bytes;
  };
  PayloadCopies(std::vector<Group> groups, uint64_t* d_table, void* d_copy_temp, std::size_t copy_temp_bytes);
  std::size_t copies() const { return copies_; }
  // Before the host knows the frames' sizes: the table from the sizes on the
  // device (enqueue_payload_table), then the copy, on `stream`.
  void enqueue_early(uint64_t header_bytes, uint64_t capacity, uint8_t* out, const uint64_t* d_sizes,
                     cudaStream_t stream) const;
  // After: the table as the header area lays the payload out (group g's
  // frame_bytes at its frame_offset, its low bits at its bits_offset, both
  // from `payload`), uploaded from pageable memory (the stream is empty after
  // the writer's last wait, so staging it costs no wait), then the copy.
  void enqueue_late(uint8_t* payload, const std::vector<wavelet::Group>& layout, cudaStream_t stream) const;

 private:
  void copy(cudaStream_t stream) const;
  std::vector<Group> groups_;
  std::vector<uint32_t> piece_;  // group g's frame piece (its low bits follow)
  std::size_t copies_ = 0;
  uint64_t* d_table_;
  void* d_copy_temp_;
  std::size_t copy_temp_bytes_;
};

}  // namespace vlec::cuda::wavelet_gpu
