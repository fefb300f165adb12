// cuda/rle_huffman_decode.cu: the first step of decoding `rle+huffman` frames
// on the GPU (rle_frame.hpp): one warp per chunk decodes its two Huffman
// parts (docs/FORMAT.md §5, §6) into a staging buffer laid out as an `rle`
// payload, so that rle_decode (validating, coalesced expansion) does the rest.
//
// The warp replays the format's refill rule exactly as a reader must: before
// each step, the lanes that hold fewer than T bits take the next words in lane
// order (ballot + popcount); each lane then decodes its K symbols. Codes are
// decoded canonically, one bit at a time against the First/Count/Offset arrays
// (at most L steps, no table in shared memory: the symbols are runs, far fewer
// than the elements). The reader's checks: exactly W words taken, every bit
// left in every lane zero, every pattern a code; then the sizes of §6.
#include <algorithm>
#include <vector>

#include "cuda/chunk_copy.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/rle_common.cuh"
#include "cuda/rle_frame.hpp"
#include "huffman/chunk_codec.hpp"

namespace vlec::cuda {

namespace {

constexpr unsigned kFull = 0xFFFFFFFFu;
constexpr unsigned kSlots = kRleHuffmanCanonSlots;

__device__ __forceinline__ uint32_t lanemask_lt() {
  uint32_t m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// Decode N symbols from the W words at `words` into out (lane layout of §5).
// Returns kRleOk or a kRleHuffman* status, the same in every lane.
template <typename Sym>
__device__ uint32_t decode_part(const uint32_t* __restrict__ words, uint32_t W, uint32_t N,
                                const uint32_t* __restrict__ canon, const uint32_t* __restrict__ sorted, unsigned L,
                                Sym* __restrict__ out, unsigned lane) {
  const uint32_t* first = canon;
  const uint32_t* count = canon + kSlots;
  const uint32_t* offset = canon + 2 * kSlots;
  const unsigned K = L <= 8 ? 4 : L <= 16 ? 2 : 1;
  const uint32_t T = K * L;
  const uint32_t rest = N % 128;
  const uint32_t mine = 4 * (N / 128) + min(4u, rest > 4 * lane ? rest - 4 * lane : 0u);
  const uint32_t most = 4 * (N / 128) + min(4u, rest);
  const uint32_t steps = (most + K - 1) / K;
  uint64_t buf = 0;
  uint32_t bits = 0, base = 0;
  bool bad = false, over = false;
  for (uint32_t q = 0; q < steps; ++q) {
    const bool need = q * K < mine && bits < T;
    const uint32_t m = __ballot_sync(kFull, need);
    if (need) {
      const uint32_t idx = base + __popc(m & lanemask_lt());
      uint32_t w = 0;
      if (idx < W) w = words[idx]; else over = true;
      buf |= static_cast<uint64_t>(w) << bits;
      bits += 32;
    }
    base += __popc(m);
    for (unsigned k = 0; k < K; ++k) {
      const uint32_t t = q * K + k;
      if (t >= mine) break;
      uint32_t code = 0, sym = 0;
      unsigned len = 0;
      for (unsigned l = 1; l <= L; ++l) {
        code = (code << 1) | static_cast<uint32_t>((buf >> (l - 1)) & 1);
        if (code - first[l] < count[l]) {
          sym = sorted[offset[l] + code - first[l]];
          len = l;
          break;
        }
      }
      if (len == 0 || len > bits) bad = true, len = 0;
      out[(t / 4) * 128 + 4 * lane + t % 4] = static_cast<Sym>(sym);
      buf >>= len;
      bits -= len;
    }
  }
  if (__any_sync(kFull, bad)) return kRleHuffmanCode;
  if (__any_sync(kFull, over || buf != 0) || base != W) return kRleHuffmanWords;
  return kRleOk;
}

__global__ void parts_decode_kernel(RleHuffmanPartsArgs a) {
  const unsigned lane = threadIdx.x % 32;
  const uint64_t warps = uint64_t{gridDim.x} * blockDim.x / 32;
  const unsigned w = a.width;
  for (uint64_t c = (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; c < a.chunks; c += warps) {
    const uint64_t raw = rle_detail::chunk_raw_bytes(c, a.elements, a.chunk_elements, w);
    const uint64_t n = raw / w;
    const uint64_t off = a.offsets[c];
    const uint32_t stored = a.stored[c], R = a.runs[c];
    uint8_t* dst = a.staged + a.staged_offsets[c];
    uint32_t status = kRleOk;
    if (off % 4 != 0 || off > a.payload_bytes || stored > a.payload_bytes - off) {
      status = kRleHuffmanSize;
    } else if (stored == raw) {  // rle_decode copies it from the staging buffer (R is 0: parse checked)
      warp_copy_chunk_padded(a.payload + off, dst, raw, lane);
    } else if (stored < 4 || stored % 4 != 0 || R == 0 || R > n) {
      status = kRleHuffmanSize;
    } else {
      const uint32_t* words = reinterpret_cast<const uint32_t*>(a.payload + off);
      const uint32_t total = stored / 4 - 1, vw = words[0];
      if (vw > total) {
        status = kRleHuffmanSize;
      } else {
        const uint32_t* vcanon = a.tables.canon[0];
        if (w == 1)
          status = decode_part<uint8_t>(words + 1, vw, R, vcanon, a.tables.sorted[0], a.tables.max_length[0], dst,
                                        lane);
        else
          status = decode_part<uint16_t>(words + 1, vw, R * w / 2, vcanon, a.tables.sorted[0],
                                         a.tables.max_length[0], reinterpret_cast<uint16_t*>(dst), lane);
        const uint64_t lens_at = rle_detail::lengths_offset(R, w);
        for (uint64_t i = uint64_t{R} * w + lane; i < lens_at; i += 32) dst[i] = 0;  // rle_decode checks it
        const uint32_t ls = decode_part<uint16_t>(words + 1 + vw, total - vw, R, a.tables.canon[1],
                                                  a.tables.sorted[1], a.tables.max_length[1],
                                                  reinterpret_cast<uint16_t*>(dst + lens_at), lane);
        if (status == kRleOk) status = ls;
      }
    }
    if (lane == 0) a.status[c] = status;
  }
}

}  // namespace

void upload_rle_huffman_tables(const format::ParsedFrame& f, RleHuffmanTables& t, cudaStream_t stream) {
  for (int k = 0; k < 2; ++k) {
    const huffman::DecodeTable d = huffman::make_primary_decode_table(f.codebooks[k], 1);
    std::vector<uint32_t> canon(3 * kSlots, 0);
    for (unsigned l = 0; l < kSlots && l < d.first.size(); ++l)
      canon[l] = d.first[l], canon[kSlots + l] = d.count[l], canon[2 * kSlots + l] = d.offset[l];
    t.max_length[k] = d.max_length;
    // Pageable sources: each copy returns once its data is staged, so the vectors may go.
    CUDA_CHECK(cudaMemcpyAsync(t.canon[k], canon.data(), 4 * canon.size(), cudaMemcpyHostToDevice, stream));
    if (!d.sorted.empty())
      CUDA_CHECK(cudaMemcpyAsync(t.sorted[k], d.sorted.data(), 4 * std::min<std::size_t>(d.sorted.size(), 65536),
                                 cudaMemcpyHostToDevice, stream));
  }
}

void decode_rle_huffman_parts(const RleHuffmanPartsArgs& a, cudaStream_t stream) {
  if (a.chunks == 0) return;
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const unsigned grid = static_cast<unsigned>(std::min<uint64_t>((a.chunks + 7) / 8, uint64_t(sms) * 16));
  parts_decode_kernel<<<grid, 256, 0, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda
