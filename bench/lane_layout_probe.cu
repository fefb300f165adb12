// bench/lane_layout_probe.cu: what the GPU Huffman encoder could reach with
// a word-interleaved lane layout, measured beside vlec's own encoder.
//
// Why: vlec's chunk layout (docs/FORMAT.md §5) stores the 32 lanes' words in
// the order a warp of decoders takes them, which makes the encoder replay
// every decoder's refills: a ballot, two popcounts and the slot selects each
// step, ~111-143 instructions a row of 128 bytes, where 1.5 TB/s would need
// ~60 (docs/ARCHITECTURE.md, "Known limits"). The probe's layout puts word i
// of lane j at 32 i + j for every i below the shortest lane's word count,
// and the longer lanes' last words after them, lane-major (lane 0's, then
// lane 1's, ...: a lane finds its own from one offset, the exclusive sum of
// the lanes' excesses; row by row in lane order, as the first probes had it,
// took a lookup and a popcount a word);
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
// Beside them, the same encoder with placement (probe_encode_placed: pass A
// over the code lengths, the decoupled look-back, pass B into one dense
// frame), checked the same way. Then a plain decoder of the layout
// (probe_decode: no ballot, one symbol a lookup, no checksum) is timed
// alternately with vlec's verified decoder, both outputs compared with the
// input. The kernels are in lane_layout_probe_kernels.cuh.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_timing.cuh"
#include "given_book_encoder.cuh"
#include "lane_layout_probe_blocks.cuh"
#include "lane_layout_probe_decoder.cuh"
#include "lane_layout_probe_kernels.cuh"
#include "lane_layout_probe_present.cuh"
#include "cpu/frame_codec.hpp"
#include "cuda/chunk_scan.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/device_codebook.hpp"
#include "cuda/frame_decode.hpp"
#include "cuda/huffman_decode.hpp"
#include "cuda/launch_cache.hpp"
#include "format/frame.hpp"
#include "gen/generators.hpp"
#include "huffman/chunk_codec.hpp"
#include "huffman/layout.hpp"

using namespace vlec;

