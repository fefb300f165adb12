// vlec/error.hpp: the one exception type of the library. Every failure, from a
// bad option to a corrupted stream, is reported as vlec::Error with a code that
// a program can switch on and a message that says what is wrong and where.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace vlec {

enum class ErrorCode : int {
  invalid_argument = 1,      // a bad option or parameter from the caller
  value_out_of_alphabet,     // an element cannot be Huffman-coded (value >= 65,536)
  output_too_small,          // the caller's output buffer cannot hold the result
  bad_magic,                 // the input is not a vlec stream
  unsupported_version,       // a newer format major version, or unknown required features
  corrupt_stream,            // a header field, length or offset is inconsistent
  truncated_stream,          // the stream ends before its frame does
  checksum_mismatch,         // a checksum does not match: corruption
  io_error,                  // reading or writing a file failed
  cuda_error,                // the CUDA runtime reported an error
  unavailable,               // e.g. the CUDA backend was asked for but is not built or no GPU
};

const char* to_string(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace vlec
