// cuda/backend.cu: the CUDA backend behind the host-buffer API for inputs
// that the GPU holds whole (larger ones: host_stream.hpp): data is copied to
// the GPU through pinned staging, coded or decoded and verified there
// (device.hpp, cuda/frame_decode.hpp), and copied back. Device buffers and
// pinned staging come from host_staging.hpp's pool, so a run of calls pays
// for allocation and pinning once.
#include <algorithm>
#include <cstring>

#include "cuda/backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/frame_decode.hpp"
#include "cuda/host_staging.hpp"
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
  // Buffers from the pool (host_staging.hpp); copies move pinned memory.
  const std::size_t capacity = device::compress_capacity(elements, o), temp_bytes = device::compress_temp_bytes(elements, o);
  SlotBuffer<uint8_t> d_in(std::max<uint64_t>(bytes, 16)), d_frame(capacity), d_temp(temp_bytes);
  SlotBuffer<uint64_t> d_result(2);
  PinnedBuffer<uint8_t> staged(std::max<uint64_t>(bytes, 16));
  PinnedBuffer<uint64_t> result(2);
  parallel_copy(staged.get(), input, bytes, 0);
  if (bytes) CUDA_CHECK(cudaMemcpyAsync(d_in.get(), staged.get(), bytes, cudaMemcpyHostToDevice, nullptr));
  device::compress(d_in.get(), elements, d_frame.get(), capacity, d_result.get(), d_result.get() + 1, d_temp.get(),
                   temp_bytes, nullptr, o);
  CUDA_CHECK(cudaMemcpyAsync(result.get(), d_result.get(), 16, cudaMemcpyDeviceToHost, nullptr));
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
  if (result.get()[1] != ~0ull) {
    VLEC_REQUIRE(result.get()[1] != ~1ull, "code length limit ", max_code_length,
                 " is too short for the number of distinct symbols in the data");
    uint64_t v = 0;
    std::memcpy(&v, input + result.get()[1] * dtype_bytes(dtype), dtype_bytes(dtype));
    SAFETY_CHECK(false, ErrorCode::value_out_of_alphabet, "value ", v, " at element ", result.get()[1],
                 " is outside the Huffman alphabet (values must be below 65536)");
  }
  const uint64_t n = result.get()[0];
  PinnedBuffer<uint8_t> staged_frame(std::max<uint64_t>(n, 16));  // a raw frame is larger than the input
  CUDA_CHECK(cudaMemcpyAsync(staged_frame.get(), d_frame.get(), n, cudaMemcpyDeviceToHost, nullptr));
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
  return std::vector<uint8_t>(staged_frame.get(), staged_frame.get() + n);
}

void decompress_frame(const format::ParsedFrame& f, uint8_t* out) {
  const format::FrameHeader& h = f.header;
  if (h.chunks() == 0) return;
  const uint64_t payload_bytes = h.frame_bytes - h.header_area_bytes();
  const uint64_t out_bytes = h.elements * h.width;
  const std::size_t temp_bytes = frame_decode_temp_bytes(f);
  SlotBuffer<uint8_t> d_payload(payload_bytes), d_out(out_bytes), d_temp(temp_bytes);
  PinnedBuffer<uint8_t> staged(std::max(payload_bytes, out_bytes));
  parallel_copy(staged.get(), f.payload, payload_bytes, 0);
  CUDA_CHECK(cudaMemcpyAsync(d_payload.get(), staged.get(), payload_bytes, cudaMemcpyHostToDevice, nullptr));
  decode_frame_device(f, d_payload.get(), d_out.get(), d_temp.get(), temp_bytes, nullptr);
  CUDA_CHECK(cudaMemcpyAsync(staged.get(), d_out.get(), out_bytes, cudaMemcpyDeviceToHost, nullptr));
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
  check_frame_decode(f, d_temp.get());
  parallel_copy(out, staged.get(), out_bytes, 0);
}

}  // namespace vlec::cuda
