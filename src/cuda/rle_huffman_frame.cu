// cuda/rle_huffman_frame.cu: the chunk step of `rle+huffman` frames on the GPU
// (docs/FORMAT.md §6), device-resident from the input to the frame:
//   1. the RLE encoder (rle_gpu.hpp) writes every chunk's runs in the streams
//      form: values and length codes, chunk c's at run_offsets[c];
//   2. histograms of the value symbols (u8 values, or the u16 halves of wider
//      values) and of the length codes, over all chunks, sized by the run
//      total that the RLE scan left on the device;
//   3. the two codebooks, built by the GPU builder (the CPU's rule, §4.2/4.3);
//   4. per chunk and part, one warp sizes the Huffman part (§5), by replaying
//      the refill rule on the code lengths; a scan of the chunks' final sizes
//      (coded only when strictly smaller than raw) places them;
//   5. per kept chunk and part, one warp writes the words into their slots,
//      and the value_words word; then rle_frame.cu's entries pass (raw copies,
//      XXH3 of every chunk, index entries).
// Why so: every step reads the runs, not the elements, and the steps never
// wait for the host. The per-part encoder is a warp walking the steps of the
// §5 layout (each lane keeps the slots of the at most two words it has taken
// but not yet filled), simpler and slower than the lanes encoder's two
// passes, but RLE already divides the symbol count by the mean run length.
#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "cuda/codebook_gpu.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/rle_common.cuh"
#include "cuda/rle_frame.hpp"

namespace vlec::cuda {

namespace {

constexpr unsigned kFull = 0xFFFFFFFFu;

struct Temp {
  uint32_t* runs;
  uint32_t* rle_stored;
  uint64_t* rle_offsets;
  uint64_t* run_offsets;  // [chunks + 1]
  uint8_t* values;        // elements * width bytes
  uint16_t* lengths;      // elements
  uint8_t* rle_temp;
  std::size_t rle_temp_bytes;
  uint64_t* hist[2];      // [65,536] each
  uint8_t* book_lengths[2];
  uint32_t* book_entries[2];
  uint8_t* book_serialized[2];
  uint32_t* book_info[2];
  uint8_t* book_temp;
  std::size_t book_temp_bytes;
  uint32_t* words;        // [2 * chunks]: value words, length words
  uint32_t* stored;       // [chunks]: 4 + 4 * (value words + length words)
  uint64_t* sizes;        // [chunks + 1]: align4 of the final stored size
  uint64_t* offsets;      // [chunks + 1]: their exclusive sum
  uint8_t* scan_temp;
  std::size_t scan_bytes;
  std::size_t total;
};

uint32_t value_capacity(unsigned w) { return w == 1 ? 256 : 65536; }

Temp carve(void* base, uint64_t elements, unsigned w, uint32_t C, RleStrategy s) {
  const uint64_t chunks = rle_chunk_count(elements, C);
  const uint64_t n = std::max<uint64_t>(chunks, 1);
  TempCarver t{static_cast<uint8_t*>(base)};
  Temp m;
  m.runs = t.take<uint32_t>(n);
  m.rle_stored = t.take<uint32_t>(n);
  m.rle_offsets = t.take<uint64_t>(chunks + 1);
  m.run_offsets = t.take<uint64_t>(chunks + 1);
  m.values = t.take<uint8_t>(std::max<uint64_t>(elements * w, 16));
  m.lengths = t.take<uint16_t>(std::max<uint64_t>(elements, 8));
  m.rle_temp_bytes = rle_encode_temp_bytes(elements, w, C, s);
  m.rle_temp = t.take<uint8_t>(m.rle_temp_bytes);
  for (int k = 0; k < 2; ++k) {
    const uint32_t cap = k == 0 ? value_capacity(w) : 65536;
    m.hist[k] = t.take<uint64_t>(65536);
    m.book_lengths[k] = t.take<uint8_t>(cap);
    m.book_entries[k] = t.take<uint32_t>(cap);
    m.book_serialized[k] = t.take<uint8_t>(codebook_serialized_capacity(cap));
    m.book_info[k] = t.take<uint32_t>(4);
  }
  m.book_temp_bytes = std::max(codebook_temp_bytes(value_capacity(w)), codebook_temp_bytes(65536));
  m.book_temp = t.take<uint8_t>(std::max<std::size_t>(m.book_temp_bytes, 16));
  m.words = t.take<uint32_t>(2 * n);
  m.stored = t.take<uint32_t>(n);
  m.sizes = t.take<uint64_t>(chunks + 1);
  m.offsets = t.take<uint64_t>(chunks + 1);
  m.scan_bytes = 0;
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, m.scan_bytes, static_cast<uint64_t*>(nullptr),
                                           static_cast<uint64_t*>(nullptr), static_cast<int64_t>(chunks + 1)));
  m.scan_temp = t.take<uint8_t>(m.scan_bytes);
  m.total = (t.used + 255) & ~std::size_t{255};
  return m;
}

