// cuda/backend.hpp: what the host API needs from the CUDA backend. Declared
// for every build; a build without CUDA defines these in api/cuda_absent.cpp
// to report that no GPU can be used.
#pragma once

#include <cstdint>

#include <vector>

#include "cuda/host_stream.hpp"
#include "format/frame.hpp"
#include "wavelet/frame_format.hpp"

namespace vlec::cuda {

bool built();      // vlec was compiled with the CUDA backend
bool available();  // built, and a usable GPU (compute capability >= 7.0) is present

// Whether the GPU decoder handles this frame's codec and element type.
bool can_decode(const format::ParsedFrame& frame);

// Whether the GPU encoder writes this codec and element type.
bool can_encode(Codec codec, DType dtype);

// Compress host data into one frame on the GPU: the same bytes as
// cpu::compress_frame with the same parameters, and the same errors.
std::vector<uint8_t> compress_frame(const uint8_t* input, uint64_t elements, Codec codec, DType dtype,
                                    uint32_t chunk_elements, unsigned max_code_length);

// Decode a parsed frame on the GPU into host memory `out` (elements * width
// bytes), verifying every chunk's checksum. Same errors as the CPU decoder.
void decompress_frame(const format::ParsedFrame& frame, uint8_t* out);

// Whether the GPU decodes this (parsed and checked) wavelet frame: every
// axis below 2^30 samples (the device 5/3 transform's limit).
bool can_decode_wavelet(const wavelet::ParsedWavelet& frame);

// Decode a wavelet frame on the GPU (cuda/wavelet_decode.cu) into host
// memory `out` (frame.output_bytes() bytes). Same bytes and errors as
// wavelet::decompress on the CPU.
void decompress_wavelet(const wavelet::ParsedWavelet& frame, uint8_t* out);

// Whether the GPU writes wavelet frames of this image: every axis below 2^30
// samples (the device 5/3 transform's limit).
bool can_encode_wavelet(const WaveletImage& image);

// Write a wavelet frame of host samples on the GPU (cuda/wavelet_encode.cu):
// the same bytes and errors as wavelet::compress on the CPU with the default
// tuning.
std::vector<uint8_t> compress_wavelet(const void* samples, const WaveletImage& image, const WaveletOptions& options);

}  // namespace vlec::cuda
