// cuda/backend.cu: the CUDA backend behind the host-buffer API: a frame is
// copied to the GPU, decoded and verified there (cuda/frame_decode.hpp),
// and copied back.
#include "cuda/backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/frame_decode.hpp"

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
