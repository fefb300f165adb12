// cuda/histogram_gpu.cu: GPU histograms of u8/u16/u32 symbols (see
// histogram_gpu.hpp), after Gómez-Luna et al. as used by Tian et al. §IV-A:
// per-block histograms replicated in shared memory, merged into global memory.
//
// The replicated_shared kernels, and why they are fast, are in
// histogram_replicated.cuh; the constants and input helpers every method
// shares in histogram_common.cuh. This file holds the global_atomic and cub
// methods (the fallbacks, and references for the benchmark), the choice of
// `automatic`, and the host side: device limits, temporary storage, launches.
#include "cuda/histogram_gpu.hpp"

#include <cub/device/device_histogram.cuh>

#include <algorithm>
#include <mutex>

#include "cuda/cuda_check.hpp"
#include "cuda/histogram_common.cuh"
#include "cuda/histogram_replicated.cuh"

namespace vlec::cuda {
namespace {

// ---- the one place `automatic` is decided (set from bench/histogram_bench.cu on an H100)
constexpr HistogramMethod kAutomaticU8 = HistogramMethod::replicated_shared;
constexpr HistogramMethod kAutomaticU16 = HistogramMethod::replicated_shared;
constexpr HistogramMethod kAutomaticU32 = HistogramMethod::replicated_shared;

// ---- kernels

__global__ void init_kernel(uint64_t* hist, uint64_t* bad) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < kHistogramBins; i += gridDim.x * blockDim.x) hist[i] = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) *bad = kNoBadIndex;
}

// global_atomic: 32-bit global atomics into slice blockIdx % slices.
template <typename T>
__global__ void global_atomic_kernel(const T* in, Split s, uint64_t index_base, uint32_t* slices, uint32_t nslices,
                                     uint32_t alphabet, uint64_t* d_bad) {
  uint32_t* slice = slices + uint64_t{blockIdx.x % nslices} * alphabet;
  uint64_t my_bad = kNoBadIndex;
  visit_rest(in, s, 0, [&](uint32_t v, uint64_t i) {
    if (sizeof(T) < 4 || v < kHistogramBins) atomicAdd(slice + v, 1u);
    else my_bad = min(my_bad, index_base + i);
  });
  report_bad(d_bad, my_bad);
}

// hist[b] += sum of the slices' counters of bin b; the slices are zeroed.
__global__ void add_slices_kernel(uint32_t* slices, uint32_t nslices, uint32_t alphabet, uint64_t* hist) {
  for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b < alphabet; b += gridDim.x * blockDim.x) {
    uint64_t sum = 0;
    for (uint32_t k = 0; k < nslices; ++k) {
      sum += slices[uint64_t{k} * alphabet + b];
      slices[uint64_t{k} * alphabet + b] = 0;
    }
    hist[b] += sum;
  }
}

// Only the first out-of-alphabet index of u32 input (for the cub method).
__global__ void find_bad_kernel(const uint32_t* in, Split s, uint64_t* d_bad) {
  uint64_t my_bad = kNoBadIndex;
  visit_rest(in, s, 0, [&](uint32_t v, uint64_t i) {
    if (v >= kHistogramBins) my_bad = min(my_bad, i);
  });
  report_bad(d_bad, my_bad);
}

// ---- host side

struct DeviceInfo {
  bool ready = false;
  int sms = 0, u8_blocks = 0, wide_blocks = 0;  // resident blocks per SM; wide: 0 without 224 KiB per block
};

const DeviceInfo& device_info() {
  static std::mutex mutex;
  static DeviceInfo info[64];
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  VLEC_REQUIRE(dev >= 0 && dev < 64, "device number ", dev, " out of range");
  std::lock_guard<std::mutex> lock(mutex);
  DeviceInfo& d = info[dev];
  if (!d.ready) {
    CUDA_CHECK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev));
    // Streaming loads do not need L1: give the SM all the shared memory it can have.
    CUDA_CHECK(cudaFuncSetAttribute(replicated_u8_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&d.u8_blocks, replicated_u8_kernel, kU8Threads, 0));
    int optin = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (static_cast<std::size_t>(optin) >= kWideSmem) {
      for (const void* k : {reinterpret_cast<const void*>(replicated_wide_kernel<uint16_t>),
                            reinterpret_cast<const void*>(replicated_wide_kernel<uint32_t>)})
        CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kWideSmem)));
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&d.wide_blocks, replicated_wide_kernel<uint16_t>,
                                                               kWideThreads, kWideSmem));
    }
    d.ready = true;
  }
  return d;
}

