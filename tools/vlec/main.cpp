// tools/vlec/main.cpp: the `vlec` command line: parses arguments with CLI11 and
// dispatches to compress/decompress (no subcommand), `info` or `bench`.
//
// The interface follows zstd's (vlec FILE -> FILE.vlec, -d, -c, -o, -f, -k,
// --rm, -T#, -q, -v) so that it is familiar and scriptable. Parse errors end in
// exit code 1; everything else returns the code chosen by the command
// (exit_codes.hpp, also printed at the end of --help).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <string>

#include "bench.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "file_io.hpp"
#include "gen/generators.hpp"
#include "options.hpp"

namespace {

using namespace vlec::cli;

// CLI11 validator built from the library's own parse_* functions, so the
// accepted spellings are exactly the library's.
template <typename Parse>
CLI::Validator spelling(Parse parse, std::string what, std::string choices) {
  return CLI::Validator(
      [=](std::string& v) -> std::string {
        return parse(v) ? std::string() : "unknown " + what + " '" + v + "' (choose " + choices + ")";
      },
      std::string());
}

// The codec options shared by the main command and `bench`.
void add_codec_options(CLI::App& app, CodecSettings& c, bool dtype_defaults_to_generator) {
  app.add_option("-T,--threads", c.threads, "CPU threads (0 = all cores; default 0)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--codec", c.codec,
                 "codec: auto, huffman, rle, rle+huffman, raw, wavelet (default auto; auto never picks wavelet)")
      ->type_name("CODEC")
      ->check(spelling([](const std::string& s) { return vlec::parse_codec(s).has_value(); }, "codec",
                       "auto, huffman, rle, rle+huffman, raw, wavelet"));
  app.add_option("--dtype", c.dtype,
                 dtype_defaults_to_generator
                     ? "element type: u8, u16, u32, u64 (default: the generator's, or u8 for a file)"
                     : "element type: u8, u16, u32, u64 (default u8); input size must be a multiple of it")
      ->type_name("DTYPE")
      ->check(spelling([](const std::string& s) { return vlec::parse_dtype(s).has_value(); }, "dtype",
                       "u8, u16, u32, u64"));
  app.add_option("--backend", c.backend, "backend: auto, cpu, cuda (default auto)")
      ->type_name("BACKEND")
      ->check(spelling([](const std::string& s) { return vlec::parse_backend(s).has_value(); }, "backend",
                       "auto, cpu, cuda"));
  app.add_option("--chunk", c.chunk_elements, "elements per chunk, a multiple of 128 (default 65536)")
      ->type_name("N");
  app.add_option("--max-code-length", c.max_code_length, "longest Huffman code, 1..24 (default: from the data)")
      ->type_name("N")
      ->check(CLI::Range(0u, 24u));
}

const char* kFooter =
    "Examples:\n"
    "  vlec data.bin                 compress to data.bin.vlec (data.bin is kept)\n"
    "  vlec -d data.bin.vlec         decompress to data.bin\n"
    "  vlec --dtype u16 -T8 q.bin    compress 16-bit elements with 8 threads\n"
    "  cat x | vlec -c | vlec -d -c  stream through pipes\n"
    "  vlec info data.bin.vlec       show what a stream contains\n"
    "  vlec --codec wavelet img.ppm  lossless image coding (PGM/PPM; -d restores the file byte for byte)\n"
    "  vlec --codec wavelet --shape 512x512x256 --dtype u16 vol.raw   a raw u16 volume\n"
    "  vlec bench --synthetic text   compare with zlib's Huffman-only mode\n"
    "\n"
    "A file literally named 'info' or 'bench' can be given as ./info.\n"
    "\n";

}  // namespace

