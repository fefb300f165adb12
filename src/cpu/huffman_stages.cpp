// cpu/huffman_stages.cpp: see huffman_stages.hpp. The stages are the same
// calls the frame encoder and decoder make, so their sum is close to what
// `compress` and `decompress` spend on a Huffman frame (minus assembly and
// checksums).
#include "cpu/huffman_stages.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

#include "common/parallel.hpp"
#include "huffman/chunk_codec.hpp"

namespace vlec::cpu {

namespace {

double median_of(unsigned repeat, const std::function<void()>& fn) {
  using Clock = std::chrono::steady_clock;
  fn();  // warm-up
  std::vector<double> t;
  for (unsigned i = 0; i < std::max(repeat, 1u); ++i) {
    const auto t0 = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

HuffmanStageReport time_huffman_stages(const uint8_t* data, uint64_t elements, DType t, uint32_t chunk_elements,
                                       unsigned max_code_length, unsigned threads, unsigned repeat) {
  HuffmanStageReport r;
  const unsigned w = static_cast<unsigned>(dtype_bytes(t));
  const uint64_t chunks = (elements + chunk_elements - 1) / chunk_elements;
  const unsigned T = resolve_threads(threads, chunks);
  auto chunk_n = [&](uint64_t c) { return std::min<uint64_t>(chunk_elements, elements - c * chunk_elements); };

  huffman::Histogram hist;
  r.histogram_s = median_of(repeat, [&] {
    std::vector<huffman::Histogram> part(T);
    parallel_for(T, T, [&](std::size_t k) {
      for (uint64_t c = chunks * k / T; c < chunks * (k + 1) / T; ++c)
        huffman::accumulate_histogram(data + c * chunk_elements * w, chunk_n(c), t, part[k], c * chunk_elements);
    });
    hist.clear();
    for (const auto& h : part) {
      if (hist.size() < h.size()) hist.resize(h.size(), 0);
      for (std::size_t s = 0; s < h.size(); ++s) hist[s] += h[s];
    }
  });
  huffman::Codebook book;
  r.codebook_s = median_of(repeat, [&] { book = huffman::build_codebook(hist, max_code_length); });
  r.max_length = book.max_length;
  r.alphabet_size = book.alphabet_size;

  const huffman::EncodeTable etable = huffman::make_encode_table(book, t);
  std::vector<std::vector<uint32_t>> coded(chunks);
  std::vector<std::size_t> words(chunks);
  for (uint64_t c = 0; c < chunks; ++c) coded[c].resize((chunk_n(c) * w - 1) / 4 + huffman::kEncodeSlackWords);
  r.encode_s = median_of(repeat, [&] {
    parallel_for(chunks, threads, [&](std::size_t c) {
      words[c] = huffman::encode_chunk(data + c * chunk_elements * w, t, chunk_n(c), etable, coded[c].data(),
                                       (chunk_n(c) * w - 1) / 4, c * chunk_elements);
    });
  });
  const huffman::DecodeTable dtable = huffman::make_decode_table(book, 11, w);
  std::vector<uint8_t> out(elements * w);
  r.decode_s = median_of(repeat, [&] {
    parallel_for(chunks, threads, [&](std::size_t c) {
      if (words[c] != huffman::kDoesNotFit)
        huffman::decode_chunk(reinterpret_cast<const uint8_t*>(coded[c].data()), words[c], chunk_n(c), dtable, t,
                              out.data() + c * chunk_elements * w);
    });
  });

  // How good is the code: entropy, unlimited optimal Huffman, vlec's code, stored.
  double entropy = 0;
  uint64_t code = 0;
  for (uint32_t s = 0; s < hist.size(); ++s) {
    if (!hist[s]) continue;
    const double p = static_cast<double>(hist[s]) / static_cast<double>(elements);
    entropy -= static_cast<double>(hist[s]) * std::log2(p);
    code += hist[s] * book.lengths[s];
  }
  const uint64_t optimal = huffman::coded_bits(hist, huffman::rank_symbols(hist), huffman::huffman_length_counts(hist));
  for (uint64_t c = 0; c < chunks; ++c)
    r.payload_bytes += words[c] == huffman::kDoesNotFit ? chunk_n(c) * w : 4 * words[c];
  const double n = static_cast<double>(std::max<uint64_t>(elements, 1));
  r.entropy_bits = entropy / n;
  r.optimal_bits = static_cast<double>(optimal) / n;
  r.code_bits = static_cast<double>(code) / n;
  r.stored_bits = 8.0 * static_cast<double>(r.payload_bytes) / n;
  return r;
}

}  // namespace vlec::cpu
