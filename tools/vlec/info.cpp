// tools/vlec/info.cpp: `vlec info FILE...`, the facts of a stream read from its
// frame headers (library inspect()), without decoding any payload.
//
// Frames are read one at a time, like decompression, so memory is bounded by
// the largest frame. Per-stream facts are aggregated over frames; a field that
// differs between frames is shown as "mixed: a x2, b x1". With -v a per-frame
// table follows.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "progress.hpp"

namespace vlec::cli {

namespace {

// Distinct values of one field over the frames, in first-seen order.
class Distinct {
 public:
  void add(const std::string& v) {
    for (auto& [value, n] : seen_)
      if (value == v) {
        ++n;
        return;
      }
    seen_.emplace_back(v, 1);
  }
  std::string str() const {
    if (seen_.empty()) return "-";
    if (seen_.size() == 1) return seen_[0].first;
    std::string out = "mixed: ";
    for (std::size_t i = 0; i < seen_.size(); ++i) {
      if (i) out += ", ";
      out += seen_[i].first + " x" + std::to_string(seen_[i].second);
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, uint64_t>> seen_;
};

void print_field(const char* key, const std::string& value) {
  std::printf("  %-17s %s\n", (std::string(key) + ":").c_str(), value.c_str());
}

std::string num(uint64_t v) { return std::to_string(v); }

void info_one(const std::string& path, bool verbose) {
  InputFile in(path);
  Buffer frame;
  std::vector<vlec::FrameInfo> frames;
  uint64_t stream_bytes = 0;
  for (;;) {
    uint64_t fsize = read_frame(in, frame, frames.size());
    if (fsize == 0) break;
    vlec::StreamInfo si = vlec::inspect(frame.data(), static_cast<std::size_t>(fsize));
    for (const auto& f : si.frames) frames.push_back(f);
    stream_bytes += fsize;
  }

  Distinct codec, dtype, chunk, version;
  uint64_t elements = 0, decompressed = 0, chunks = 0, raw_chunks = 0, header_bytes = 0;
  unsigned max_len = 0;
  uint32_t alphabet = 0;
  for (const auto& f : frames) {
    codec.add(std::string(vlec::to_string(f.codec)));
    dtype.add(std::string(vlec::to_string(f.dtype)));
    chunk.add(num(f.chunk_elements) + " elements");
    version.add(num(f.format_major) + "." + num(f.format_minor));
    elements += f.elements;
    decompressed += f.elements * vlec::dtype_bytes(f.dtype);
    chunks += f.chunks;
    raw_chunks += f.raw_chunks;
    header_bytes += f.header_bytes;
    if (f.max_code_length > max_len) max_len = f.max_code_length;
    if (f.alphabet_size > alphabet) alphabet = f.alphabet_size;
  }

  char ratio[32] = "-";
  if (stream_bytes)
    std::snprintf(ratio, sizeof ratio, "%.3f",
                  static_cast<double>(decompressed) / static_cast<double>(stream_bytes));

  std::printf("%s\n", in.label().c_str());
  print_field("format version", version.str());
  print_field("frames", num(frames.size()));
  print_field("codec", codec.str());
  print_field("dtype", dtype.str());
  print_field("elements", num(elements));
  print_field("chunk size", chunk.str());
  print_field("chunks", num(chunks));
  print_field("raw chunks", num(raw_chunks));
  print_field("compressed", num(stream_bytes) + " bytes (" + format_bytes(stream_bytes) + ")");
  print_field("decompressed", num(decompressed) + " bytes (" + format_bytes(decompressed) + ")");
  print_field("header bytes", num(header_bytes));
  print_field("ratio", ratio);
  print_field("max code length", max_len ? num(max_len) : std::string("- (no Huffman codebook)"));
  print_field("alphabet size", alphabet ? num(alphabet) : std::string("-"));

  if (verbose) {
    std::printf("  %5s  %-11s %-5s %12s %8s %8s %8s %12s %8s %7s %8s\n", "frame", "codec", "dtype",
                "elements", "chunk", "chunks", "raw", "compressed", "header", "maxlen", "alphabet");
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const auto& f = frames[i];
      std::printf("  %5zu  %-11s %-5s %12llu %8u %8llu %8llu %12llu %8llu %7u %8u\n", i,
                  std::string(vlec::to_string(f.codec)).c_str(), std::string(vlec::to_string(f.dtype)).c_str(),
                  static_cast<unsigned long long>(f.elements), f.chunk_elements,
                  static_cast<unsigned long long>(f.chunks), static_cast<unsigned long long>(f.raw_chunks),
                  static_cast<unsigned long long>(f.frame_bytes), static_cast<unsigned long long>(f.header_bytes),
                  f.max_code_length, f.alphabet_size);
    }
  }
  std::fflush(stdout);
}

}  // namespace

int run_info(const std::vector<std::string>& files, bool verbose) {
  int rc = kExitSuccess;
  int stdin_count = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    if (is_stdio_name(path) && ++stdin_count > 1) {
      int code = kExitUsage;
      std::fprintf(stderr, "vlec: stdin: can only be read once\n");
      if (rc == kExitSuccess) rc = code;
      continue;
    }
    if (i > 0) std::printf("\n");
    try {
      info_one(path, verbose);
    } catch (...) {
      int code = report_current_exception(is_stdio_name(path) ? "stdin" : path);
      if (rc == kExitSuccess) rc = code;
    }
  }
  return rc;
}

}  // namespace vlec::cli
