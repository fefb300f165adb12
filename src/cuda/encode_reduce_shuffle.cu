// cuda/encode_reduce_shuffle.cu: the "reduce_shuffle" GPU Huffman encoder,
// after Tian et al., "Revisiting Huffman Coding: Toward Extreme Performance
// on Modern GPU Architectures" §IV-C, writing exactly the CPU encoder's bytes
// (docs/FORMAT.md §5).
//
// Each thread holds 16 consecutive symbols of one lane's stream (one piece of
// 32 rows of the chunk at a time, see encode_common.cuh; cell c of a lane
// region stands for the lane's symbol c of the piece, thread (w, j) owns
// lane j's cells 16w .. 16w+15).
//   - reduce_merge: the thread merges its codewords pairwise in registers,
//     r times: Merge((a, l)_2k, (a, l)_2k+1) = (a_2k ++ a_2k+1, l_2k + l_2k+1).
//     The reduction factor r follows the paper's rule
//     floor(log2 beta) + r + 1 = log2 32, beta = the chunk's average code
//     length (from pass A), so that a merged codeword averages 16 to 32 bits.
//     A merge that would exceed the 32-bit word is "breaking": the two halves
//     stay apart (and so does every group above them), and shuffle-merge
//     starts from their level.
//   - shuffle_merge: groups of 2^i cells, each holding l bits densely from its
//     first cell, are merged pairwise: the right group's ceil(l_R / 32) words
//     are moved to start right after the left group's l_L bits, each target
//     word formed from the residual high bits of one source word and the low
//     bits of the next (Tian's Figure 2), all reads before all writes, so the
//     batch move is free of data contention. Levels 0..3 stay inside one
//     thread's cells; levels 4..6 span the warps (one barrier each); a last
//     merge appends the piece's stream to the lane's partial word carried
//     from the previous piece. The lane's stream of the piece is then dense.
// Then the refill schedule gives each lane word its slot and the words are
// moved there (encode_common.cuh).
//
// Why it is fast: reduce-merge turns 16 codes of a few bits into a few
// word-sized units with register operations only; shuffle-merge then moves
// whole words, O(log n) batch moves in shared memory instead of a serial bit
// packer, and words are laid out [cell][lane] so that a warp's accesses fall
// in 32 different banks. Every output word is written once, to its slot.
#include "cuda/encode_common.cuh"

namespace vlec::cuda {
namespace {

constexpr unsigned kMaxReduce = 4;                    // 16 = 2^4 codewords per thread
constexpr unsigned kRegionCells = kWarps * kThreadSyms;  // 128 cells per lane and piece
constexpr unsigned kThreadLevels = 4;                 // shuffle levels inside one thread's cells

// Tian's reduction factor: floor(log2 beta) + r + 1 = log2(32).
__device__ __forceinline__ unsigned reduction_factor(uint32_t avg_bits) {
  const int lg = 31 - __clz(max(avg_bits, 1u));
  return static_cast<unsigned>(min(max(4 - lg, 0), static_cast<int>(kMaxReduce)));
}

// reduce_merge: r levels of pairwise merges of N (code, length) pairs, in
// place: after level l a merged codeword sits at index k (a multiple of 2^l)
// and len[k + 2^(l-1)] is 0. Bit k of `broken` marks a group at k whose
// parts did not merge. Returns the lowest level from which shuffle-merge must
// run: r, or l - 1 where a merge at level l broke.
template <unsigned N>
__device__ __forceinline__ unsigned reduce_merge(uint32_t (&code)[N], uint32_t (&len)[N], unsigned r,
                                                 uint32_t& broken) {
  unsigned first = r;
#pragma unroll
  for (unsigned l = 1; (1u << l) <= N; ++l) {
    if (l > r) break;
    const unsigned h = 1u << (l - 1);
#pragma unroll
    for (unsigned k = 0; k < N; k += 2 * h) {
      const bool ok = ((broken >> k | broken >> (k + h)) & 1) == 0 && len[k] + len[k + h] <= 32;
      if (ok) {
        code[k] |= len[k] < 32 ? code[k + h] << len[k] : 0u;
        len[k] += len[k + h];
        len[k + h] = 0;
      } else {
        broken |= 1u << k;  // breaking
        first = min(first, l - 1);
      }
    }
  }
  return first;
}

struct ReduceShuffle {
  static constexpr unsigned kMinBlocks = 4;
  struct Shared {
    uint32_t words[1 + kRegionCells][kLanes];  // cell 0: the lane's partial word; then the lane's region
    uint16_t len[kRegionCells][kLanes];        // bits of the group that starts at a region cell (0: none)
  };

