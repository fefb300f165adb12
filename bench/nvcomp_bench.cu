// bench/nvcomp_bench.cu: nvCOMP's entropy coders on the bytes vlec benchmarks.
//
// What it measures: for each dataset of bench/gpu_bench (vlec::gen::make with
// the same names, size and seed), the compression ratio and the device-side
// compress and decompress throughput of nvCOMP 6's two entropy-only codecs,
// through the low-level batched C API:
//   - ANS (rANS), with the byte data type, and for 2-byte data also with
//     nvCOMP's 2-byte ANS type (NVCOMP_TYPE_FLOAT16; nvCOMP has no uint16 ANS);
//   - GDeflate with algorithm 0, which gdeflate.h documents as
//     "highest-throughput, entropy-only compression": Huffman coding, no LZ
//     matching, so it is the Huffman coder comparable to vlec's.
// Why: vlec is a GPU entropy coder; nvCOMP is the reference GPU compression
// library, and these are the parts of it that do the same job (no LZ stage, no
// preprocessing). Both are timed the same way as gpu_bench times vlec: the
// input already on the device, CUDA events around the work on one stream,
// median of --repeat runs after two warm-ups, and the device-to-device copy
// bandwidth of the same size measured in the same run as the yardstick.
// Every round trip is verified byte for byte on the host; the program exits
// non-zero if one fails.
//
// The ratio is input bytes / sum of the compressed chunk sizes. The batched
// API leaves the chunk size table (8 bytes per chunk) to the caller, so a
// container holding nvCOMP's chunks would be slightly larger than this sum;
// the per-chunk overhead is printed so it can be accounted for.
//
// nvCOMP is optional for vlec: this program is built only when nvCOMP is found
// (see bench/CMakeLists.txt, VLEC_NVCOMP_ROOT) and uses none of vlec's codec.
#include <cuda_runtime.h>

#include <nvcomp/ans.h>
#include <nvcomp/gdeflate.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "gen/generators.hpp"

