// cuda/wavelet_decode_plan.hpp: the host's plan of a wavelet frame's GPU
// decode (cuda/wavelet_decode.cu decodes from it): the frame's header area
// and every embedded frame's header area read and checked with the CPU
// reader's code, the groups' and boxes' descriptors, and the layout of the
// caller's temporary storage.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "cuda/wavelet_kernels.hpp"
#include "format/frame.hpp"
#include "vlec/device_dwt.hpp"
#include "wavelet/frame_format.hpp"

namespace vlec::cuda::wavelet_decode {

using wavelet_gpu::BoxDesc;
using wavelet_gpu::GroupDesc;

constexpr std::size_t kAlign = 256;
constexpr std::size_t kMaxAxis = std::size_t{1} << 30;  // the device transform's limit

inline std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct Layout {
  std::size_t status = 0, uploads = 0, coeffs = 0, recon = 0, dwt = 0, hash = 0, batch = 0;
  std::size_t uploads_bytes = 0;  // the UploadArena's region: descriptors, table jobs, groups, boxes
  std::vector<std::size_t> symbols, frame_temp, frame_temp_bytes;
  std::size_t dwt_bytes = 0, hash_bytes = 0, total = 0;
};

struct Plan {
  wavelet::ParsedWavelet w;  // payload is not meaningful (it stays on the device)
  bool segmented = false;
  DwtShape shape;
  uint64_t pixels = 0;
  std::vector<format::ParsedFrame> frames;  // the embedded frames' headers
  std::vector<GroupDesc> groups;             // symbols and low pointers filled in at decode time
  std::vector<BoxDesc> boxes;
  Layout layout;
};

// The decode plan of the frame at d_frame (`bytes` bytes in device memory);
// `host_frame`, if not null, is the same frame in host memory, from which the
// headers are then read without a copy or a wait.
Plan make_plan(const void* d_frame, std::size_t bytes, cudaStream_t stream, const uint8_t* host_frame = nullptr);

// Host work of every group on several threads when `work` (header-area
// bytes or codebook symbols) reaches wavelet_gpu::parallel_group_work; the
// error thrown is the lowest group's, as on one thread.
void for_each_group(std::size_t groups, uint64_t work, const std::function<void(std::size_t)>& job);

}  // namespace vlec::cuda::wavelet_decode