int main(int argc, char** argv) {
  remember_umask();
  install_signal_cleanup();

  Settings s;
  std::vector<std::string> info_files;
  bool info_verbose = false;
  BenchSettings b;
  b.codec.dtype.clear();  // default: the generator's dtype

  CLI::App app{"vlec: lossless Huffman and run-length coding of byte and integer data (CPU and CUDA).\n"
               "Compresses FILE to FILE.vlec, or with -d restores FILE from FILE.vlec.",
               "vlec"};
  app.footer(std::string(kFooter) + kExitCodesHelp);
  app.require_subcommand(0, 1);

  app.add_flag("-d,--decompress", s.decompress, "decompress");
  auto* opt_stdout = app.add_flag("-c,--stdout", s.to_stdout, "write to stdout");
  auto* opt_out = app.add_option("-o,--output", s.output, "output file (only with one input; '-' = stdout)")
                      ->type_name("OUT");
  opt_out->excludes(opt_stdout);
  bool keep = false;
  auto* opt_keep = app.add_flag("-k,--keep", keep, "keep the input (default)");
  app.add_flag("--rm", s.remove_input, "remove the input after success")->excludes(opt_keep);
  app.add_flag("-f,--force", s.force,
               "overwrite an existing output; allow compressed data on a terminal and reading a terminal");
  auto* opt_verbose = app.add_flag("-v,--verbose", s.verbose, "print sizes, ratio, codec and speed to stderr");
  app.add_flag("-q,--quiet", s.quiet, "print nothing but errors")->excludes(opt_verbose);
  add_codec_options(app, s.codec, false);
  app.add_option("--shape", s.wavelet.shape,
                 "--codec wavelet: image shape WxH or WxHxD of a raw input (a PGM/PPM input needs none)")
      ->type_name("WxH[xD]");
  app.add_option("--planes", s.wavelet.planes, "--codec wavelet: interleaved planes of a raw input, 1..4 (default 1)")
      ->type_name("N")
      ->check(CLI::Range(1u, 4u));
  app.add_option("--levels", s.wavelet.levels, "--codec wavelet: transform levels (default 0 = automatic)")
      ->type_name("N")
      ->check(CLI::Range(0u, 32u));
  app.add_flag("--no-rct", s.wavelet.no_colour_transform,
               "--codec wavelet: no reversible colour transform on planes 0..2");
  app.add_option("--frame-size", s.frame_mib,
                 "compress in frames of this many MiB; bounds memory (default 256)")
      ->type_name("MiB")
      ->check(CLI::Range(1u, kMaxFrameMiB));
  app.add_option("files", s.inputs, "input files; '-' or none = stdin (output then goes to stdout)")
      ->type_name("FILE");

  CLI::App* info = app.add_subcommand("info", "print the facts of vlec streams (frames, codec, sizes, ratio)");
  info->add_option("files", info_files, "vlec streams; '-' = stdin")->type_name("FILE")->required();
  info->add_flag("-v,--verbose", info_verbose, "also list every frame");

  std::vector<std::string> gen_names;
  for (const auto& g : vlec::gen::generators()) gen_names.push_back(g.name);
  std::string gen_help = "generate data instead of reading a file:";
  for (const auto& g : vlec::gen::generators())
    gen_help += "\n    " + g.name + " (" + std::string(vlec::to_string(g.dtype)) + "): " + g.description;
  CLI::App* bench = app.add_subcommand("bench", "time vlec and zlib (Huffman-only) on a file or synthetic data");
  auto* opt_file = bench->add_option("files", b.files, "input files ('-' = stdin); several are concatenated, as a corpus")
                       ->type_name("FILE ...");
  bench->add_option("--synthetic", b.synthetic, gen_help)
      ->type_name("NAME")
      ->check(CLI::IsMember(gen_names))
      ->excludes(opt_file);
  bench->add_option("--size", b.size_mib, "synthetic data size in MiB (default 64)")->type_name("MiB");
  bench->add_option("--repeat", b.repeat, "timed runs; the median is reported (default 5)")
      ->type_name("N")
      ->check(CLI::Range(1u, 100000u));
  bench->add_option("--volume", b.volume,
                    "time a u8 volume's trip out of the GPU: 'generated' (512^3) or PATH@WxHxD")
      ->type_name("V");
  bench->add_option("--seed", b.seed, "seed of the synthetic data (default: random, printed)")->type_name("S");
  add_codec_options(*bench, b.codec, true);
  bench->footer("With neither FILE nor --synthetic, the 'skewed' generator is used.\n\n" +
                std::string(kExitCodesHelp));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "vlec: %s\nRun 'vlec --help' for usage.\n", e.what());
    return kExitUsage;
  }

  if (info->parsed()) return run_info(info_files, info_verbose || s.verbose);
  if (bench->parsed()) return run_bench(b);
  return run_codec(s);
}
