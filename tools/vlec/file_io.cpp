// tools/vlec/file_io.cpp: inputs, atomic outputs and the signal-safe cleanup
// of temporary files (see file_io.hpp for why outputs are atomic).
//
// Plain POSIX calls (open/read/write/mkstemp/link/rename) are used rather than
// iostreams so that every failure has an errno to report, partial writes are
// handled, and the temporary can be created exclusively with mkstemp.
#include "file_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

#include "exit_codes.hpp"

namespace vlec::cli {

// ---- signal-safe cleanup ----------------------------------------------------
//
// The handler may only touch these two objects and call async-signal-safe
// functions (unlink, signal, raise). The path is updated with the handled
// signals blocked, so the handler never sees it half-written.
namespace {

char g_temp_path[8192];
volatile sig_atomic_t g_temp_armed = 0;
mode_t g_umask = 022;

const int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void on_fatal_signal(int sig) {
  if (g_temp_armed) unlink(g_temp_path);
  signal(sig, SIG_DFL);
  raise(sig);  // delivered when the handler returns: the process ends by `sig`
}

class SignalBlock {
 public:
  SignalBlock() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : kCleanupSignals) sigaddset(&set, s);
    sigprocmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalBlock() { sigprocmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

void disarm_cleanup() {
  SignalBlock block;
  g_temp_armed = 0;
  g_temp_path[0] = '\0';
}

CliError output_error(const std::string& message) { return CliError(kExitOutput, message); }
CliError input_error(const std::string& message) { return CliError(kExitInput, message); }

}  // namespace

void install_signal_cleanup() {
  for (int s : kCleanupSignals) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (int other : kCleanupSignals) sigaddset(&sa.sa_mask, other);
    // Leave a signal that the parent shell set to be ignored (nohup) ignored.
    struct sigaction old;
    if (sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(s, &sa, nullptr);
  }
}

void remember_umask() {
  g_umask = umask(0);
  umask(g_umask);
}

// ---- small helpers ----------------------------------------------------------

std::string errno_text(int err) { return std::strerror(err); }

bool stdin_is_terminal() { return isatty(STDIN_FILENO) == 1; }
bool stdout_is_terminal() { return isatty(STDOUT_FILENO) == 1; }
bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

bool path_exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

void remove_input(const std::string& path) {
  if (unlink(path.c_str()) != 0)
    throw input_error("cannot remove the input (--rm): " + errno_text(errno));
}

void Buffer::resize(std::size_t n) {
  if (n <= size_ && data_) return;
  data_.reset(new uint8_t[n == 0 ? 1 : n]);
  size_ = n;
}

void Buffer::resize_keep(std::size_t n, std::size_t keep) {
  if (n <= size_ && data_) return;
  std::unique_ptr<uint8_t[]> grown(new uint8_t[n == 0 ? 1 : n]);
  if (keep > size_) keep = size_;
  if (keep > 0) std::memcpy(grown.get(), data_.get(), keep);
  data_ = std::move(grown);
  size_ = n;
}

// ---- InputFile --------------------------------------------------------------

InputFile::InputFile(const std::string& path) : path_(path) {
  if (is_stdio_name(path)) {
    fd_ = STDIN_FILENO;
    label_ = "stdin";
  } else {
    label_ = path;
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw input_error("cannot open: " + errno_text(errno));
  }
  struct stat st;
  if (fstat(fd_, &st) != 0) {
    int err = errno;
    if (fd_ != STDIN_FILENO) close(fd_);
    fd_ = -1;
    throw input_error("cannot stat: " + errno_text(err));
  }
  if (S_ISDIR(st.st_mode)) {
    if (fd_ != STDIN_FILENO) close(fd_);
    fd_ = -1;
    throw input_error("is a directory");
  }
  regular_ = S_ISREG(st.st_mode);
  if (regular_) size_ = static_cast<uint64_t>(st.st_size);
  mode_ = st.st_mode;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
}

InputFile::~InputFile() {
  if (fd_ > STDIN_FILENO) close(fd_);
}

std::size_t InputFile::read_full(void* dst, std::size_t n) {
  auto* p = static_cast<uint8_t*>(dst);
  std::size_t got = 0;
  while (got < n) {
    // Large single reads are fine on Linux but capped at 1 GiB to stay portable.
    std::size_t want = n - got;
    if (want > (std::size_t{1} << 30)) want = std::size_t{1} << 30;
    ssize_t r = read(fd_, p + got, want);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw input_error("read error: " + errno_text(errno));
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  consumed_ += got;
  return got;
}

std::vector<uint8_t> read_whole_file(const std::string& path) {
  InputFile in(path);
  std::vector<uint8_t> bytes;
  if (in.size()) {
    bytes.resize(static_cast<std::size_t>(*in.size()));
    bytes.resize(in.read_full(bytes.data(), bytes.size()));
    // A file that grew while being read: take the rest too.
  }
  constexpr std::size_t kStep = std::size_t{16} << 20;
  for (;;) {
    std::size_t old = bytes.size();
    bytes.resize(old + kStep);
    std::size_t got = in.read_full(bytes.data() + old, kStep);
    bytes.resize(old + got);
    if (got < kStep) break;
  }
  return bytes;
}

// ---- OutputFile -------------------------------------------------------------

OutputFile::OutputFile(const std::string& path, const OutputPolicy& policy)
    : path_(path), force_(policy.force) {
  if (is_stdio_name(path)) {
    kind_ = Kind::stdout_stream;
    fd_ = STDOUT_FILENO;
    label_ = "stdout";
    return;
  }
  label_ = path;
  if (path.empty() || path.back() == '/') throw output_error("invalid output name '" + path + "'");

  struct stat target;
  bool has_target = stat(path.c_str(), &target) == 0;
  if (has_target && S_ISDIR(target.st_mode)) throw output_error(path + ": is a directory");
  if (has_target && policy.input && policy.input->is_regular() &&
      target.st_dev == policy.input->device() && target.st_ino == policy.input->inode())
    throw output_error(path + ": output would overwrite the input");

  if (has_target && !S_ISREG(target.st_mode)) {
    // /dev/null, a FIFO, a terminal: cannot be replaced by a rename, and
    // "overwriting" them destroys nothing, so they are written in place.
    kind_ = Kind::direct;
    fd_ = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw output_error("cannot open " + path + ": " + errno_text(errno));
    return;
  }
  if (!force_ && path_exists(path))
    throw output_error(path + " already exists; use -f to overwrite it");

  kind_ = Kind::atomic;
  std::string dir, base;
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    dir = ".";
    base = path;
  } else {
    dir = slash == 0 ? "/" : path.substr(0, slash);
    base = path.substr(slash + 1);
  }
  if (base.size() > 200) base.resize(200);  // stay under NAME_MAX with the suffix
  std::string templ = dir + (dir == "/" ? "" : "/") + "." + base + ".tmp.XXXXXX";
  if (templ.size() >= sizeof g_temp_path) throw output_error(path + ": path too long");

  std::vector<char> name(templ.begin(), templ.end());
  name.push_back('\0');
  {
    // Create and register the temporary with signals blocked, so an interrupt
    // cannot come between the two and leave an unregistered file.
    SignalBlock block;
    fd_ = mkstemp(name.data());
    if (fd_ >= 0) {
      std::memcpy(g_temp_path, name.data(), name.size());
      g_temp_armed = 1;
    }
  }
  if (fd_ < 0) throw output_error("cannot create a temporary file in " + dir + ": " + errno_text(errno));
  temp_path_ = name.data();
  mode_t mode = policy.mode ? (*policy.mode & 07777) : (0666 & ~g_umask);
  fchmod(fd_, mode);  // best effort: a failure here only affects permissions
}

OutputFile::~OutputFile() { abort(); }

void OutputFile::write(const void* src, std::size_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  std::size_t done = 0;
  while (done < n) {
    std::size_t want = n - done;
    if (want > (std::size_t{1} << 30)) want = std::size_t{1} << 30;
    ssize_t w = ::write(fd_, p + done, want);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw output_error("cannot write " + label_ + ": " + errno_text(errno));
    }
    done += static_cast<std::size_t>(w);
  }
  written_ += n;
}

void OutputFile::commit() {
  if (done_) return;
  if (kind_ == Kind::stdout_stream) {
    done_ = true;
    return;
  }
  int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) {
    int err = errno;
    abort();
    throw output_error("cannot write " + label_ + ": " + errno_text(err));
  }
  if (kind_ == Kind::direct) {
    done_ = true;
    return;
  }
  if (force_) {
    if (rename(temp_path_.c_str(), path_.c_str()) != 0) {
      int err = errno;
      abort();
      throw output_error("cannot rename the temporary file to " + path_ + ": " + errno_text(err));
    }
  } else {
    // link() fails if the destination appeared meanwhile: never clobber a file
    // that was created while we were working.
    if (link(temp_path_.c_str(), path_.c_str()) == 0) {
      unlink(temp_path_.c_str());
    } else {
      int err = errno;
      if (err == EEXIST) {
        abort();
        throw output_error(path_ + " already exists; use -f to overwrite it");
      }
      // Filesystems without hard links: check, then rename.
      if (path_exists(path_)) {
        abort();
        throw output_error(path_ + " already exists; use -f to overwrite it");
      }
      if (rename(temp_path_.c_str(), path_.c_str()) != 0) {
        err = errno;
        abort();
        throw output_error("cannot rename the temporary file to " + path_ + ": " + errno_text(err));
      }
    }
  }
  disarm_cleanup();
  done_ = true;
}

void OutputFile::abort() noexcept {
  if (done_) return;
  done_ = true;
  if (kind_ == Kind::stdout_stream) return;
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  if (kind_ == Kind::atomic && !temp_path_.empty()) {
    unlink(temp_path_.c_str());
    disarm_cleanup();
  }
}

}  // namespace vlec::cli
