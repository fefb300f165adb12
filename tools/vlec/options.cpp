// tools/vlec/options.cpp: checks option values and builds the library's
// CompressOptions/DecompressOptions from them (see options.hpp).
//
// The library validates its options too; checking here as well means a bad
// value is reported as a usage error (exit 1) before any file is touched.
#include "options.hpp"

#include <algorithm>
#include <thread>

#include "exit_codes.hpp"

namespace vlec::cli {

namespace {

vlec::Backend parse_backend_or_throw(const std::string& s) {
  auto b = vlec::parse_backend(s);
  if (!b) throw CliError(kExitUsage, "unknown backend '" + s + "' (choose auto, cpu or cuda)");
  if (*b == vlec::Backend::cuda && !vlec::cuda_available())
    throw CliError(kExitOther,
                   "--backend cuda: the CUDA backend is not available (not built in, or no GPU)");
  return *b;
}

unsigned checked_threads(int threads) {
  if (threads < 0) throw CliError(kExitUsage, "--threads must be 0 (all cores) or more");
  return static_cast<unsigned>(threads);
}

}  // namespace

vlec::DType parse_dtype_or_throw(const std::string& s) {
  auto t = vlec::parse_dtype(s);
  if (!t) throw CliError(kExitUsage, "unknown dtype '" + s + "' (choose u8, u16, u32 or u64)");
  return *t;
}

vlec::CompressOptions make_compress_options(const CodecSettings& s) {
  vlec::CompressOptions o;
  auto codec = vlec::parse_codec(s.codec);
  if (!codec)
    throw CliError(kExitUsage,
                   "unknown codec '" + s.codec + "' (choose auto, huffman, rle, rle+huffman, raw or wavelet)");
  o.codec = *codec;
  o.dtype = parse_dtype_or_throw(s.dtype);
  if (s.chunk_elements % 128 != 0)
    throw CliError(kExitUsage, "--chunk must be a multiple of 128 elements (or 0 for the default)");
  o.chunk_elements = s.chunk_elements;
  o.threads = checked_threads(s.threads);
  if (s.max_code_length > 24)
    throw CliError(kExitUsage, "--max-code-length must be between 1 and 24 (or 0 for automatic)");
  o.max_code_length = s.max_code_length;
  o.backend = parse_backend_or_throw(s.backend);
  return o;
}

std::vector<uint64_t> parse_shape(const std::string& s) {
  std::vector<uint64_t> dims;
  std::size_t at = 0;
  auto bad = [&] { return CliError(kExitUsage, "--shape '" + s + "': expected WxH or WxHxD (positive integers)"); };
  while (at <= s.size()) {
    const std::size_t end = std::min(s.find('x', at), s.size());
    if (end == at || end - at > 18) throw bad();
    uint64_t v = 0;
    for (std::size_t i = at; i < end; ++i) {
      if (s[i] < '0' || s[i] > '9') throw bad();
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    }
    if (v == 0) throw bad();
    dims.push_back(v);
    at = end + 1;
  }
  if (dims.empty() || dims.size() > 3) throw bad();
  dims.resize(3, 1);
  return dims;
}

vlec::DecompressOptions make_decompress_options(const CodecSettings& s) {
  vlec::DecompressOptions o;
  o.threads = checked_threads(s.threads);
  o.backend = parse_backend_or_throw(s.backend);
  return o;
}

unsigned effective_threads(int threads) {
  if (threads > 0) return static_cast<unsigned>(threads);
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

}  // namespace vlec::cli