// The method that runs: `automatic` resolved, and replicated_shared for u16/u32
// replaced by global_atomic on a GPU without 224 KiB of shared memory per block.
HistogramMethod effective_method(DType t, HistogramMethod m) {
  m = resolve_histogram_method(t, m);
  if (m == HistogramMethod::replicated_shared && t != DType::u8 && device_info().wide_blocks == 0)
    m = HistogramMethod::global_atomic;
  return m;
}

std::size_t align256(std::size_t b) { return (b + 255) / 256 * 256; }

// f(T{}) with T the element type of t.
template <typename F>
decltype(auto) with_type(DType t, F&& f) {
  if (t == DType::u8) return f(uint8_t{});
  if (t == DType::u16) return f(uint16_t{});
  return f(uint32_t{});
}

// CUB's even-bin histogram of n elements: levels 0, 1, ..., alphabet into 32-bit counts.
template <typename T>
cudaError_t cub_histogram(void* temp, std::size_t& bytes, const T* in, unsigned* counts, uint64_t n,
                          cudaStream_t stream) {
  const int bins = sizeof(T) == 1 ? 256 : static_cast<int>(kHistogramBins);
  return cub::DeviceHistogram::HistogramEven(temp, bytes, in, counts, bins + 1, 0, bins, static_cast<int>(n), stream);
}

std::size_t temp_bytes_for(uint64_t elements, DType t, HistogramMethod m) {
  if (m == HistogramMethod::global_atomic)
    return std::size_t{t == DType::u8 ? kSlicesU8 : kSlicesWide} * alphabet_of(t) * 4;
  if (m != HistogramMethod::cub || elements == 0) return 0;
  std::size_t b = 0;
  for (uint64_t n : {std::min(elements, kCubPieceElements), elements % kCubPieceElements}) {  // full and last piece
    std::size_t piece = 0;
    if (n) with_type(t, [&](auto tag) {
      CUDA_CHECK(cub_histogram<decltype(tag)>(nullptr, piece, nullptr, nullptr, n, nullptr));
    });
    b = std::max(b, piece);
  }
  return align256(std::size_t{alphabet_of(t)} * 4) + align256(b);
}

template <typename F>
void for_each_launch(uint64_t elements, uint64_t max_elements, F&& f) {
  for (uint64_t off = 0; off < elements; off += max_elements) f(off, std::min(max_elements, elements - off));
}

unsigned grid_for(uint64_t work_units, int blocks_per_sm) {
  const uint64_t cap = uint64_t(std::max(1, device_info().sms)) * std::max(1, blocks_per_sm);
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min(cap, work_units)));
}

