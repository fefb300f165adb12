// tools/vlec/options.hpp: what the command line asked for, as plain structs,
// and their translation into the library's option structs.
//
// main.cpp fills these from CLI11; commands.cpp and bench.cpp only read them.
// Keeping them apart from the parser lets each command be called (and tested)
// without CLI11, and keeps the checks of option values in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vlec/vlec.hpp"

namespace vlec::cli {

constexpr unsigned kDefaultFrameMiB = 256;
constexpr unsigned kMaxFrameMiB = 16384;
constexpr const char* kSuffix = ".vlec";

// Options shared by compress, decompress and bench.
struct CodecSettings {
  int threads = 0;  // 0 = all cores
  std::string codec = "auto";
  std::string dtype = "u8";
  std::string backend = "auto";
  uint32_t chunk_elements = 0;   // 0 = library default
  unsigned max_code_length = 0;  // 0 = chosen from the data
};

// Options of --codec wavelet (images and volumes).
struct WaveletSettings {
  std::string shape;        // "WxH" or "WxHxD" (or "N"); empty = from a PGM/PPM header
  unsigned planes = 1;      // interleaved planes of a raw input, 1..4
  unsigned levels = 0;      // 0 = automatic
  bool no_colour_transform = false;
};

// Images larger than this are refused by --codec wavelet: the whole image is
// one frame, held in memory with ~9 bytes of working memory per sample.
constexpr uint64_t kMaxWaveletInputBytes = uint64_t{4} << 30;

// The compress/decompress command (the tool without a subcommand).
struct Settings {
  CodecSettings codec;
  WaveletSettings wavelet;
  bool decompress = false;
  bool to_stdout = false;       // -c
  std::string output;           // -o; empty = derived from the input
  bool force = false;           // -f
  bool remove_input = false;    // --rm
  bool verbose = false;         // -v
  bool quiet = false;           // -q
  unsigned frame_mib = kDefaultFrameMiB;
  std::vector<std::string> inputs;  // empty = stdin
};

// These throw CliError(kExitUsage) for a value the library would reject, and
// CliError(kExitOther) for --backend cuda without a usable GPU.
vlec::CompressOptions make_compress_options(const CodecSettings& s);
vlec::DecompressOptions make_decompress_options(const CodecSettings& s);
vlec::DType parse_dtype_or_throw(const std::string& s);

// "WxH[xD]" or "N" -> extents (a missing extent is 1). Throws CliError(kExitUsage).
std::vector<uint64_t> parse_shape(const std::string& s);

// Threads the library will use for `threads` (0 = all hardware threads).
unsigned effective_threads(int threads);

}  // namespace vlec::cli
