// wavelet/encode_plan.hpp: the wavelet writer's decisions (docs/FORMAT.md
// §10.6), shared by the CPU writer (encode.cpp) and the GPU writer
// (cuda/wavelet_encode.cu) so that both make them with the same code and
// write the same bytes:
//  * the frame's header fields from the image and options (levels, RCT,
//    byte order, prefix, checksum definition);
//  * the groups (merged coarse levels, per level or per subband) and each
//    group's statistics, from a caller's function that returns the
//    statistics of a set of subband boxes of a plane: the CPU counts them
//    in the coefficients, the GPU merges the histograms it counted per box
//    (merge_stats gives the same histogram either way, FORMAT §10.6);
//  * each group's shift, symbol type and embedded codec;
//  * the header area once every embedded frame's size is known.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "vlec/types.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet/codec.hpp"
#include "wavelet/frame_format.hpp"
#include "wavelet/group_io.hpp"
#include "wavelet/layout.hpp"

namespace vlec::wavelet {

// The header fields the writer sets before coding (no groups, checksum 0),
// after the argument checks of wavelet_compress (throws invalid_argument).
Header writer_header(const WaveletImage& image, const WaveletOptions& options);

// Statistics of the coefficients of `boxes` (non-empty, coefficient order)
// of plane `plane`. Called from several threads at once.
using BoxStatsFn = std::function<ValueStats(unsigned plane, const std::vector<Box>& boxes)>;

struct EncodePlan {
  std::vector<GroupSpec> specs;
  std::vector<ValueStats> stats;  // per spec
};

// The groups of all planes and their statistics (FORMAT §10.6 Groups).
// `unions`: stats_of answers for any group of boxes at the cost of one call
// (the GPU writer has evaluated every group the writer may form), so a
// level's or a group's statistics are asked for, not merged here from its
// subbands' (which needs their histograms). The decisions are the same.
EncodePlan plan_encode(const Subbands& sb, unsigned planes, unsigned threads, const EncoderTuning& tuning,
                       const BoxStatsFn& stats_of, bool unions = false);

// A group's shift (FORMAT §10.6 Shift) and, if `hist_out` is given, the
// histogram of its symbols at that shift.
unsigned group_shift(const ValueStats& stats, const EncoderTuning& tuning, std::vector<uint64_t>* hist_out = nullptr);

// The type of a group's symbols: u8 when every symbol (top >> k) is < 256.
inline DType symbol_type(uint32_t top, unsigned shift) { return (top >> shift) < 256 ? DType::u8 : DType::u16; }

// The embedded frame's codec (FORMAT §10.6 Embedded codec). Runs can only
// pay where they are long: with fewer than 3 symbols per run on average,
// rle+huffman spends more on run lengths than Huffman's 1-bit minimum per
// symbol saves, so Huffman is taken without the full statistics pass of
// choose_codec (which would otherwise be the largest cost of the encoder on
// photographs). runs_pick_huffman() says whether the symbols are needed.
inline bool runs_pick_huffman(uint64_t runs, uint64_t n) { return runs * 3 > n; }
Codec embedded_codec(uint64_t runs, uint64_t n, const uint8_t* symbols, DType type, unsigned threads);

// Fills h.groups (spec, shift, offsets: each group's embedded frame of
// frame_bytes[g], then low_bits_bytes(n, shift) bytes of low bits) and
// returns the frame's header area (fixed header, section, padding, header
// checksum); *frame_bytes_out gets the whole frame's size.
std::vector<uint8_t> finish_header(Header& h, const std::vector<GroupSpec>& specs,
                                   const std::vector<unsigned>& shifts, const std::vector<uint64_t>& samples,
                                   const std::vector<uint64_t>& frame_bytes, uint64_t* frame_bytes_out);

}  // namespace vlec::wavelet
