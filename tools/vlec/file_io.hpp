// tools/vlec/file_io.hpp: the tool's file handling: inputs (a file or stdin),
// outputs that appear atomically, and the signal handler that keeps an
// interrupted run from leaving a partial file behind.
//
// Why atomic: a compressor must never leave a file that looks like a finished
// result but is not. An OutputFile writes into a hidden temporary next to the
// destination (".NAME.tmp.XXXXXX", from mkstemp) and renames it over the
// destination only in commit(); any error, destructor without commit, or
// SIGINT/SIGTERM/SIGHUP removes the temporary instead. Outputs that cannot be
// replaced by a rename (stdout, /dev/null, a FIFO) are written directly.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vlec::cli {

// A byte buffer that is not zero-filled on allocation, so reserving a 256 MiB
// block for a small stdin input costs no memory until it is written.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n) { resize(n); }
  // Grows to at least n bytes; contents are not preserved.
  void resize(std::size_t n);
  // Grows to at least n bytes, keeping the first `keep` bytes.
  void resize_keep(std::size_t n, std::size_t keep);
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  std::size_t size_ = 0;
};

// "-" is how the command line names stdin and stdout.
inline bool is_stdio_name(const std::string& path) { return path == "-"; }

// An open input: a file or stdin. Errors throw CliError(kExitInput) naming it.
class InputFile {
 public:
  explicit InputFile(const std::string& path);  // "-" = stdin
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  // How messages name it: the path, or "stdin".
  const std::string& label() const { return label_; }
  bool is_stdin() const { return fd_ == 0 && path_ == "-"; }
  // Size of a regular file; nullopt for pipes, terminals and other streams.
  std::optional<uint64_t> size() const { return size_; }
  bool is_regular() const { return regular_; }
  mode_t mode() const { return mode_; }
  dev_t device() const { return dev_; }
  ino_t inode() const { return ino_; }

  // Reads until `n` bytes or end of input; returns the count read.
  std::size_t read_full(void* dst, std::size_t n);
  // Bytes read so far.
  uint64_t consumed() const { return consumed_; }

 private:
  std::string path_, label_;
  int fd_ = -1;
  std::optional<uint64_t> size_;
  bool regular_ = false;
  mode_t mode_ = 0644;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  uint64_t consumed_ = 0;
};

struct OutputPolicy {
  bool force = false;                 // replace an existing destination
  std::optional<mode_t> mode;         // permissions of a new file; default 0666 & ~umask
  const InputFile* input = nullptr;   // refuse to write over this file
};

// An output that appears only on commit(). Errors throw CliError(kExitOutput).
class OutputFile {
 public:
  // "-" = stdout. Checks the destination at once, so that an existing output
  // (without force) is refused before any input is read.
  OutputFile(const std::string& path, const OutputPolicy& policy);
  ~OutputFile();  // removes the temporary unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& label() const { return label_; }
  bool is_stdout() const { return kind_ == Kind::stdout_stream; }
  // Whether the output is a regular file that commit() puts in place (not
  // stdout, /dev/null, a FIFO or another device written in place).
  bool is_regular_file() const { return kind_ == Kind::atomic; }

  void write(const void* src, std::size_t n);
  // Makes the output visible under its name. After a failure the temporary is
  // already gone and the destination untouched.
  void commit();
  // Removes the temporary (idempotent); used by the destructor.
  void abort() noexcept;
  uint64_t written() const { return written_; }

 private:
  enum class Kind { stdout_stream, direct, atomic };
  std::string path_, label_, temp_path_;
  Kind kind_ = Kind::atomic;
  int fd_ = -1;
  bool force_ = false;
  bool done_ = false;
  uint64_t written_ = 0;
};

// Installs SIGINT/SIGTERM/SIGHUP handlers that remove the temporary output of
// the OutputFile in progress, then end the process by the same signal.
void install_signal_cleanup();

bool stdin_is_terminal();
bool stdout_is_terminal();
bool stderr_is_terminal();

// strerror() of errno, for messages.
std::string errno_text(int err);

// Whether anything (file, directory, dangling symlink) exists at `path`.
bool path_exists(const std::string& path);

// Removes an input after success (--rm). Throws CliError(kExitInput).
void remove_input(const std::string& path);

// Reads a whole file ("-" = stdin) into memory (bench). Throws CliError(kExitInput).
std::vector<uint8_t> read_whole_file(const std::string& path);

// Sets the process umask once so that new files get 0666 & ~umask.
void remember_umask();

}  // namespace vlec::cli
