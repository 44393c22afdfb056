#include "framework/io/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "framework/core/error.h"

namespace skiff::io {
namespace fs = std::filesystem;

namespace {
[[noreturn]] void throw_os(std::string_view what, const fs::path& p, int err) {
  SKIFF_THROW(IoError, "{} '{}': {}", what, p.string(), std::strerror(err));
}
}  // namespace

void fsync_path(const fs::path& p, bool directory) {
  int fd = ::open(p.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) throw_os("fsync: cannot open", p, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) throw_os("fsync", p, err);
}

bool is_atomic_temp_name(const std::string& name) {
  return name.size() > 1 && name[0] == '.' && name.find(".tmp.") != std::string::npos;
}

AtomicFileWriter::AtomicFileWriter(fs::path path) : path_(std::move(path)) {
  fs::path dir = path_.parent_path();
  if (dir.empty()) dir = ".";
  std::string templ = (dir / ("." + path_.filename().string() + ".tmp.XXXXXX")).string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  fd_ = ::mkstemp(buf.data());
  if (fd_ < 0) throw_os("cannot create a temporary file in", dir, errno);
  tmp_ = buf.data();
  // mkstemp creates 0600; give the final file the usual umask-derived mode.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFileWriter::write(const void* data, size_t n) {
  SKIFF_CHECK_T(IoError, fd_ >= 0 && !committed_, "write '{}': writer already committed", path_.string());
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw_os("write", tmp_, errno);
    }
    p += w;
    n -= size_t(w);
  }
}

void AtomicFileWriter::commit() {
  SKIFF_CHECK_T(IoError, fd_ >= 0 && !committed_, "commit '{}': writer already committed", path_.string());
  if (::fsync(fd_) != 0) throw_os("fsync", tmp_, errno);
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) throw_os("close", tmp_, errno);
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) throw_os("rename to", path_, errno);
  committed_ = true;
  fs::path dir = path_.parent_path();
  fsync_path(dir.empty() ? fs::path(".") : dir, true);
}

void write_file_atomic(const fs::path& path, std::string_view bytes) {
  AtomicFileWriter w(path);
  w.write(bytes);
  w.commit();
}

std::string read_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw_os("cannot open", path, errno);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      throw_os("read", path, err);
    }
    if (r == 0) break;
    out.append(buf, size_t(r));
  }
  ::close(fd);
  return out;
}

std::shared_ptr<MappedFile> MappedFile::open(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw_os("cannot open", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw_os("cannot stat", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    SKIFF_THROW(IoError, "'{}' is not a regular file", path.string());
  }
  std::shared_ptr<MappedFile> m(new MappedFile());
  m->path_ = path;
  m->size_ = size_t(st.st_size);
  if (m->size_ > 0) {
    void* p = ::mmap(nullptr, m->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      throw_os("cannot mmap", path, err);
    }
    m->data_ = static_cast<uint8_t*>(p);
  }
  ::close(fd);  // the mapping stays valid after close
  return m;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace skiff::io
