// bench/lane_layout_probe.cu: what the GPU Huffman encoder could reach with
// a word-interleaved lane layout, measured beside vlec's own encoder.
//
// Why: vlec's chunk layout (docs/FORMAT.md §5) stores the 32 lanes' words in
// the order a warp of decoders takes them, which makes the encoder replay
// every decoder's refills: a ballot, two popcounts and the slot selects each
// step, ~111-143 instructions a row of 128 bytes, where 1.5 TB/s would need
// ~60 (docs/ARCHITECTURE.md, "Known limits"). The probe's layout puts word i
// of lane j at 32 i + j for every i below the shortest lane's word count,
// and the longer lanes' last words after them, row by row in lane order;
// each chunk then needs its lanes' word counts (here 36 bytes: the shortest
// count and 32 one-byte excesses). Its encoder is one warp a chunk, one pass,
// no ballot: each lane codes its own symbols (the format's own symbol-to-lane
// deal, K symbols merged a step) and stores each word as it completes.
//
// What it does not do: place chunks in a frame (it writes fixed slots; a real
// encoder would need a pass over the code lengths, as vlec's pass A, or a copy
// after a look-back), hash the chunks, or write headers. So its figure bounds
// what the layout allows and is not a figure of vlec. Every chunk it writes
// is decoded back on the CPU and compared with the input; vlec's encoder (the
// whole frame, with the same codebook) is timed alternately in the same run.
// Then a plain decoder of the layout (probe_decode: no ballot, one symbol a
// lookup, no checksum) is timed alternately with vlec's verified decoder,
// both outputs compared with the input.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_timing.cuh"
#include "cpu/frame_codec.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_codebook.hpp"
#include "cuda/frame_decode.hpp"
#include "cuda/frame_device.hpp"
#include "cuda/huffman_decode.hpp"
#include "format/frame.hpp"
#include "gen/generators.hpp"
#include "huffman/chunk_codec.hpp"
#include "huffman/layout.hpp"

using namespace vlec;