// Enqueues method m (resolved) on `elements` > 0 elements at `in`, after init_kernel.
template <typename T>
void launch(const T* in, uint64_t elements, HistogramMethod m, uint64_t* d_hist, uint64_t* d_bad, void* d_temp,
            std::size_t temp_bytes, cudaStream_t stream) {
  const uint32_t alphabet = sizeof(T) == 1 ? 256u : kHistogramBins;
  if (m == HistogramMethod::replicated_shared) {
    if constexpr (sizeof(T) == 1) {
      for_each_launch(elements, kU8LaunchElements, [&](uint64_t off, uint64_t len) {
        const Split s = split_input(in + off, len, 1);
        const unsigned grid = grid_for(s.nvec / (kU8Threads * kU8Unroll), device_info().u8_blocks);
        replicated_u8_kernel<<<grid, kU8Threads, 0, stream>>>(in + off, s, d_hist);
        CUDA_CHECK(cudaGetLastError());
      });
    } else {
      const Split s = split_input(in, elements, sizeof(T));
      const unsigned grid = grid_for(s.nvec / (kWideThreads * kWideUnroll), device_info().wide_blocks);
      replicated_wide_kernel<T><<<grid, kWideThreads, kWideSmem, stream>>>(in, s, d_hist, d_bad);
      CUDA_CHECK(cudaGetLastError());
    }
  } else if (m == HistogramMethod::global_atomic) {
    const uint32_t nslices = sizeof(T) == 1 ? kSlicesU8 : kSlicesWide;
    uint32_t* slices = static_cast<uint32_t*>(d_temp);
    CUDA_CHECK(cudaMemsetAsync(slices, 0, temp_bytes, stream));
    for_each_launch(elements, kSliceLaunchElements, [&](uint64_t off, uint64_t len) {
      const Split s = split_input(in + off, len, sizeof(T));
      global_atomic_kernel<T><<<grid_for((s.nvec + 255) / 256, 8), 256, 0, stream>>>(in + off, s, off, slices,
                                                                                    nslices, alphabet, d_bad);
      CUDA_CHECK(cudaGetLastError());
      add_slices_kernel<<<(alphabet + 255) / 256, 256, 0, stream>>>(slices, nslices, alphabet, d_hist);
      CUDA_CHECK(cudaGetLastError());
    });
  } else {  // cub
    unsigned* counts = static_cast<unsigned*>(d_temp);
    const std::size_t counts_bytes = align256(std::size_t{alphabet} * 4);
    for_each_launch(elements, kCubPieceElements, [&](uint64_t off, uint64_t len) {
      std::size_t size = temp_bytes - counts_bytes;
      CUDA_CHECK(cub_histogram(static_cast<char*>(d_temp) + counts_bytes, size, in + off, counts, len, stream));
      add_slices_kernel<<<(alphabet + 255) / 256, 256, 0, stream>>>(counts, 1, alphabet, d_hist);
      CUDA_CHECK(cudaGetLastError());
    });
    if constexpr (sizeof(T) == 4) {  // CUB skips values >= 65,536 silently: find the first one
      const Split s = split_input(in, elements, 4);
      find_bad_kernel<<<grid_for((s.nvec + 255) / 256, 8), 256, 0, stream>>>(in, s, d_bad);
      CUDA_CHECK(cudaGetLastError());
    }
  }
}

}  // namespace

const char* to_string(HistogramMethod m) {
  static const char* const kNames[] = {"automatic", "replicated_shared", "global_atomic", "cub"};
  return static_cast<unsigned>(m) < 4 ? kNames[static_cast<unsigned>(m)] : "?";
}

HistogramMethod resolve_histogram_method(DType t, HistogramMethod m) {
  if (m != HistogramMethod::automatic) return m;
  return t == DType::u8 ? kAutomaticU8 : t == DType::u16 ? kAutomaticU16 : kAutomaticU32;
}

std::size_t histogram_temp_bytes(uint64_t elements, DType t, HistogramMethod m) {
  VLEC_REQUIRE(t == DType::u8 || t == DType::u16 || t == DType::u32,
               "the GPU histogram takes u8, u16 or u32 elements, not ", to_string(t));
  return temp_bytes_for(elements, t, effective_method(t, m));
}

void histogram_device(const void* d_in, uint64_t elements, DType t, uint64_t* d_hist, uint64_t* d_bad_index,
                      void* d_temp, std::size_t temp_bytes, cudaStream_t stream, HistogramMethod m) {
  VLEC_REQUIRE(t == DType::u8 || t == DType::u16 || t == DType::u32,
               "the GPU histogram takes u8, u16 or u32 elements, not ", to_string(t));
  const unsigned width = static_cast<unsigned>(dtype_bytes(t));
  VLEC_REQUIRE(d_hist && d_bad_index && reinterpret_cast<uintptr_t>(d_hist) % 8 == 0 &&
                   reinterpret_cast<uintptr_t>(d_bad_index) % 8 == 0,
               "histogram_device needs d_hist and d_bad_index, 8-byte aligned");
  VLEC_REQUIRE(elements == 0 || d_in, "histogram_device: null input with ", elements, " elements");
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(d_in) % width == 0, "histogram_device: input not aligned to its ",
               width, "-byte elements");
  m = effective_method(t, m);
  const std::size_t need = temp_bytes_for(elements, t, m);
  VLEC_REQUIRE(temp_bytes >= need && (need == 0 || d_temp), "histogram_device: ", need,
               " bytes of temporary storage needed, ", temp_bytes, " given");

  init_kernel<<<32, 256, 0, stream>>>(d_hist, d_bad_index);
  CUDA_CHECK(cudaGetLastError());
  if (elements == 0) return;
  with_type(t, [&](auto tag) {
    using T = decltype(tag);
    launch(static_cast<const T*>(d_in), elements, m, d_hist, d_bad_index, d_temp, need, stream);
  });
}

}  // namespace vlec::cuda
