// common/common.cpp: names of the public enums, the error path behind
// SAFETY_CHECK, and the checksum.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/checksum.hpp"
#include "common/safety.hpp"
#include "vlec/error.hpp"
#include "vlec/types.hpp"

namespace vlec {

uint64_t checksum64(const void* data, std::size_t bytes) { return XXH3_64bits(data, bytes); }

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid argument";
    case ErrorCode::value_out_of_alphabet: return "value out of alphabet";
    case ErrorCode::output_too_small: return "output buffer too small";
    case ErrorCode::bad_magic: return "not a vlec stream";
    case ErrorCode::unsupported_version: return "unsupported format version";
    case ErrorCode::corrupt_stream: return "corrupt stream";
    case ErrorCode::truncated_stream: return "truncated stream";
    case ErrorCode::checksum_mismatch: return "checksum mismatch";
    case ErrorCode::io_error: return "I/O error";
    case ErrorCode::cuda_error: return "CUDA error";
    case ErrorCode::unavailable: return "unavailable";
  }
  return "unknown error";
}

std::string_view to_string(DType t) {
  switch (t) {
    case DType::u8: return "u8";
    case DType::u16: return "u16";
    case DType::u32: return "u32";
    case DType::u64: return "u64";
  }
  return "?";
}

std::string_view to_string(Codec c) {
  switch (c) {
    case Codec::raw: return "raw";
    case Codec::huffman: return "huffman";
    case Codec::rle: return "rle";
    case Codec::rle_huffman: return "rle+huffman";
    case Codec::wavelet: return "wavelet";
  }
  return "?";
}

std::string_view to_string(CodecChoice c) {
  switch (c) {
    case CodecChoice::automatic: return "auto";
    case CodecChoice::raw: return "raw";
    case CodecChoice::huffman: return "huffman";
    case CodecChoice::rle: return "rle";
    case CodecChoice::rle_huffman: return "rle+huffman";
    case CodecChoice::wavelet: return "wavelet";
  }
  return "?";
}

std::string_view to_string(Backend b) {
  switch (b) {
    case Backend::automatic: return "auto";
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : {DType::u8, DType::u16, DType::u32, DType::u64})
    if (s == to_string(t)) return t;
  return std::nullopt;
}

std::optional<CodecChoice> parse_codec(std::string_view s) {
  for (CodecChoice c : {CodecChoice::automatic, CodecChoice::raw, CodecChoice::huffman,
                        CodecChoice::rle, CodecChoice::rle_huffman, CodecChoice::wavelet})
    if (s == to_string(c)) return c;
  return std::nullopt;
}

std::optional<Backend> parse_backend(std::string_view s) {
  for (Backend b : {Backend::automatic, Backend::cpu, Backend::cuda})
    if (s == to_string(b)) return b;
  return std::nullopt;
}

namespace detail {
void throw_error(ErrorCode code, const std::string& message) { throw Error(code, message); }
}  // namespace detail

}  // namespace vlec
