// bench/cpu_huffman_bench.cpp: single-threaded throughput of the CPU Huffman
// chunk encoder and decoder (huffman::encode_chunk / decode_chunk), the
// per-core figures behind `vlec bench`.
//
// Each benchmark codes a 64 MiB sample of one generator (vlec::gen::make,
// fixed seed) chunk by chunk, 65,536 elements per chunk, with one codebook
// built from the whole sample as the frame compressor builds it (automatic
// length limit), and reports bytes of raw data per second. Chunks that do
// not compress are stored raw by the frame compressor; here they are
// skipped by the decoder and counted as copied.
//
//   cpu_huffman_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Environment: VLEC_BENCH_MIB overrides the sample size (default 64).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gen/generators.hpp"
#include "huffman/chunk_codec.hpp"
#include "huffman/codebook.hpp"
#include "vlec/types.hpp"

namespace {

using namespace vlec;

constexpr std::size_t kChunkElements = 65536;
constexpr uint64_t kSeed = 42;

std::size_t sample_bytes() {
  const char* env = std::getenv("VLEC_BENCH_MIB");
  const long mib = env ? std::strtol(env, nullptr, 10) : 64;
  return static_cast<std::size_t>(mib > 0 ? mib : 64) << 20;
}

// A generator's sample, its tables, and every chunk encoded once.
struct Fixture {
  gen::Sample sample;
  DType type{};
  std::size_t width = 0, elements = 0, chunks = 0;
  huffman::Codebook book;
  huffman::EncodeTable etable;
  huffman::DecodeTable dtable;
  std::vector<std::vector<uint32_t>> coded;  // per chunk, with the encoder's slack
  std::vector<std::size_t> words;            // per chunk, or kDoesNotFit
  std::vector<uint8_t> decoded;

  std::size_t chunk_n(std::size_t c) const { return std::min(kChunkElements, elements - c * kChunkElements); }
  const uint8_t* chunk_in(std::size_t c) const { return sample.bytes.data() + c * kChunkElements * width; }
  std::size_t capacity(std::size_t c) const { return (chunk_n(c) * width - 1) / 4; }  // as the frame compressor

  std::size_t encode_all() {
    std::size_t total = 0;
    for (std::size_t c = 0; c < chunks; ++c) {
      words[c] = huffman::encode_chunk(chunk_in(c), type, chunk_n(c), etable, coded[c].data(), capacity(c),
                                       c * kChunkElements);
      total += words[c] == huffman::kDoesNotFit ? chunk_n(c) * width : 4 * words[c];
    }
    return total;
  }

  void decode_all() {
    for (std::size_t c = 0; c < chunks; ++c) {
      uint8_t* dst = decoded.data() + c * kChunkElements * width;
      if (words[c] == huffman::kDoesNotFit)
        std::memcpy(dst, chunk_in(c), chunk_n(c) * width);
      else
        huffman::decode_chunk(reinterpret_cast<const uint8_t*>(coded[c].data()), words[c], chunk_n(c), dtable, type,
                              dst);
    }
  }
};

Fixture& fixture(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Fixture>> cache;
  std::unique_ptr<Fixture>& f = cache[name];
  if (f) return *f;
  f = std::make_unique<Fixture>();
  f->sample = gen::make(name, sample_bytes(), kSeed);
  f->type = f->sample.dtype;
  f->width = dtype_bytes(f->type);
  f->elements = f->sample.elements();
  f->chunks = (f->elements + kChunkElements - 1) / kChunkElements;
  huffman::Histogram hist;
  huffman::accumulate_histogram(f->sample.bytes.data(), f->elements, f->type, hist);
  f->book = huffman::build_codebook(hist);
  f->etable = huffman::make_encode_table(f->book, f->type);
  f->dtable = huffman::make_decode_table(f->book);
  f->coded.resize(f->chunks);
  f->words.resize(f->chunks);
  for (std::size_t c = 0; c < f->chunks; ++c) f->coded[c].resize(f->capacity(c) + huffman::kEncodeSlackWords);
  f->decoded.resize(f->sample.bytes.size());
  f->encode_all();
  return *f;
}

void set_counters(benchmark::State& state, const Fixture& f, std::size_t stored) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(f.sample.bytes.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(f.elements));
  state.counters["max_len"] = f.book.max_length;
  state.counters["bits/elem"] = 8.0 * static_cast<double>(stored) / static_cast<double>(f.elements);
}

void BM_Encode(benchmark::State& state, const std::string& name) {
  Fixture& f = fixture(name);
  std::size_t stored = 0;
  for (auto _ : state) {
    stored = f.encode_all();
    benchmark::DoNotOptimize(f.coded.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, f, stored);
}

void BM_Decode(benchmark::State& state, const std::string& name) {
  Fixture& f = fixture(name);
  const std::size_t stored = f.encode_all();
  f.decode_all();
  if (f.decoded != f.sample.bytes) {
    state.SkipWithError("decoded data differs from the input");
    return;
  }
  for (auto _ : state) {
    f.decode_all();
    benchmark::DoNotOptimize(f.decoded.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, f, stored);
}

const char* const kDatasets[] = {"skewed", "quant1024", "quant65536"};

int register_all() {
  for (const char* name : kDatasets) {
    benchmark::RegisterBenchmark((std::string("encode/") + name).c_str(), BM_Encode, std::string(name))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark((std::string("decode/") + name).c_str(), BM_Decode, std::string(name))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
