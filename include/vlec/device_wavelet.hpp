// vlec/device_wavelet.hpp: decoding a wavelet frame (docs/FORMAT.md §10)
// that is already in GPU memory, CUB-style.
//
// The caller owns every buffer: it asks wavelet_decompress_temp_bytes() how
// much temporary storage a frame needs, allocates it once and passes it in;
// nothing is allocated inside and every copy and kernel is ordered on the
// caller's stream (the groups' embedded frames decode side by side on a few
// streams that vlec keeps per device, forked from and joined back to the
// caller's stream with events, so the ordering is the same). To plan, the
// host reads the frame's header area and the header area of each group's
// embedded frame (codebooks and chunk index): 2 + 2 G small copies on the
// caller's stream, each waited for (cudaStreamSynchronize), and checks them
// with the CPU reader's code
// (wavelet/frame_format.hpp, format/frame.hpp). Everything else stays on the
// GPU: every group's embedded frame is decoded and verified there (chunk
// checksums included), the symbols and low bits are joined, unzigzagged and
// scattered to the subbands of each plane, the planes go through the inverse
// 5/3 transform (vlec/device_dwt.hpp), the inverse colour transform, the
// range check, interleaving and byte order, and the samples checksum is
// computed; the call then waits for the stream once more to read the error
// words, so that it returns only what was coded, or throws the vlec::Error
// (code and meaning) that the CPU decoder throws for the same frame.
//
// Only available when vlec is built with CUDA (VLEC_WITH_CUDA).
#pragma once

#include <cstddef>
#include <cstdint>

#include "vlec/device.hpp"
#include "vlec/wavelet.hpp"

namespace vlec::device {

// d_frame (device memory, 8-byte aligned) holds `bytes` bytes whose first
// frame must be a wavelet frame. Each of these reads and checks its headers.

// Shape of the frame's image.
WaveletImage wavelet_image(const void* d_frame, std::size_t bytes);
// Its decompressed size: container prefix plus samples.
uint64_t wavelet_decompressed_size(const void* d_frame, std::size_t bytes);
std::size_t wavelet_decompress_temp_bytes(const void* d_frame, std::size_t bytes);

// Decode the first frame into d_out (16-byte aligned, `capacity` bytes): the
// container prefix, then the samples, as vlec::decompress() writes them.
// Returns the bytes written, once the stream has completed the work.
std::size_t wavelet_decompress(const void* d_frame, std::size_t bytes, void* d_out, std::size_t capacity,
                               void* d_temp, std::size_t temp_bytes, Stream stream);

}  // namespace vlec::device