// Histogram of `*run_total * per_run` symbols. u8: a shared histogram per
// block; u16: symbols below kHotBins (where length codes and the values of
// real data concentrate) in a shared histogram per block, the rest in global
// atomics; both with one atomic per distinct symbol of a warp. (Global atomics
// alone serialised on the few hot length codes: 4.9 ms for 256 MiB of byte
// runs on the H100.)
constexpr uint32_t kHotBins = 8192;

template <typename Sym>
__global__ void stream_histogram_kernel(const Sym* __restrict__ syms, const uint64_t* run_total, unsigned per_run,
                                        uint64_t* hist) {
  const uint64_t n = *run_total * per_run;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  if constexpr (sizeof(Sym) == 1) {
    __shared__ uint32_t h[256];
    for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) h[i] = 0;
    __syncthreads();
    for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) atomicAdd(&h[syms[i]], 1u);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < 256; i += blockDim.x)
      if (h[i]) atomicAdd(reinterpret_cast<unsigned long long*>(hist + i), h[i]);
  } else {
    __shared__ uint32_t h[kHotBins];
    for (unsigned i = threadIdx.x; i < kHotBins; i += blockDim.x) h[i] = 0;
    __syncthreads();
    const unsigned lane = threadIdx.x % 32;
    // Whole warps iterate together so that __match_any_sync sees every lane.
    const uint64_t first = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x - lane;
    for (uint64_t i0 = first; i0 < n; i0 += stride) {
      const uint64_t i = i0 + lane;
      const uint32_t sym = i < n ? syms[i] : 0x10000u;  // no symbol: a key of its own
      const uint32_t peers = __match_any_sync(kFull, sym);
      if (sym < 0x10000u && lane == __ffs(peers) - 1) {
        if (sym < kHotBins)
          atomicAdd(&h[sym], static_cast<uint32_t>(__popc(peers)));
        else
          atomicAdd(reinterpret_cast<unsigned long long*>(hist + sym),
                    static_cast<unsigned long long>(__popc(peers)));
      }
    }
    __syncthreads();
    for (unsigned i = threadIdx.x; i < kHotBins; i += blockDim.x)
      if (h[i]) atomicAdd(reinterpret_cast<unsigned long long*>(hist + i), static_cast<unsigned long long>(h[i]));
  }
}

