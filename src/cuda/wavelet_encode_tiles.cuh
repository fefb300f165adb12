// cuda/wavelet_encode_tiles.cuh: how the wavelet writer's tile kernels
// (wavelet_encode_kernels.cu) find their coefficients. The coefficients of a
// plane's boxes (subbands, in coefficient order) are cut into tiles of
// kTileValues; a kernel's block takes consecutive tiles. Why it is fast:
// a tile's box is found by a binary search over a few dozen boxes (or, for
// the next tile of a run, not at all: TileRun, TileCursor), a position by 32-bit
// divisions once and then by steps of the block's stride (BoxWalk), and a
// tile inside one row of its box is read with vector loads (TileValues).
// nvcc only; included by wavelet_encode_kernels.cu alone.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda/wavelet_encode_kernels.hpp"
#include "wavelet/shift_rule.hpp"

namespace vlec::cuda::wavelet_gpu::encode_tiles {

// Tile: `count` coefficients from `start` (box-relative) of box `box`.
struct EncodeTile {
  uint64_t start = 0;
  uint32_t box = 0;
  uint32_t count = 0;
};

// Tile ti: its box is the last whose tile0 <= ti (tile0 never decreases; an
// empty box has the next box's tile0, so the last such box is never empty).
// A binary search over a few dozen boxes (19 a plane at 6 levels in 2D),
// which stay in L1.
__device__ inline EncodeTile tile_at(const EncodeBox* boxes, uint32_t box_count, uint32_t ti) {
  uint32_t lo = 0, hi = box_count;  // boxes[lo].tile0 <= ti < boxes[hi].tile0 (boxes[0].tile0 == 0)
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    if (boxes[mid].tile0 <= ti) lo = mid;
    else hi = mid;
  }
  EncodeTile t;
  t.box = lo;
  t.start = uint64_t{ti - boxes[lo].tile0} * kTileValues;
  t.count = static_cast<uint32_t>(min(uint64_t{kTileValues}, boxes[lo].n - t.start));
  return t;
}

__device__ __forceinline__ uint32_t zigzag(int32_t c) {
  return (static_cast<uint32_t>(c) << 1) ^ static_cast<uint32_t>(c >> 31);
}

// Position (x, y, z) in box b of coefficient t (box-relative, coefficient
// order), by 32-bit divisions where the values fit (always, in practice): a
// 64-bit division is a ~70-instruction routine, and the wide histogram's
// tiles, two values a thread, spent most of their instructions in two of
// them a tile (Nsight Compute: ~126 instructions a warp's value).
struct BoxPosition {
  uint64_t x, y, z;
};
// q = a / d and r = a - q d, by a 32-bit division where both fit.
__device__ __forceinline__ void divide(uint64_t a, uint64_t d, uint64_t& q, uint64_t& r) {
  if (a < (uint64_t{1} << 32) && d < (uint64_t{1} << 32)) {
    const uint32_t q32 = static_cast<uint32_t>(a) / static_cast<uint32_t>(d);
    q = q32, r = a - uint64_t{q32} * d;
  } else {
    q = a / d, r = a - q * d;
  }
}
__device__ __forceinline__ BoxPosition box_position(const EncodeBox& b, uint64_t t) {
  uint64_t row, x, y, z;
  divide(t, b.nx, row, x);
  divide(row, b.ny, z, y);
  return {x, y, z};
}

// A thread's walk over a tile: the position of its coefficient in the box,
// found by division once and then moved on by the block's stride (the
// kernels below divided twice per coefficient, which made them 3-4x slower
// than their memory traffic at 8192^2).
struct BoxWalk {
  uint64_t x = 0, y = 0, z = 0;
  BoxWalk() = default;
  __device__ BoxWalk(const EncodeBox& b, uint64_t t) {
    const BoxPosition q = box_position(b, t);
    x = q.x, y = q.y, z = q.z;
  }
  __device__ uint64_t index(const PlaneGeometry& g, const EncodeBox& b) const {
    return b.plane_base + (b.x0 + x) + g.width * ((b.y0 + y) + g.height * (b.z0 + z));
  }
  __device__ void advance(const EncodeBox& b, uint32_t step) {
    x += step;
    if (x < b.nx) return;
    if (b.nx >= step) {  // at most one row boundary crossed
      x -= b.nx;
      if (++y == b.ny) y = 0, ++z;
      return;
    }
    const BoxPosition q = box_position(b, x + b.nx * y);  // (32-bit divisions: boxes narrower than the stride)
    x = q.x, y = q.y, z += q.z;
  }
};

// Array index of coefficient t (box-relative, coefficient order) of box b.
__device__ __forceinline__ uint64_t coefficient_index(const PlaneGeometry& g, const EncodeBox& b, uint64_t t) {
  return BoxWalk(b, t).index(g, b);
}

