// cuda/huffman_decode.cu: see huffman_decode.hpp. One warp decodes one chunk;
// the kernel is specialised on the symbol type, on K (symbols per refill
// step) and on whether codes longer than the shared table exist, so the
// common paths carry no run-time switches.
#include "cuda/cuda_check.hpp"
#include "cuda/huffman_decode.hpp"
#include "huffman/layout.hpp"

namespace vlec::cuda {

namespace {

using huffman::kGroup;
using huffman::kLanes;
using huffman::kRow;

constexpr unsigned kWarpsPerBlock = 8;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

// Four symbols of a lane, packed for one vector store.
template <typename Sym> struct Group;
template <> struct Group<uint8_t> {
  uint32_t v = 0;
  __device__ void set(unsigned i, uint32_t s) { v |= s << (8 * i); }
  __device__ void store(void* base, uint64_t group) { static_cast<uint32_t*>(base)[group] = v; }
};
template <> struct Group<uint16_t> {
  uint2 v = {0, 0};
  __device__ void set(unsigned i, uint32_t s) {
    if (i < 2) v.x |= s << (16 * i); else v.y |= s << (16 * (i - 2));
  }
  __device__ void store(void* base, uint64_t group) { static_cast<uint2*>(base)[group] = v; }
};
template <> struct Group<uint32_t> {
  uint4 v = {0, 0, 0, 0};
  __device__ void set(unsigned i, uint32_t s) {
    if (i == 0) v.x = s; else if (i == 1) v.y = s; else if (i == 2) v.z = s; else v.w = s;
  }
  __device__ void store(void* base, uint64_t group) { static_cast<uint4*>(base)[group] = v; }
};

// A code longer than the shared table, resolved with the First/Entry arrays.
// s_canon holds first[], count[] and offset[] (kCanonSlots each) in shared memory.
__device__ __noinline__ uint32_t decode_long(const uint32_t* s_canon, const uint32_t* sorted, unsigned bits,
                                             unsigned L, uint64_t buf, unsigned& len) {
  const uint32_t v = __brev(static_cast<uint32_t>(buf & ((uint64_t{1} << L) - 1))) >> (32 - L);
  for (unsigned l = bits + 1; l <= L; ++l) {
    const uint32_t code = v >> (L - l);
    const uint32_t first = s_canon[l];
    if (code - first < s_canon[kCanonSlots + l]) {
      len = l;
      return __ldg(sorted + s_canon[2 * kCanonSlots + l] + code - first);
    }
  }
  len = 0;  // not a code: flagged by the caller
  return 0;
}

struct LaneDecoder {
  uint64_t buf = 0;
  uint32_t bits = 0;
  bool bad = false;

  // Take a word if this lane needs one; `base` is the warp's next word.
  __device__ void refill(bool active, uint32_t threshold, const uint32_t* __restrict__ words, uint32_t word_count,
                         uint32_t& base, unsigned lane) {
    const bool need = active && bits < threshold;
    const uint32_t mask = __ballot_sync(kFullMask, need);
    if (need) {
      const uint32_t idx = base + __popc(mask & ((1u << lane) - 1));
      uint32_t w = 0;
      if (idx < word_count) w = __ldg(words + idx); else bad = true;
      buf |= uint64_t{w} << bits;
      bits += 32;
    }
    base += __popc(mask);
  }