__device__ __forceinline__ uint32_t lanemask_lt() {
  uint32_t m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// One warp codes N symbols as a Huffman chunk (docs/FORMAT.md §5) and returns
// its word count W (in every lane). out == nullptr: only count. The words a
// lane takes get their slots at the step it takes them (ballot + popcount);
// they are written once the lane's codes have filled them, or zero at the end.
template <typename Sym>
__device__ uint32_t encode_part(const Sym* __restrict__ syms, uint32_t N, const uint32_t* __restrict__ table,
                                unsigned L, uint32_t* out, unsigned lane) {
  const unsigned K = L <= 8 ? 4 : L <= 16 ? 2 : 1;
  const uint32_t T = K * L;
  const uint32_t rest = N % 128;
  const uint32_t mine = 4 * (N / 128) + min(4u, rest > 4 * lane ? rest - 4 * lane : 0u);
  const uint32_t most = 4 * (N / 128) + min(4u, rest);  // lane 0 has the most symbols
  const uint32_t steps = (most + K - 1) / K;
  uint32_t base = 0, p0 = 0, p1 = 0, p2 = 0, pending = 0;
  uint64_t held = 0;  // bits taken but not yet consumed
  uint64_t acc = 0;
  unsigned acc_bits = 0;
  for (uint32_t q = 0; q < steps; ++q) {
    const bool need = q * K < mine && held < T;
    const uint32_t m = __ballot_sync(kFull, need);
    if (need) {
      const uint32_t slot = base + __popc(m & lanemask_lt());
      if (pending == 0) p0 = slot; else if (pending == 1) p1 = slot; else p2 = slot;
      ++pending;
      held += 32;
    }
    base += __popc(m);
    for (unsigned k = 0; k < K; ++k) {
      const uint32_t t = q * K + k;
      if (t >= mine) break;
      const uint32_t i = (t / 4) * 128 + 4 * lane + t % 4;
      const uint32_t e = table[syms[i]];
      const unsigned len = e >> 24;
      held -= len;
      if (out) {
        acc |= static_cast<uint64_t>(e & 0xFFFFFFu) << acc_bits;
        acc_bits += len;
        if (acc_bits >= 32) {
          out[p0] = static_cast<uint32_t>(acc);
          p0 = p1, p1 = p2, --pending;
          acc >>= 32;
          acc_bits -= 32;
        }
      }
    }
  }
  if (out) {  // the last partial word, then words taken beyond the stream's end
    for (; pending > 0; --pending) {
      out[p0] = acc_bits > 0 ? static_cast<uint32_t>(acc) : 0u;
      acc = 0, acc_bits = 0;
      p0 = p1, p1 = p2;
    }
  }
  return base;
}

struct PartArgs {
  const uint8_t* values;
  const uint16_t* lengths;
  const uint64_t* run_offsets;
  const uint32_t* runs;
  unsigned w;
  const uint32_t* table[2];
  const uint32_t* info[2];
  uint64_t chunks;
  uint64_t elements;
  uint32_t C;
};

// Warp 2c + p sizes part p of chunk c (kWrite = false) or writes it into the
// frame (kWrite = true, kept chunks only: stored < raw size).
template <bool kWrite>
__global__ void parts_kernel(PartArgs a, uint32_t* words, const uint32_t* stored, const uint64_t* offsets,
                             uint8_t* frame, const uint64_t* layout) {
  if (a.info[0][0] == 0 || a.info[1][0] == 0) return;  // no codebook: the frame is written raw
  const unsigned lane = threadIdx.x % 32;
  const uint64_t warps = uint64_t{gridDim.x} * blockDim.x / 32;
  for (uint64_t wi = (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; wi < 2 * a.chunks; wi += warps) {
    const uint64_t c = wi / 2;
    const unsigned part = wi % 2;
    uint32_t* out = nullptr;
    if (kWrite) {
      if (stored[c] >= rle_detail::chunk_raw_bytes(c, a.elements, a.C, a.w)) continue;  // stored raw
      uint32_t* chunk = reinterpret_cast<uint32_t*>(frame + layout[1] + offsets[c]);
      out = chunk + 1 + (part == 1 ? words[2 * c] : 0);
      if (part == 0 && lane == 0) chunk[0] = words[2 * c];
    }
    const uint64_t r0 = a.run_offsets[c];
    const uint32_t R = a.runs[c];
    const unsigned L = part ? a.info[1][1] : a.info[0][1];
    uint32_t W;
    if (part == 1)
      W = encode_part<uint16_t>(a.lengths + r0, R, a.table[1], L, out, lane);
    else if (a.w == 1)
      W = encode_part<uint8_t>(a.values + r0, R, a.table[0], L, out, lane);
    else
      W = encode_part<uint16_t>(reinterpret_cast<const uint16_t*>(a.values + r0 * a.w), R * a.w / 2, a.table[0], L,
                                out, lane);
    if (!kWrite && lane == 0) words[wi] = W;
  }
}

// Per chunk: the coded size, and its place's share (align4 of the final size).
__global__ void sizes_kernel(const uint32_t* words, uint64_t chunks, uint64_t elements, uint32_t C, unsigned w,
                             const uint32_t* info0, const uint32_t* info1, uint32_t* stored, uint64_t* sizes) {
  const uint64_t c = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (c > chunks) return;
  if (c == chunks) {
    sizes[c] = 0;
    return;
  }
  const uint64_t raw = rle_detail::chunk_raw_bytes(c, elements, C, w);
  const bool books = info0[0] != 0 && info1[0] != 0;
  const uint64_t coded = books ? 4 + 4 * (uint64_t{words[2 * c]} + words[2 * c + 1]) : raw;
  stored[c] = static_cast<uint32_t>(std::min(coded, raw));
  sizes[c] = rle_detail::align4(coded < raw ? coded : raw);
}

unsigned grid_for(uint64_t warps_needed) {
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>((warps_needed + 7) / 8, uint64_t(sms) * 8)));
}

}  // namespace

std::size_t rle_huffman_encode_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements, RleStrategy s) {
  return carve(nullptr, elements, width, chunk_elements, s).total;
}

