// fuzz/fuzz_resealed.cpp: the input with every frame's header checksum (and
// every embedded wavelet group frame's) recomputed, so that mutations reach
// the field checks, the codebook and index parsing, the wavelet section and
// the payload decoders instead of dying at the header checksum.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> s(data, data + size);  // exactly `size` bytes: overreads still trap
  vlec::fuzz::reseal_stream(s);
  vlec::fuzz::exercise(s.data(), s.size());
  return 0;
}
