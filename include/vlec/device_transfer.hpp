// vlec/device_transfer.hpp: compressing data that is on the GPU straight into
// host memory, so that only compressed bytes cross PCIe (Rutter's use case: a
// renderer's sparse volume leaving the GPU for a file or the network).
//
// The input is cut into slabs of whole chunks, one frame each; the frames,
// back to back, form one valid vlec stream (docs/FORMAT.md §2), byte for byte
// what the CPU backend writes for the same slabs. Slabs are compressed on two
// CUDA streams; as soon as a slab's size is known (an 8-byte copy), its frame
// is copied to the host on a third stream while the GPU compresses the next
// slabs, so compression and the transfer overlap. Host memory should be
// pinned (cudaMallocHost) for the copies to be asynchronous.
//
// Only available when vlec is built with CUDA (VLEC_WITH_CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "vlec/device.hpp"

namespace vlec::device {

class HostCompressor {
 public:
  // Allocates, once, the device buffers for inputs of up to `max_elements`
  // elements in `slabs` slabs (1..64), and its CUDA streams. Two slabs
  // measured best on the H100 for a 512^3 u8 sparse volume coded rle (0.36 ms
  // against 0.37 / 0.41 / 0.53 ms for 1 / 4 / 8 slabs; each slab costs a
  // frame's launches and a host wait, and compressed bytes are few:
  // bench/results/2026-11-22-h100-volume-slabs.log).
  HostCompressor(uint64_t max_elements, const CompressOptions& options, unsigned slabs = 2);
  ~HostCompressor();
  HostCompressor(const HostCompressor&) = delete;
  HostCompressor& operator=(const HostCompressor&) = delete;

  // Host bytes compress() may write for `max_elements` elements.
  std::size_t host_capacity() const;
  unsigned slabs() const;
  // Elements per slab (a whole number of chunks); slab k is its own frame.
  uint64_t slab_elements() const;

  // Compresses `elements` elements at d_in (device, 16-byte aligned) into
  // h_out and returns the stream's size once it is all in host memory.
  // Throws vlec::Error as vlec::compress does (value outside the alphabet,
  // length limit too short, output too small).
  std::size_t compress(const void* d_in, uint64_t elements, void* h_out, std::size_t capacity);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace vlec::device