RleHuffmanBooks rle_huffman_prepare(const RleFrameEncodeArgs& a, unsigned length_limit, void* temp,
                                    std::size_t temp_bytes, cudaStream_t stream) {
  const Temp t = carve(temp, a.elements, a.width, a.chunk_elements, a.strategy);
  VLEC_REQUIRE(temp_bytes >= t.total, "temporary storage of ", temp_bytes, " bytes is below the ", t.total, " needed");
  RleEncodeArgs e = rle_chunk_encode_args(a, t.runs, t.rle_stored, t.rle_offsets, t.run_offsets);
  e.values = t.values;
  e.lengths = t.lengths;
  rle_encode(e, t.rle_temp, t.rle_temp_bytes, stream, a.strategy);
  const uint64_t chunks = rle_chunk_count(a.elements, a.chunk_elements);
  const uint64_t* run_total = t.run_offsets + chunks;
  const unsigned grid = grid_for(std::max<uint64_t>(a.elements / 32, 1));
  for (int k = 0; k < 2; ++k) CUDA_CHECK(cudaMemsetAsync(t.hist[k], 0, 8 * 65536, stream));
  if (a.width == 1)
    stream_histogram_kernel<uint8_t><<<grid, 256, 0, stream>>>(t.values, run_total, 1, t.hist[0]);
  else
    stream_histogram_kernel<uint16_t><<<grid, 256, 0, stream>>>(reinterpret_cast<const uint16_t*>(t.values),
                                                                run_total, a.width / 2, t.hist[0]);
  stream_histogram_kernel<uint16_t><<<grid, 256, 0, stream>>>(t.lengths, run_total, 1, t.hist[1]);
  CUDA_CHECK(cudaGetLastError());
  RleHuffmanBooks books;
  for (int k = 0; k < 2; ++k) {
    const uint32_t cap = k == 0 ? value_capacity(a.width) : 65536;
    const DeviceCodebookOut out{t.book_lengths[k], t.book_entries[k], t.book_serialized[k], t.book_info[k]};
    build_codebook_device(t.hist[k], cap, length_limit, t.book_temp, t.book_temp_bytes, out, stream);
    books.entries[k] = t.book_entries[k];
    books.table_size[k] = cap;
    books.serialized[k] = t.book_serialized[k];
    books.info[k] = t.book_info[k];
  }
  return books;
}

const uint64_t* encode_rle_huffman_chunks(const RleFrameEncodeArgs& a, void* temp, std::size_t temp_bytes,
                                          cudaStream_t stream) {
  const Temp t = carve(temp, a.elements, a.width, a.chunk_elements, a.strategy);
  VLEC_REQUIRE(temp_bytes >= t.total, "temporary storage of ", temp_bytes, " bytes is below the ", t.total, " needed");
  VLEC_REQUIRE(a.layout, "encode_rle_huffman_chunks needs the frame layout on the device");
  const uint64_t chunks = rle_chunk_count(a.elements, a.chunk_elements);
  if (chunks == 0) {
    CUDA_CHECK(cudaMemsetAsync(t.offsets, 0, 8, stream));
    return t.offsets;
  }
  PartArgs p;
  p.values = t.values;
  p.lengths = t.lengths;
  p.run_offsets = t.run_offsets;
  p.runs = t.runs;
  p.w = a.width;
  for (int k = 0; k < 2; ++k) p.table[k] = t.book_entries[k], p.info[k] = t.book_info[k];
  p.chunks = chunks;
  p.elements = a.elements;
  p.C = a.chunk_elements;
  const unsigned grid = grid_for(2 * chunks);
  parts_kernel<false><<<grid, 256, 0, stream>>>(p, t.words, nullptr, nullptr, nullptr, nullptr);
  sizes_kernel<<<static_cast<unsigned>((chunks + 1 + 255) / 256), 256, 0, stream>>>(
      t.words, chunks, a.elements, a.chunk_elements, a.width, t.book_info[0], t.book_info[1], t.stored, t.sizes);
  CUDA_CHECK(cudaGetLastError());
  std::size_t bytes = t.scan_bytes;
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(t.scan_temp, bytes, t.sizes, t.offsets, static_cast<int64_t>(chunks + 1),
                                           stream));
  parts_kernel<true><<<grid, 256, 0, stream>>>(p, t.words, t.stored, t.offsets, a.frame, a.layout);
  CUDA_CHECK(cudaGetLastError());
  write_chunk_entries(a, t.runs, t.stored, t.offsets, stream);
  return t.offsets + chunks;
}

}  // namespace vlec::cuda