namespace {

using namespace vlec::probe;

// view(c, counts): chunk c's words (32 i + j below the shortest count, the
// rest packed after), its 32 lane counts filled in.
template <typename Sym, typename View>
uint64_t decode_check(const std::vector<Sym>& input, uint32_t chunk, const huffman::Codebook& book, View&& view) {
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
        uint32_t counts[32];
        const uint32_t* slot = view(c, counts);
        const uint32_t shortest = *std::min_element(counts, counts + 32), longest = *std::max_element(counts, counts + 32);
        for (unsigned j = 0; j < 32; ++j) {
          lane[j].clear();
          for (uint32_t t = 0; t < shortest; ++t) lane[j].push_back(slot[32 * t + j]);
        }
        uint64_t at = 32 * uint64_t{shortest};  // the tail: lane-major
        for (unsigned j = 0; j < 32; ++j)
          for (uint32_t t = shortest; t < counts[j]; ++t) lane[j].push_back(slot[at++]);
        (void)longest;
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
  bench::GivenBookEncoder enc(d_in.get(), n, sample.dtype, chunk, up.view());
  const auto lanes = [&] { enc.run(); };
  // The probe with placement (pass A, look-back, pass B) into one frame.
  const uint64_t placed_capacity = chunks * (kCountBytes + 4 * 32) + n * book.max_length / 8 + 64;
  cuda::DeviceBuffer<uint8_t> d_placed(placed_capacity);
  cuda::DeviceBuffer<uint64_t> d_offsets(chunks);
  cuda::DeviceBuffer<unsigned long long> d_scan(chunks + 1);  // the scan's words, then the ticket
  cuda::DeviceBuffer<uint32_t> d_placed_status(chunks);
  CUDA_CHECK(cudaMemset(d_placed_status.get(), 0, 4 * chunks));
  const cuda::ChunkScanState scan{d_scan.get(), reinterpret_cast<unsigned int*>(d_scan.get() + chunks)};
  const auto placed = [&] {
    CUDA_CHECK(cudaMemsetAsync(d_scan.get(), 0, 8 * (chunks + 1), 0));
#define VLEC_PLACED(KK, SH)                                                                                             \
  probe_encode_placed<Sym, KK, SH><<<grid, block>>>(d_sym, n, chunk, chunks, d_entry.get(), d_placed.get(),            \
                                                    d_offsets.get(), scan, d_placed_status.get())
    if (K == 4) shared ? VLEC_PLACED(4, true) : VLEC_PLACED(4, false);
    else if (K == 2) shared ? VLEC_PLACED(2, true) : VLEC_PLACED(2, false);
    else shared ? VLEC_PLACED(1, true) : VLEC_PLACED(1, false);
#undef VLEC_PLACED
    CUDA_CHECK(cudaGetLastError());
  };
  // The probe built as vlec's encoder is (probe_encode_blocks), into a frame of its own.
  cuda::DeviceBuffer<uint8_t> d_blocks(placed_capacity);
  cuda::DeviceBuffer<uint64_t> d_block_offsets(chunks), d_block_hashes(chunks);
  cuda::DeviceBuffer<unsigned long long> d_block_scan(chunks + 1);
  cuda::DeviceBuffer<uint32_t> d_block_status(chunks);
  CUDA_CHECK(cudaMemset(d_block_status.get(), 0xFF, 4 * chunks));
  BlockProbeArgs ba{};
  ba.in = d_in.get(), ba.n = n, ba.chunk = chunk, ba.chunks = chunks;
  ba.entry = d_entry.get(), ba.table_size = static_cast<uint32_t>(host_table.entry.size());
  ba.frame = d_blocks.get(), ba.offsets = d_block_offsets.get(), ba.hashes = d_block_hashes.get();
  ba.status = d_block_status.get();
  ba.scan = cuda::ChunkScanState{d_block_scan.get(), reinterpret_cast<unsigned int*>(d_block_scan.get() + chunks)};
  const auto blocks = [&] {
    CUDA_CHECK(cudaMemsetAsync(d_block_scan.get(), 0, 8 * (chunks + 1), 0));
    const auto launch = [&](auto kernel) {
      const uint64_t grid_blocks = std::min<uint64_t>(chunks, cuda::resident_blocks(reinterpret_cast<const void*>(kernel),
                                                                                     cuda::kWarps * 32));
      kernel<<<static_cast<unsigned>(grid_blocks), cuda::kWarps * 32>>>(ba);
    };
    constexpr bool kWide = sizeof(Sym) > 1;
    if (K == 4) shared && kWide ? launch(probe_encode_blocks<Sym, 4, kWide>) : launch(probe_encode_blocks<Sym, 4, false>);
    else if (K == 2) shared && kWide ? launch(probe_encode_blocks<Sym, 2, kWide>) : launch(probe_encode_blocks<Sym, 2, false>);
    else shared && kWide ? launch(probe_encode_blocks<Sym, 1, kWide>) : launch(probe_encode_blocks<Sym, 1, false>);
    CUDA_CHECK(cudaGetLastError());
  };
  // The slot probe with 8 rows' loads in flight a lane, and the one-pass placed probe (slot, look-back, copy).
  cuda::DeviceBuffer<uint32_t> d_slots8(chunks * slot_words), d_lane_words8(32 * chunks), d_scratch(chunks * slot_words);
  const auto probe8 = [&] {
#define VLEC_PROBE8(KK, SH)                                                                                        \
  probe_encode<Sym, KK, SH, 8><<<grid, block>>>(d_sym, n, chunk, chunks, d_entry.get(), d_slots8.get(), slot_words, \
                                                d_lane_words8.get())
    if (K == 4) shared ? VLEC_PROBE8(4, true) : VLEC_PROBE8(4, false);
    else if (K == 2) shared ? VLEC_PROBE8(2, true) : VLEC_PROBE8(2, false);
    else shared ? VLEC_PROBE8(1, true) : VLEC_PROBE8(1, false);
#undef VLEC_PROBE8
    CUDA_CHECK(cudaGetLastError());
  };
  // The one-pass probe, plain ([0]) and hashing the chunks as it loads them ([1]), each into a frame of its own.
  struct OnePassOut {
    cuda::DeviceBuffer<uint8_t> frame;
    cuda::DeviceBuffer<uint64_t> offsets, hashes;
    cuda::DeviceBuffer<unsigned long long> scan;
    cuda::DeviceBuffer<uint32_t> status;
    explicit OnePassOut(uint64_t capacity, uint64_t chunks)
        : frame(capacity), offsets(chunks), hashes(chunks), scan(chunks + 1), status(chunks) {
      CUDA_CHECK(cudaMemset(status.get(), 0, 4 * chunks));
    }
    cuda::ChunkScanState state() { return {scan.get(), reinterpret_cast<unsigned int*>(scan.get() + offsets.size())}; }
  };
  OnePassOut one[2] = {OnePassOut(placed_capacity, chunks), OnePassOut(placed_capacity, chunks)};
  const auto onepass_with = [&](auto hash_tag, OnePassOut& o) {
    constexpr bool kHash = decltype(hash_tag)::value;
    CUDA_CHECK(cudaMemsetAsync(o.scan.get(), 0, 8 * (chunks + 1), 0));
#define VLEC_ONEPASS(KK, SH)                                                                                         \
  probe_encode_onepass<Sym, KK, SH, 8, kHash><<<grid, block>>>(d_sym, n, chunk, chunks, d_entry.get(),              \
                                                               d_scratch.get(), slot_words, o.frame.get(),          \
                                                               o.offsets.get(), o.state(), o.status.get(),          \
                                                               o.hashes.get())
    if (K == 4) shared ? VLEC_ONEPASS(4, true) : VLEC_ONEPASS(4, false);
    else if (K == 2) shared ? VLEC_ONEPASS(2, true) : VLEC_ONEPASS(2, false);
    else shared ? VLEC_ONEPASS(1, true) : VLEC_ONEPASS(1, false);
#undef VLEC_ONEPASS
    CUDA_CHECK(cudaGetLastError());
  };
  const auto onepass = [&] { onepass_with(std::false_type{}, one[0]); };
  const auto onepass_hash = [&] { onepass_with(std::true_type{}, one[1]); };
  // vlec's present format by one warp a chunk in one pass (lane_layout_probe_present.cuh).
  const uint64_t present_slot_words = slot_words + 64;  // (a lane may take two words past its codes)
  cuda::DeviceBuffer<uint32_t> d_present_slots(chunks * present_slot_words), d_present_stored(chunks);
  cuda::DeviceBuffer<uint8_t> d_present(placed_capacity + 8 * 32 * chunks);
  cuda::DeviceBuffer<uint64_t> d_present_offsets(chunks), d_present_hashes(chunks);
  cuda::DeviceBuffer<unsigned long long> d_present_scan(chunks + 1);
  const cuda::ChunkScanState present_scan{d_present_scan.get(),
                                          reinterpret_cast<unsigned int*>(d_present_scan.get() + chunks)};
  const auto present = [&] {
    CUDA_CHECK(cudaMemsetAsync(d_present_scan.get(), 0, 8 * (chunks + 1), 0));
#define VLEC_PRESENT(KK, SH)                                                                                          \
  probe_encode_present<Sym, KK, SH, 8><<<grid, block>>>(d_sym, n, chunk, chunks, d_entry.get(), book.max_length,     \
                                                        d_present_slots.get(), present_slot_words, d_present.get(), \
                                                        d_present_offsets.get(), d_present_stored.get(),            \
                                                        present_scan, d_present_hashes.get())
    if (K == 4) shared ? VLEC_PRESENT(4, true) : VLEC_PRESENT(4, false);
    else if (K == 2) shared ? VLEC_PRESENT(2, true) : VLEC_PRESENT(2, false);
    else shared ? VLEC_PRESENT(1, true) : VLEC_PRESENT(1, false);
#undef VLEC_PRESENT
    CUDA_CHECK(cudaGetLastError());
  };
  const std::vector<float> ms =
      bench::medians_ms(repeat, 0, probe, lanes, placed, blocks, probe8, onepass, onepass_hash, present);

  std::vector<uint32_t> slots(chunks * slot_words), lane_words(32 * chunks);
  CUDA_CHECK(cudaMemcpy(slots.data(), d_slots.get(), 4 * slots.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(lane_words.data(), d_lane_words.get(), 4 * lane_words.size(), cudaMemcpyDeviceToHost));
  const std::vector<uint8_t> gpu_frame = enc.frame();
  std::vector<Sym> input(n);
  std::memcpy(input.data(), sample.bytes.data(), sample.bytes.size());
  const uint64_t bad = decode_check(input, chunk, book, [&](uint64_t c, uint32_t (&counts)[32]) {
    std::copy(lane_words.data() + 32 * c, lane_words.data() + 32 * c + 32, counts);
    return slots.data() + c * slot_words;
  });
  // The placed frame, checked the same way from its chunks' offsets and lane counts.
  std::vector<uint64_t> offsets(chunks);
  std::vector<uint32_t> placed_status(chunks);
  CUDA_CHECK(cudaMemcpy(offsets.data(), d_offsets.get(), 8 * chunks, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(placed_status.data(), d_placed_status.get(), 4 * chunks, cudaMemcpyDeviceToHost));
  std::vector<uint8_t> placed_frame(placed_capacity);
  CUDA_CHECK(cudaMemcpy(placed_frame.data(), d_placed.get(), placed_capacity, cudaMemcpyDeviceToHost));
  uint64_t placed_bytes = 0;
  bool placed_dense = true;  // each chunk right after its predecessor
  for (uint64_t c = 0; c < chunks; ++c) {
    const uint8_t* b = placed_frame.data() + offsets[c];
    uint32_t words = 0, shortest = 0;
    std::memcpy(&shortest, b, 4);
    for (int j = 0; j < 32; ++j) words += shortest + b[4 + j];
    placed_dense &= offsets[c] == placed_bytes;
    placed_bytes += kCountBytes + 4 * uint64_t{words};
  }
  const uint64_t placed_bad =
      std::count_if(placed_status.begin(), placed_status.end(), [](uint32_t v) { return v != 0; }) +
      decode_check(input, chunk, book, [&](uint64_t c, uint32_t (&counts)[32]) {
        const uint8_t* b = placed_frame.data() + offsets[c];
        uint32_t shortest = 0;
        std::memcpy(&shortest, b, 4);
        for (int j = 0; j < 32; ++j) counts[j] = shortest + b[4 + j];
        return reinterpret_cast<const uint32_t*>(b + kCountBytes);
      });
  // The block probe's frame: the same layout as the placed probe's, so the same bytes; its hashes those of vlec's index.
  std::vector<uint64_t> block_offsets(chunks), block_hashes(chunks);
  std::vector<uint32_t> block_status(chunks);
  CUDA_CHECK(cudaMemcpy(block_offsets.data(), d_block_offsets.get(), 8 * chunks, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(block_hashes.data(), d_block_hashes.get(), 8 * chunks, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(block_status.data(), d_block_status.get(), 4 * chunks, cudaMemcpyDeviceToHost));
  std::vector<uint8_t> block_frame(placed_bytes);
  CUDA_CHECK(cudaMemcpy(block_frame.data(), d_blocks.get(), placed_bytes, cudaMemcpyDeviceToHost));
  uint64_t block_hash_bad = 0;
  for (uint64_t c = 0; c < chunks; ++c) block_hash_bad += block_hashes[c] != f.index[c].checksum;
  const bool block_same = block_offsets == offsets && block_frame == std::vector<uint8_t>(placed_frame.begin(),
                                                                                         placed_frame.begin() + placed_bytes);
  const uint64_t block_bad =
      std::count_if(block_status.begin(), block_status.end(), [](uint32_t v) { return v != 0; }) +
      decode_check(input, chunk, book, [&](uint64_t c, uint32_t (&counts)[32]) {
        const uint8_t* b = block_frame.data() + block_offsets[c];
        uint32_t shortest = 0;
        std::memcpy(&shortest, b, 4);
        for (int j = 0; j < 32; ++j) counts[j] = shortest + b[4 + j];
        return reinterpret_cast<const uint32_t*>(b + kCountBytes);
      });
  // The batched slot probe's slots == the plain one's; the one-pass frame == the placed probe's.
  std::vector<uint32_t> slots8(chunks * slot_words), lane_words8(32 * chunks);
  CUDA_CHECK(cudaMemcpy(slots8.data(), d_slots8.get(), 4 * slots8.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(lane_words8.data(), d_lane_words8.get(), 4 * lane_words8.size(), cudaMemcpyDeviceToHost));
  bool slots8_same = lane_words8 == lane_words;
  for (uint64_t c = 0; c < chunks && slots8_same; ++c) {
    uint64_t words = 0;
    for (int j = 0; j < 32; ++j) words += lane_words[32 * c + j];
    slots8_same = std::equal(slots.begin() + c * slot_words, slots.begin() + c * slot_words + words,
                             slots8.begin() + c * slot_words);
  }
  bool onepass_same[2];
  uint64_t onepass_hash_bad = 0;
  for (int k = 0; k < 2; ++k) {
    std::vector<uint64_t> o_offsets(chunks), o_hashes(chunks);
    std::vector<uint32_t> o_status(chunks);
    CUDA_CHECK(cudaMemcpy(o_offsets.data(), one[k].offsets.get(), 8 * chunks, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o_hashes.data(), one[k].hashes.get(), 8 * chunks, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o_status.data(), one[k].status.get(), 4 * chunks, cudaMemcpyDeviceToHost));
    std::vector<uint8_t> o_frame(placed_bytes);
    CUDA_CHECK(cudaMemcpy(o_frame.data(), one[k].frame.get(), placed_bytes, cudaMemcpyDeviceToHost));
    onepass_same[k] = o_offsets == offsets && std::count(o_status.begin(), o_status.end(), 0u) == std::ptrdiff_t(chunks) &&
                      std::equal(o_frame.begin(), o_frame.end(), placed_frame.begin());
    if (k == 1)
      for (uint64_t c = 0; c < chunks; ++c) onepass_hash_bad += o_hashes[c] != f.index[c].checksum;
  }
  // The present-format probe's chunks == the CPU frame's payload, chunk by chunk, and its hashes those of the index.
  uint64_t present_bad = 0;
  {
    std::vector<uint64_t> p_offsets(chunks), p_hashes(chunks);
    std::vector<uint32_t> p_stored(chunks);
    CUDA_CHECK(cudaMemcpy(p_offsets.data(), d_present_offsets.get(), 8 * chunks, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(p_hashes.data(), d_present_hashes.get(), 8 * chunks, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(p_stored.data(), d_present_stored.get(), 4 * chunks, cudaMemcpyDeviceToHost));
    std::vector<uint8_t> p_payload(d_present.size());
    CUDA_CHECK(cudaMemcpy(p_payload.data(), d_present.get(), p_payload.size(), cudaMemcpyDeviceToHost));
    uint64_t cpu_at = 0;
    for (uint64_t c = 0; c < chunks; ++c) {
      const uint32_t want = f.index[c].stored_bytes;
      present_bad += p_stored[c] != want || p_offsets[c] != cpu_at || p_hashes[c] != f.index[c].checksum ||
                     p_offsets[c] + want > p_payload.size() ||
                     std::memcmp(p_payload.data() + p_offsets[c], f.payload + cpu_at, want) != 0;
      cpu_at += (uint64_t{want} + 3) / 4 * 4;
    }
  }
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
  std::printf("%-11s %-4s %6u  K=%u %-6s  probe %7.3f ms %7.1f GB/s %5.1f%% of copy | vlec (whole frame) %7.3f ms "
              "%7.1f GB/s %5.1f%% | payload probe %10llu vlec %10llu (%+.3f%%), widest lane spread %llu words | "
              "probe decoded on the CPU: %s, vlec frame %s\n",
              sample.name.c_str(), sizeof(Sym) == 1 ? "u8" : "u16", chunk, K, shared ? "shared" : "global", ms[0],
              gb / ms[0] / 1e6, 100 * gb / ms[0] / 1e6 / copy_gbs, ms[1], gb / ms[1] / 1e6,
              100 * gb / ms[1] / 1e6 / copy_gbs, static_cast<unsigned long long>(probe_bytes),
              static_cast<unsigned long long>(payload), 100.0 * (double(probe_bytes) - double(payload)) / double(payload),
              static_cast<unsigned long long>(spread), bad ? "CHUNKS DIFFER" : "every chunk == input",
              gpu_frame == frame ? "== CPU bytes" : "DIFFERS");
  std::printf("%-11s %-4s %6u  placed probe (pass A, look-back, pass B) %7.3f ms %7.1f GB/s %5.1f%% of copy, %llu "
              "bytes%s; decoded on the CPU: %s\n",
              sample.name.c_str(), sizeof(Sym) == 1 ? "u8" : "u16", chunk, ms[2], gb / ms[2] / 1e6,
              100 * gb / ms[2] / 1e6 / copy_gbs, static_cast<unsigned long long>(placed_bytes),
              placed_dense ? ", chunks dense" : ", CHUNKS NOT DENSE",
              placed_bad ? "CHUNKS DIFFER" : "every chunk == input");
  std::printf("%-11s %-4s %6u  block probe (vlec's encoder, the probe's layout: 8 warps a chunk, pass A with XXH3, "
              "look-back, pass B) %7.3f ms %7.1f GB/s %5.1f%% of copy; frame %s, hashes %s; decoded on the CPU: %s\n",
              sample.name.c_str(), sizeof(Sym) == 1 ? "u8" : "u16", chunk, ms[3], gb / ms[3] / 1e6,
              100 * gb / ms[3] / 1e6 / copy_gbs, block_same ? "== the placed probe's" : "DIFFERS FROM THE PLACED PROBE'S",
              block_hash_bad ? "DIFFER FROM VLEC'S INDEX" : "== vlec's index", block_bad ? "CHUNKS DIFFER" : "every chunk == input");
  std::printf("%-11s %-4s %6u  slot probe, 8 rows' loads at once %7.3f ms %7.1f GB/s %5.1f%% of copy, slots %s | one-pass "
              "placed probe (slot, look-back, copy) %7.3f ms %7.1f GB/s %5.1f%% of copy, frame %s | the same hashing "
              "(XXH3 of each chunk) %7.3f ms %7.1f GB/s %5.1f%% of copy, frame %s, hashes %s\n",
              sample.name.c_str(), sizeof(Sym) == 1 ? "u8" : "u16", chunk, ms[4], gb / ms[4] / 1e6,
              100 * gb / ms[4] / 1e6 / copy_gbs, slots8_same ? "== the plain slot probe's" : "DIFFER", ms[5],
              gb / ms[5] / 1e6, 100 * gb / ms[5] / 1e6 / copy_gbs,
              onepass_same[0] ? "== the placed probe's" : "DIFFERS FROM THE PLACED PROBE'S", ms[6], gb / ms[6] / 1e6,
              100 * gb / ms[6] / 1e6 / copy_gbs, onepass_same[1] ? "== the placed probe's" : "DIFFERS FROM THE PLACED PROBE'S",
              onepass_hash_bad ? "DIFFER FROM VLEC'S INDEX" : "== vlec's index");
  std::printf("%-11s %-4s %6u  vlec's present format by one warp a chunk in one pass (refill replay, slot, look-back, "
              "copy, XXH3) %7.3f ms %7.1f GB/s %5.1f%% of copy | vlec's encoder %7.1f GB/s | chunks %s\n",
              sample.name.c_str(), sizeof(Sym) == 1 ? "u8" : "u16", chunk, ms[7], gb / ms[7] / 1e6,
              100 * gb / ms[7] / 1e6 / copy_gbs, gb / ms[1] / 1e6,
              present_bad ? "DIFFER FROM THE CPU FRAME'S" : "== the CPU frame's payload and index, byte for byte");
  std::fflush(stdout);
  if (bad || placed_bad || !placed_dense || gpu_frame != frame || block_bad || !block_same || block_hash_bad ||
      !slots8_same || !onepass_same[0] || !onepass_same[1] || onepass_hash_bad || present_bad)
    return 1;

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
  DecodeSource slots_src{d_slots.get(), slot_words, d_lane_words.get(), nullptr, nullptr};
  DecodeSource frame_src{nullptr, 0, nullptr, d_blocks.get(), d_block_offsets.get()};
  cuda::DeviceBuffer<uint8_t> d_frame_out(sample.bytes.size()), d_ahead_out(sample.bytes.size());
  CUDA_CHECK(cudaMemset(d_frame_out.get(), 0xA5, sample.bytes.size()));
  CUDA_CHECK(cudaMemset(d_ahead_out.get(), 0xA5, sample.bytes.size()));
  // kFrame, kAhead: see probe_decode.
  const auto decode_with = [&](auto frame_tag, auto ahead_tag, const DecodeSource& source, uint8_t* dst) {
    constexpr bool kFrame = decltype(frame_tag)::value;
    constexpr unsigned kAhead = decltype(ahead_tag)::value;
    Sym* d = reinterpret_cast<Sym*>(dst);
    if (K == 4) probe_decode<Sym, 4, kFrame, kAhead><<<grid, block>>>(source, n, chunk, chunks, d_primary.get(),
                                                                      d_whole.get(), L, d, d_status.get());
    else if (K == 2) probe_decode<Sym, 2, kFrame, kAhead><<<grid, block>>>(source, n, chunk, chunks, d_primary.get(),
                                                                           d_whole.get(), L, d, d_status.get());
    else probe_decode<Sym, 1, kFrame, kAhead><<<grid, block>>>(source, n, chunk, chunks, d_primary.get(),
                                                               d_whole.get(), L, d, d_status.get());
    CUDA_CHECK(cudaGetLastError());
  };
  using No = std::false_type;
  using Yes = std::true_type;
  using Plain = std::integral_constant<unsigned, 0>;
  using Ahead = std::integral_constant<unsigned, 8>;
  const auto probe_dec = [&] { decode_with(No{}, Plain{}, slots_src, d_probe_out.get()); };
  const auto frame_dec = [&] { decode_with(Yes{}, Plain{}, frame_src, d_frame_out.get()); };
  const auto ahead_dec = [&] { decode_with(Yes{}, Ahead{}, frame_src, d_ahead_out.get()); };
  const uint64_t payload_bytes = f.header.frame_bytes - f.header.header_area_bytes();
  cuda::DeviceBuffer<uint8_t> d_payload(payload_bytes), d_dtemp(cuda::frame_decode_temp_bytes(f));
  CUDA_CHECK(cudaMemcpy(d_payload.get(), f.payload, payload_bytes, cudaMemcpyHostToDevice));
  const cuda::HuffmanDecodeArgs a =
      cuda::prepare_frame_decode(f, d_payload.get(), d_vlec_out.get(), d_dtemp.get(), d_dtemp.size(), 0);
  const auto vlec_dec = [&] { cuda::launch_huffman_decode(a, 0); };
  // vlec's decoder on the probe's layout (lane_layout_probe_decoder.cuh), verified against vlec's index checksums.
  std::vector<uint64_t> index_sums(chunks);
  for (uint64_t c = 0; c < chunks; ++c) index_sums[c] = f.index[c].checksum;
  cuda::DeviceBuffer<uint64_t> d_index_sums(chunks);
  CUDA_CHECK(cudaMemcpy(d_index_sums.get(), index_sums.data(), 8 * chunks, cudaMemcpyHostToDevice));
  cuda::DeviceBuffer<uint8_t> d_tuned_out(sample.bytes.size()), d_tuned8_out(sample.bytes.size());
  cuda::DeviceBuffer<uint32_t> d_tuned_status(chunks), d_tuned8_status(chunks);
  CUDA_CHECK(cudaMemset(d_tuned_out.get(), 0xA5, sample.bytes.size()));
  CUDA_CHECK(cudaMemset(d_tuned8_out.get(), 0xA5, sample.bytes.size()));
  CUDA_CHECK(cudaMemset(d_tuned_status.get(), 0xFF, 4 * chunks));
  CUDA_CHECK(cudaMemset(d_tuned8_status.get(), 0xFF, 4 * chunks));
  cuda::HuffmanDecodeArgs ta = a, ta8 = a;
  ta.out = d_tuned_out.get(), ta8.out = d_tuned8_out.get();
  bool tuned_ran = true;
  const auto tuned_dec = [&] {
    tuned_ran &= decode_tuned<Sym, 0>(ta, d_blocks.get(), d_block_offsets.get(), d_index_sums.get(), d_tuned_status.get());
  };
  const auto tuned8_dec = [&] {
    tuned_ran &= decode_tuned<Sym, 8>(ta8, d_blocks.get(), d_block_offsets.get(), d_index_sums.get(), d_tuned8_status.get());
  };
  const std::vector<float> dms =
      bench::medians_ms(repeat, 0, probe_dec, vlec_dec, frame_dec, ahead_dec, tuned_dec, tuned8_dec);
  std::vector<uint8_t> back(sample.bytes.size());
  std::vector<uint32_t> status(chunks);
  CUDA_CHECK(cudaMemcpy(status.data(), d_status.get(), 4 * chunks, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(back.data(), d_probe_out.get(), back.size(), cudaMemcpyDeviceToHost));
  const bool probe_ok = back == sample.bytes && std::count(status.begin(), status.end(), 0u) == std::ptrdiff_t(chunks);
  CUDA_CHECK(cudaMemcpy(back.data(), d_frame_out.get(), back.size(), cudaMemcpyDeviceToHost));
  const bool frame_ok = back == sample.bytes;
  CUDA_CHECK(cudaMemcpy(back.data(), d_ahead_out.get(), back.size(), cudaMemcpyDeviceToHost));
  const bool ahead_ok = back == sample.bytes;
  std::vector<uint32_t> tuned_status(chunks);
  CUDA_CHECK(cudaMemcpy(back.data(), d_tuned_out.get(), back.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(tuned_status.data(), d_tuned_status.get(), 4 * chunks, cudaMemcpyDeviceToHost));
  const bool tuned_ok = tuned_ran && back == sample.bytes && std::count(tuned_status.begin(), tuned_status.end(), 0u) == std::ptrdiff_t(chunks);
  CUDA_CHECK(cudaMemcpy(back.data(), d_tuned8_out.get(), back.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(tuned_status.data(), d_tuned8_status.get(), 4 * chunks, cudaMemcpyDeviceToHost));
  const bool tuned8_ok = tuned_ran && back == sample.bytes && std::count(tuned_status.begin(), tuned_status.end(), 0u) == std::ptrdiff_t(chunks);
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
  std::printf("%-11s %-4s %6u  decode of the block probe's frame: plain %7.3f ms %7.1f GB/s %5.1f%% | prefetching 8 "
              "words ahead into L1 %7.3f ms %7.1f GB/s %5.1f%% | outputs %s, %s\n",
              sample.name.c_str(), sizeof(Sym) == 1 ? "u8" : "u16", chunk, dms[2], gb / dms[2] / 1e6,
              100 * gb / dms[2] / 1e6 / copy_gbs, dms[3], gb / dms[3] / 1e6, 100 * gb / dms[3] / 1e6 / copy_gbs,
              frame_ok ? "== input" : "DIFFERS", ahead_ok ? "== input" : "DIFFERS");
  std::printf("%-11s %-4s %6u  vlec's decoder on the probe's layout (verified: XXH3 of every chunk): %7.3f ms %7.1f GB/s "
              "%5.1f%% | prefetching 8 words ahead into L1 %7.3f ms %7.1f GB/s %5.1f%% | outputs %s, %s\n",
              sample.name.c_str(), sizeof(Sym) == 1 ? "u8" : "u16", chunk, dms[4], gb / dms[4] / 1e6,
              100 * gb / dms[4] / 1e6 / copy_gbs, dms[5], gb / dms[5] / 1e6, 100 * gb / dms[5] / 1e6 / copy_gbs,
              !tuned_ran ? "NOT PROBED (K != 2)" : tuned_ok ? "== input, verified" : "DIFFER",
              !tuned_ran ? "-" : tuned8_ok ? "== input, verified" : "DIFFER");
  std::fflush(stdout);
  return probe_ok && vlec_ok && frame_ok && ahead_ok && (!tuned_ran || (tuned_ok && tuned8_ok)) ? 0 : 1;
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
