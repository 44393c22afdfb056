#include "framework/zoo/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "framework/core/error.h"

namespace skiff::zoo {
namespace fs = std::filesystem;

namespace {

// libarchive's message for the last error, which may be null (fmt refuses null strings).
const char* error_text(struct archive* a) {
  const char* text = archive_error_string(a);
  return text ? text : "unknown error";
}


using ReadPtr = std::unique_ptr<struct archive, decltype(&archive_read_free)>;
using WritePtr = std::unique_ptr<struct archive, decltype(&archive_write_free)>;

ReadPtr open_archive(const fs::path& path) {
  ReadPtr a(archive_read_new(), archive_read_free);
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_format_gnutar(a.get());
  archive_read_support_format_zip(a.get());
  SKIFF_CHECK_T(IoError, archive_read_open_filename(a.get(), path.c_str(), 1 << 16) == ARCHIVE_OK,
                "archive '{}': cannot open: {}", path.string(), error_text(a.get()));
  return a;
}

// The entry name without a leading "./" (common in tarballs made with `tar -C dir .`).
std::string clean_name(const char* raw) {
  std::string s = raw ? raw : "";
  while (s.rfind("./", 0) == 0) s.erase(0, 2);
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

bool has_dotdot(const std::string& p) {
  for (const auto& part : fs::path(p))
    if (part == "..") return true;
  return false;
}

// True when `rel` (relative to the extraction root) stays inside it lexically.
bool stays_inside(const fs::path& rel) {
  auto n = rel.lexically_normal();
  return !n.empty() && *n.begin() != ".." && !n.is_absolute();
}

}  // namespace

void extract_archive(const fs::path& archive, const fs::path& dest, const ArchiveLimits& limits) {
  SKIFF_CHECK_T(IoError, !fs::exists(dest), "archive '{}': extraction target '{}' already exists", archive.string(),
                dest.string());
  fs::create_directories(dest);
  // Anything that goes wrong removes the half-extracted tree: nothing partial stays visible.
  struct Cleanup {
    fs::path dir;
    bool armed = true;
    ~Cleanup() {
      std::error_code ec;
      if (armed) fs::remove_all(dir, ec);
    }
  } cleanup{dest};

  auto a = open_archive(archive);
  WritePtr w(archive_write_disk_new(), archive_write_free);
  // libarchive's own guards as a second line of defence behind the checks below
  // (not NOABSOLUTEPATHS: entries are rewritten to absolute paths under `root`).
  archive_write_disk_set_options(w.get(), ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  const fs::path root = fs::canonical(dest);
  std::vector<std::string> symlinks;
  uint64_t total = 0, entries = 0;
  auto bad = [&](const std::string& name, const std::string& why) {
    SKIFF_THROW(ValueError, "archive '{}': entry '{}': {}", archive.string(), name, why);
  };
  struct archive_entry* e = nullptr;
  for (;;) {
    int r = archive_read_next_header(a.get(), &e);
    if (r == ARCHIVE_EOF) break;
    SKIFF_CHECK_T(IoError, r == ARCHIVE_OK || r == ARCHIVE_WARN, "archive '{}': corrupt: {}", archive.string(),
                  error_text(a.get()));
    const char* raw = archive_entry_pathname(e);
    std::string raw_name = raw ? raw : "";
    if (++entries > limits.max_entries) bad(raw_name, fmt::format("more than {} entries", limits.max_entries));
    if (!raw_name.empty() && raw_name.front() == '/') bad(raw_name, "refusing an absolute path");
    std::string name = clean_name(raw);
    if (name.empty() || name == ".") continue;  // the root directory itself
    if (has_dotdot(name)) bad(raw_name, "refusing a path with '..'");
    auto type = archive_entry_filetype(e);
    const char* hard = archive_entry_hardlink(e);
    if (hard) {
      std::string target = clean_name(hard);
      if (hard[0] == '/' || target.empty() || has_dotdot(target))
        bad(raw_name, fmt::format("refusing a hard link to '{}' outside the archive", hard));
      archive_entry_set_hardlink(e, (root / target).c_str());
    } else if (type == AE_IFLNK) {
      std::string target = archive_entry_symlink(e) ? archive_entry_symlink(e) : "";
      if (target.empty() || target.front() == '/')
        bad(raw_name, fmt::format("refusing a symbolic link to the absolute path '{}'", target));
      if (!stays_inside(fs::path(name).parent_path() / target))
        bad(raw_name, fmt::format("refusing a symbolic link to '{}', which escapes the extraction directory", target));
      symlinks.push_back(name);
    } else if (type != AE_IFREG && type != AE_IFDIR) {
      bad(raw_name, "refusing a device, FIFO or socket entry");
    }
    if (type == AE_IFREG && archive_entry_size_is_set(e) && uint64_t(archive_entry_size(e)) > limits.max_entry_bytes)
      bad(raw_name, fmt::format("{} bytes is larger than the limit of {} bytes", archive_entry_size(e),
                                limits.max_entry_bytes));
    archive_entry_set_pathname(e, (root / name).c_str());
    SKIFF_CHECK_T(IoError, archive_write_header(w.get(), e) == ARCHIVE_OK, "archive '{}': entry '{}': {}",
                  archive.string(), raw_name, error_text(w.get()));
    if (type == AE_IFREG && !hard) {
      // Sizes in headers can lie (and zip may omit them): count what is really written.
      uint64_t written = 0;
      const void* buf;
      size_t size;
      la_int64_t off;
      for (;;) {
        r = archive_read_data_block(a.get(), &buf, &size, &off);
        if (r == ARCHIVE_EOF) break;
        SKIFF_CHECK_T(IoError, r == ARCHIVE_OK || r == ARCHIVE_WARN, "archive '{}': entry '{}': corrupt data: {}",
                      archive.string(), raw_name, error_text(a.get()));
        written += size;
        total += size;
        if (written > limits.max_entry_bytes)
          bad(raw_name, fmt::format("larger than the limit of {} bytes", limits.max_entry_bytes));
        if (total > limits.max_total_bytes)
          bad(raw_name, fmt::format("the archive expands past the limit of {} bytes", limits.max_total_bytes));
        SKIFF_CHECK_T(IoError, archive_write_data_block(w.get(), buf, size, off) == ARCHIVE_OK,
                      "archive '{}': entry '{}': write failed: {}", archive.string(), raw_name,
                      error_text(w.get()));
      }
    }
    SKIFF_CHECK_T(IoError, archive_write_finish_entry(w.get()) == ARCHIVE_OK, "archive '{}': entry '{}': {}",
                  archive.string(), raw_name, error_text(w.get()));
  }
  SKIFF_CHECK_T(IoError, archive_write_close(w.get()) == ARCHIVE_OK, "archive '{}': {}", archive.string(),
                error_text(w.get()));
  // Each link was lexically inside, but chains of links can still combine into an
  // escape (a -> "..", b -> "a/.."); resolve them on disk now that all exist.
  for (const auto& name : symlinks) {
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(root / name, ec);
    auto rel = resolved.lexically_relative(root);
    if (ec || rel.empty() || *rel.begin() == "..")
      bad(name, "refusing a symbolic link that resolves outside the extraction directory");
  }
  cleanup.armed = false;
}

uint64_t extract_member(const fs::path& archive, const std::string& member, int fd, uint64_t max_bytes,
                        const std::function<void(uint64_t)>& on_progress) {
  auto a = open_archive(archive);
  struct archive_entry* e = nullptr;
  std::string want = clean_name(member.c_str());
  for (;;) {
    int r = archive_read_next_header(a.get(), &e);
    if (r == ARCHIVE_EOF) break;
    SKIFF_CHECK_T(IoError, r == ARCHIVE_OK || r == ARCHIVE_WARN, "archive '{}': corrupt: {}", archive.string(),
                  error_text(a.get()));
    if (clean_name(archive_entry_pathname(e)) != want) continue;
    SKIFF_CHECK(archive_entry_filetype(e) == AE_IFREG && !archive_entry_hardlink(e),
                "archive '{}': '{}' is not a regular file", archive.string(), member);
    uint64_t written = 0;
    const void* buf;
    size_t size;
    la_int64_t off;
    for (;;) {
      r = archive_read_data_block(a.get(), &buf, &size, &off);
      if (r == ARCHIVE_EOF) break;
      SKIFF_CHECK_T(IoError, r == ARCHIVE_OK || r == ARCHIVE_WARN, "archive '{}': '{}': corrupt data: {}",
                    archive.string(), member, error_text(a.get()));
      written += size;
      SKIFF_CHECK(written <= max_bytes, "archive '{}': '{}' is larger than the expected {} bytes", archive.string(),
                  member, max_bytes);
      const char* p = static_cast<const char*>(buf);
      while (size > 0) {
        ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        SKIFF_CHECK_T(IoError, n > 0, "writing '{}' from '{}': {}", member, archive.string(), std::strerror(errno));
        p += n;
        size -= size_t(n);
      }
      if (on_progress) on_progress(written);
    }
    return written;
  }
  SKIFF_THROW(ValueError, "archive '{}' has no file '{}'", archive.string(), member);
}

}  // namespace skiff::zoo