  // One target word of a merge: the right group (its words from cell `right`,
  // nR of them) appended after the left group's bits, of which `off` sit in
  // its last, partial word `tail`. Target m is word tail + m.
  static __device__ __forceinline__ uint32_t merged_word(const Shared& ss, unsigned lane, unsigned tail,
                                                         unsigned right, uint32_t off, uint32_t nR, unsigned m) {
    uint32_t v = m < nR ? ss.words[right + m][lane] << off : 0u;
    if (off) v |= m == 0 ? ss.words[tail][lane] : ss.words[right + m - 1][lane] >> (32 - off);
    return v;
  }

  // shuffle_merge, one level inside the thread's 16 cells from c0: each pair
  // of groups of 2^level cells becomes one. The right group's words move
  // down, to lower cells, so taking them in ascending order, with the word
  // read last kept in a register, never overwrites a word before it is read.
  static __device__ __forceinline__ void shuffle_merge_thread(Shared& ss, unsigned level, unsigned c0,
                                                              unsigned lane) {
    const unsigned half = 1u << level;
    for (unsigned start = c0; start < c0 + kThreadSyms; start += 2 * half) {
      const uint32_t lL = ss.len[start][lane], lR = ss.len[start + half][lane];
      if (lR == 0) continue;
      const uint32_t off = lL % 32, nR = (lR + 31) / 32, nT = (off + lR + 31) / 32;
      const unsigned tail = 1 + start + lL / 32, right = 1 + start + half;
      uint32_t prev = off ? ss.words[tail][lane] << (32 - off) : 0u;  // so that prev >> (32 - off) gives it back
      for (unsigned m = 0; m < nT; ++m) {
        const uint32_t cur = m < nR ? ss.words[right + m][lane] : 0u;
        ss.words[tail + m][lane] = off ? (cur << off | prev >> (32 - off)) : cur;
        prev = cur;
      }
      ss.len[start][lane] = static_cast<uint16_t>(lL + lR);
    }
  }

  // shuffle_merge, one level whose pairs span several threads' cells
  // (level >= 4): every thread of the block forms the targets among its
  // cells [c0, c0 + 16); all reads of the level come before all writes.
  // Target m of the pair is cell 1 + start + lL / 32 + m.
  static __device__ __forceinline__ void shuffle_merge_block(Shared& ss, unsigned level, unsigned c0,
                                                             unsigned lane) {
    const unsigned half = 1u << level, start = c0 & ~(2 * half - 1);
    const uint32_t lL = ss.len[start][lane], lR = ss.len[start + half][lane];
    const uint32_t off = lL % 32, nR = (lR + 31) / 32, nT = (off + lR + 31) / 32;
    const unsigned m0 = c0 - start;
    uint32_t val[kThreadSyms];
#pragma unroll
    for (unsigned k = 0; k < kThreadSyms; ++k)
      val[k] = m0 + k < nT ? merged_word(ss, lane, 1 + start + lL / 32, 1 + start + half, off, nR, m0 + k) : 0u;
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < kThreadSyms; ++k)
      if (m0 + k < nT) ss.words[1 + start + lL / 32 + m0 + k][lane] = val[k];
    if (m0 == 0) ss.len[start][lane] = static_cast<uint16_t>(lL + lR);
    __syncthreads();
  }