// A thread's values of one tile, Threads threads a block. Every index is
// stepped to first and every load issued before any is used, so a thread has
// all its loads in flight at once (one at a time, the walk's branches
// between them, kept the tile kernels at a third of the memory's speed).
// A tile inside one row of its box (every tile of a large box: the finest
// levels' rows are thousands of values), starting 16-byte aligned and a
// whole number of vectors long, is read with vector loads, W values each
// (thread t takes vectors t, t + Threads, ...): the scalar walk left the
// tops pass at 1.7 TB/s. Otherwise value j of the tile is thread j %
// Threads's item j / Threads. Which item holds which value does not matter
// to the statistics; valid(i) says whether item i holds one.
template <unsigned Threads>
struct TileValues {
  static constexpr unsigned kItems = (kTileValues + Threads - 1) / Threads;
  static constexpr unsigned W = kItems >= 4 ? 4 : kItems;  // values per vector load
  static_assert(kItems % W == 0 && (W == 1 || W == 2 || W == 4), "whole vectors a thread");
  uint32_t z[kItems];  // zigzag values (0 where not valid)
  uint32_t mask = 0;   // bit i: item i holds a value
  __device__ bool valid(unsigned i) const { return (mask >> i) & 1; }
  __device__ TileValues(const PlaneGeometry& g, const EncodeBox& b, const EncodeTile& tile)
      : TileValues(g, b, tile, BoxWalk(b, tile.start)) {}
  // w0: the position of the tile's first coefficient (TileRun keeps it).
  __device__ TileValues(const PlaneGeometry& g, const EncodeBox& b, const EncodeTile& tile, const BoxWalk& w0) {
    const uint32_t t = threadIdx.x;
    const uint64_t at0 = w0.index(g, b);
    if (W > 1 && w0.x + tile.count <= b.nx && at0 % W == 0 && tile.count % W == 0) {  // uniform across the block
      using Vec = typename std::conditional<W == 4, int4, int2>::type;
#pragma unroll
      for (unsigned q = 0; q < kItems / W; ++q) {
        const uint32_t v = t + q * Threads;
        int32_t c[4] = {0, 0, 0, 0};
        if (v * W < tile.count) {
          const Vec x = *reinterpret_cast<const Vec*>(g.coeffs + at0 + uint64_t{v} * W);
          memcpy(c, &x, sizeof x);
          mask |= ((1u << W) - 1) << (q * W);
        }
#pragma unroll
        for (unsigned m = 0; m < W; ++m) z[q * W + m] = zigzag(c[m]);
      }
      return;
    }
    const uint32_t count = t < tile.count ? (tile.count - t + Threads - 1) / Threads : 0;
    uint64_t at[kItems];
    BoxWalk w(b, tile.start + min(t, tile.count));
#pragma unroll
    for (unsigned i = 0; i < kItems; ++i) {
      at[i] = w.index(g, b);
      w.advance(b, Threads);
    }
#pragma unroll
    for (unsigned i = 0; i < kItems; ++i) z[i] = i < count ? zigzag(g.coeffs[at[i]]) : 0;
    mask = count >= 32 ? ~0u : (1u << count) - 1;
  }
};

// A box's histogram: its smallest shift (wavelet::shift_rule) and the bins
// at that shift (at most kHistBins).
struct BoxBins {
  unsigned k;
  uint32_t bins;
};
__device__ inline BoxBins box_bins(uint32_t top) {
  const unsigned k = wavelet::shift_rule::smallest_shift(top);
  return {k, (top >> k) + 1};
}

// A run of one box's tiles: the box and the walk's position are found once
// for the run (a tile's start is the last one's plus kTileValues, its
// position one step of the walk), where a search over the boxes, the box's
// fields and two divisions a tile had cost the wide histogram kernel, two
// values a thread a tile, most of its ~140 instructions a warp's value
// (Nsight Compute, hdr_room16). Plain data: the symbols kernel keeps one in
// shared memory, advanced by one thread.
struct TileRun {
  EncodeTile tile;
  EncodeBox b;
  BoxWalk w;
  uint32_t next_box_tile = 0;  // tiles below next_box_tile are the box's
  // Tile `next`; `follows`: it is the one after the tile `at` gave last.
  // Returns whether the box was found (not stepped within).
  __device__ bool at(const EncodeBox* boxes, uint32_t box_count, uint32_t next, bool follows) {
    if (follows && next < next_box_tile) {  // uniform across the block
      tile.start += kTileValues;
      tile.count = static_cast<uint32_t>(min(uint64_t{kTileValues}, b.n - tile.start));
      w.advance(b, kTileValues);
      return false;
    }
    tile = tile_at(boxes, box_count, next);
    b = boxes[tile.box];
    next_box_tile = tile.box + 1 < box_count ? boxes[tile.box + 1].tile0 : ~0u;
    w = BoxWalk(b, tile.start);
    return true;
  }
};

// A block's consecutive tiles, every thread holding the same cursor: a
// TileRun and the box's bins. `at(ti)` for ti = first, first + 1, ...
struct TileCursor : TileRun {
  const EncodeBox* boxes;
  uint32_t box_count;
  const uint32_t* tops;
  uint32_t ti = ~0u;
  BoxBins bb{0, 0};
  __device__ TileCursor(const EncodeBox* bx, uint32_t count, const uint32_t* box_tops)
      : boxes(bx), box_count(count), tops(box_tops) {}
  __device__ void at(uint32_t next) {
    if (TileRun::at(boxes, box_count, next, ti != ~0u && next == ti + 1)) bb = box_bins(tops[b.slot]);
    ti = next;
  }
};

}  // namespace vlec::cuda::wavelet_gpu::encode_tiles
