// cuda/device_compress.hpp: the device compression pipeline (vlec/device.hpp)
// for callers that know a bound on their symbols, or their histogram, or
// want the codebook built before the data is ready (the wavelet writer).
//
// Why: the GPU codebook builder's kernel is chosen by the alphabet's
// capacity, which device::compress takes from the element type (65,536 for
// u16), because the data's own alphabet is known only on the device. Its
// cluster kernel for 65,536 symbols took 132 us for a wavelet group whose
// symbols all lie below a few thousand; the single-block kernels for up to
// 256, 1,024 and 8,192 symbols take a fraction of that. The frame is the
// same: the codebook depends only on the counts of the symbols present.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "cuda/codebook_gpu.hpp"
#include "cuda/frame_device.hpp"
#include "vlec/device.hpp"

namespace vlec::cuda {

// device::compress, where every element is below `alphabet` (1 <= alphabet;
// above the type's alphabet it is the type's). A precondition the caller
// guarantees (the wavelet writer knows each group's largest symbol from its
// statistics): a symbol at or above it has no code, and its frame is not
// valid. Temp storage: device::compress_temp_bytes(elements, o) suffices.
void compress_bounded_alphabet(const void* d_in, uint64_t elements, void* d_frame, std::size_t frame_capacity,
                               uint64_t* d_frame_bytes, uint64_t* d_error, void* d_temp, std::size_t temp_bytes,
                               cudaStream_t stream, const device::CompressOptions& o, uint32_t alphabet);

// compress_bounded_alphabet for a Huffman frame whose histogram the caller
// already holds: d_hist[s], s < alphabet, counts symbol s (the wavelet writer
// derives each group's from its statistics, cuda/wavelet_shift_gpu.hpp).
// No pass over the data counts it again, and no element is checked against
// the alphabet: the counts must be the data's.
void compress_with_histogram(const void* d_in, uint64_t elements, const uint64_t* d_hist, void* d_frame,
                             std::size_t frame_capacity, uint64_t* d_frame_bytes, uint64_t* d_error, void* d_temp,
                             std::size_t temp_bytes, cudaStream_t stream, const device::CompressOptions& o,
                             uint32_t alphabet);

// compress_with_histogram in two calls on one stream and one temp: the
// codebook (it needs only the histogram), then the frame. The wavelet writer
// builds its groups' codebooks while its symbols kernel still runs.
void build_codebook_from_histogram(const uint64_t* d_hist, uint64_t elements, void* d_temp, std::size_t temp_bytes,
                                   cudaStream_t stream, const device::CompressOptions& o, uint32_t alphabet);
// build_codebook_from_histogram's codebook as a job of build_codebooks_device
// (codebook_gpu.hpp: many codebooks in a few launches from one host thread);
// none where its capacity is above a batch's.
std::optional<CodebookJob> codebook_job_from_histogram(const uint64_t* d_hist, uint64_t elements, void* d_temp,
                                                       std::size_t temp_bytes, const device::CompressOptions& o,
                                                       uint32_t alphabet);
// `book`, if given, is the codebook to code with (built elsewhere for the
// same histogram and alphabet: the wavelet writer's candidates' codebooks,
// cuda/wavelet_candidate_books.hpp) instead of the one in the temp.
void encode_with_built_codebook(const void* d_in, uint64_t elements, void* d_frame, std::size_t frame_capacity,
                                uint64_t* d_frame_bytes, uint64_t* d_error, void* d_temp, std::size_t temp_bytes,
                                cudaStream_t stream, const device::CompressOptions& o, uint32_t alphabet,
                                const DeviceCodebookOut* book = nullptr);

// encode_with_built_codebook's frame as an item of encode_frames_device
// (frame_device.hpp), which writes many such frames in a few launches; none
// where the batch cannot take it (an encoder other than warp, or elements
// wider than u16).
std::optional<FrameBatchItem> built_codebook_frame(const void* d_in, uint64_t elements, void* d_frame,
                                                   std::size_t frame_capacity, uint64_t* d_frame_bytes,
                                                   uint64_t* d_error, void* d_temp, std::size_t temp_bytes,
                                                   const device::CompressOptions& o, uint32_t alphabet,
                                                   const DeviceCodebookOut* book = nullptr);

}  // namespace vlec::cuda
