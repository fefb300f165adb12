// tools/vlec/bench.cpp: `vlec bench`: loads a file or generates synthetic data,
// times vlec's compress/decompress and zlib's Huffman-only deflate/inflate on
// the same bytes (median of N runs after a warm-up, steady_clock), verifies
// both round trips byte for byte and prints one table row per coder.
//
// zlib is run single-threaded, as deflateInit2(level default, 15, 8,
// Z_HUFFMAN_ONLY) + deflate(Z_FINISH) over the whole buffer, fed in pieces of
// at most 1 GiB because zlib's counters are 32-bit.
#include "bench.hpp"

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>

#include "exit_codes.hpp"
#include "file_io.hpp"
#include "gen/generators.hpp"
#include "commands.hpp"
#include "cpu/huffman_stages.hpp"
#include "progress.hpp"

namespace vlec::cli {

namespace {

constexpr std::size_t kZlibPiece = std::size_t{1} << 30;  // fits zlib's uInt

std::size_t zlib_bound(std::size_t n) {
  z_stream s;
  std::memset(&s, 0, sizeof s);
  if (deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15, 8, Z_HUFFMAN_ONLY) != Z_OK)
    throw std::runtime_error("zlib deflateInit2 failed");
  std::size_t bound = deflateBound(&s, static_cast<uLong>(n));
  deflateEnd(&s);
  return bound + (n / kZlibPiece + 1) * 64;  // slack for piecewise feeding
}

std::size_t zlib_deflate(const uint8_t* in, std::size_t n, uint8_t* out, std::size_t cap) {
  z_stream s;
  std::memset(&s, 0, sizeof s);
  if (deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15, 8, Z_HUFFMAN_ONLY) != Z_OK)
    throw std::runtime_error("zlib deflateInit2 failed");
  std::size_t in_fed = 0, out_pos = 0;
  int ret = Z_OK;
  while (ret != Z_STREAM_END) {
    if (s.avail_in == 0 && in_fed < n) {
      std::size_t piece = std::min(n - in_fed, kZlibPiece);
      s.next_in = const_cast<Bytef*>(in + in_fed);
      s.avail_in = static_cast<uInt>(piece);
      in_fed += piece;
    }
    std::size_t room = std::min(cap - out_pos, kZlibPiece);
    if (room == 0) {
      deflateEnd(&s);
      throw std::runtime_error("zlib output exceeded deflateBound");
    }
    s.next_out = out + out_pos;
    s.avail_out = static_cast<uInt>(room);
    ret = deflate(&s, in_fed == n ? Z_FINISH : Z_NO_FLUSH);
    out_pos += room - s.avail_out;
    if (ret == Z_STREAM_ERROR) {
      deflateEnd(&s);
      throw std::runtime_error("zlib deflate failed");
    }
  }
  deflateEnd(&s);
  return out_pos;
}

std::size_t zlib_inflate(const uint8_t* in, std::size_t n, uint8_t* out, std::size_t cap) {
  z_stream s;
  std::memset(&s, 0, sizeof s);
  if (inflateInit2(&s, 15) != Z_OK) throw std::runtime_error("zlib inflateInit2 failed");
  std::size_t in_fed = 0, out_pos = 0;
  int ret = Z_OK;
  while (ret != Z_STREAM_END) {
    if (s.avail_in == 0 && in_fed < n) {
      std::size_t piece = std::min(n - in_fed, kZlibPiece);
      s.next_in = const_cast<Bytef*>(in + in_fed);
      s.avail_in = static_cast<uInt>(piece);
      in_fed += piece;
    }
    std::size_t room = std::min(cap - out_pos, kZlibPiece);
    s.next_out = out + out_pos;
    s.avail_out = static_cast<uInt>(room);
    ret = inflate(&s, Z_NO_FLUSH);
    out_pos += room - s.avail_out;
    bool stuck = ret == Z_BUF_ERROR && (room == 0 || (s.avail_in == 0 && in_fed == n));
    if (ret == Z_DATA_ERROR || ret == Z_MEM_ERROR || ret == Z_NEED_DICT || ret == Z_STREAM_ERROR || stuck) {
      inflateEnd(&s);
      throw std::runtime_error("zlib inflate failed");
    }
  }
  inflateEnd(&s);
  return out_pos;
}

