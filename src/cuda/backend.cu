// cuda/backend.cu: the CUDA backend behind the host-buffer API: a frame is
// copied to the GPU, decoded and verified there (cuda/frame_decode.hpp),
// and copied back.
#include <algorithm>
#include <cstring>

#include "cuda/backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/frame_decode.hpp"
#include "vlec/device.hpp"

namespace vlec::cuda {

bool built() { return true; }

bool available() {
  static const bool ok = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();  // clear the sticky "no device" error
      return false;
    }
    cudaDeviceProp prop{};
    return cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.major >= 7;
  }();
  return ok;
}

bool can_decode(const format::ParsedFrame& f) { return frame_decodable(f.header); }

bool can_encode(Codec codec, DType dtype) {
  return codec == Codec::raw || codec == Codec::rle || codec == Codec::rle_huffman || (codec == Codec::huffman && dtype != DType::u64);
}

std::vector<uint8_t> compress_frame(const uint8_t* input, uint64_t elements, Codec codec, DType dtype,
                                    uint32_t chunk_elements, unsigned max_code_length) {
  device::CompressOptions o;
  o.codec = codec;
  o.dtype = dtype;
  o.chunk_elements = chunk_elements;
  o.max_code_length = max_code_length;
  const uint64_t bytes = elements * dtype_bytes(dtype);
  DeviceBuffer<uint8_t> d_in(std::max<uint64_t>(bytes, 16)), d_frame(device::compress_capacity(elements, o)),
      d_temp(device::compress_temp_bytes(elements, o));
  DeviceBuffer<uint64_t> d_result(2);
  if (bytes) CUDA_CHECK(cudaMemcpy(d_in.get(), input, bytes, cudaMemcpyHostToDevice));
  device::compress(d_in.get(), elements, d_frame.get(), d_frame.size(), d_result.get(), d_result.get() + 1,
                   d_temp.get(), d_temp.size(), nullptr, o);
  uint64_t result[2];
  CUDA_CHECK(cudaMemcpy(result, d_result.get(), sizeof result, cudaMemcpyDeviceToHost));
  if (result[1] != ~0ull) {
    VLEC_REQUIRE(result[1] != ~1ull, "code length limit ", max_code_length,
                 " is too short for the number of distinct symbols in the data");
    uint64_t v = 0;
    std::memcpy(&v, input + result[1] * dtype_bytes(dtype), dtype_bytes(dtype));
    SAFETY_CHECK(false, ErrorCode::value_out_of_alphabet, "value ", v, " at element ", result[1],
                 " is outside the Huffman alphabet (values must be below 65536)");
  }
  std::vector<uint8_t> frame(result[0]);
  CUDA_CHECK(cudaMemcpy(frame.data(), d_frame.get(), frame.size(), cudaMemcpyDeviceToHost));
  return frame;
}

void decompress_frame(const format::ParsedFrame& f, uint8_t* out) {
  const format::FrameHeader& h = f.header;
  if (h.chunks() == 0) return;
  const uint64_t payload_bytes = h.frame_bytes - h.header_area_bytes();
  const uint64_t out_bytes = h.elements * h.width;
  DeviceBuffer<uint8_t> d_payload(payload_bytes), d_out(out_bytes), d_temp(frame_decode_temp_bytes(f));
  CUDA_CHECK(cudaMemcpy(d_payload.get(), f.payload, payload_bytes, cudaMemcpyHostToDevice));
  decode_frame_device(f, d_payload.get(), d_out.get(), d_temp.get(), d_temp.size(), 0);
  CUDA_CHECK(cudaMemcpy(out, d_out.get(), out_bytes, cudaMemcpyDeviceToHost));
  check_frame_decode(f, d_temp.get());
}

}  // namespace vlec::cuda
