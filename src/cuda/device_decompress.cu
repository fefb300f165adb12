// cuda/device_decompress.cu: decompression of streams in device memory
// (vlec/device.hpp). Headers travel to the host to be checked; payloads stay
// on the GPU, where each chunk is decoded and verified.
#include <algorithm>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/frame_decode.hpp"
#include "vlec/device.hpp"

namespace vlec::device {

namespace {

// Read and check the header of the frame at byte `at` of the device stream.
format::ParsedFrame read_frame(const uint8_t* d_stream, std::size_t bytes, uint64_t at, std::vector<uint8_t>& area) {
  area.resize(std::min<std::size_t>(format::kFixedHeaderBytes, bytes - at));
  CUDA_CHECK(cudaMemcpy(area.data(), d_stream + at, area.size(), cudaMemcpyDeviceToHost));
  const format::FrameHeader h = format::read_fixed_header(area.data(), area.size(), at);
  area.resize(std::min<uint64_t>(h.header_area_bytes(), bytes - at));
  CUDA_CHECK(cudaMemcpy(area.data(), d_stream + at, area.size(), cudaMemcpyDeviceToHost));
  // A Huffman frame's codes are derived on the GPU from its lengths (decode_tables_gpu.cu).
  return format::parse_frame_header(area.data(), area.size(), bytes - at, at, /*huffman_codes=*/false);
}

template <typename Visit>
void for_each_frame(const void* d_stream, std::size_t bytes, Visit&& visit) {
  SAFETY_CHECK(bytes > 0, ErrorCode::truncated_stream, "empty input is not a vlec stream");
  std::vector<uint8_t> area;
  for (uint64_t at = 0; at < bytes;) {
    const format::ParsedFrame f = read_frame(static_cast<const uint8_t*>(d_stream), bytes, at, area);
    visit(f, at);
    at += f.header.frame_bytes;
  }
}

}  // namespace

uint64_t decompressed_size(const void* d_stream, std::size_t bytes) {
  uint64_t total = 0;
  for_each_frame(d_stream, bytes, [&](const format::ParsedFrame& f, uint64_t) {
    total += f.header.elements * f.header.width;
  });
  return total;
}

std::size_t decompress_temp_bytes(const void* d_stream, std::size_t bytes) {
  std::size_t need = 0;
  for_each_frame(d_stream, bytes, [&](const format::ParsedFrame& f, uint64_t) {
    need = std::max(need, cuda::frame_decode_temp_bytes(f));
  });
  return need;
}

std::size_t decompress(const void* d_stream, std::size_t bytes, void* d_out, std::size_t capacity, void* d_temp,
                       std::size_t temp_bytes, Stream stream) {
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(d_out) % 16 == 0, "the output must be 16-byte aligned");
  std::size_t written = 0;
  for_each_frame(d_stream, bytes, [&](const format::ParsedFrame& f, uint64_t at) {
    const uint64_t n = f.header.elements * f.header.width;
    SAFETY_CHECK(n <= capacity - written, ErrorCode::output_too_small, "decompressed data needs more than the ",
                 capacity, " bytes of the output buffer");
    SAFETY_CHECK(cuda::frame_decodable(f.header), ErrorCode::unavailable, "the GPU does not decode ",
                 to_string(f.header.codec), " frames yet (frame at byte ", at, ")");
    // Frames after the first start at a multiple of 8 bytes of output only if
    // the previous frame's size allows; the kernels need 16-byte alignment.
    VLEC_REQUIRE(written % 16 == 0, "a frame's output would start misaligned (frame at byte ", at, ")");
    const uint8_t* payload = static_cast<const uint8_t*>(d_stream) + at + f.header.header_area_bytes();
    cuda::decode_frame_device(f, payload, static_cast<uint8_t*>(d_out) + written, d_temp, temp_bytes, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    cuda::check_frame_decode(f, d_temp);
    written += n;
  });
  return written;
}

}  // namespace vlec::device
