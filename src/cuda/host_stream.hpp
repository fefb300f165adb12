// cuda/host_stream.hpp: frames of host data larger than the GPU holds at
// once, streamed through it in pieces (the host-buffer API's CUDA path for
// large inputs).
//
// Compression (codec huffman) reads the input twice, piece by piece: pass 1
// sums the GPU histogram of every piece, the host builds the codebook from
// the total (the CPU backend's own builder: the same bytes by construction),
// pass 2 encodes each piece's chunks on the GPU and copies their index
// entries and payload back into place. Decompression decodes the frame's
// chunks a slice at a time. Both keep two pieces in flight on two streams,
// through pinned staging buffers: while the GPU works on piece p, the host
// copies piece p + 1 into pinned memory and piece p - 1's result out of it.
// Device memory is bounded by the piece size, not by the input.
//
// The frames are byte for byte what cpu::compress_frame writes, and the
// decoder verifies every chunk as decompress_frame does.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/frame.hpp"
#include "vlec/types.hpp"

namespace vlec::cuda {

// Input bytes per piece when the caller does not choose (rounded down to
// whole chunks; a piece holds at least one chunk): 1,024 chunks of 64 KiB
// keep the GPU's blocks busy, and the pinned staging (two slots) small,
// since pinning memory costs about as much as copying it.
constexpr uint64_t kDefaultPieceBytes = uint64_t{64} << 20;

// Whether the host API should stream an input (or a frame's output) of
// `bytes` through the GPU in pieces instead of holding it whole: above four
// pieces (copies then overlap the work), or above what the GPU has free.
bool stream_in_pieces(uint64_t bytes);

// A Huffman frame of `elements` elements at `input` (host memory), written
// into `out` (host, `capacity` bytes); returns the frame's size. Same bytes and
// errors as cpu::compress_frame_into with codec huffman. `threads` host
// threads copy to and from the pinned staging buffers (0 = all).
// `piece_bytes` 0 = kDefaultPieceBytes; it is rounded down to whole chunks
// (at least one).
std::size_t compress_huffman_streamed(const uint8_t* input, uint64_t elements, DType dtype, uint32_t chunk_elements,
                                      unsigned max_code_length, unsigned threads, uint8_t* out, std::size_t capacity,
                                      uint64_t piece_bytes = 0);

// Decode a parsed frame (whole, in host memory) into `out` (host,
// elements * width bytes) a slice of chunks at a time. Same errors as
// decompress_frame (chunk numbers in messages are the frame's).
void decompress_frame_streamed(const format::ParsedFrame& frame, uint8_t* out, unsigned threads,
                               uint64_t piece_bytes = 0);

}  // namespace vlec::cuda
