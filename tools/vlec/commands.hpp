// tools/vlec/commands.hpp: the tool's commands: compress and decompress (the
// default command, over several inputs) and `info`.
//
// Each command returns the process exit code (exit_codes.hpp) and reports its
// errors on stderr as "vlec: NAME: message". With several inputs, a failure on
// one is reported and the others are still processed; the exit code is that
// of the first failure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "file_io.hpp"
#include "options.hpp"

namespace vlec::cli {

// Compresses (or with s.decompress, decompresses) every input in turn.
int run_codec(const Settings& s);

// `vlec info FILE...`: prints the facts of each stream on stdout.
int run_info(const std::vector<std::string>& files, bool verbose);

// Reads the next frame of a stream into `frame` (grown as needed; memory is
// bounded by the frame's size) and returns its size, or 0 at the end of the
// input. Throws CliError(kExitCorrupt) for an incomplete frame, and
// vlec::Error for an invalid frame header. `index` is used in messages.
uint64_t read_frame(InputFile& in, Buffer& frame, uint64_t index);

// Prints "vlec: LABEL: message" (or "vlec: message" for an empty label) for
// the exception in flight and returns its exit code. Call only from inside a
// catch block.
int report_current_exception(const std::string& label);

}  // namespace vlec::cli
