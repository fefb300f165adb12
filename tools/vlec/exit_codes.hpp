// tools/vlec/exit_codes.hpp: the exit codes of the vlec tool, in one place, and
// the exception the tool's own code throws to carry one up to main().
//
// Scripts switch on these numbers, so they are part of the tool's interface:
// they are documented in the --help footer (kExitCodesHelp below) and must not
// be renumbered. Library errors (vlec::Error) are mapped onto them by
// exit_code_for() so that every failure path ends in exactly one code.
#pragma once

#include <new>
#include <stdexcept>
#include <string>

#include "vlec/error.hpp"

namespace vlec::cli {

constexpr int kExitSuccess = 0;
constexpr int kExitUsage = 1;    // bad option or argument
constexpr int kExitInput = 2;    // cannot open/read input; size not a multiple of the width
constexpr int kExitCorrupt = 3;  // not a vlec stream, corrupt, truncated, unsupported version
constexpr int kExitOutput = 4;   // output exists (no -f), cannot write, refusing a terminal
constexpr int kExitOther = 5;    // CUDA unavailable, out of memory, internal error

inline constexpr const char* kExitCodesHelp =
    "Exit codes:\n"
    "  0  success\n"
    "  1  usage error (bad option or argument)\n"
    "  2  input error (cannot open or read an input; input size not a multiple\n"
    "     of the element width)\n"
    "  3  corrupt or unsupported stream (bad magic, unsupported version, corrupt\n"
    "     or truncated stream, checksum mismatch)\n"
    "  4  output error (output exists and -f was not given, cannot write,\n"
    "     refusing to write compressed data to a terminal)\n"
    "  5  other failure (e.g. --backend cuda without a usable GPU, out of memory,\n"
    "     internal error)\n";

// An error found by the tool itself, carrying the exit code it ends in.
class CliError : public std::runtime_error {
 public:
  CliError(int exit_code, const std::string& message)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

// The exit code a library error ends in.
inline int exit_code_for(const vlec::Error& e) {
  switch (e.code()) {
    case vlec::ErrorCode::invalid_argument: return kExitUsage;
    case vlec::ErrorCode::bad_magic:
    case vlec::ErrorCode::unsupported_version:
    case vlec::ErrorCode::corrupt_stream:
    case vlec::ErrorCode::truncated_stream:
    case vlec::ErrorCode::checksum_mismatch: return kExitCorrupt;
    case vlec::ErrorCode::io_error: return kExitInput;
    case vlec::ErrorCode::value_out_of_alphabet:
    case vlec::ErrorCode::output_too_small:
    case vlec::ErrorCode::cuda_error:
    case vlec::ErrorCode::unavailable: return kExitOther;
  }
  return kExitOther;
}

}  // namespace vlec::cli