// Throws CliError(kExitOther) naming the first differing byte.
void verify(const char* coder, const std::vector<uint8_t>& expected, const uint8_t* got, std::size_t got_bytes) {
  if (got_bytes != expected.size())
    throw CliError(kExitOther, std::string(coder) + " round trip: " + std::to_string(got_bytes) +
                                   " bytes decoded, " + std::to_string(expected.size()) + " expected");
  auto mismatch = std::mismatch(expected.begin(), expected.end(), got);
  if (mismatch.first != expected.end())
    throw CliError(kExitOther, std::string(coder) + " round trip: first difference at byte " +
                                   std::to_string(mismatch.first - expected.begin()));
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string mbps(uint64_t bytes, std::optional<double> seconds, unsigned divide_by) {
  if (!seconds || *seconds <= 0.0 || divide_by == 0) return "-";
  return fixed(static_cast<double>(bytes) / *seconds / 1e6 / divide_by, 1);
}

}  // namespace

BenchRow bench_vlec(const BenchContext& ctx) {
  const auto& data = ctx.data;
  std::vector<uint8_t> packed(vlec::compress_bound(data.size(), ctx.compress));
  std::vector<uint8_t> plain(data.size());
  std::size_t packed_bytes = 0, plain_bytes = 0;

  BenchRow row;
  row.coder = "vlec";
  row.dtype = std::string(vlec::to_string(ctx.compress.dtype));
  row.backend = ctx.backend_label;
  row.threads = ctx.threads;
  row.per_core = ctx.backend_label == "cpu";
  row.input_bytes = data.size();
  row.compress_seconds = median_seconds(ctx.repeat, [&] {
    packed_bytes = vlec::compress(data.data(), data.size(), packed.data(), packed.size(), ctx.compress);
  });
  row.output_bytes = packed_bytes;
  row.decompress_seconds = median_seconds(ctx.repeat, [&] {
    plain_bytes = vlec::decompress(packed.data(), packed_bytes, plain.data(), plain.size(), ctx.decompress);
  });
  verify("vlec", data, plain.data(), plain_bytes);

  vlec::StreamInfo info = vlec::inspect(packed.data(), packed_bytes);
  std::string chosen = info.frames.empty() ? "?" : std::string(vlec::to_string(info.frames[0].codec));
  row.codec = ctx.compress.codec == vlec::CodecChoice::automatic ? "auto:" + chosen : chosen;
  return row;
}

BenchRow bench_zlib(const std::vector<uint8_t>& data, unsigned repeat, const std::string& dtype) {
  std::vector<uint8_t> packed(zlib_bound(data.size()));
  std::vector<uint8_t> plain(data.size());
  std::size_t packed_bytes = 0, plain_bytes = 0;

  BenchRow row;
  row.coder = "zlib";
  row.codec = "huffman-only";
  row.dtype = dtype;
  row.backend = "cpu";
  row.threads = 1;
  row.input_bytes = data.size();
  row.compress_seconds = median_seconds(repeat, [&] {
    packed_bytes = zlib_deflate(data.data(), data.size(), packed.data(), packed.size());
  });
  row.output_bytes = packed_bytes;
  row.decompress_seconds = median_seconds(repeat, [&] {
    plain_bytes = zlib_inflate(packed.data(), packed_bytes, plain.data(), plain.size());
  });
  verify("zlib", data, plain.data(), plain_bytes);
  return row;
}

