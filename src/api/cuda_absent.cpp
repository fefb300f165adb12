// api/cuda_absent.cpp: the CUDA backend's entry points in a build without
// CUDA. They report the backend as absent, so Backend::automatic uses the CPU
// and Backend::cuda fails with ErrorCode::unavailable.
#ifndef VLEC_WITH_CUDA

#include "common/safety.hpp"
#include "cuda/backend.hpp"

namespace vlec::cuda {

bool built() { return false; }
bool available() { return false; }
bool can_decode(const format::ParsedFrame&) { return false; }
bool can_encode(Codec, DType) { return false; }
std::vector<uint8_t> compress_frame(const uint8_t*, uint64_t, Codec, DType, uint32_t, unsigned) {
  SAFETY_CHECK(false, ErrorCode::unavailable, "vlec was built without CUDA");
  return {};
}
void decompress_frame(const format::ParsedFrame&, uint8_t*) {
  SAFETY_CHECK(false, ErrorCode::unavailable, "vlec was built without CUDA");
}
bool stream_in_pieces(uint64_t) { return false; }
std::size_t compress_huffman_streamed(const uint8_t*, uint64_t, DType, uint32_t, unsigned, unsigned, uint8_t*,
                                      std::size_t, uint64_t) {
  SAFETY_CHECK(false, ErrorCode::unavailable, "vlec was built without CUDA");
  return 0;
}
void decompress_frame_streamed(const format::ParsedFrame&, uint8_t*, unsigned, uint64_t) {
  SAFETY_CHECK(false, ErrorCode::unavailable, "vlec was built without CUDA");
}
bool can_decode_wavelet(const wavelet::ParsedWavelet&) { return false; }
void decompress_wavelet(const wavelet::ParsedWavelet&, uint8_t*) {
  SAFETY_CHECK(false, ErrorCode::unavailable, "vlec was built without CUDA");
}
bool can_encode_wavelet(const WaveletImage&) { return false; }
std::vector<uint8_t> compress_wavelet(const void*, const WaveletImage&, const WaveletOptions&) {
  SAFETY_CHECK(false, ErrorCode::unavailable, "vlec was built without CUDA");
  return {};
}

}  // namespace vlec::cuda

#endif
