#include "tests/fuzz/fuzz_support.h"

#include <unistd.h>

#include <fstream>
#include <system_error>

namespace skiff::fuzz {
namespace fs = std::filesystem;

namespace {

fs::path pick_scratch_root() {
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) return tmp;
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec)) return "/dev/shm";  // tmpfs: file round trips stay in memory
  return "/tmp";
}

struct Scratch {
  fs::path dir;
  Scratch() {
    dir = pick_scratch_root() / ("skiff-fuzz-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

const fs::path& scratch_dir() {
  static Scratch scratch;
  return scratch.dir;
}

fs::path write_scratch_file(const std::string& name, std::string_view bytes) {
  fs::path path = scratch_dir() / name;
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write scratch file %s\n", path.c_str());
    std::abort();
  }
  return path;
}

void remove_scratch(const std::string& name) {
  std::error_code ec;
  fs::remove_all(scratch_dir() / name, ec);
}

std::vector<std::string_view> split_parts(std::string_view text, size_t n) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < n) {
    size_t at = text.find(kPartSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(text.substr(0, at));
    text.remove_prefix(at + kPartSeparator.size());
  }
  parts.push_back(text);
  parts.resize(n);
  return parts;
}

void report_foreign_exception(const char* harness, const char* type, const char* what) {
  std::fprintf(stderr, "fuzz_%s: a reader let through an exception that is not a skiff::Error: %s: %s\n", harness,
               type, what);
  std::abort();
}

}  // namespace skiff::fuzz
