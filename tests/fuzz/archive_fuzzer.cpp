// Zoo archives (.tar, .tar.gz, .zip, ... through libarchive) as `skiff zoo pull` unpacks
// them, with small limits so bombs hit them quickly. Besides clean errors it checks what
// extraction promises: nothing is written outside the target directory (no path
// traversal, no link out of it), and a refused archive leaves no target directory behind.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "framework/zoo/archive.h"
#include "tests/fuzz/fuzz_support.h"

namespace fs = std::filesystem;

namespace {

// Everything under `root` must be the archive itself or inside root/out.
void check_contained(const fs::path& root) {
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    auto rel = it->path().lexically_relative(root);
    std::string first = rel.begin()->string();
    if (first != "in.bin" && first != "out")
      skiff::fuzz::report_foreign_exception("archive", "path traversal", it->path().c_str());
    if (it->is_symlink()) {
      std::error_code ec;
      fs::path target = fs::weakly_canonical(it->path(), ec);
      auto inside = target.lexically_relative(fs::weakly_canonical(root / "out"));
      if (!ec && (inside.empty() || *inside.begin() == ".."))
        skiff::fuzz::report_foreign_exception("archive", "link out of the target", it->path().c_str());
      it.disable_recursion_pending();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  skiff::fuzz::remove_scratch("archive");
  auto archive = skiff::fuzz::write_scratch_file("archive/in.bin", skiff::fuzz::as_text(data, size));
  const fs::path root = archive.parent_path(), out = root / "out";
  skiff::zoo::ArchiveLimits limits;
  limits.max_entry_bytes = 1 << 20;
  limits.max_total_bytes = 4 << 20;
  limits.max_entries = 256;
  bool extracted = false;
  skiff::fuzz::expect_clean_errors("archive", [&] {
    skiff::zoo::extract_archive(archive, out, limits);
    extracted = true;
  });
  if (!extracted && fs::exists(fs::symlink_status(out)))
    skiff::fuzz::report_foreign_exception("archive", "left behind", "a refused archive left its target directory");
  check_contained(root);
  // The zoo also streams single members (a model file inside an archive) to a descriptor.
  int fd = ::open("/dev/null", O_WRONLY);
  skiff::fuzz::expect_clean_errors("archive", [&] { skiff::zoo::extract_member(archive, "model.onnx", fd, 1 << 20); });
  ::close(fd);
  return 0;
}