namespace {

constexpr unsigned kWarpsPerBlock = 8;
constexpr unsigned kSharedEntries = 1024;
constexpr unsigned kFull = 0xFFFFFFFFu;

template <typename Sym>
__device__ __forceinline__ void load_group(const Sym* p, uint32_t (&s)[4]) {
  if constexpr (sizeof(Sym) == 1) {
    const uint32_t w = *reinterpret_cast<const uint32_t*>(p);
    for (int k = 0; k < 4; ++k) s[k] = (w >> (8 * k)) & 255u;
  } else {
    const uint2 w = *reinterpret_cast<const uint2*>(p);
    s[0] = w.x & 0xFFFFu, s[1] = w.x >> 16, s[2] = w.y & 0xFFFFu, s[3] = w.y >> 16;
  }
}

// One warp a chunk: lane j codes the chunk's symbols of lane j (groups of 4,
// row by row) into its words, word i stored at 32 i + j of the chunk's slot
// as it completes; then the words past the shortest lane's count are packed
// after 32 * shortest, row by row in lane order. lane_words: each lane's count.
template <typename Sym, unsigned K, bool kShared>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    probe_encode(const Sym* in, uint64_t n, uint32_t chunk, uint64_t chunks, const uint32_t* entry,
                 uint32_t* slots, uint64_t slot_words, uint32_t* lane_words) {
  __shared__ uint32_t table[kShared ? kSharedEntries : 1];
  if constexpr (kShared) {
    for (uint32_t i = threadIdx.x; i < kSharedEntries; i += blockDim.x) table[i] = entry[i];
    __syncthreads();
  }
  const uint32_t lane = threadIdx.x & 31;
  const uint64_t c = uint64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  if (c >= chunks) return;
  const uint64_t first = c * chunk, count = min(uint64_t{chunk}, n - first);
  const Sym* src = in + first + huffman::kGroup * lane;
  uint32_t* out = slots + c * slot_words;
  const auto lookup = [&](uint32_t s) { return kShared ? table[s] : __ldg(entry + s); };
  uint64_t acc = 0;
  uint32_t nb = 0;
  uint32_t* next = out + lane;  // where the lane's next word goes (32 words on per word)
  const auto append = [&](uint32_t code, uint32_t len) {  // code below 2^32, nb below 32: one word at most
    acc |= uint64_t{code} << nb;
    nb += len;
    if (nb >= 32) {
      __stcg(next, static_cast<uint32_t>(acc));
      next += 32;
      acc >>= 32;
      nb -= 32;
    }
  };
  const uint64_t rows = count / huffman::kRow;
  for (uint64_t r = 0; r < rows; ++r, src += huffman::kRow) {
    uint32_t s[4];
    load_group(src, s);
#pragma unroll
    for (unsigned step = 0; step < 4 / K; ++step) {
      uint32_t code = 0, len = 0;
#pragma unroll
      for (unsigned k = 0; k < K; ++k) {
        const uint32_t e = lookup(s[step * K + k]);
        code |= (e & 0xFFFFFFu) << len;
        len += e >> 24;
      }
      append(code, len);
    }
  }
  const uint32_t rest = static_cast<uint32_t>(count % huffman::kRow), mine = rest > 4 * lane ? min(rest - 4 * lane, 4u) : 0;
  for (uint32_t k = 0; k < mine; ++k) {
    const uint32_t e = lookup(src[k]);
    append(e & 0xFFFFFFu, e >> 24);
  }
  if (nb > 0) __stcg(next, static_cast<uint32_t>(acc)), next += 32;
  const uint32_t words = static_cast<uint32_t>((next - out) / 32);
  const uint32_t shortest = __reduce_min_sync(kFull, words), longest = __reduce_max_sync(kFull, words);
  uint32_t at = 32 * shortest;
  // A lane reads only its own words (its own stores: program order); a row's
  // words are all read before any is moved, and moves go below 32 (t + 1).
  for (uint32_t t = shortest; t < longest; ++t) {
    const bool has = words > t;
    const uint32_t w = has ? out[32 * t + lane] : 0, mask = __ballot_sync(kFull, has);
    __syncwarp();
    if (has) out[at + __popc(mask & ((1u << lane) - 1))] = w;
    at += __popc(mask);
    __syncwarp();
  }
  lane_words[32 * c + lane] = words;
}

// The decoder probe: one warp a chunk, lane j decodes its own symbols, word i
// of its lane read at 32 i + j below the shortest count (its few tail words
// first copied into shared memory), a refill whenever the buffer holds fewer
// than 32 bits (no ballot: where the word is depends on i alone), one symbol
// a lookup in a 2^kPrimaryBits table in shared memory (longer codes: a table
// of 2^max_length entries in global memory), and the row's 4 symbols stored
// as one coalesced word (u8) or two (u16). status[c] = 1: the lanes' spread
// exceeds kTailWords (none measured above 15).
constexpr unsigned kTailWords = 32;
constexpr unsigned kPrimaryBits = 11;

template <typename Sym, unsigned K>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    probe_decode(const uint32_t* slots, uint64_t slot_words, const uint32_t* lane_words, uint64_t n, uint32_t chunk,
                 uint64_t chunks, const uint32_t* primary, const uint32_t* whole, unsigned L, Sym* out,
                 uint32_t* status) {
  __shared__ uint32_t table[1u << kPrimaryBits];
  __shared__ uint32_t tail[kWarpsPerBlock][kTailWords][32];  // [warp][word - shortest][lane]: no bank conflicts
  for (uint32_t i = threadIdx.x; i < (1u << kPrimaryBits); i += blockDim.x) table[i] = primary[i];
  __syncthreads();
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const uint64_t c = uint64_t{blockIdx.x} * kWarpsPerBlock + warp;
  if (c >= chunks) return;
  const uint32_t* in = slots + c * slot_words;
  const uint32_t words = lane_words[32 * c + lane];
  const uint32_t shortest = __reduce_min_sync(kFull, words), longest = __reduce_max_sync(kFull, words);
  if (longest - shortest > kTailWords) {
    if (lane == 0) status[c] = 1;
    return;
  }
  uint32_t at = 32 * shortest;
  for (uint32_t t = shortest; t < longest; ++t) {
    const bool has = words > t;
    const uint32_t mask = __ballot_sync(kFull, has);
    if (has) tail[warp][t - shortest][lane] = in[at + __popc(mask & ((1u << lane) - 1))];
    at += __popc(mask);
  }
  __syncwarp();
  const uint32_t P = min(kPrimaryBits, L);
  const uint64_t pmask = (uint64_t{1} << P) - 1, lmask = (uint64_t{1} << L) - 1;
  uint64_t buf = 0;
  uint32_t bits = 0, i = 0;
  const uint32_t* word_at = in + lane;
  const auto refill = [&] {
    if (bits < 32) {
      const uint32_t w = i < shortest ? __ldg(word_at) : i < words ? tail[warp][i - shortest][lane] : 0u;
      buf |= uint64_t{w} << bits;
      bits += 32;
      ++i;
      word_at += 32;
    }
  };
  const auto decode_one = [&]() -> uint32_t {
    uint32_t e = table[buf & pmask];
    if ((e >> 24) == 0) e = __ldg(whole + (buf & lmask));
    const uint32_t l = e >> 24;
    buf >>= l;
    bits -= l;
    return e & 0xFFFFFFu;
  };
  const uint64_t first = c * chunk, count = min(uint64_t{chunk}, n - first), rows = count / huffman::kRow;
  Sym* dst = out + first + huffman::kGroup * lane;
  for (uint64_t r = 0; r < rows; ++r, dst += huffman::kRow) {
    uint32_t s[4];
#pragma unroll
    for (unsigned step = 0; step < 4 / K; ++step) {
      refill();
#pragma unroll
      for (unsigned k = 0; k < K; ++k) s[step * K + k] = decode_one();
    }
    if constexpr (sizeof(Sym) == 1)
      *reinterpret_cast<uint32_t*>(dst) = s[0] | s[1] << 8 | s[2] << 16 | s[3] << 24;
    else
      *reinterpret_cast<uint2*>(dst) = make_uint2(s[0] | s[1] << 16, s[2] | s[3] << 16);
  }
  const uint32_t rest = static_cast<uint32_t>(count % huffman::kRow), mine = rest > 4 * lane ? min(rest - 4 * lane, 4u) : 0;
  for (uint32_t k = 0; k < mine; ++k) {
    refill();
    dst[k] = static_cast<Sym>(decode_one());
  }
}

// The CPU's check: every chunk's lanes rebuilt from the probe's layout and
// decoded with the codebook (a table of 2^max_length entries), each symbol
// compared with the input. Returns the chunks that differ.
template <typename Sym>
uint64_t decode_check(const std::vector<Sym>& input, uint32_t chunk, const std::vector<uint32_t>& slots,
                      uint64_t slot_words, const std::vector<uint32_t>& lane_words, const huffman::Codebook& book) {
  const unsigned L = book.max_length;
  std::vector<uint32_t> table(std::size_t{1} << L, 0);
  for (uint32_t s = 0; s < book.alphabet_size; ++s)
    if (const unsigned l = book.lengths[s])
      for (uint32_t hi = 0; hi < (1u << (L - l)); ++hi) table[book.codes[s] | hi << l] = s | l << 24;
  const uint64_t n = input.size(), chunks = (n + chunk - 1) / chunk;
  std::vector<uint64_t> bad(std::max(1u, std::thread::hardware_concurrency()), 0);
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < bad.size(); ++w)
    pool.emplace_back([&, w] {
      std::vector<uint32_t> lane[32];
      for (uint64_t c = w; c < chunks; c += bad.size()) {
        const uint32_t* slot = slots.data() + c * slot_words;
        const uint32_t* counts = lane_words.data() + 32 * c;
        const uint32_t shortest = *std::min_element(counts, counts + 32), longest = *std::max_element(counts, counts + 32);
        for (unsigned j = 0; j < 32; ++j) {
          lane[j].clear();
          for (uint32_t t = 0; t < shortest; ++t) lane[j].push_back(slot[32 * t + j]);
        }
        uint64_t at = 32 * uint64_t{shortest};
        for (uint32_t t = shortest; t < longest; ++t)
          for (unsigned j = 0; j < 32; ++j)
            if (counts[j] > t) lane[j].push_back(slot[at++]);
        const uint64_t first = c * chunk, count = std::min<uint64_t>(chunk, n - first);
        bool ok = true;
        for (unsigned j = 0; j < 32 && ok; ++j) {
          uint64_t buf = 0;
          unsigned bits = 0;
          std::size_t next = 0;
          for (uint64_t t = 0; t < huffman::lane_symbols(count, j); ++t) {
            while (bits <= 32 && next < lane[j].size()) buf |= uint64_t{lane[j][next++]} << bits, bits += 32;
            const uint32_t e = table[buf & ((uint64_t{1} << L) - 1)];
            const unsigned l = e >> 24;
            if (l == 0 || l > bits || (e & 0xFFFFFFu) != input[first + huffman::symbol_index(t, j)]) {
              ok = false;
              break;
            }
            buf >>= l;
            bits -= l;
          }
        }
        bad[w] += !ok;
      }
    });
  for (auto& t : pool) t.join();
  uint64_t total = 0;
  for (uint64_t b : bad) total += b;
  return total;
}

