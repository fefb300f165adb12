// cuda/encode_pavle.cu: the "pavle" GPU Huffman encoder, after Balevic,
// "Parallel Variable-Length Encoding on GPGPUs" (PAVLE), writing exactly the
// CPU encoder's bytes (docs/FORMAT.md §5).
//
// PAVLE's three parallel steps, per lane of the chunk's layout:
//   1. codeword assignment: each symbol's (code, length) from a codeword
//      table cached in shared memory;
//   2. output positions: an exclusive prefix sum of the code lengths over the
//      lane's symbols (each thread sums its 16, a scan over the eight warps
//      adds the threads before it) gives each code its bit position in the
//      lane's bitstream;
//   3. parallel bit-level output: codes are OR-ed into the lane bitstreams in
//      shared memory with atomicOr on 32-bit words (a code that crosses a word
//      boundary touches two words), "several symbols per thread": the K codes
//      of a decoding step are first concatenated into one aggregate codeword
//      of at most T = K * L <= 32 bits (Balevic's aggregate codewords).
// Then the refill schedule gives each lane word its slot and the words are
// moved there (encode_common.cuh). The chunk is processed in pieces of 32
// rows whose lane bitstreams (at most 97 words per lane) fit in shared
// memory, each lane's partial word carried from piece to piece.
//
// Why it is fast: the bit positions come from a scan, not a serial packer,
// so every thread writes its codes independently; the atomics are on shared
// memory, where they are cheap, and the words are laid out [word][lane], so
// the 32 threads of a warp (32 lanes) never hit the same bank. Every output
// word is written once, straight to its slot; the steps' words of one warp
// go to neighbouring slots.
#include "cuda/encode_common.cuh"

namespace vlec::cuda {
namespace {

// put_bits_atomic: `len` bits (`code`, LSB first, zeros above) at bit `pos`
// of a lane bitstream whose word i is words[i][lane], zeroed beforehand, so
// that one atomic OR per touched word sets them.
__device__ __forceinline__ void put_bits_atomic(uint32_t (*words)[kLanes], unsigned lane, uint32_t pos, uint32_t code,
                                                uint32_t len) {
  const uint32_t kc = pos / 32, start = pos % 32;
  atomicOr(&words[kc][lane], code << start);
  if (start + len > 32) atomicOr(&words[kc + 1][lane], code >> (32 - start));  // the codeword's overflow
}

struct Pavle {
  static constexpr unsigned kMinBlocks = 4;
  struct Shared {
    uint32_t words[kPieceLaneWords][kLanes];  // the piece's lane bitstreams, word-major
  };

  // Before the scan: zero the lane bitstreams, the lanes' partial words from
  // the previous piece first.
  template <unsigned K>
  static __device__ void prepare(Shared& ss, const PieceShared& ps, const PieceThread&, uint32_t, unsigned warp,
                                 unsigned lane) {
    for (unsigned i = warp; i < kPieceLaneWords; i += kWarps) ss.words[i][lane] = i == 0 ? ps.carry[lane] : 0;
  }

  // After the scan: the thread's bit position in the piece's lane stream is
  // its lane's partial bits plus the exclusive prefix of the lengths before
  // it; each step's aggregate codeword goes out with put_bits_atomic.
  template <unsigned K>
  static __device__ void place(Shared& ss, const PieceShared&, const PieceThread& t, unsigned, unsigned lane) {
    uint32_t bitpos = t.c_thr - t.c_start / 32 * 32;
#pragma unroll
    for (unsigned s = 0; s < kThreadSyms / K; ++s) {
      uint32_t cw = 0, cwlen = 0;
#pragma unroll
      for (unsigned k = 0; k < K; ++k) {
        const uint32_t e = t.e[s * K + k];
        cw |= (e & 0xFFFFFFu) << cwlen;  // cwlen + length <= T <= 32, and cwlen < 32 while bits remain
        cwlen += e >> 24;
      }
      if (cwlen > 0) put_bits_atomic(ss.words, lane, bitpos, cw, cwlen);
      bitpos += cwlen;
    }
  }
};

}  // namespace

void launch_encode_pavle(const HuffmanEncodeArgs& a, cudaStream_t stream) { launch_pieces<Pavle>(a, stream); }

}  // namespace vlec::cuda
