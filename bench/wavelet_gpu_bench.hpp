// bench/wavelet_gpu_bench.hpp: what wavelet_gpu_bench.cu (the input
// images, the decoder's figures) and wavelet_gpu_bench_compress.cu (the
// GPU writer's) share.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "vlec/wavelet.hpp"

namespace vlec::bench {

struct Input {
  std::string name;
  std::vector<uint16_t> samples;  // size x size, host order
};

// --compress-only: the CPU writer's frame, the device copy and the GPU
// writer's median, steps and timelines, without the decoder's figures or the
// writer's alternated settings (for comparing two builds in one call).
extern bool compress_only;
// Only the writer's alternated settings whose description holds this text
// (all where empty; with compress_only, none where empty).
extern std::string alternate_only;

// The GPU writer (device::wavelet_compress, device to device) on `in`:
// median after warm-up beside the device copy's `copy_ms`, its frame
// against the CPU writer's `frame`, the writer's settings alternated with
// its defaults, its steps (host clock and GPU spans, a group's own work),
// and its frame decoded again on the GPU.
void run_compress(const Input& in, const WaveletImage& im, const std::vector<uint8_t>& frame, float copy_ms,
                  int repeat, cudaStream_t stream);

// The GPU decoder of the CPU writer's `frame` (on the device at d_frame,
// decoding to `cpu_out`; its temp of `temp` bytes at d_temp; `dec_ms` its
// median with the defaults) under each of its settings, alternated with its
// defaults; medians, and whether each output is still the CPU decoder's.
void run_decode_settings(const Input& in, const WaveletImage& im, const std::vector<uint8_t>& frame,
                         const std::vector<uint8_t>& cpu_out, const uint8_t* d_frame, void* d_temp, std::size_t temp,
                         float dec_ms, int repeat, cudaStream_t stream);

}  // namespace vlec::bench
