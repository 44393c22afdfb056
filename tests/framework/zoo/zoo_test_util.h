#pragma once
// Helpers shared by the zoo tests: temp dirs, payloads, index text, archive
// builders (libarchive writer) and a "is the cache clean" check.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "framework/zoo/sha256.h"
#include "framework/zoo/zoo.h"
#include "tests/temp_dir.h"

namespace skiff::zoo::test {
namespace fs = std::filesystem;

using skiff::testing::TempDir;

inline std::string payload(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = char(rng() & 0xff);
  return s;
}

inline void write_file(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct TestFile {
  std::string path, sha256;
  uint64_t size;
  std::vector<std::string> sources;
  bool unpack = false;
};

inline TestFile test_file(const std::string& path, const std::string& bytes, std::vector<std::string> sources) {
  return {path, sha256_bytes(bytes), bytes.size(), std::move(sources)};
}

// One index with one model per entry of `models` (name -> files).
inline std::string index_yaml(const std::vector<std::pair<std::string, std::vector<TestFile>>>& models) {
  std::string y = "version: 1\nmodels:\n";
  for (const auto& [name, files] : models) {
    y += "  - name: " + name + "\n    suite: ocr\n    task: text-detection\n    architecture: test\n"
         "    description: {en: test model, zh: 测试模型}\n    license: Apache-2.0\n    languages: [en]\n"
         "    metrics: []\n    version: '1'\n    files:\n";
    for (const auto& f : files) {
      y += "      - path: " + f.path + "\n        sha256: " + f.sha256 + "\n        size: " + std::to_string(f.size) +
           "\n" + (f.unpack ? "        unpack: true\n" : "") + "        sources:\n";
      for (const auto& s : f.sources) y += "          - \"" + s + "\"\n";
    }
  }
  return y;
}

// Options for fast tests: short timeouts and back-off, logs collected.
inline ZooOptions test_options(const fs::path& home, const fs::path& index, std::vector<std::string>* log = nullptr) {
  ZooOptions o;
  o.home = home;
  o.index_path = index;
  o.connect_timeout_s = 2;
  o.stall_timeout_s = 1;
  o.attempts = 3;
  o.backoff_s = 0.01;
  o.progress = ZooOptions::Progress::Off;
  o.log = [log](const std::string& s) {
    if (log) log->push_back(s);
  };
  return o;
}

// Nothing half-written anywhere, nothing under the final name for `sha`.
inline void expect_clean_cache(const fs::path& home, const std::string& sha) {
  EXPECT_FALSE(fs::exists(home / "blobs" / "sha256" / sha)) << "a blob exists for " << sha;
  EXPECT_FALSE(fs::exists(home / "trees" / "sha256" / sha)) << "a tree exists for " << sha;
  if (!fs::exists(home)) return;
  for (const auto& e : fs::recursive_directory_iterator(home)) {
    auto name = e.path().filename().string();
    EXPECT_EQ(name.find(".partial"), std::string::npos) << "leftover " << e.path();
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << "leftover " << e.path();
    EXPECT_EQ(name.find(".archive"), std::string::npos) << "leftover " << e.path();
    EXPECT_EQ(name.rfind("tree-", 0), std::string::npos) << "leftover " << e.path();
  }
}

struct ArchiveItem {
  ArchiveItem(std::string n, std::string c = "", std::string sl = "", std::string hl = "", bool dir = false)
      : name(std::move(n)), content(std::move(c)), symlink(std::move(sl)), hardlink(std::move(hl)), directory(dir) {}
  std::string name;
  std::string content;   // regular file
  std::string symlink;   // when set: a symbolic link to this target
  std::string hardlink;  // when set: a hard link to this entry
  bool directory = false;
};

// Writes a tar (gzip-compressed when `gzip`) or zip with exactly these entries.
inline void write_archive(const fs::path& path, const std::vector<ArchiveItem>& items, const std::string& format) {
  struct archive* a = archive_write_new();
  if (format == "zip") {
    archive_write_set_format_zip(a);
  } else {
    archive_write_set_format_pax_restricted(a);
    if (format == "tgz") archive_write_add_filter_gzip(a);
  }
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
  for (const auto& it : items) {
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, it.name.c_str());
    archive_entry_set_perm(e, 0644);
    if (!it.symlink.empty()) {
      archive_entry_set_filetype(e, AE_IFLNK);
      archive_entry_set_symlink(e, it.symlink.c_str());
    } else if (!it.hardlink.empty()) {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_hardlink(e, it.hardlink.c_str());
    } else if (it.directory) {
      archive_entry_set_filetype(e, AE_IFDIR);
      archive_entry_set_perm(e, 0755);
    } else {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_size(e, la_int64_t(it.content.size()));
    }
    archive_write_header(a, e);
    if (it.symlink.empty() && it.hardlink.empty() && !it.directory)
      archive_write_data(a, it.content.data(), it.content.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

}  // namespace skiff::zoo::test
