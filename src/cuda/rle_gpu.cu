// cuda/rle_gpu.cu: the host side of the GPU run-length encoders (rle_gpu.hpp):
// argument checks, strategy dispatch, and the scans over chunks that place
// every chunk's payload and runs (cub::DeviceScan on chunk_count + 1 items,
// reading the per-chunk sizes through a transform iterator, so the sizes are
// never copied and the last entry is the total).
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_scan.cuh>

#include "cuda/cuda_check.hpp"
#include "cuda/rle_common.cuh"
#include "cuda/rle_gpu.hpp"

namespace vlec::cuda {

namespace {

// Element c of the scanned sequence: align4(stored[c]) (or runs[c]), 0 past
// the end; with `skip`, align4(raw size) for a chunk the frame stores raw.
struct AlignedStored {
  const uint32_t* v;
  uint64_t n;
  bool align;
  bool skip = false;
  uint64_t elements = 0;
  uint32_t C = 1;
  unsigned w = 1;
  __host__ __device__ uint64_t operator()(uint64_t c) const {
    if (c >= n) return 0;
    if (!align) return v[c];
    if (skip) {
      const uint64_t raw = rle_detail::chunk_raw_bytes(c, elements, C, w);
      if (v[c] >= raw) return rle_detail::align4(raw);
    }
    return rle_detail::align4(v[c]);
  }
};

using CountIt = thrust::counting_iterator<uint64_t>;
using SizeIt = thrust::transform_iterator<AlignedStored, CountIt, uint64_t>;

}  // namespace

const char* to_string(RleStrategy s) {
  switch (s) {
    case RleStrategy::parle: return "parle";
    case RleStrategy::chunked: return "chunked";
  }
  return "?";
}

// The default is the strategy measured faster. On the H100 (1 GiB u8, chunks
// of 65,536; bench/results/2026-11-22-h100-rle-onepass-v5.log) the one-pass
// chunked kernel (rle_encode_chunked_onepass.cu) encodes byte runs of mean ~6
// at 967-1,002 GB/s and the sparse volume at 1.46-1.51 TB/s, against parle's
// 213-244 and 293-338 and CUB's DeviceRunLengthEncode's 383 and 421. Chunks above 65,536 elements
// take chunked's two-pass kernel (140-150 GB/s there), slower than parle, so
// parle remains their default below 2^32 elements (its run-start positions
// are 32-bit).
RleStrategy default_rle_strategy(uint64_t elements, uint32_t chunk_elements) {
  if (chunk_elements <= rle_detail::kMaxRun) return RleStrategy::chunked;
  return elements > UINT32_MAX ? RleStrategy::chunked : RleStrategy::parle;
}

std::size_t rle_payload_capacity(uint64_t elements, unsigned width, uint32_t chunk_elements) {
  if (elements == 0 || chunk_elements == 0) return 0;
  const uint64_t full = elements / chunk_elements, last = elements % chunk_elements;
  const uint64_t per_full = rle_detail::align4(rle_detail::payload_bytes(chunk_elements, width));
  return full * per_full + (last ? rle_detail::align4(rle_detail::payload_bytes(last, width)) : 0);
}

std::size_t rle_offsets_temp_bytes(uint64_t chunks) {
  std::size_t bytes = 0;
  SizeIt it(CountIt(0), AlignedStored{nullptr, chunks, true});
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, it, static_cast<uint64_t*>(nullptr),
                                           static_cast<int64_t>(chunks + 1)));
  return bytes;
}

void rle_offsets(const RleEncodeArgs& a, uint64_t chunks, void* d_temp, std::size_t temp_bytes, cudaStream_t stream) {
  std::size_t bytes = temp_bytes;
  SizeIt sizes(CountIt(0), AlignedStored{a.stored_bytes, chunks, true, a.skip_raw_chunks, a.elements,
                                         a.chunk_elements, a.width});
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_temp, bytes, sizes, a.payload_offsets,
                                           static_cast<int64_t>(chunks + 1), stream));
  bytes = temp_bytes;
  SizeIt counts(CountIt(0), AlignedStored{a.runs, chunks, false});
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_temp, bytes, counts, a.run_offsets, static_cast<int64_t>(chunks + 1),
                                           stream));
}

std::size_t rle_encode_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements, RleStrategy s) {
  VLEC_REQUIRE(width == 1 || width == 2 || width == 4 || width == 8, "element width ", width,
               " is not 1, 2, 4 or 8");
  VLEC_REQUIRE(chunk_elements >= 1, "chunk_elements must be at least 1");
  return s == RleStrategy::parle ? rle_parle_temp_bytes(elements, width, chunk_elements)
                                 : rle_chunked_temp_bytes(elements, width, chunk_elements);
}

void rle_encode(const RleEncodeArgs& a, void* d_temp, std::size_t temp_bytes, cudaStream_t stream, RleStrategy s) {
  const std::size_t need = rle_encode_temp_bytes(a.elements, a.width, a.chunk_elements, s);
  VLEC_REQUIRE(temp_bytes >= need, "rle_encode needs ", need, " bytes of temporary storage, got ", temp_bytes);
  VLEC_REQUIRE(a.runs && a.stored_bytes && a.payload_offsets && a.run_offsets,
               "rle_encode: the per-chunk outputs are required");
  VLEC_REQUIRE((a.values == nullptr) == (a.lengths == nullptr), "rle_encode: values and lengths go together");
  VLEC_REQUIRE(a.elements == 0 || a.in, "rle_encode: no input");
  const uint64_t chunks = rle_chunk_count(a.elements, a.chunk_elements);
  if (chunks == 0) {
    CUDA_CHECK(cudaMemsetAsync(a.payload_offsets, 0, sizeof(uint64_t), stream));
    CUDA_CHECK(cudaMemsetAsync(a.run_offsets, 0, sizeof(uint64_t), stream));
    return;
  }
  if (s == RleStrategy::parle)
    rle_encode_parle(a, d_temp, temp_bytes, stream);
  else
    rle_encode_chunked(a, d_temp, temp_bytes, stream);
}

}  // namespace vlec::cuda
