// tools/vlec/bench_corpus.cpp: `vlec bench FILE FILE...`: a corpus benchmark.
// Each file is compressed on its own, with its own frame and codebook, as a
// user compressing the files would; vlec and zlib's Huffman-only mode run on
// the same bytes in the same run. The totals sum bytes and median times, and
// compare vlec's stored bits with the unlimited optimal Huffman code of each
// file (one code per file, as vlec and the order-0 bound use).
#include <cstdio>
#include <filesystem>

#include "bench.hpp"
#include "cpu/huffman_stages.hpp"
#include "exit_codes.hpp"
#include "commands.hpp"
#include "file_io.hpp"

namespace vlec::cli {

int run_corpus_bench(const BenchSettings& s) {
  try {
    CodecSettings cs = s.codec;
    if (cs.dtype.empty()) cs.dtype = "u8";
    const vlec::CompressOptions copts = make_compress_options(cs);
    const vlec::DecompressOptions dopts = make_decompress_options(cs);
    const unsigned threads = effective_threads(cs.threads);
    const std::size_t w = vlec::dtype_bytes(copts.dtype);
    std::printf("vlec bench: corpus of %zu files, each compressed on its own; median of %u runs after 1 warm-up\n",
                s.files.size(), s.repeat);
    std::printf("vlec: %u thread%s, codec %s; zlib: Z_HUFFMAN_ONLY, 1 thread; MB/s per core\n\n", threads,
                threads == 1 ? "" : "s", std::string(vlec::to_string(copts.codec)).c_str());
    std::printf("%-16s %10s | %8s %8s %9s %9s %9s %9s | %8s %9s %9s\n", "file", "bytes", "vlec", "optimal", "comp",
                "decomp", "encode", "decode", "zlib", "comp", "decomp");
    std::printf("%-16s %10s | %8s %8s %9s %9s %9s %9s | %8s %9s %9s\n", "", "", "ratio", "ratio", "MB/s", "MB/s",
                "MB/s", "MB/s", "ratio", "MB/s", "MB/s");
    uint64_t in_total = 0, vlec_total = 0, zlib_total = 0;
    double vc = 0, vd = 0, ve = 0, vdd = 0, zc = 0, zd = 0, optimal_bits = 0;
    for (const std::string& f : s.files) {
      const std::vector<uint8_t> data = read_whole_file(f);
      if (data.size() % w) throw CliError(kExitInput, f + ": size is not a multiple of the element width");
      BenchContext ctx{data, copts, dopts, s.repeat, "cpu", threads};
      const BenchRow v = bench_vlec(ctx);
      const BenchRow z = bench_zlib(data, s.repeat, cs.dtype);
      vlec::cpu::HuffmanStageReport r;
      bool staged = copts.dtype != vlec::DType::u64 && !data.empty();
      try {
        if (staged)
          r = vlec::cpu::time_huffman_stages(data.data(), data.size() / w, copts.dtype,
                                             copts.chunk_elements ? copts.chunk_elements : vlec::kDefaultChunkElements,
                                             copts.max_code_length, copts.threads, s.repeat);
      } catch (const vlec::Error&) {
        staged = false;
      }
      const double n = static_cast<double>(data.size());
      std::printf("%-16s %10zu | %8.4f %8.4f %9.1f %9.1f %9.1f %9.1f | %8.4f %9.1f %9.1f\n",
                  std::filesystem::path(f).filename().string().c_str(), data.size(), n / *v.output_bytes,
                  staged ? 8.0 * w / r.optimal_bits : 0.0, n / *v.compress_seconds / 1e6 / threads,
                  n / *v.decompress_seconds / 1e6 / threads, staged ? n / r.encode_s / 1e6 / threads : 0.0,
                  staged ? n / r.decode_s / 1e6 / threads : 0.0, n / *z.output_bytes, n / *z.compress_seconds / 1e6,
                  n / *z.decompress_seconds / 1e6);
      in_total += data.size();
      vlec_total += *v.output_bytes;
      zlib_total += *z.output_bytes;
      vc += *v.compress_seconds, vd += *v.decompress_seconds, zc += *z.compress_seconds, zd += *z.decompress_seconds;
      if (staged) ve += r.encode_s, vdd += r.decode_s, optimal_bits += r.optimal_bits * n / w;
    }
    const double n = static_cast<double>(in_total);
    std::printf("%-16s %10llu | %8.4f %8.4f %9.1f %9.1f %9.1f %9.1f | %8.4f %9.1f %9.1f\n", "total",
                static_cast<unsigned long long>(in_total), n / vlec_total, optimal_bits ? 8.0 * n / optimal_bits : 0.0,
                n / vc / 1e6 / threads, n / vd / 1e6 / threads, ve ? n / ve / 1e6 / threads : 0.0,
                vdd ? n / vdd / 1e6 / threads : 0.0, n / zlib_total, n / zc / 1e6, n / zd / 1e6);
    if (optimal_bits)
      std::printf("\nvlec's total is %.2f%% below the per-file unlimited optimal Huffman ratio (headers included)\n",
                  100 * (1 - optimal_bits / (8.0 * vlec_total)));
    std::printf("round trips verified byte for byte: vlec ok, zlib ok\n");
  } catch (...) {
    return report_current_exception("corpus");
  }
  return kExitSuccess;
}

}  // namespace vlec::cli
