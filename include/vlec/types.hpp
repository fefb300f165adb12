// vlec/types.hpp: the small vocabulary shared by the whole public API:
// element types, codecs and backends, with their names as the CLI spells them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vlec {

// Element type of the uncompressed data. The numeric value is the element
// width in bytes and is what a frame header stores (docs/FORMAT.md §2).
enum class DType : uint8_t { u8 = 1, u16 = 2, u32 = 4, u64 = 8 };

// Codec of a frame. The numeric value is stored in the frame header.
// wavelet (4) frames hold an image or volume coded after the 5/3 wavelet
// transform (vlec/wavelet.hpp); they need format 1.1 readers.
enum class Codec : uint8_t { raw = 0, huffman = 1, rle = 2, rle_huffman = 3, wavelet = 4 };

// What the caller asks for: a codec, or `automatic` to let vlec pick one from
// the histogram and run statistics of the data (never wavelet). `wavelet`
// through vlec::compress codes the (non-empty) input as a one-dimensional
// u8/u16 signal; images and volumes go through vlec::wavelet_compress, which
// knows their shape.
enum class CodecChoice : uint8_t { automatic, raw, huffman, rle, rle_huffman, wavelet };

enum class Backend : uint8_t { automatic, cpu, cuda };

inline std::size_t dtype_bytes(DType t) { return static_cast<std::size_t>(t); }

std::string_view to_string(DType t);
std::string_view to_string(Codec c);
std::string_view to_string(CodecChoice c);
std::string_view to_string(Backend b);

// Parse the CLI spellings ("u16", "rle+huffman", "auto", ...); nullopt if unknown.
std::optional<DType> parse_dtype(std::string_view s);
std::optional<CodecChoice> parse_codec(std::string_view s);
std::optional<Backend> parse_backend(std::string_view s);

}  // namespace vlec
