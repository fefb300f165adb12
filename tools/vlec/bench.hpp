// tools/vlec/bench.hpp: `vlec bench`, timing vlec against zlib's Huffman-only
// mode on the same bytes, in the same run.
//
// The comparison with zlib (Z_HUFFMAN_ONLY: pure order-0 Huffman, no LZ77) is
// the yardstick for "is our entropy coder fast and tight": same data, same
// process, same clock. Results are rows of a table (BenchRow) so that further
// rows, e.g. the per-stage timings of the library (histogram, codebook,
// encode, decode), can be appended by stage_rows() without touching the
// printing code.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "options.hpp"
#include "vlec/vlec.hpp"

namespace vlec::cli {

struct BenchSettings {
  CodecSettings codec;        // codec.dtype empty = the generator's dtype, or u8 for a file
  std::vector<std::string> files;  // files to load ("-" = stdin); several form a corpus, or
  std::string synthetic;      // a generator name (gen::generators())
  double size_mib = 64.0;     // synthetic data size
  unsigned repeat = 5;        // timed runs; the median is reported
  std::optional<uint64_t> seed;  // synthetic data seed; random (and printed) if absent
  std::string volume;         // --volume: "generated" or PATH@WxHxD (bench_volume.cpp)
};

// One line of the results table. Optional fields print as "-": a stage row
// (say "encode") has only one of the two times and no output size.
struct BenchRow {
  std::string coder;               // "vlec", "zlib", or a stage such as "  histogram"
  std::string codec;               // e.g. "huffman", "auto:rle", "huffman-only"
  std::string dtype;
  std::string backend;             // "cpu", "cuda" or "auto"
  unsigned threads = 1;            // threads used; MB/s per core divides by this
  bool per_core = true;            // false where "per core" means nothing (GPU)
  uint64_t input_bytes = 0;
  std::optional<uint64_t> output_bytes;
  std::optional<double> compress_seconds;    // median
  std::optional<double> decompress_seconds;  // median
};

// What a benchmark row producer gets: the data and the options in use.
struct BenchContext {
  const std::vector<uint8_t>& data;
  vlec::CompressOptions compress;
  vlec::DecompressOptions decompress;
  unsigned repeat;
  std::string backend_label;
  unsigned threads;
  std::optional<uint64_t> vlec_stream_bytes = std::nullopt;  // set once vlec's row is measured
};

// vlec's and zlib's rows on ctx.data (round trips verified; throws on a mismatch).
BenchRow bench_vlec(const BenchContext& ctx);
BenchRow bench_zlib(const std::vector<uint8_t>& data, unsigned repeat, const std::string& dtype);

// Runs `fn` once to warm up, then `repeat` times; returns the median seconds.
double median_seconds(unsigned repeat, const std::function<void()>& fn);

// Rows of vlec's own stages on ctx.data. The extension point for per-stage
// timings (histogram, codebook, encode, decode); returns none today.
std::vector<BenchRow> stage_rows(const BenchContext& ctx);

// Prints the rows as an aligned table with ratio, MB/s and MB/s per core.
void print_bench_table(const std::vector<BenchRow>& rows);

// The `bench` subcommand; returns the exit code.
int run_bench(const BenchSettings& s);
// `bench` with several files: each file is compressed on its own (its own
// frame and codebook, as a user would), one row per file, then the totals.
int run_corpus_bench(const BenchSettings& s);
// `bench --volume`: a u8 volume compressed on the GPU into host memory against
// its raw D2H copy, beside the CPU backend (bench_volume.cpp).
int run_volume_bench(const BenchSettings& s);

}  // namespace vlec::cli
