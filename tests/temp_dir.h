#pragma once
// A fresh directory under the system temp dir for one test, removed with
// everything in it when the test ends (mkdtemp: unique across processes).
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace skiff::testing {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "skiff-test-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace skiff::testing
