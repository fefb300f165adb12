// vlec/device_wavelet.hpp: writing a wavelet frame (docs/FORMAT.md §10) of
// samples that are already in GPU memory, and decoding one that is, CUB-style.
//
// Compression (wavelet_compress below) writes byte for byte the frame that
// vlec::wavelet_compress writes on the CPU for the same samples and options.
// The data stays on the GPU (planes, RCT, forward 5/3, statistics, symbols
// and low bits, every group's embedded frame by device::compress, the
// samples checksum); the writer's decisions (groups, shifts, codecs) are made
// on the host with the CPU writer's code from small statistics that the
// GPU counted: per subband the largest value and the histogram at k0 (for
// subbands of at most 65,536 coefficients, the coefficients themselves), and
// per group the number of symbol runs. So the call waits for the stream
// (cudaStreamSynchronize) 4 times to read them (a few KB to a few MB), plus
// once for each group whose symbols form long runs (at most one run per 3
// symbols: sparse data), whose symbols are copied to the host for the
// CPU's codec choice. It returns the frame's size once the last wait is
// done; the copies that assemble the frame in d_frame are then enqueued on
// the stream (read the frame after the stream, as usual). Options:
// WaveletOptions as for the CPU writer (backend and threads aside: threads
// is the host threads for the decisions).
//
// Decompression:
//
// The caller owns every buffer: it asks wavelet_decompress_temp_bytes() how
// much temporary storage a frame needs, allocates it once and passes it in;
// nothing is allocated inside and every copy and kernel is ordered on the
// caller's stream (the groups' embedded frames decode side by side on a few
// streams that vlec keeps per device, forked from and joined back to the
// caller's stream with events, so the ordering is the same). To plan, the
// host reads the frame's header area and the header area of each group's
// embedded frame (codebooks and chunk index): two or three batched copies on
// the caller's stream, each waited for (cudaStreamSynchronize), and checks
// them with the CPU reader's code
// (wavelet/frame_format.hpp, format/frame.hpp). Everything else stays on the
// GPU: every group's embedded frame is decoded and checked there (codes,
// sizes, padding; the chunks' own checksums only in a second decode of a
// frame that fails a check, since the samples checksum covers every symbol
// of one that passes), the symbols and low bits are joined, unzigzagged and
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

// Bytes the frame buffer of wavelet_compress() needs: vlec::wavelet_compress_bound.
std::size_t wavelet_compress_capacity(const WaveletImage& image, std::size_t prefix_bytes = kWaveletMaxPrefixBytes);
// Temporary storage of wavelet_compress() for this image and options; it
// depends on the shape, planes, type and levels only (not on the samples).
std::size_t wavelet_compress_temp_bytes(const WaveletImage& image, const WaveletOptions& options = {});

// Compress image.samples() samples at d_samples (device memory, 16-byte
// aligned, interleaved as for vlec::wavelet_compress, host byte order) into
// one wavelet frame at d_frame (8-byte aligned, `capacity` bytes). Returns
// the frame's size (see above for when its bytes are in place). Throws
// output_too_small when the frame needs more than `capacity`, unavailable
// for an axis of 2^30 samples or more, and the CPU writer's
// invalid_argument for bad options.
std::size_t wavelet_compress(const void* d_samples, const WaveletImage& image, void* d_frame, std::size_t capacity,
                             void* d_temp, std::size_t temp_bytes, Stream stream, const WaveletOptions& options = {});

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
