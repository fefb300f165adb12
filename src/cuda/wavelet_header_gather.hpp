// cuda/wavelet_header_gather.hpp: the GPU wavelet decoder's plan reads the
// headers it needs in one round trip. A kernel copies the frame's first
// 4 KiB (its fixed and wavelet headers and the group table of most frames)
// and every group's embedded header area (sized from that frame's own fixed
// header) straight into pinned host memory, mapped into the device's address
// space; the host waits once. The plan had read the first 4 KiB, waited,
// parsed the group table, then read the embedded headers with a batch of
// copies and waited again (11 + 27 us on the H100 machine for the MR slice
// at 8192^2).
//
// The kernel only copies: it reads the frame's fields to find the pieces,
// every read bounded by the frame's size, and the host checks everything
// with the CPU reader's code as before. A piece whose place in the frame is
// not the one the host's parse gives (a damaged frame) is read again by the
// host, so what the host parses never depends on the kernel's reading.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/host_staging.hpp"

namespace vlec::cuda::wavelet_decode {

struct GatheredHeaders {
  // The frame's first top_bytes bytes (min(frame size, 4 KiB)).
  const uint8_t* top = nullptr;
  std::size_t top_bytes = 0;
  // Group g's piece: the bytes from frame offset src (its embedded frame's
  // start, as the kernel read the group table), `bytes` of them at `data`;
  // empty where the kernel found no group table it could follow (too many
  // groups, a table or frame start outside the frame).
  struct Piece {
    uint64_t src = 0;
    std::size_t bytes = 0;
    const uint8_t* data = nullptr;
  };
  std::vector<Piece> pieces;
  PinnedBuffer<uint8_t> buffer;
};

// Enqueue the gather on `stream` (after the work before it) and wait for it.
// Returns false, having enqueued nothing, where the pinned buffer cannot be
// addressed from the device: the caller then reads with copies.
bool gather_headers(const uint8_t* d_frame, std::size_t bytes, cudaStream_t stream, GatheredHeaders& out);

}  // namespace vlec::cuda::wavelet_decode
