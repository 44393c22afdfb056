#pragma once
/// \file archive.h
/// Safe archive extraction (libarchive underneath) for zoo downloads.
///
/// Archives come from the network, so every entry is checked before anything
/// is written: absolute paths, `..` components, links that resolve outside the
/// target, device files and oversized entries are refused with a ValueError
/// that names the archive and the entry. Formats: tar (plain, gzip, xz, bzip2,
/// zstd), zip, and npm package tarballs (a gzip tar with a `package/` prefix).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace skiff::zoo {

/// Limits that stop decompression bombs.
struct ArchiveLimits {
  uint64_t max_entry_bytes = uint64_t(8) << 30;   ///< Largest single file (8 GiB).
  uint64_t max_total_bytes = uint64_t(32) << 30;  ///< Sum over all files (32 GiB).
  uint64_t max_entries = 100000;                  ///< Number of entries.
};

/// Extracts every entry of `archive` into `dest`, which must not exist yet (it
/// is created). On any error `dest` is removed again, so callers extract into a
/// temporary directory and rename it into place afterwards.
/// \throws ValueError (hostile or oversized entry, unsupported entry type),
///         IoError (unreadable or corrupt archive, disk errors).
void extract_archive(const std::filesystem::path& archive, const std::filesystem::path& dest,
                     const ArchiveLimits& limits = {});

/// Writes the regular-file member `member` (a relative path; a leading "./" in
/// the archive is ignored) of `archive` to the open file descriptor `fd`, at
/// its current position. Stops with an error once more than `max_bytes` would
/// be written. `on_progress`, when set, gets the bytes written so far after each block.
/// \returns the number of bytes written.
/// \throws ValueError when the member is missing, not a regular file, or too large;
///         IoError on read/write errors.
uint64_t extract_member(const std::filesystem::path& archive, const std::string& member, int fd,
                        uint64_t max_bytes, const std::function<void(uint64_t)>& on_progress = {});

}  // namespace skiff::zoo
