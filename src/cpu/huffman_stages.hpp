// cpu/huffman_stages.hpp: the CPU Huffman pipeline run stage by stage, for
// `vlec bench`: histogram, codebook, encode and decode each timed on their
// own (median of several runs) on all threads, plus the figures that judge
// the code: entropy, the unlimited optimal Huffman code, and what vlec stores.
#pragma once

#include <cstdint>

#include "vlec/types.hpp"

namespace vlec::cpu {

struct HuffmanStageReport {
  double histogram_s = 0, codebook_s = 0, encode_s = 0, decode_s = 0;  // medians
  unsigned max_length = 0;
  uint32_t alphabet_size = 0;
  double entropy_bits = 0;   // order-0 entropy, bits per element
  double optimal_bits = 0;   // unlimited optimal Huffman code, bits per element
  double code_bits = 0;      // vlec's length-limited code, bits per element
  double stored_bits = 0;    // chunk payloads (code, padding, raw fallback), bits per element
  uint64_t payload_bytes = 0;
};

// Requires Huffman-codable data (u8, u16, or u32 below 65,536).
HuffmanStageReport time_huffman_stages(const uint8_t* data, uint64_t elements, DType t, uint32_t chunk_elements,
                                       unsigned max_code_length, unsigned threads, unsigned repeat);

}  // namespace vlec::cpu
