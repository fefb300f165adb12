// cpu/choose_codec.cpp: CodecChoice::automatic. One pass over the data on all
// threads gathers the histogram and the run statistics chunk by chunk (runs
// split at chunk boundaries exactly as the rle codecs split them); the codec
// with the smallest estimated size wins. Estimates use the exact Huffman code
// lengths the encoder would build, so the choice is deterministic.
#include <algorithm>

#include "common/parallel.hpp"
#include "cpu/frame_codec.hpp"
#include "huffman/codebook.hpp"
#include "rle/rle.hpp"

namespace vlec::cpu {

namespace {

// Bytes of padding and index a coded chunk costs beyond its code bits.
constexpr uint64_t kChunkOverheadBytes = 16 + 160;

struct Stats {
  huffman::Histogram values;       // element histogram (u8..u32 below 65,536)
  huffman::Histogram run_values;   // as the rle+huffman values stream codes them
  huffman::Histogram run_lengths;
  uint64_t runs = 0;
  uint64_t rle_bytes = 0;
  bool huffman_ok = true;
};

template <typename T>
void gather(const T* p, uint64_t n, Stats& s) {
  if (sizeof(T) <= 4) {
    uint64_t top = 0;
    for (uint64_t i = 0; i < n; ++i) top = std::max<uint64_t>(top, p[i]);
    if (top >= huffman::kMaxAlphabet) s.huffman_ok = false;
    if (s.huffman_ok) {
      if (s.values.size() <= top) s.values.resize(top + 1, 0);
      for (uint64_t i = 0; i < n; ++i) ++s.values[p[i]];
    }
  }
  if (s.run_lengths.size() < huffman::kMaxAlphabet) s.run_lengths.resize(huffman::kMaxAlphabet, 0);
  if (s.run_values.empty()) s.run_values.resize(sizeof(T) == 1 ? 256 : huffman::kMaxAlphabet, 0);
  uint64_t start = 0, runs = 0;
  for (uint64_t i = 1; i <= n; ++i) {
    if (i == n || p[i] != p[start] || i - start == rle::kMaxRun) {
      ++s.run_lengths[i - start - 1];
      if (sizeof(T) == 1) {
        ++s.run_values[static_cast<uint8_t>(p[start])];
      } else {
        for (unsigned k = 0; k < sizeof(T) / 2; ++k) ++s.run_values[(uint64_t{p[start]} >> (16 * k)) & 0xFFFF];
      }
      ++runs;
      start = i;
    }
  }
  s.runs += runs;
  s.rle_bytes += std::min<uint64_t>(rle::payload_bytes(runs, sizeof(T)), n * sizeof(T));
}

uint64_t huffman_bytes(const huffman::Histogram& h) {
  const huffman::Codebook book = huffman::build_codebook(h);
  uint64_t bits = 0;
  for (uint32_t s = 0; s < book.alphabet_size; ++s) bits += h[s] * book.lengths[s];
  return bits / 8 + huffman::serialize_codebook(book).size();
}

void add(huffman::Histogram& to, const huffman::Histogram& from) {
  if (to.size() < from.size()) to.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) to[i] += from[i];
}

}  // namespace

Codec choose_codec(const uint8_t* input, uint64_t elements, DType dtype, unsigned threads) {
  const unsigned w = static_cast<unsigned>(dtype_bytes(dtype));
  const uint64_t chunk = 65536;
  const uint64_t chunks = (elements + chunk - 1) / chunk;
  if (chunks == 0) return Codec::raw;
  const unsigned T = resolve_threads(threads, chunks);
  std::vector<Stats> partial(T);
  parallel_for(T, T, [&](std::size_t k) {
    for (uint64_t c = chunks * k / T; c < chunks * (k + 1) / T; ++c) {
      const uint64_t n = std::min(chunk, elements - c * chunk);
      const uint8_t* p = input + c * chunk * w;
      switch (w) {
        case 1: gather(p, n, partial[k]); break;
        case 2: gather(reinterpret_cast<const uint16_t*>(p), n, partial[k]); break;
        case 4: gather(reinterpret_cast<const uint32_t*>(p), n, partial[k]); break;
        default: gather(reinterpret_cast<const uint64_t*>(p), n, partial[k]); break;
      }
    }
  });
  Stats s;
  s.huffman_ok = w <= 4;
  for (const Stats& p : partial) {
    s.huffman_ok = s.huffman_ok && p.huffman_ok;
    if (s.huffman_ok) add(s.values, p.values);
    add(s.run_values, p.run_values);
    add(s.run_lengths, p.run_lengths);
    s.runs += p.runs;
    s.rle_bytes += p.rle_bytes;
  }
  const uint64_t raw = elements * w;
  Codec best = Codec::raw;
  uint64_t best_bytes = raw;
  auto consider = [&](Codec c, uint64_t bytes) {
    if (bytes < best_bytes) best = c, best_bytes = bytes;
  };
  // On equal estimates the earlier codec wins.
  if (s.huffman_ok) consider(Codec::huffman, huffman_bytes(s.values) + chunks * kChunkOverheadBytes);
  consider(Codec::rle_huffman, huffman_bytes(s.run_values) + huffman_bytes(s.run_lengths) + chunks * 2 * kChunkOverheadBytes);
  consider(Codec::rle, s.rle_bytes + chunks * 16);
  return best;
}

}  // namespace vlec::cpu
