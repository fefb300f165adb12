// tools/vlec/commands.cpp: compress and decompress, streaming one frame at a
// time so that memory stays bounded whatever the input size.
//
// Compression reads the input in blocks of --frame-size MiB (a multiple of
// every element width) and writes one frame per block; this is what lets
// stdin of unknown length be compressed. Decompression reads a frame's fixed
// header, asks the library for the frame's size, reads the rest, decodes and
// writes it. Outputs go through OutputFile, so a failure anywhere leaves no
// partial file and the input is removed (--rm) only after the output is in
// place.
#include "commands.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <new>
#include <sstream>

#include "exit_codes.hpp"
#include "progress.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet/pnm.hpp"

namespace vlec::cli {

namespace {

using Clock = std::chrono::steady_clock;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string base_name(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Counts frames per codec, for the -v summary ("huffman", "huffman x2, raw").
class CodecTally {
 public:
  void add(vlec::Codec c) { ++counts_[std::string(vlec::to_string(c))]; }
  std::string str() const {
    if (counts_.empty()) return "-";
    if (counts_.size() == 1) return counts_.begin()->first;
    std::string out;
    for (const auto& [name, n] : counts_) {
      if (!out.empty()) out += ", ";
      out += name + " x" + std::to_string(n);
    }
    return out;
  }

 private:
  std::map<std::string, uint64_t> counts_;
};

std::string percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

std::string ratio_text(uint64_t raw, uint64_t packed) {
  if (packed == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(raw) / static_cast<double>(packed));
  return buf;
}

// Where the output of `input` goes; throws CliError for names we cannot derive.
std::string output_path_for(const std::string& input, const Settings& s) {
  if (s.to_stdout) return "-";
  if (!s.output.empty()) return s.output;
  if (is_stdio_name(input)) return "-";
  if (s.decompress) {
    if (!ends_with(input, kSuffix) || base_name(input) == kSuffix)
      throw CliError(kExitUsage, std::string("unknown suffix (expected ") + kSuffix +
                                     "); use -o to name the output or -c to write to stdout");
    return input.substr(0, input.size() - std::strlen(kSuffix));
  }
  if (ends_with(input, kSuffix) && !s.force)
    throw CliError(kExitUsage, std::string("already has the ") + kSuffix +
                                   " suffix; not compressed again (use -f to force, or -o)");
  return input + kSuffix;
}

OutputPolicy policy_for(const InputFile& in, const Settings& s) {
  OutputPolicy p;
  p.force = s.force;
  if (in.is_regular() && !in.is_stdin()) p.mode = in.mode() & 0777;
  p.input = &in;
  return p;
}

void finish(const InputFile& in, OutputFile& out, const Settings& s) {
  out.commit();
  // Like zstd, --rm is ignored when the output is stdout; it is also ignored
  // for /dev/null and other non-regular outputs, which keep nothing.
  if (!s.remove_input || in.is_stdin() || out.is_stdout()) return;
  if (!out.is_regular_file()) {
    if (!s.quiet)
      std::fprintf(stderr, "vlec: %s: --rm ignored: %s is not a regular file\n", in.label().c_str(),
                   out.label().c_str());
    return;
  }
  remove_input(in.path());
}

void compress_one(const std::string& input, const Settings& s, const vlec::CompressOptions& opts) {
  const std::string out_path = output_path_for(input, s);
  if (is_stdio_name(out_path) && stdout_is_terminal() && !s.force)
    throw CliError(kExitOutput, "refusing to write compressed data to a terminal (use -f to force, or -o FILE)");

  auto start = Clock::now();
  InputFile in(input);
  const std::size_t width = vlec::dtype_bytes(opts.dtype);
  const std::string dtype_name(vlec::to_string(opts.dtype));
  auto not_whole = [&](uint64_t size) {
    return CliError(kExitInput, "input size " + std::to_string(size) +
                                    " bytes is not a multiple of the element width " +
                                    std::to_string(width) + " (--dtype " + dtype_name + ")");
  };
  if (in.size() && *in.size() % width != 0) throw not_whole(*in.size());

  OutputFile out(out_path, policy_for(in, s));

  // Block = one frame. A known small input needs no full-size block.
  std::size_t block = static_cast<std::size_t>(s.frame_mib) << 20;
  if (in.size() && *in.size() < block)
    block = static_cast<std::size_t>(std::max<uint64_t>(*in.size() + (width - *in.size() % width) % width, width));
  Buffer raw(block);
  Buffer packed(vlec::compress_bound(block, opts));

  Progress progress(in.label(), in.size().value_or(0), s.quiet);
  CodecTally codecs;
  uint64_t frames = 0;
  for (;;) {
    std::size_t n = in.read_full(raw.data(), block);
    if (n == 0 && frames > 0) break;  // an empty input still gets one (empty) frame
    if (n % width != 0) throw not_whole(in.consumed());
    std::size_t c = vlec::compress(raw.data(), n, packed.data(), packed.size(), opts);
    if (s.verbose) codecs.add(vlec::inspect(packed.data(), c).frames.at(0).codec);
    out.write(packed.data(), c);
    ++frames;
    progress.update(in.consumed());
    if (n < block) break;
  }
  finish(in, out, s);
  progress.clear();

  if (s.verbose) {
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    std::fprintf(stderr,
                 "%s: %llu -> %llu bytes (%s), ratio %s, codec %s, dtype %s, %llu frame%s, %s -> %s\n",
                 in.label().c_str(), static_cast<unsigned long long>(in.consumed()),
                 static_cast<unsigned long long>(out.written()), percent(out.written(), in.consumed()).c_str(),
                 ratio_text(in.consumed(), out.written()).c_str(), codecs.str().c_str(), dtype_name.c_str(),
                 static_cast<unsigned long long>(frames), frames == 1 ? "" : "s",
                 format_rate(in.consumed(), secs).c_str(), out.label().c_str());
  }
}

// Reads a whole input (a wavelet image is one frame), refusing more than
// kMaxWaveletInputBytes.
std::vector<uint8_t> read_image(InputFile& in) {
  if (in.size() && *in.size() > kMaxWaveletInputBytes)
    throw CliError(kExitInput, "image of " + std::to_string(*in.size()) + " bytes is above the wavelet codec's limit of " +
                                   std::to_string(kMaxWaveletInputBytes) + " bytes (one frame per image)");
  std::vector<uint8_t> data;
  constexpr std::size_t kStep = std::size_t{16} << 20;
  for (;;) {
    const std::size_t have = data.size();
    data.resize(have + kStep);
    const std::size_t got = in.read_full(data.data() + have, kStep);
    data.resize(have + got);
    if (data.size() > kMaxWaveletInputBytes)
      throw CliError(kExitInput, "image is above the wavelet codec's limit of " +
                                     std::to_string(kMaxWaveletInputBytes) + " bytes (one frame per image)");
    if (got < kStep) return data;
  }
}

// --codec wavelet: a PGM/PPM file (shape, planes and type from its header,
// which the frame keeps so that -d restores the file byte for byte), or a
// raw file described by --shape, --planes and --dtype.
void compress_wavelet_one(const std::string& input, const Settings& s, const vlec::CompressOptions& opts) {
  const std::string out_path = output_path_for(input, s);
  if (is_stdio_name(out_path) && stdout_is_terminal() && !s.force)
    throw CliError(kExitOutput, "refusing to write compressed data to a terminal (use -f to force, or -o FILE)");
  auto start = Clock::now();
  InputFile in(input);
  OutputFile out(out_path, policy_for(in, s));
  const std::vector<uint8_t> data = read_image(in);

  vlec::WaveletOptions wo;
  wo.levels = s.wavelet.levels;
  wo.colour_transform = !s.wavelet.no_colour_transform;
  wo.threads = opts.threads;
  wo.backend = opts.backend;
  vlec::WaveletImage im;
  std::vector<uint8_t> stream;
  std::string kind = "raw";
  if (s.wavelet.shape.empty()) {
    if (!vlec::pnm::looks_like_pnm(data.data(), data.size()))
      throw CliError(kExitUsage, "--codec wavelet needs --shape WxH[xD] (and --dtype, --planes) for a raw input; "
                                 "only binary PGM (P5) and PPM (P6) files describe themselves");
    vlec::pnm::Parsed p;
    try {
      p = vlec::pnm::parse(data.data(), data.size());
    } catch (const vlec::Error& e) {
      throw CliError(kExitInput, e.what());
    }
    im = p.image;
    vlec::pnm::set_container(data.data(), p, wo);
    const std::vector<uint8_t> samples = vlec::pnm::host_samples(data.data(), p);
    stream = vlec::wavelet_compress(samples.data(), im, wo);
    kind = p.image.planes == 3 ? "PPM" : "PGM";
  } else {
    const std::vector<uint64_t> dims = parse_shape(s.wavelet.shape);
    if (opts.dtype != vlec::DType::u8 && opts.dtype != vlec::DType::u16)
      throw CliError(kExitUsage, "--codec wavelet takes --dtype u8 or u16");
    im.width = dims[0], im.height = dims[1], im.depth = dims[2];
    im.planes = s.wavelet.planes;
    im.dtype = opts.dtype;
    const uint64_t width = vlec::dtype_bytes(im.dtype);
    uint64_t want = width * im.planes;  // grows only while below the limit: no overflow
    for (uint64_t d : dims) want = d <= kMaxWaveletInputBytes / want ? want * d : kMaxWaveletInputBytes + 1;
    if (data.size() != want)
      throw CliError(kExitInput, "input of " + std::to_string(data.size()) + " bytes does not hold a " +
                                     s.wavelet.shape + " image of " + std::to_string(im.planes) + " " +
                                     std::string(vlec::to_string(im.dtype)) + " plane(s)");
    stream = vlec::wavelet_compress(data.data(), im, wo);
  }
  out.write(stream.data(), stream.size());
  finish(in, out, s);
  if (s.verbose) {
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    std::fprintf(stderr, "%s: %llu -> %llu bytes (%s), ratio %s, codec wavelet, %s %zux%zux%zu, %u plane%s, %s, %s -> %s\n",
                 in.label().c_str(), static_cast<unsigned long long>(data.size()),
                 static_cast<unsigned long long>(out.written()), percent(out.written(), data.size()).c_str(),
                 ratio_text(data.size(), out.written()).c_str(), kind.c_str(), im.width, im.height, im.depth,
                 im.planes, im.planes == 1 ? "" : "s", std::string(vlec::to_string(im.dtype)).c_str(),
                 format_rate(data.size(), secs).c_str(), out.label().c_str());
  }
}

void decompress_one(const std::string& input, const Settings& s, const vlec::DecompressOptions& opts) {
  const std::string out_path = output_path_for(input, s);
  auto start = Clock::now();
  InputFile in(input);
  OutputFile out(out_path, policy_for(in, s));

  Progress progress(in.label(), in.size().value_or(0), s.quiet);
  Buffer frame(vlec::kFrameHeaderBytes);
  Buffer plain;
  CodecTally codecs;
  uint64_t frames = 0;
  for (;;) {
    uint64_t fsize = read_frame(in, frame, frames);
    if (fsize == 0) break;
    uint64_t dsize = vlec::decompressed_size(frame.data(), static_cast<std::size_t>(fsize));
    if (dsize > SIZE_MAX) throw CliError(kExitCorrupt, "frame " + std::to_string(frames) + " is too large");
    plain.resize(static_cast<std::size_t>(dsize));
    std::size_t w = vlec::decompress(frame.data(), static_cast<std::size_t>(fsize), plain.data(),
                                     static_cast<std::size_t>(dsize), opts);
    if (s.verbose) codecs.add(vlec::inspect(frame.data(), static_cast<std::size_t>(fsize)).frames.at(0).codec);
    out.write(plain.data(), w);
    ++frames;
    progress.update(in.consumed());
  }
  finish(in, out, s);
  progress.clear();

  if (s.verbose) {
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    std::fprintf(stderr, "%s: %llu -> %llu bytes, ratio %s, codec %s, %llu frame%s, %s -> %s\n",
                 in.label().c_str(), static_cast<unsigned long long>(in.consumed()),
                 static_cast<unsigned long long>(out.written()), ratio_text(out.written(), in.consumed()).c_str(),
                 codecs.str().c_str(), static_cast<unsigned long long>(frames), frames == 1 ? "" : "s",
                 format_rate(out.written(), secs).c_str(), out.label().c_str());
  }
}

}  // namespace

uint64_t read_frame(InputFile& in, Buffer& frame, uint64_t index) {
  const std::size_t H = vlec::kFrameHeaderBytes;
  frame.resize(H);
  std::size_t n = in.read_full(frame.data(), H);
  if (n == 0) {
    if (index == 0) throw CliError(kExitCorrupt, "empty input: not a vlec stream");
    return 0;
  }
  const std::string which = "frame " + std::to_string(index);
  if (n < H)
    throw CliError(kExitCorrupt, "truncated stream: " + which + " header has " + std::to_string(n) + " of " +
                                     std::to_string(H) + " bytes");
  uint64_t fsize = vlec::frame_size(frame.data(), H);
  if (fsize < H) throw CliError(kExitCorrupt, "corrupt stream: " + which + " claims " + std::to_string(fsize) + " bytes");
  uint64_t rest = fsize - H;
  if (in.size() && in.consumed() <= *in.size() && rest > *in.size() - in.consumed())
    throw CliError(kExitCorrupt, "truncated stream: " + which + " needs " + std::to_string(fsize) +
                                     " bytes but the input ends after " +
                                     std::to_string(*in.size() - in.consumed() + H));
  if (fsize > SIZE_MAX / 2) throw CliError(kExitCorrupt, "corrupt stream: " + which + " size is impossible");

  // Grow as data actually arrives, so that a corrupt size on a pipe ends in
  // "truncated" rather than in a huge allocation.
  std::size_t have = H;
  const std::size_t want = static_cast<std::size_t>(fsize);
  constexpr std::size_t kStep = std::size_t{64} << 20;
  while (have < want) {
    std::size_t next = want - have > kStep ? have + kStep : want;
    frame.resize_keep(next, have);
    std::size_t got = in.read_full(frame.data() + have, next - have);
    have += got;
    if (have < next)
      throw CliError(kExitCorrupt, "truncated stream: " + which + " needs " + std::to_string(fsize) +
                                       " bytes but the input ends after " + std::to_string(have));
  }
  return fsize;
}

int report_current_exception(const std::string& label) {
  std::string msg;
  int code = kExitOther;
  try {
    throw;
  } catch (const CliError& e) {
    msg = e.what();
    code = e.exit_code();
  } catch (const vlec::Error& e) {
    msg = e.what();
    std::string kind = vlec::to_string(e.code());
    if (msg.compare(0, kind.size(), kind) != 0) msg = kind + ": " + msg;
    code = exit_code_for(e);
    if (e.code() == vlec::ErrorCode::value_out_of_alphabet) msg += " (try --codec auto or --codec raw)";
  } catch (const std::bad_alloc&) {
    msg = "out of memory (try a smaller --frame-size)";
    code = kExitOther;
  } catch (const std::exception& e) {
    msg = std::string("internal error: ") + e.what();
    code = kExitOther;
  }
  std::fflush(stdout);
  if (label.empty())
    std::fprintf(stderr, "vlec: %s\n", msg.c_str());
  else
    std::fprintf(stderr, "vlec: %s: %s\n", label.c_str(), msg.c_str());
  return code;
}

int run_codec(const Settings& s) {
  std::vector<std::string> inputs = s.inputs;
  if (inputs.empty()) inputs.push_back("-");
  int stdin_count = 0;
  for (const auto& f : inputs) stdin_count += is_stdio_name(f) ? 1 : 0;
  try {
    if (!s.output.empty() && inputs.size() > 1)
      throw CliError(kExitUsage, "-o can only be used with a single input (use -c to concatenate)");
    if (stdin_count > 1) throw CliError(kExitUsage, "stdin ('-') can only be read once");
    if (stdin_count > 0 && stdin_is_terminal() && !s.force)
      throw CliError(kExitUsage, std::string("stdin is a terminal; give a FILE or pipe data in (see --help)"));
    if (s.frame_mib == 0 || s.frame_mib > kMaxFrameMiB)
      throw CliError(kExitUsage, "--frame-size must be between 1 and " + std::to_string(kMaxFrameMiB) + " MiB");
    if (!s.quiet && s.remove_input && (s.to_stdout || s.output == "-"))
      std::fprintf(stderr, "vlec: note: --rm is ignored when the output is stdout\n");
  } catch (...) {
    return report_current_exception("");
  }

  vlec::CompressOptions copts;
  vlec::DecompressOptions dopts;
  try {
    if (s.decompress)
      dopts = make_decompress_options(s.codec);
    else
      copts = make_compress_options(s.codec);
  } catch (...) {
    return report_current_exception("");
  }

  int rc = kExitSuccess;
  for (const auto& input : inputs) {
    try {
      if (s.decompress)
        decompress_one(input, s, dopts);
      else if (copts.codec == vlec::CodecChoice::wavelet)
        compress_wavelet_one(input, s, copts);
      else
        compress_one(input, s, copts);
    } catch (...) {
      int code = report_current_exception(is_stdio_name(input) ? "stdin" : input);
      if (rc == kExitSuccess) rc = code;
    }
  }
  return rc;
}

}  // namespace vlec::cli