  // The last merge: the piece's dense stream (region cells, len[0] bits)
  // appended to the lane's partial word (cell 0, `off` bits).
  static __device__ __forceinline__ void carry_merge(Shared& ss, uint32_t off, unsigned warp, unsigned lane) {
    const uint32_t lR = ss.len[0][lane], nR = (lR + 31) / 32, nT = (off + lR + 31) / 32;
    uint32_t val[kThreadSyms];
#pragma unroll
    for (unsigned k = 0; k < kThreadSyms; ++k) {
      const unsigned m = warp * kThreadSyms + k;
      val[k] = m < nT ? merged_word(ss, lane, 0, 1, off, nR, m) : 0u;
    }
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < kThreadSyms; ++k) {
      const unsigned m = warp * kThreadSyms + k;
      if (m < nT) ss.words[m][lane] = val[k];
    }
  }

  // Before the scan: reduce-merge, the units to the thread's cells, and the
  // shuffle-merge levels inside the thread's cells.
  template <unsigned K>
  static __device__ void prepare(Shared& ss, const PieceShared& ps, const PieceThread& t, uint32_t avg_bits,
                                 unsigned warp, unsigned lane) {
    // The thread's 16 codewords in two halves of 8 (fewer registers), the
    // halves joined by the fourth level.
    const unsigned r = reduction_factor(avg_bits), c0 = warp * kThreadSyms;
    unsigned first = r;
    uint32_t head_code = 0, head_len = 0;
    bool head_whole = false;
#pragma unroll
    for (unsigned half = 0; half < 2; ++half) {
      constexpr unsigned kHalf = kThreadSyms / 2;
      uint32_t code[kHalf], len[kHalf], broken = 0;
#pragma unroll
      for (unsigned k = 0; k < kHalf; ++k) code[k] = t.e[kHalf * half + k] & 0xFFFFFFu, len[k] = t.e[kHalf * half + k] >> 24;
      first = min(first, reduce_merge(code, len, min(r, kMaxReduce - 1), broken));
      const bool whole = (broken & 1) == 0;  // (with r = 4) the half is one codeword
      if (half == 0) {
        head_code = code[0], head_len = len[0], head_whole = whole;
      } else if (r == kMaxReduce) {
        if (head_whole && whole && head_len + len[0] <= 32) {
          head_code |= head_len < 32 ? code[0] << head_len : 0u;
          head_len += len[0];
          len[0] = 0;
        } else {
          first = min(first, kMaxReduce - 1);  // breaking at the last level
        }
      }
#pragma unroll
      for (unsigned k = half == 0 ? 1 : 0; k < kHalf; ++k) {
        ss.words[1 + c0 + kHalf * half + k][lane] = code[k];
        ss.len[c0 + kHalf * half + k][lane] = static_cast<uint16_t>(len[k]);
      }
    }
    ss.words[1 + c0][lane] = head_code;
    ss.len[c0][lane] = static_cast<uint16_t>(head_len);
    if (warp == 0) ss.words[0][lane] = ps.carry[lane];
    for (unsigned level = first; level < kThreadLevels; ++level) shuffle_merge_thread(ss, level, c0, lane);
  }

  // After the scan (the block's cells are all written): the levels across
  // warps, then the lane's partial word.
  template <unsigned K>
  static __device__ void place(Shared& ss, const PieceShared&, const PieceThread& t, unsigned warp, unsigned lane) {
    const unsigned c0 = warp * kThreadSyms;
    for (unsigned level = kThreadLevels; (2u << level) <= kRegionCells; ++level)
      shuffle_merge_block(ss, level, c0, lane);
    carry_merge(ss, t.c_start % 32, warp, lane);
  }
};

}  // namespace

void launch_encode_reduce_shuffle(const HuffmanEncodeArgs& a, cudaStream_t stream) {
  launch_pieces<ReduceShuffle>(a, stream);
}

}  // namespace vlec::cuda
