#pragma once
/// \file
/// `durable_file`: how ember writes every file it writes (a checkpoint, a `.npy`, a `.npz`, the
/// benchmark driver's JSON lines), so that a crash, a full disk or a failing device never leaves
/// a damaged or empty file under the real name and never replaces a good one.
///
/// The bytes go to `<path>.tmp`, through a buffer whose every flush is checked. `commit()` then
/// flushes, `fsync`s the temporary, closes it (checked: a buffered ENOSPC or EIO can first show
/// there), renames it over `path`, and `fsync`s the directory so that the rename itself survives
/// a power cut. Anything that fails throws `std::runtime_error` naming the file and the system's
/// reason, after removing the temporary; a `durable_file` destroyed without `commit()` (an
/// exception in between) removes it too, and `path` keeps what it held before.
///
/// A `path` that exists and is not a regular file (a character device such as /dev/full or
/// /dev/stdout, a FIFO) is written in place: there is nothing to rename over. Every write and the
/// close are still checked.

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ember::detail {

class durable_file {
 public:
  /// Opens `<path>.tmp` (or `path` itself, for a special file); `who` starts every error message.
  durable_file(std::string path, std::string who) : path_(std::move(path)), who_(std::move(who)) {
    struct stat st;
    in_place_ = ::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
    target_ = in_place_ ? path_ : path_ + ".tmp";
    fd_ = ::open(target_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) fail_errno("cannot create " + target_);
    buffer_.reserve(capacity);
  }
  durable_file(durable_file const&) = delete;
  durable_file& operator=(durable_file const&) = delete;
  ~durable_file() { abandon(); }

  /// Appends n bytes.
  void write(void const* data, std::size_t n) {
    auto const* p = static_cast<char const*>(data);
    if (buffer_.size() + n > capacity) flush();
    if (n >= capacity) {
      write_all(p, n);
      flushed_ += n;
    } else {
      buffer_.append(p, n);
    }
  }
  void write(std::string const& s) { write(s.data(), s.size()); }

  /// Bytes written so far (the offset of the next byte).
  std::uint64_t tell() const { return flushed_ + buffer_.size(); }

  /// Overwrites n bytes at `offset` (< tell()): in the buffer if they are still there, else in
  /// the file, which must then be seekable.
  void patch(std::uint64_t offset, void const* data, std::size_t n) {
    if (offset >= flushed_) {
      std::memcpy(buffer_.data() + (offset - flushed_), data, n);
      return;
    }
    flush();
    auto const* p = static_cast<char const*>(data);
    for (std::size_t done = 0; done < n;) {
      ssize_t const w = ::pwrite(fd_, p + done, n - done, off_t(offset + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail_errno("writing " + target_ + " failed");
      done += std::size_t(w);
    }
  }

  /// Makes the bytes durable under `path` (see the file comment); throws if any step fails.
  void commit() {
    flush();
    if (!in_place_ && ::fsync(fd_) != 0) fail_errno("writing " + target_ + " failed (fsync)");
    int const fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail_errno("writing " + target_ + " failed (close)");
    if (in_place_) return;
    if (std::rename(target_.c_str(), path_.c_str()) != 0) fail_errno("cannot rename " + target_ + " to " + path_);
    committed_ = true;
    // The rename is durable once the directory is: fsync it (a file system that cannot, EINVAL, has
    // nothing to do).
    std::string const dir = directory_of(path_);
    int const dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      int const rc = ::fsync(dfd), err = errno;
      ::close(dfd);
      if (rc != 0 && err != EINVAL) {
        errno = err;
        fail_errno("cannot make the rename of " + path_ + " durable (fsync of " + dir + ")");
      }
    }
  }

  std::string const& path() const { return path_; }

 private:
  static constexpr std::size_t capacity = std::size_t(1) << 20;

  static std::string directory_of(std::string const& p) {
    auto const slash = p.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : p.substr(0, slash);
  }
  void write_all(char const* p, std::size_t n) {
    for (std::size_t done = 0; done < n;) {
      ssize_t const w = ::write(fd_, p + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        if (w == 0) errno = EIO;
        fail_errno("writing " + target_ + " failed");
      }
      done += std::size_t(w);
    }
  }
  void flush() {
    if (buffer_.empty()) return;
    write_all(buffer_.data(), buffer_.size());
    flushed_ += buffer_.size();
    buffer_.clear();
  }
  // Closes the descriptor and removes the temporary, if they are still there.
  void abandon() noexcept {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
    if (!in_place_ && !committed_) ::unlink(target_.c_str());
  }
  [[noreturn]] void fail_errno(std::string const& what) {
    std::string const reason = std::strerror(errno);
    abandon();
    committed_ = true;  // nothing left to remove
    throw std::runtime_error(who_ + ": " + what + ": " + reason);
  }

  std::string path_, who_, target_, buffer_;
  int fd_ = -1;
  std::uint64_t flushed_ = 0;
  bool in_place_ = false, committed_ = false;
};

}  // namespace ember::detail