double median_seconds(unsigned repeat, const std::function<void()>& fn) {
  using Clock = std::chrono::steady_clock;
  fn();  // warm-up: page faults, thread pool start, caches
  std::vector<double> times;
  for (unsigned i = 0; i < std::max(repeat, 1u); ++i) {
    auto t0 = Clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  std::size_t n = times.size();
  return n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2.0;
}

std::vector<BenchRow> stage_rows(const BenchContext& ctx) {
  // The CPU Huffman pipeline stage by stage, when the data is Huffman-codable
  // and the frame codec is (or would be) Huffman: each row carries one stage's
  // time on the compress or the decompress side.
  const vlec::DType t = ctx.compress.dtype;
  const std::size_t w = vlec::dtype_bytes(t);
  if (t == vlec::DType::u64 || ctx.data.empty()) return {};
  const vlec::Codec codec = ctx.compress.codec == vlec::CodecChoice::automatic
                                ? vlec::choose_codec(ctx.data.data(), ctx.data.size(), t)
                                : ctx.compress.codec == vlec::CodecChoice::huffman ? vlec::Codec::huffman
                                                                                  : vlec::Codec::raw;
  if (codec != vlec::Codec::huffman) return {};
  vlec::cpu::HuffmanStageReport r;
  try {
    r = vlec::cpu::time_huffman_stages(ctx.data.data(), ctx.data.size() / w, t,
                                       ctx.compress.chunk_elements ? ctx.compress.chunk_elements
                                                                   : vlec::kDefaultChunkElements,
                                       ctx.compress.max_code_length, ctx.compress.threads, ctx.repeat);
  } catch (const vlec::Error&) {
    return {};  // not Huffman-codable (a u32 value above the alphabet)
  }
  auto stage = [&](const char* name, std::optional<double> comp, std::optional<double> decomp) {
    BenchRow row;
    row.coder = std::string("  ") + name;
    row.codec = "huffman";
    row.dtype = std::string(vlec::to_string(t));
    row.backend = "cpu";
    row.threads = ctx.threads;
    row.input_bytes = ctx.data.size();
    row.compress_seconds = comp;
    row.decompress_seconds = decomp;
    return row;
  };
  std::vector<BenchRow> rows = {stage("histogram", r.histogram_s, std::nullopt),
                                stage("encode", r.encode_s, std::nullopt),
                                stage("decode", std::nullopt, r.decode_s)};
  rows[1].output_bytes = r.payload_bytes;
  std::printf("codebook built in %.1f us; code: max length %u, alphabet %u; bits/element: entropy %.4f, optimal Huffman (unlimited) %.4f, "
              "vlec code %.4f (+%.2f%%), stored chunks %.4f (+%.2f%%)\n",
              r.codebook_s * 1e6, r.max_length, r.alphabet_size, r.entropy_bits, r.optimal_bits, r.code_bits,
              100 * (r.code_bits / r.optimal_bits - 1), r.stored_bits, 100 * (r.stored_bits / r.optimal_bits - 1));
  if (ctx.vlec_stream_bytes && *ctx.vlec_stream_bytes > 0) {
    const double stream_bits = 8.0 * static_cast<double>(*ctx.vlec_stream_bytes) / static_cast<double>(ctx.data.size() / w);
    std::printf("whole stream %.4f bits/element: ratio %.4f, %.2f%% below the unlimited optimal Huffman ratio %.4f\n",
                stream_bits, 8.0 * w / stream_bits, 100 * (1 - r.optimal_bits / stream_bits), 8.0 * w / r.optimal_bits);
  }
  return rows;
}

void print_bench_table(const std::vector<BenchRow>& rows) {
  const std::vector<std::string> header = {"coder",  "codec", "dtype",     "backend",     "threads",
                                           "input",  "compressed", "ratio", "comp MB/s", "decomp MB/s",
                                           "comp MB/s/core", "decomp MB/s/core"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) {
    unsigned cores = r.per_core ? r.threads : 0;
    std::string ratio = "-";
    if (r.output_bytes && *r.output_bytes > 0)
      ratio = fixed(static_cast<double>(r.input_bytes) / static_cast<double>(*r.output_bytes), 3);
    cells.push_back({r.coder, r.codec, r.dtype, r.backend, std::to_string(r.threads),
                     std::to_string(r.input_bytes), r.output_bytes ? std::to_string(*r.output_bytes) : "-", ratio,
                     mbps(r.input_bytes, r.compress_seconds, 1), mbps(r.input_bytes, r.decompress_seconds, 1),
                     mbps(r.input_bytes, r.compress_seconds, cores),
                     mbps(r.input_bytes, r.decompress_seconds, cores)});
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
  }
  auto print_line = [&](const std::vector<std::string>& line) {
    std::string out;
    for (std::size_t c = 0; c < line.size(); ++c) {
      std::string pad(width[c] - line[c].size(), ' ');
      // Text columns left-aligned, numbers right-aligned.
      out += c < 4 ? line[c] + pad : pad + line[c];
      out += c + 1 < line.size() ? "  " : "";
    }
    std::printf("%s\n", out.c_str());
  };
  print_line(header);
  std::size_t total = 0;
  for (std::size_t w : width) total += w + 2;
  std::printf("%s\n", std::string(total - 2, '-').c_str());
  for (const auto& row : cells) print_line(row);
}

int run_bench(const BenchSettings& s) {
  if (!s.volume.empty()) {
    try {
      return run_volume_bench(s);
    } catch (...) {
      return report_current_exception("volume");
    }
  }
  if (s.files.size() > 1) return run_corpus_bench(s);
  std::string label = s.files.size() == 1 ? s.files[0] : "synthetic";
  try {
    if (s.repeat == 0) throw CliError(kExitUsage, "--repeat must be at least 1");
    if (!(s.size_mib > 0.0) || s.size_mib > 1024.0 * 1024.0)
      throw CliError(kExitUsage, "--size must be a positive number of MiB");

    std::vector<uint8_t> data;
    vlec::DType dtype = vlec::DType::u8;
    std::string source;
    if (!s.files.empty()) {
      data = read_whole_file(s.files[0]);
      source = "file " + (is_stdio_name(s.files[0]) ? std::string("stdin") : s.files[0]);
    } else {
      std::string name = s.synthetic.empty() ? "skewed" : s.synthetic;
      uint64_t seed = s.seed ? *s.seed : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
      auto bytes = static_cast<std::size_t>(s.size_mib * 1024.0 * 1024.0);
      vlec::gen::Sample sample = vlec::gen::make(name, bytes, seed);
      dtype = sample.dtype;
      data = std::move(sample.bytes);
      source = "synthetic '" + name + "', seed " + std::to_string(seed);
      label = name;
    }
    CodecSettings cs = s.codec;
    if (cs.dtype.empty())
      cs.dtype = std::string(vlec::to_string(dtype));
    vlec::CompressOptions copts = make_compress_options(cs);
    vlec::DecompressOptions dopts = make_decompress_options(cs);
    std::size_t width = vlec::dtype_bytes(copts.dtype);
    if (data.size() % width != 0)
      throw CliError(kExitInput, "input size " + std::to_string(data.size()) +
                                     " bytes is not a multiple of the element width " + std::to_string(width) +
                                     " (--dtype " + cs.dtype + ")");

    std::string backend_label = "auto";
    if (copts.backend == vlec::Backend::cpu || (copts.backend == vlec::Backend::automatic && !vlec::cuda_available()))
      backend_label = "cpu";
    else if (copts.backend == vlec::Backend::cuda)
      backend_label = "cuda";
    unsigned threads = effective_threads(cs.threads);

    std::printf("vlec bench: %s, %s (%llu bytes), dtype %s\n", source.c_str(), format_bytes(data.size()).c_str(),
                static_cast<unsigned long long>(data.size()), cs.dtype.c_str());
    std::printf("median of %u run%s after 1 warm-up; vlec: backend %s, %u thread%s; zlib: Z_HUFFMAN_ONLY, 1 thread\n\n",
                s.repeat, s.repeat == 1 ? "" : "s", backend_label.c_str(), threads, threads == 1 ? "" : "s");
    std::fflush(stdout);

    BenchContext ctx{data, copts, dopts, s.repeat, backend_label, threads};
    std::vector<BenchRow> rows;
    rows.push_back(bench_vlec(ctx));
    ctx.vlec_stream_bytes = rows.back().output_bytes;
    for (auto& r : stage_rows(ctx)) rows.push_back(std::move(r));
    rows.push_back(bench_zlib(data, s.repeat, cs.dtype));
    print_bench_table(rows);
    std::printf("\nround trips verified byte for byte: vlec ok, zlib ok\n");
    std::fflush(stdout);
  } catch (...) {
    return report_current_exception(label);
  }
  return kExitSuccess;
}

}  // namespace vlec::cli
