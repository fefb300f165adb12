// fuzz/fuzz_decompress.cpp: raw bytes straight into the CPU readers.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vlec::fuzz::exercise(data, size);
  return 0;
}
