#pragma once
/// \file file.h
/// File helpers shared by the io and data modules: atomic writes, whole-file
/// reads, and read-only memory mappings whose lifetime tensors can share.
///
/// Every function throws skiff::IoError naming the path and the OS error
/// (strerror) when the operating system refuses an operation.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace skiff::io {

/// Writes a file so that readers only ever see the old complete file or the new
/// complete file, never a partial one, even if the process is killed mid-write.
///
/// Data goes to a hidden temporary file in the destination directory
/// (".<name>.tmp.XXXXXX", same file system so rename is atomic). commit() fsyncs
/// the file, renames it over the destination and fsyncs the directory so the
/// rename itself survives a power loss. If the writer is destroyed without
/// commit() (an exception, an early return) the temporary file is removed.
class AtomicFileWriter {
 public:
  /// Creates the temporary file next to `path`. \throws IoError if the directory
  /// does not exist or is not writable.
  explicit AtomicFileWriter(std::filesystem::path path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  /// Appends n bytes (retries short writes and EINTR). \throws IoError (e.g. disk full).
  void write(const void* data, size_t n);
  void write(std::string_view s) { write(s.data(), s.size()); }
  /// Makes the file visible under its final name. Must be called exactly once.
  void commit();
  /// Path of the temporary file (for tests).
  const std::filesystem::path& temp_path() const { return tmp_; }

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

/// True for the names AtomicFileWriter gives its temporary files.
bool is_atomic_temp_name(const std::string& filename);

/// Atomically replaces `path` with `bytes` (AtomicFileWriter in one call).
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

/// Reads a whole file. \throws IoError if it cannot be opened or read.
std::string read_file(const std::filesystem::path& path);

/// fsyncs a file or directory. \throws IoError.
void fsync_path(const std::filesystem::path& path, bool directory);

/// A private, copy-on-write memory mapping of a whole file.
///
/// Mapped MAP_PRIVATE with write permission so that tensors viewing the mapping
/// may be modified in place (an optimizer updating loaded state) without
/// touching the file and without a SIGSEGV. Hold it through a shared_ptr: tensor
/// storages keep a copy, so the mapping lives as long as any view of it.
class MappedFile {
 public:
  /// Maps `path`. An empty file gives size() == 0 and data() == nullptr.
  /// \throws IoError if the file cannot be opened, stat'ed or mapped.
  static std::shared_ptr<MappedFile> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile() = default;
  std::filesystem::path path_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace skiff::io