template <typename Sym>
int run(const gen::Sample& sample, uint32_t chunk, int repeat, double copy_gbs) {
  const uint64_t n = sample.bytes.size() / sizeof(Sym);
  cpu::FrameParams p;
  p.codec = Codec::huffman;
  p.dtype = sample.dtype;
  p.chunk_elements = chunk;
  const std::vector<uint8_t> frame = cpu::compress_frame(sample.bytes.data(), n, p);
  const format::ParsedFrame f = format::parse_frame(frame.data(), frame.size(), 0);
  const huffman::Codebook& book = f.codebooks[0];
  const unsigned K = huffman::symbols_per_step(book.max_length);
  const huffman::EncodeTable host_table = huffman::make_encode_table(book, sample.dtype);
  const bool shared = book.alphabet_size <= kSharedEntries;

  cuda::DeviceBuffer<uint8_t> d_in(sample.bytes.size());
  CUDA_CHECK(cudaMemcpy(d_in.get(), sample.bytes.data(), sample.bytes.size(), cudaMemcpyHostToDevice));
  std::vector<uint32_t> entry(host_table.entry);
  entry.resize(std::max<std::size_t>(entry.size(), kSharedEntries), 0);
  cuda::DeviceBuffer<uint32_t> d_entry(entry.size());
  CUDA_CHECK(cudaMemcpy(d_entry.get(), entry.data(), 4 * entry.size(), cudaMemcpyHostToDevice));
  const uint64_t chunks = (n + chunk - 1) / chunk;
  const uint64_t lane_symbols = (chunk + 31) / 32 + huffman::kGroup;
  const uint64_t slot_words = 32 * ((lane_symbols * book.max_length + 31) / 32 + 1);
  cuda::DeviceBuffer<uint32_t> d_slots(chunks * slot_words), d_lane_words(32 * chunks);
  const Sym* d_sym = reinterpret_cast<const Sym*>(d_in.get());
  const dim3 grid(static_cast<unsigned>((chunks + kWarpsPerBlock - 1) / kWarpsPerBlock)), block(32 * kWarpsPerBlock);
  const auto probe = [&] {
#define VLEC_PROBE(KK, SH)                                                                                          \
  probe_encode<Sym, KK, SH><<<grid, block>>>(d_sym, n, chunk, chunks, d_entry.get(), d_slots.get(), slot_words, \
                                             d_lane_words.get())
    if (K == 4) shared ? VLEC_PROBE(4, true) : VLEC_PROBE(4, false);
    else if (K == 2) shared ? VLEC_PROBE(2, true) : VLEC_PROBE(2, false);
    else shared ? VLEC_PROBE(1, true) : VLEC_PROBE(1, false);
#undef VLEC_PROBE
    CUDA_CHECK(cudaGetLastError());
  };
  // vlec's encoder, the whole frame with the same codebook (as gpu_bench's "encode with a given codebook").
  const cuda::UploadedCodebook up(book, sample.dtype);
  const unsigned width = static_cast<unsigned>(sizeof(Sym));
  cuda::DeviceBuffer<uint8_t> d_frame(cuda::frame_encode_capacity(n, width, chunk)),
      d_temp(cuda::frame_encode_temp_bytes(n, width, chunk));
  cuda::DeviceBuffer<uint64_t> d_size(1);
  cuda::FrameEncodeArgs e;
  e.in = d_in.get();
  e.elements = n;
  e.dtype = sample.dtype;
  e.chunk_elements = chunk;
  e.book = up.view();
  e.frame = d_frame.get();
  e.frame_capacity = d_frame.size();
  e.frame_bytes = d_size.get();
  const auto lanes = [&] { cuda::encode_frame_device(e, d_temp.get(), d_temp.size(), 0); };
  const std::vector<float> ms = bench::medians_ms(repeat, 0, probe, lanes);

  std::vector<uint32_t> slots(chunks * slot_words), lane_words(32 * chunks);
  CUDA_CHECK(cudaMemcpy(slots.data(), d_slots.get(), 4 * slots.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(lane_words.data(), d_lane_words.get(), 4 * lane_words.size(), cudaMemcpyDeviceToHost));
  uint64_t gpu_size = 0;
  CUDA_CHECK(cudaMemcpy(&gpu_size, d_size.get(), 8, cudaMemcpyDeviceToHost));
  std::vector<uint8_t> gpu_frame(std::min<uint64_t>(gpu_size, d_frame.size()));
  CUDA_CHECK(cudaMemcpy(gpu_frame.data(), d_frame.get(), gpu_frame.size(), cudaMemcpyDeviceToHost));
  std::vector<Sym> input(n);
  std::memcpy(input.data(), sample.bytes.data(), sample.bytes.size());
  const uint64_t bad = decode_check(input, chunk, slots, slot_words, lane_words, book);
  uint64_t probe_bytes = 0, spread = 0;
  for (uint64_t c = 0; c < chunks; ++c) {
    const uint32_t* w = lane_words.data() + 32 * c;
    const uint32_t lo = *std::min_element(w, w + 32), hi = *std::max_element(w, w + 32);
    spread = std::max<uint64_t>(spread, hi - lo);
    for (int j = 0; j < 32; ++j) probe_bytes += 4 * uint64_t{w[j]};
    probe_bytes += 36;  // the shortest count (4 bytes) and 32 one-byte excesses
  }
  const uint64_t payload = f.header.frame_bytes - f.header.header_area_bytes();
  const double gb = double(sample.bytes.size());
  std::printf("%-11s %-4s %6u  K=%u %-6s  probe %7.3f ms %7.1f GB/s %5.1f%% of copy | vlec lanes (whole frame) %7.3f ms "
              "%7.1f GB/s %5.1f%% | payload probe %10llu vlec %10llu (%+.3f%%), widest lane spread %llu words | "
              "probe decoded on the CPU: %s, vlec frame %s\n",
              sample.name.c_str(), sizeof(Sym) == 1 ? "u8" : "u16", chunk, K, shared ? "shared" : "global", ms[0],
              gb / ms[0] / 1e6, 100 * gb / ms[0] / 1e6 / copy_gbs, ms[1], gb / ms[1] / 1e6,
              100 * gb / ms[1] / 1e6 / copy_gbs, static_cast<unsigned long long>(probe_bytes),
              static_cast<unsigned long long>(payload), 100.0 * (double(probe_bytes) - double(payload)) / double(payload),
              static_cast<unsigned long long>(spread), bad ? "CHUNKS DIFFER" : "every chunk == input",
              gpu_frame == frame ? "== CPU bytes" : "DIFFERS");
  std::fflush(stdout);
  if (bad || gpu_frame != frame) return 1;

  // The decoders: the probe's, on the slots just written, and vlec's (the
  // verified decoder of gpu_bench: every chunk's XXH3 checked too) on the
  // CPU's frame, timed alternately; both outputs compared with the input.
  const unsigned L = book.max_length, P = std::min(kPrimaryBits, L);
  std::vector<uint32_t> primary(std::size_t{1} << kPrimaryBits, 0), whole(std::size_t{1} << L, 0);
  for (uint32_t sym = 0; sym < book.alphabet_size; ++sym)
    if (const unsigned l = book.lengths[sym]) {
      for (uint32_t hi = 0; hi < (1u << (L - l)); ++hi) whole[book.codes[sym] | hi << l] = sym | l << 24;
      if (l <= P)
        for (uint32_t hi = 0; hi < (1u << (P - l)); ++hi) primary[book.codes[sym] | hi << l] = sym | l << 24;
    }
  cuda::DeviceBuffer<uint32_t> d_primary(primary.size()), d_whole(whole.size()), d_status(chunks);
  CUDA_CHECK(cudaMemcpy(d_primary.get(), primary.data(), 4 * primary.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_whole.get(), whole.data(), 4 * whole.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_status.get(), 0, 4 * chunks));
  cuda::DeviceBuffer<uint8_t> d_probe_out(sample.bytes.size()), d_vlec_out(sample.bytes.size());
  CUDA_CHECK(cudaMemset(d_probe_out.get(), 0xA5, sample.bytes.size()));
  CUDA_CHECK(cudaMemset(d_vlec_out.get(), 0xA5, sample.bytes.size()));
  Sym* d_probe_sym = reinterpret_cast<Sym*>(d_probe_out.get());
  const auto probe_dec = [&] {
    if (K == 4) probe_decode<Sym, 4><<<grid, block>>>(d_slots.get(), slot_words, d_lane_words.get(), n, chunk, chunks,
                                                      d_primary.get(), d_whole.get(), L, d_probe_sym, d_status.get());
    else if (K == 2) probe_decode<Sym, 2><<<grid, block>>>(d_slots.get(), slot_words, d_lane_words.get(), n, chunk, chunks,
                                                           d_primary.get(), d_whole.get(), L, d_probe_sym, d_status.get());
    else probe_decode<Sym, 1><<<grid, block>>>(d_slots.get(), slot_words, d_lane_words.get(), n, chunk, chunks,
                                               d_primary.get(), d_whole.get(), L, d_probe_sym, d_status.get());
    CUDA_CHECK(cudaGetLastError());
  };
  const uint64_t payload_bytes = f.header.frame_bytes - f.header.header_area_bytes();
  cuda::DeviceBuffer<uint8_t> d_payload(payload_bytes), d_dtemp(cuda::frame_decode_temp_bytes(f));
  CUDA_CHECK(cudaMemcpy(d_payload.get(), f.payload, payload_bytes, cudaMemcpyHostToDevice));
  const cuda::HuffmanDecodeArgs a =
      cuda::prepare_frame_decode(f, d_payload.get(), d_vlec_out.get(), d_dtemp.get(), d_dtemp.size(), 0);
  const auto vlec_dec = [&] { cuda::launch_huffman_decode(a, 0); };
  const std::vector<float> dms = bench::medians_ms(repeat, 0, probe_dec, vlec_dec);
  std::vector<uint8_t> back(sample.bytes.size());
  std::vector<uint32_t> status(chunks);
  CUDA_CHECK(cudaMemcpy(status.data(), d_status.get(), 4 * chunks, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(back.data(), d_probe_out.get(), back.size(), cudaMemcpyDeviceToHost));
  const bool probe_ok = back == sample.bytes && std::count(status.begin(), status.end(), 0u) == std::ptrdiff_t(chunks);
  CUDA_CHECK(cudaMemcpy(back.data(), d_vlec_out.get(), back.size(), cudaMemcpyDeviceToHost));
  bool vlec_ok = back == sample.bytes;
  try {
    cuda::check_frame_decode(f, d_dtemp.get());
  } catch (const Error&) {
    vlec_ok = false;
  }
  std::printf("%-11s %-4s %6u  decode: probe %7.3f ms %7.1f GB/s %5.1f%% of copy (no checksum) | vlec (verified, XXH3 "
              "of every chunk) %7.3f ms %7.1f GB/s %5.1f%% | probe output %s, vlec output %s\n",
              sample.name.c_str(), sizeof(Sym) == 1 ? "u8" : "u16", chunk, dms[0], gb / dms[0] / 1e6,
              100 * gb / dms[0] / 1e6 / copy_gbs, dms[1], gb / dms[1] / 1e6, 100 * gb / dms[1] / 1e6 / copy_gbs,
              probe_ok ? "== input" : "DIFFERS", vlec_ok ? "== input" : "DIFFERS");
  std::fflush(stdout);
  return probe_ok && vlec_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mib = 1024;
  int repeat = 10;
  std::vector<std::string> data = {"skewed", "quant1024", "quant65536"};
  std::vector<uint32_t> chunks = {16384, 65536};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--size") mib = std::stoul(v);
    else if (a == "--repeat") repeat = std::stoi(v);
    else if (a == "--data") data = bench::split(v);
    else if (a == "--chunks") {
      chunks.clear();
      for (const std::string& c : bench::split(v)) chunks.push_back(static_cast<uint32_t>(std::stoul(c)));
    } else {
      std::fprintf(stderr, "usage: lane_layout_probe [--size MiB] [--repeat N] [--data a,b] [--chunks 16384,65536]\n");
      return 1;
    }
  }
  int device = 0;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const std::size_t bytes = mib << 20;
  cuda::DeviceBuffer<uint8_t> src(bytes), dst(bytes);
  CUDA_CHECK(cudaMemset(src.get(), 1, bytes));
  const float copy_ms = bench::median_ms(repeat, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice));
  });
  const double copy_gbs = bytes / copy_ms / 1e6;
  std::printf("device: %s, %d SMs; %zu MiB inputs, medians of %d alternated runs after two warm-ups each; seed 1\n",
              prop.name, prop.multiProcessorCount, mib, repeat);
  std::printf("device copy: %.1f GB/s copied (%.1f GB/s read+write)\n", copy_gbs, 2 * copy_gbs);
  int status = 0;
  for (const std::string& name : data) {
    const gen::Sample sample = gen::make(name, bytes, 1);
    for (uint32_t chunk : chunks)
      status |= sample.dtype == DType::u8 ? run<uint8_t>(sample, chunk, repeat, copy_gbs)
                                          : run<uint16_t>(sample, chunk, repeat, copy_gbs);
  }
  return status;
}