#define CUDA_CHECK(call)                                                                          \
  do {                                                                                            \
    const cudaError_t bench_cuda_status_ = (call);                                                \
    if (bench_cuda_status_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s:%d: CUDA error %s: %s\n", __FILE__, __LINE__,                      \
                   cudaGetErrorString(bench_cuda_status_), #call);                                \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

#define NVCOMP_CHECK(call)                                                                        \
  do {                                                                                            \
    const nvcompStatus_t bench_nvcomp_status_ = (call);                                           \
    if (bench_nvcomp_status_ != nvcompSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: nvCOMP error %d (%s): %s\n", __FILE__, __LINE__,               \
                   int(bench_nvcomp_status_), nvcompGetStatusString(bench_nvcomp_status_), #call); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

namespace {

struct Args {
  std::size_t mib = 1024;
  int repeat = 20;
  uint64_t seed = 1;
  std::vector<std::string> data = {"skewed", "quant1024", "quant65536"};
  std::size_t chunk = 65536;  // bytes per nvCOMP chunk
  int ans_states = 2;         // rANS states per lane: 2 is nvCOMP's default ("auto" = 2)
  bool ans_hint = true;       // name data type and states when decompressing (else nvCOMP reads them)
  bool nonblocking = false;   // time on a cudaStreamNonBlocking stream (see main: nvCOMP 6.0.0.12 faults there)
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

const char* dtype_name(vlec::DType t) {
  switch (t) {
    case vlec::DType::u8: return "u8";
    case vlec::DType::u16: return "u16";
    case vlec::DType::u32: return "u32";
    case vlec::DType::u64: return "u64";
  }
  return "?";
}

std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

// A device allocation freed on scope exit.
template <typename T>
struct DeviceArray {
  T* ptr = nullptr;
  std::size_t count = 0;
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) : count(n) {
    if (n) CUDA_CHECK(cudaMalloc(&ptr, n * sizeof(T)));
  }
  ~DeviceArray() { if (ptr) cudaFree(ptr); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return ptr; }
};

template <typename F>
float median_ms(int repeat, cudaStream_t stream, F&& work) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 2; ++i) work();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> ms;
  for (int i = 0; i < repeat; ++i) {
    CUDA_CHECK(cudaEventRecord(a, stream));
    work();
    CUDA_CHECK(cudaEventRecord(b, stream));
    CUDA_CHECK(cudaEventSynchronize(b));
    float t;
    CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

enum class Algo { ans, gdeflate };

struct Codec {
  Algo algo;
  std::string label;
  nvcompType_t ans_type = NVCOMP_TYPE_UCHAR;  // ANS only
};

// One dataset on the device, split into chunks as the batched API wants.
struct ChunkedInput {
  std::size_t bytes = 0, chunk = 0, count = 0;
  const void* const* in_ptrs = nullptr;  // device array: chunk i of the input
  void* const* out_ptrs = nullptr;       // device array: chunk i of the decompressed output
  const std::size_t* sizes = nullptr;    // device array: uncompressed sizes (input and output buffers)
};

struct Result {
  double ratio = 0, comp_ms = 0, decomp_ms = 0;
  std::size_t comp_bytes = 0, max_chunk_out = 0;
  bool ok = false;
  std::string why;
};

// One codec on one uploaded dataset: compress, decompress, verify.
Result run_codec(const Codec& c, const ChunkedInput& ch, uint8_t* d_out, const std::vector<uint8_t>& host_in,
                 const Args& args, int states, cudaStream_t stream) {
  Result r;
  // Options: all reserved bytes zero (the headers require it), then the fields we set.
  nvcompBatchedANSCompressOpts_t ans_c;
  nvcompBatchedANSDecompressOpts_t ans_d;
  nvcompBatchedGdeflateCompressOpts_t gd_c;
  nvcompBatchedGdeflateDecompressOpts_t gd_d;
  std::memset(&ans_c, 0, sizeof ans_c);
  std::memset(&ans_d, 0, sizeof ans_d);
  std::memset(&gd_c, 0, sizeof gd_c);
  std::memset(&gd_d, 0, sizeof gd_d);
  ans_c.type = nvcomp_rANS;
  ans_c.data_type = c.ans_type;
  ans_c.max_sub_chunk_count = 0;       // nvCOMP's default (8)
  ans_c.states_per_lane = uint8_t(states);
  ans_c.histogram_reduction_log2 = 0;  // exact histogram, as vlec builds
  ans_d.backend = NVCOMP_DECOMPRESS_BACKEND_DEFAULT;
  // Named type + states let nvCOMP launch its specialized decode kernel (ans.h); vlec's decoder
  // likewise knows the element type. --ans-hint 0 leaves both to be read from the stream.
  ans_d.data_type = args.ans_hint ? c.ans_type : NVCOMP_TYPE_BITS;
  ans_d.max_sub_chunk_count = 0;       // read from the stream
  ans_d.states_per_lane = args.ans_hint ? uint8_t(states) : uint8_t(0);
  ans_d.skip_validate = 0;             // keep nvCOMP's per-chunk checks, as vlec keeps its own
  gd_c.algorithm = 0;                  // entropy-only (Huffman, no LZ matching)
  gd_d.backend = NVCOMP_DECOMPRESS_BACKEND_DEFAULT;

  const std::size_t n = ch.count;
  nvcompAlignmentRequirements_t ca{}, da{};
  std::size_t max_out = 0, ctemp = 0, dtemp = 0;
  if (c.algo == Algo::ans) {
    NVCOMP_CHECK(nvcompBatchedANSCompressGetRequiredAlignments(ans_c, &ca));
    NVCOMP_CHECK(nvcompBatchedANSDecompressGetRequiredAlignments(ans_d, &da));
    NVCOMP_CHECK(nvcompBatchedANSCompressGetMaxOutputChunkSize(ch.chunk, ans_c, &max_out));
    NVCOMP_CHECK(nvcompBatchedANSCompressGetTempSize(n, ch.chunk, ans_c, &ctemp, ch.bytes, stream));
    NVCOMP_CHECK(nvcompBatchedANSDecompressGetTempSize(n, ch.chunk, ans_d, &dtemp, ch.bytes, stream));
  } else {
    NVCOMP_CHECK(nvcompBatchedGdeflateCompressGetRequiredAlignments(gd_c, &ca));
    NVCOMP_CHECK(nvcompBatchedGdeflateDecompressGetRequiredAlignments(gd_d, &da));
    NVCOMP_CHECK(nvcompBatchedGdeflateCompressGetMaxOutputChunkSize(ch.chunk, gd_c, &max_out));
    NVCOMP_CHECK(nvcompBatchedGdeflateCompressGetTempSize(n, ch.chunk, gd_c, &ctemp, ch.bytes, stream));
    NVCOMP_CHECK(nvcompBatchedGdeflateDecompressGetTempSize(n, ch.chunk, gd_d, &dtemp, ch.bytes, stream));
  }
  r.max_chunk_out = max_out;
  // Input and output chunks start at multiples of --chunk from 256-aligned allocations.
  if (ch.chunk % ca.input || ch.chunk % da.output) {
    r.why = "chunk size breaks nvCOMP's alignment (input " + std::to_string(ca.input) + ", output " +
            std::to_string(da.output) + ")";
    return r;
  }
  const std::size_t stride = round_up(max_out, std::max<std::size_t>({256, ca.output, da.input}));
  DeviceArray<uint8_t> d_comp(n * stride), d_ctemp(std::max<std::size_t>(ctemp, 1)),
      d_dtemp(std::max<std::size_t>(dtemp, 1));
  std::vector<void*> comp_ptrs(n);
  for (std::size_t i = 0; i < n; ++i) comp_ptrs[i] = d_comp.get() + i * stride;
  DeviceArray<void*> d_comp_ptrs(n);
  DeviceArray<std::size_t> d_comp_sizes(n), d_out_sizes(n);
  DeviceArray<nvcompStatus_t> d_status(n);
  CUDA_CHECK(cudaMemcpy(d_comp_ptrs.get(), comp_ptrs.data(), n * sizeof(void*), cudaMemcpyHostToDevice));

  auto compress = [&] {
    if (c.algo == Algo::ans)
      NVCOMP_CHECK(nvcompBatchedANSCompressAsync(ch.in_ptrs, ch.sizes, ch.chunk, n, d_ctemp.get(), ctemp,
                                                 d_comp_ptrs.get(), d_comp_sizes.get(), ans_c, d_status.get(),
                                                 stream));
    else
      NVCOMP_CHECK(nvcompBatchedGdeflateCompressAsync(ch.in_ptrs, ch.sizes, ch.chunk, n, d_ctemp.get(),
                                                      ctemp, d_comp_ptrs.get(), d_comp_sizes.get(), gd_c,
                                                      d_status.get(), stream));
  };
  auto decompress = [&] {
    if (c.algo == Algo::ans)
      NVCOMP_CHECK(nvcompBatchedANSDecompressAsync(d_comp_ptrs.get(), d_comp_sizes.get(), ch.sizes,
                                                   d_out_sizes.get(), n, d_dtemp.get(), dtemp, ch.out_ptrs,
                                                   ans_d, d_status.get(), stream));
    else
      NVCOMP_CHECK(nvcompBatchedGdeflateDecompressAsync(d_comp_ptrs.get(), d_comp_sizes.get(), ch.sizes,
                                                        d_out_sizes.get(), n, d_dtemp.get(), dtemp,
                                                        ch.out_ptrs, gd_d, d_status.get(), stream));
  };
  auto statuses_ok = [&](const char* what) {
    std::vector<nvcompStatus_t> st(n);
    CUDA_CHECK(cudaMemcpy(st.data(), d_status.get(), n * sizeof(nvcompStatus_t), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i)
      if (st[i] != nvcompSuccess) {
        r.why = std::string(what) + " chunk " + std::to_string(i) + ": " + nvcompGetStatusString(st[i]);
        return false;
      }
    return true;
  };

  CUDA_CHECK(cudaMemsetAsync(d_status.get(), 0xFF, n * sizeof(nvcompStatus_t), stream));
  r.comp_ms = median_ms(args.repeat, stream, compress);
  CUDA_CHECK(cudaGetLastError());
  if (!statuses_ok("compress")) return r;
  std::vector<std::size_t> comp_sizes(n);
  CUDA_CHECK(cudaMemcpy(comp_sizes.data(), d_comp_sizes.get(), n * sizeof(std::size_t), cudaMemcpyDeviceToHost));
  for (std::size_t s : comp_sizes) r.comp_bytes += s;
  r.ratio = double(ch.bytes) / double(r.comp_bytes);

  // Poison the output and statuses: every byte must be written by the decoder.
  CUDA_CHECK(cudaMemsetAsync(d_out, 0xA5, ch.bytes, stream));
  CUDA_CHECK(cudaMemsetAsync(d_status.get(), 0xFF, n * sizeof(nvcompStatus_t), stream));
  CUDA_CHECK(cudaMemsetAsync(d_out_sizes.get(), 0, n * sizeof(std::size_t), stream));
  r.decomp_ms = median_ms(args.repeat, stream, decompress);
  CUDA_CHECK(cudaGetLastError());
  if (!statuses_ok("decompress")) return r;
  std::vector<std::size_t> out_sizes(n);
  CUDA_CHECK(cudaMemcpy(out_sizes.data(), d_out_sizes.get(), n * sizeof(std::size_t), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t want = std::min(ch.chunk, ch.bytes - i * ch.chunk);
    if (out_sizes[i] != want) {
      r.why = "decompressed chunk " + std::to_string(i) + " has " + std::to_string(out_sizes[i]) + " bytes, not " +
              std::to_string(want);
      return r;
    }
  }
  std::vector<uint8_t> back(ch.bytes);
  CUDA_CHECK(cudaMemcpy(back.data(), d_out, ch.bytes, cudaMemcpyDeviceToHost));
  if (back != host_in) {
    const std::size_t at = std::mismatch(back.begin(), back.end(), host_in.begin()).first - back.begin();
    r.why = "decompressed bytes differ from the input at byte " + std::to_string(at);
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--size") args.mib = std::stoul(value());
    else if (a == "--repeat") args.repeat = std::stoi(value());
    else if (a == "--seed") args.seed = std::stoull(value());
    else if (a == "--data") args.data = split(value());
    else if (a == "--chunk") args.chunk = std::stoul(value());
    else if (a == "--ans-states") args.ans_states = std::stoi(value());
    else if (a == "--ans-hint") args.ans_hint = std::stoi(value()) != 0;
    else if (a == "--nonblocking-stream") args.nonblocking = true;
    else {
      std::fprintf(stderr,
                   "usage: nvcomp_bench [--size MiB (1024)] [--repeat N (20)] [--seed S (1)] "
                   "[--data skewed,quant1024,quant65536] [--chunk BYTES (65536)] [--ans-states 1|2 (2)] [--ans-hint 1|0 (1)] "
                   "[--nonblocking-stream]\n");
      return 1;
    }
  }
  if (args.repeat < 1 || args.mib == 0 || args.chunk == 0 || args.chunk % 16 || (args.ans_states != 1 && args.ans_states != 2)) {
    std::fprintf(stderr, "nvcomp_bench: need --repeat >= 1, --size >= 1, --chunk a positive multiple of 16, "
                         "--ans-states 1 or 2\n");
    return 1;
  }
  if (args.chunk > nvcompANSCompressionMaxAllowedChunkSize) {
    std::fprintf(stderr, "nvcomp_bench: --chunk exceeds nvCOMP ANS's limit of %zu bytes\n",
                 size_t(nvcompANSCompressionMaxAllowedChunkSize));
    return 1;
  }
  const bool run_gdeflate = args.chunk <= 65536;  // gdeflate.h: "Chunk sizes must not exceed 65536 bytes"

  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  nvcompProperties_t nvp{};
  NVCOMP_CHECK(nvcompGetProperties(&nvp));
  std::printf("device: %s, %d SMs, %.0f MiB; nvCOMP library version %u (headers %d.%d.%d.%d), built with "
              "CUDA runtime %u\n",
              prop.name, prop.multiProcessorCount, prop.totalGlobalMem / 1048576.0, nvp.version, NVCOMP_VER_MAJOR,
              NVCOMP_VER_MINOR, NVCOMP_VER_PATCH, NVCOMP_VER_BUILD, nvp.cudart_version);
  std::printf("seed %llu; %zu MiB per dataset; chunks of %zu bytes; median of %d runs after 2 warm-ups\n",
              (unsigned long long)args.seed, args.mib, args.chunk, args.repeat);
  std::printf("ANS: nvcomp_rANS, %d state(s) per lane, max_sub_chunk_count 0 (default 8), exact histogram, "
              "decompress %s, backend DEFAULT, validation on\n",
              args.ans_states,
              args.ans_hint ? "with the same data type and states named" : "with data type and states read from the stream");
  std::printf("  ANS(u8): data_type NVCOMP_TYPE_UCHAR; ANS(fp16): data_type NVCOMP_TYPE_FLOAT16, nvCOMP's only "
              "2-byte ANS type (there is no uint16 one), run on u16 data besides ANS(u8)\n");
  if (run_gdeflate)
    std::printf("GDeflate: algorithm 0 = \"highest-throughput, entropy-only compression\" (Huffman only, no LZ "
                "matching), decompress backend DEFAULT\n");
  else
    std::printf("GDeflate: skipped, --chunk %zu > 65536 (its compressor's limit)\n", args.chunk);
  std::printf("ratio = input bytes / sum of compressed chunk sizes (a container would add 8 B per chunk for "
              "the size table)\n");

  cudaStream_t stream;
  // A blocking stream: on a cudaStreamNonBlocking one, nvCOMP 6.0.0.12's GDeflate
  // ends in an illegal memory access when it runs after other datasets at 1 GiB
  // (skewed then quant1024, every time), and not under CUDA_LAUNCH_BLOCKING=1 or
  // compute-sanitizer (0 errors): some of its work must be ordered by the legacy
  // default stream (bench/results/2026-11-26-h100-session11-nvcomp-stream.log).
  // --nonblocking-stream times on one anyway, to show it.
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, args.nonblocking ? cudaStreamNonBlocking : cudaStreamDefault));

  // The yardstick: a device-to-device copy of the same size, on the same stream.
  const std::size_t bytes = args.mib << 20;
  DeviceArray<uint8_t> d_in(bytes), d_out(bytes);
  CUDA_CHECK(cudaMemset(d_in.get(), 1, bytes));
  const float copy_ms = median_ms(args.repeat, stream, [&] {
    CUDA_CHECK(cudaMemcpyAsync(d_out.get(), d_in.get(), bytes, cudaMemcpyDeviceToDevice, stream));
  });
  const double copy_gbs = bytes / copy_ms / 1e6;  // GB/s of bytes copied
  std::printf("device copy: %.1f GB/s copied (%.1f GB/s read+write)\n\n", copy_gbs, 2 * copy_gbs);
  std::printf("%-12s %-4s %-16s %8s %10s %8s %10s %8s %12s %12s %s\n", "data", "type", "codec", "ratio",
              "comp GB/s", "of copy", "dec GB/s", "of copy", "comp ms", "dec ms", "verified");
  std::fflush(stdout);

  bool all_ok = true;
  for (const std::string& name : args.data) {
    const vlec::gen::Sample sample = vlec::gen::make(name, bytes, args.seed);
    const std::size_t width = static_cast<std::size_t>(sample.dtype);
    const std::size_t size = sample.bytes.size();
    if (size == 0 || size > bytes) {
      std::fprintf(stderr, "nvcomp_bench: %s: generator gave %zu bytes\n", name.c_str(), size);
      return 1;
    }
    // Upload once; every codec reads the same device bytes.
    CUDA_CHECK(cudaMemcpy(d_in.get(), sample.bytes.data(), size, cudaMemcpyHostToDevice));
    ChunkedInput ch;
    ch.bytes = size;
    ch.chunk = args.chunk;
    ch.count = (size + args.chunk - 1) / args.chunk;
    std::vector<const void*> in_ptrs(ch.count);
    std::vector<void*> out_ptrs(ch.count);
    std::vector<std::size_t> sizes(ch.count);
    for (std::size_t i = 0; i < ch.count; ++i) {
      in_ptrs[i] = d_in.get() + i * args.chunk;
      out_ptrs[i] = d_out.get() + i * args.chunk;
      sizes[i] = std::min(args.chunk, size - i * args.chunk);
    }
    DeviceArray<const void*> d_in_ptrs(ch.count);
    DeviceArray<void*> d_out_ptrs(ch.count);
    DeviceArray<std::size_t> d_sizes(ch.count);
    CUDA_CHECK(cudaMemcpy(d_in_ptrs.get(), in_ptrs.data(), ch.count * sizeof(void*), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_out_ptrs.get(), out_ptrs.data(), ch.count * sizeof(void*), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_sizes.get(), sizes.data(), ch.count * sizeof(std::size_t), cudaMemcpyHostToDevice));
    ch.in_ptrs = d_in_ptrs.get();
    ch.out_ptrs = d_out_ptrs.get();
    ch.sizes = d_sizes.get();

    std::vector<Codec> codecs = {{Algo::ans, "ANS(u8)", NVCOMP_TYPE_UCHAR}};
    if (width == 2) codecs.push_back({Algo::ans, "ANS(fp16)", NVCOMP_TYPE_FLOAT16});
    if (run_gdeflate) codecs.push_back({Algo::gdeflate, "GDeflate(algo 0)"});
    for (const Codec& c : codecs) {
      const Result r = run_codec(c, ch, d_out.get(), sample.bytes, args, args.ans_states, stream);
      const double cgbs = r.comp_ms > 0 ? size / r.comp_ms / 1e6 : 0, dgbs = r.decomp_ms > 0 ? size / r.decomp_ms / 1e6 : 0;
      std::printf("%-12s %-4s %-16s %8.4f %10.1f %7.1f%% %10.1f %7.1f%% %12.3f %12.3f %s%s\n", name.c_str(),
                  dtype_name(sample.dtype), c.label.c_str(), r.ratio, cgbs, 100 * cgbs / copy_gbs, dgbs,
                  100 * dgbs / copy_gbs, r.comp_ms, r.decomp_ms, r.ok ? "ok" : "FAILED: ", r.why.c_str());
      std::fflush(stdout);
      all_ok = all_ok && r.ok;
    }
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  return all_ok ? 0 : 2;
}