  template <bool kLong>
  __device__ uint32_t decode(const uint32_t* s_table, uint32_t mask, const uint32_t* s_canon, const uint32_t* sorted,
                             unsigned table_bits, unsigned max_length) {
    uint32_t e = s_table[static_cast<uint32_t>(buf) & mask];
    if (kLong && e < 0x10000) {
      unsigned len;
      const uint32_t sym = decode_long(s_canon, sorted, table_bits, max_length, buf, len);
      if (len == 0 || len > bits) bad = true, len = 0;
      e = (len << 16) | sym;
    }
    const unsigned len = e >> 16;
    buf >>= len;
    bits -= len;
    return e & 0xFFFF;
  }
};

__device__ void copy_raw_chunk(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst, uint32_t bytes,
                               unsigned lane) {
  const uint32_t words = bytes / 4;
  const uint32_t* s = reinterpret_cast<const uint32_t*>(src);
  uint32_t* d = reinterpret_cast<uint32_t*>(dst);
  for (uint32_t i = lane; i < words; i += kLanes) d[i] = __ldg(s + i);
  for (uint32_t i = words * 4 + lane; i < bytes; i += kLanes) dst[i] = src[i];
}

template <typename Sym, unsigned K, bool kLong>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    huffman_decode_kernel(const HuffmanDecodeArgs a) {
  extern __shared__ uint32_t s_table[];
  __shared__ uint32_t s_canon[3 * kCanonSlots];
  const uint32_t table_size = 1u << a.table.bits;
  for (uint32_t i = threadIdx.x; i < table_size; i += blockDim.x) s_table[i] = a.table.entry[i];
  if (kLong && threadIdx.x < 3 * kCanonSlots) s_canon[threadIdx.x] = a.table.canon[threadIdx.x];
  __syncthreads();
  const uint32_t* sorted = a.table.sorted;
  const unsigned table_bits = a.table.bits, max_length = a.table.max_length;

  const unsigned lane = threadIdx.x % kLanes;
  const uint64_t c = uint64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / kLanes;
  if (c >= a.chunk_count) return;
  const ChunkDesc chunk = a.chunks[c];
  const uint64_t first = c * a.chunk_elements;
  const uint64_t n = a.elements - first < a.chunk_elements ? a.elements - first : a.chunk_elements;
  Sym* out = static_cast<Sym*>(a.out) + first;
  if (chunk.raw) {
    copy_raw_chunk(a.payload + chunk.offset, reinterpret_cast<uint8_t*>(out), chunk.stored_bytes, lane);
    if (lane == 0) a.status[c] = kChunkOk;
    return;
  }
  const uint32_t* words = reinterpret_cast<const uint32_t*>(a.payload + chunk.offset);
  const uint32_t word_count = chunk.stored_bytes / 4;
  const uint32_t threshold = K * a.table.max_length;
  const uint32_t mask = table_size - 1;
  LaneDecoder d;
  uint32_t base = 0;
  const uint64_t full_rows = n / kRow;
  for (uint64_t row = 0; row < full_rows; ++row) {
    Group<Sym> g;
#pragma unroll
    for (unsigned step = 0; step < kGroup / K; ++step) {
      d.refill(true, threshold, words, word_count, base, lane);
#pragma unroll
      for (unsigned k = 0; k < K; ++k) g.set(step * K + k, d.decode<kLong>(s_table, mask, s_canon, sorted, table_bits, max_length));
    }
    g.store(out, row * kLanes + lane);
  }
  // The last, partial row: this lane owns `mine` symbols of it.
  const uint32_t rest = static_cast<uint32_t>(n - full_rows * kRow);
  if (rest) {
    const uint32_t mine = rest > lane * kGroup ? min(rest - lane * kGroup, kGroup) : 0;
    Sym* tail = out + full_rows * kRow + lane * kGroup;
    for (unsigned step = 0; step < kGroup / K; ++step) {
      d.refill(step * K < mine, threshold, words, word_count, base, lane);
      for (unsigned k = 0; k < K; ++k)
        if (step * K + k < mine) tail[step * K + k] = static_cast<Sym>(d.decode<kLong>(s_table, mask, s_canon, sorted, table_bits, max_length));
    }
  }
  const bool padding_bad = d.buf != 0;
  const uint32_t bad_mask = __ballot_sync(kFullMask, d.bad);
  const uint32_t pad_mask = __ballot_sync(kFullMask, padding_bad);
  if (lane == 0)
    a.status[c] = bad_mask ? kChunkBadCode : base != word_count ? kChunkWordCount : pad_mask ? kChunkPadding : kChunkOk;
}

template <typename Sym>
void launch_typed(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((a.chunk_count + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const std::size_t smem = sizeof(uint32_t) << a.table.bits;
  const bool long_codes = a.table.max_length > a.table.bits;
  const unsigned K = huffman::symbols_per_step(a.table.max_length);
  const dim3 grid(blocks), block(kWarpsPerBlock * 32);
  if (K == 4)
    huffman_decode_kernel<Sym, 4, false><<<grid, block, smem, stream>>>(a);
  else if (K == 2 && !long_codes)
    huffman_decode_kernel<Sym, 2, false><<<grid, block, smem, stream>>>(a);
  else if (K == 2)
    huffman_decode_kernel<Sym, 2, true><<<grid, block, smem, stream>>>(a);
  else if (!long_codes)
    huffman_decode_kernel<Sym, 1, false><<<grid, block, smem, stream>>>(a);
  else
    huffman_decode_kernel<Sym, 1, true><<<grid, block, smem, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_huffman_decode(const HuffmanDecodeArgs& a, cudaStream_t stream) {
  if (a.chunk_count == 0) return;
  switch (a.width) {
    case 1: return launch_typed<uint8_t>(a, stream);
    case 2: return launch_typed<uint16_t>(a, stream);
    case 4: return launch_typed<uint32_t>(a, stream);
  }
  VLEC_REQUIRE(false, "GPU Huffman decoding takes 1-, 2- or 4-byte elements, not ", a.width);
}

}  // namespace vlec::cuda
