// bench/lane_layout_probe_present.cuh: the lane layout probe's fastest
// encoder structure in vlec's present format (docs/FORMAT.md §5): one warp a
// chunk in one pass, the words placed by vlec's own refill replay
// (cuda/encode_lane_writer.cuh). Included by lane_layout_probe.cu.
//
// Why: the probe found one warp a chunk in one pass (slot, look-back, copy)
// 37-75 % faster than vlec's encoder at 16,384-element chunks, while vlec's
// two-pass block encoder gained little from dropping the replay. This
// measures how much of that the present format keeps: each lane codes its
// own symbols, and each step's ballot and popcounts give every word its
// slot, as in vlec's pass B, but with no pass A, no barriers and no ranges
// (one warp holds the whole chunk, so no word is shared between warps). The
// chunk is coded into a slot of a scratch buffer; its size (the words the
// refills took) is published, the look-back gives its offset, and the slot
// is copied to its place in the payload. Its XXH3 comes from the rows as
// they are loaded (cuda::RowsHash, the warp encoder's). The payload is vlec's, byte for byte.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/chunk_scan.cuh"
#include "cuda/encode_lane_writer.cuh"
#include "huffman/layout.hpp"
#include "lane_layout_probe_kernels.cuh"

namespace vlec::probe {

// stored[c]: the chunk's payload bytes (4 x the words taken); offsets[c]: its
// place in `payload`, chunks dense in order.
template <typename Sym, unsigned K, bool kShared, unsigned kBatch>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    probe_encode_present(const Sym* in, uint64_t n, uint32_t chunk, uint64_t chunks, const uint32_t* entry,
                         uint32_t max_length, uint32_t* slots, uint64_t slot_words, uint8_t* payload,
                         uint64_t* offsets, uint32_t* stored, cuda::ChunkScanState scan, uint64_t* hashes) {
  __shared__ uint32_t table[kShared ? kSharedEntries : 1];
  __shared__ uint64_t secret[xxh3::kSecretSize / 8];
  cuda::copy_secret_words(secret);
  load_table<kShared>(table, entry);
  __syncthreads();
  const uint32_t lane = threadIdx.x & 31;
  uint32_t ticket = 0;
  if (lane == 0) ticket = atomicAdd(scan.ticket, 1u);
  const uint64_t c = __shfl_sync(kFull, ticket, 0);
  if (c >= chunks) return;
  const uint64_t first = c * chunk, count = min(uint64_t{chunk}, n - first);
  uint32_t* const out = slots + c * slot_words;
  const Sym* const src0 = in + first + huffman::kGroup * lane;
  static_assert(kBatch == cuda::kBatchRows<Sym>, "batches as the warp encoder's");
  cuda::RowsHash<Sym> hash(secret, count * sizeof(Sym), lane);
  const auto lookup = [&](uint32_t s) { return kShared ? table[s] : __ldg(entry + s); };
  const uint32_t T = K * max_length;
  cuda::LaneWriter w;  // the whole chunk is this warp's: nothing taken before it
  uint32_t base = 0;   // warp-uniform: the words all lanes have taken
  const auto code_row = [&](const uint32_t (&s)[4], unsigned mine) {
    cuda::encode_row<K, true, false>(w, mine, [&](unsigned i) { return lookup(s[i]); }, T, base, out);
  };
  const uint64_t rows = count / huffman::kRow;
  const Sym* src = src0;
  uint64_t r = 0;
  for (; r + kBatch <= rows; r += kBatch, src += kBatch * huffman::kRow) {
    RawGroup<Sym> g[kBatch];
#pragma unroll
    for (unsigned b = 0; b < kBatch; ++b) g[b] = __ldg(reinterpret_cast<const RawGroup<Sym>*>(src + b * huffman::kRow));
    hash.batch(g, r);
#pragma unroll
    for (unsigned b = 0; b < kBatch; ++b) {
      uint32_t s[4];
      unpack<Sym>(g[b], s);
      code_row(s, huffman::kGroup);
    }
  }
  for (; r < rows; ++r, src += huffman::kRow) {
    uint32_t s[4];
    load_group(src, s);
    code_row(s, huffman::kGroup);
  }
  if (const uint32_t mine = partial_row_symbols(count, lane); __any_sync(kFull, mine > 0)) {
    uint32_t s[4] = {0, 0, 0, 0};
    for (uint32_t k = 0; k < mine; ++k) s[k] = src[k];
    code_row(s, mine);
  }
  w.flush(out);
  const uint64_t h = hash.finish(reinterpret_cast<const RawGroup<Sym>*>(src0), reinterpret_cast<const uint8_t*>(in + first),
                                 count * sizeof(Sym));
  if (lane == 0) cuda::scan_publish_size(scan, c, 4 * uint64_t{base});
  __syncwarp();  // every lane's slot stores before the copy reads them
  const uint64_t offset = cuda::scan_walk_back(scan, c, 4 * uint64_t{base}, lane);
  if (lane == 0) offsets[c] = offset, stored[c] = 4 * base, hashes[c] = h;
  cuda::copy_slot(reinterpret_cast<uint32_t*>(payload + offset), out, base, lane);
}

}  // namespace vlec::probe
