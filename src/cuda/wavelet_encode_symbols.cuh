// cuda/wavelet_encode_symbols.cuh: how the wavelet writer's symbols kernel
// (wavelet_encode_kernels.cu) writes a tile: each value's symbol (z >> k),
// its k low bits ORed into the tile's shared words, and the run starts
// counted against the value before it in group order. Why it is fast: a
// thread takes four consecutive values (a quad), so it reads them with one
// 16-byte load and stores their symbols with one store where aligned, ORs
// its quad's low bits as up to four words (not one atomic a value), and
// reads one neighbour for the run count; a tile inside one row takes a
// straight path (row_tile) with the neighbours by shuffle. nvcc only;
// included by wavelet_encode_kernels.cu alone.
#pragma once

#include <cstdint>

#include "cuda/wavelet_encode_kernels.hpp"
#include "cuda/wavelet_encode_tiles.cuh"
#include "wavelet/low_bits_quad.hpp"

namespace vlec::cuda::wavelet_gpu::encode_tiles {

// Where a tile's symbols and low bits go: its first symbol, and its low
// bits from bit `bit0` of the shared words (so a value's bit offset is 32-bit
// arithmetic within the tile).
struct TileOut {
  uint8_t* symbols;  // the tile's first symbol
  uint32_t* words;   // shared: the tile's low-bit words
  uint32_t width;    // symbol bytes
  uint32_t k, mask;  // low bits a value
  uint32_t bit0;     // the tile's first low bit within words[0]
  bool aligned;      // the tile's first symbol is at a group index divisible by 4
};

// A quad's symbols (z >> k) stored, its run starts counted against
// `before` (the symbol before it in group order; ~0u: none) and its 4k low
// bits ORed into the tile's shared words as up to four words: one value at a
// time, a warp's 32 values of 1-bit low parts went as 32 atomics on one
// shared word. local: the quad's first value's index in the tile (a
// multiple of 4); z[m] is 0 for m >= count.
__device__ __forceinline__ void put_quad(const TileOut& o, uint32_t local, const uint32_t (&z)[4], unsigned count,
                                         uint32_t before, uint32_t& starts) {
  uint32_t s[4];
#pragma unroll
  for (unsigned m = 0; m < 4; ++m) {  // (a symbol is below 2^24: never equal to ~0u)
    s[m] = z[m] >> o.k;
    if (m < count) starts += s[m] != before;
    before = s[m];
  }
  if (count == 4 && o.aligned && o.width == 2) {
    *reinterpret_cast<uint2*>(o.symbols + 2 * local) = make_uint2(s[0] | s[1] << 16, s[2] | s[3] << 16);
  } else if (count == 4 && o.aligned && o.width == 1) {
    *reinterpret_cast<uint32_t*>(o.symbols + local) = s[0] | s[1] << 8 | s[2] << 16 | s[3] << 24;
  } else {
    for (unsigned m = 0; m < count; ++m) {
      if (o.width == 1) o.symbols[local + m] = static_cast<uint8_t>(s[m]);
      else reinterpret_cast<uint16_t*>(o.symbols)[local + m] = static_cast<uint16_t>(s[m]);
    }
  }
  if (!o.k) return;
  // The quad's 4k low bits, from bit `off` of word w: four words at most
  // (wavelet/low_bits_quad.hpp; the values past the tile's end are 0).
  const uint32_t bit = o.bit0 + local * o.k, w = bit / 32, off = bit % 32;
  const ::vlec::wavelet::QuadLowWords q = ::vlec::wavelet::quad_low_words(z, o.k, o.mask, off);
  // One shared-window address for the four ORs: at the kernel's register
  // cap, atomicOr on the generic pointer rebuilt the window's base (S2UR of
  // the CTA id and three uniform instructions) for every word.
  const uint32_t at = static_cast<uint32_t>(__cvta_generic_to_shared(o.words + w));
#pragma unroll
  for (unsigned i = 0; i < 4; ++i)
    if (q.words[i]) asm volatile("red.shared.or.b32 [%0], %1;" ::"r"(at + 4 * i), "r"(q.words[i]) : "memory");
}

// A tile walked a quad at a time (any box, any tile): each quad's position
// by the walk, a vector load where the quad lies in one row and is aligned,
// and its neighbour in group order loaded.
__device__ __forceinline__ void walk_tile(const PlaneGeometry& g, const EncodeBox& b, const EncodeTile& tile,
                                          const TileOut& out, uint32_t& starts) {
  constexpr uint32_t kStride = 4 * kEncodeThreads;
  const unsigned k = out.k;
  // (past the tile for an idle thread: not used)
  BoxWalk walk(b, tile.start + min(4 * threadIdx.x, tile.count));
  for (uint32_t j0 = 4 * threadIdx.x; j0 < tile.count; j0 += kStride, walk.advance(b, kStride)) {
    const unsigned count = min(4u, tile.count - j0);
    const uint64_t t0 = tile.start + j0;
    const uint64_t at0 = walk.index(g, b), x0 = walk.x;
    uint32_t z[4];
    if (count == 4 && x0 + 3 < b.nx && at0 % 4 == 0) {
      const int4 v = *reinterpret_cast<const int4*>(g.coeffs + at0);
      z[0] = zigzag(v.x), z[1] = zigzag(v.y), z[2] = zigzag(v.z), z[3] = zigzag(v.w);
    } else {
#pragma unroll
      for (unsigned m = 0; m < 4; ++m)
        z[m] = m >= count ? 0 : zigzag(g.coeffs[x0 + m < b.nx ? at0 + m : coefficient_index(g, b, t0 + m)]);
    }
    // The coefficient before the quad in group order: its left neighbour within a row.
    const uint64_t prev = t0 == 0 ? b.prev : x0 > 0 ? at0 - 1 : coefficient_index(g, b, t0 - 1);
    const uint32_t before = prev == ~0ull ? ~0u : zigzag(g.coeffs[prev]) >> k;
    put_quad(out, j0, z, count, before, starts);
  }
}

// A whole tile inside one row of its box, from its first coefficient
// (row_at, 16-byte aligned; `x`: its column in the box): the thread's quads
// loaded at once, the neighbours by shuffle (lane 0 loads its own).
__device__ __forceinline__ void row_tile(const PlaneGeometry& g, const EncodeBox& b, const EncodeTile& tile,
                                         uint64_t row_at, uint64_t x, const TileOut& out, uint32_t& starts) {
  constexpr uint32_t kQuads = kTileValues / (4 * kEncodeThreads);  // a thread's quads
  constexpr uint32_t kStride = 4 * kEncodeThreads;                 // values between them
  const unsigned k = out.k;
  const uint32_t j0 = 4 * threadIdx.x;
  uint32_t z[kQuads][4], left[kQuads];
#pragma unroll
  for (unsigned q = 0; q < kQuads; ++q) {
    const int4 v = *reinterpret_cast<const int4*>(g.coeffs + row_at + j0 + q * kStride);
    z[q][0] = zigzag(v.x), z[q][1] = zigzag(v.y), z[q][2] = zigzag(v.z), z[q][3] = zigzag(v.w);
  }
  if (threadIdx.x % 32 == 0) {  // the value before the warp's quads: in the row but for the tile's first
    uint64_t prev = row_at + j0 - 1;
    if (j0 == 0) prev = x > 0 ? row_at - 1 : tile.start == 0 ? b.prev : coefficient_index(g, b, tile.start - 1);
    left[0] = prev == ~0ull ? ~0u : zigzag(g.coeffs[prev]) >> k;
#pragma unroll
    for (unsigned q = 1; q < kQuads; ++q) left[q] = zigzag(g.coeffs[row_at + j0 + q * kStride - 1]) >> k;
  }
#pragma unroll
  for (unsigned q = 0; q < kQuads; ++q) {
    const uint32_t up = __shfl_up_sync(~0u, z[q][3], 1) >> k;
    put_quad(out, j0 + q * kStride, z[q], 4, threadIdx.x % 32 == 0 ? left[q] : up, starts);
  }
}

}  // namespace vlec::cuda::wavelet_gpu::encode_tiles
