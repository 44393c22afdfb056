// Safe extraction: good archives unpack, hostile ones are refused and leave nothing behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "framework/core/error.h"
#include "framework/zoo/archive.h"
#include "tests/framework/zoo/zoo_test_util.h"

namespace skiff::zoo {
namespace {

using test::ArchiveItem;
using test::TempDir;

TEST(ZooArchiveTest, ExtractsTarGzAndZipWithDirectoriesAndInsideLinks) {
  for (const char* format : {"tgz", "tar", "zip"}) {
    TempDir t;
    auto arc = t.path / (std::string("a.") + format);
    test::write_archive(arc,
                        {{"./model/", "", "", "", true},
                         {"model/weights.bin", "WEIGHTS"},
                         {"model/config.yml", "a: 1"},
                         {"model/latest", "", "weights.bin"}},
                        format);
    auto dest = t.path / "out";
    extract_archive(arc, dest);
    EXPECT_EQ(test::read_file(dest / "model" / "weights.bin"), "WEIGHTS") << format;
    EXPECT_EQ(test::read_file(dest / "model" / "config.yml"), "a: 1") << format;
    if (std::string(format) != "zip") {
      EXPECT_TRUE(std::filesystem::is_symlink(dest / "model" / "latest"));
      EXPECT_EQ(test::read_file(dest / "model" / "latest"), "WEIGHTS");
    }
  }
}

// Extracting `items` must fail with a ValueError containing `why`, and leave no target dir.
void expect_refused(const std::vector<ArchiveItem>& items, const std::string& why, ArchiveLimits limits = {}) {
  TempDir t;
  auto arc = t.path / "evil.tar";
  test::write_archive(arc, items, "tar");
  auto dest = t.path / "out";
  try {
    extract_archive(arc, dest, limits);
    ADD_FAILURE() << "hostile archive was extracted; expected: " << why;
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("evil.tar"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dest));
  EXPECT_FALSE(std::filesystem::exists(t.path / "escaped"));
  EXPECT_FALSE(std::filesystem::exists("/tmp/skiff-zoo-test-escape"));
}

TEST(ZooArchiveTest, RefusesAbsolutePaths) {
  expect_refused({{"ok.txt", "fine"}, {"/tmp/skiff-zoo-test-escape", "pwned"}}, "refusing an absolute path");
}

TEST(ZooArchiveTest, RefusesDotDotComponents) {
  expect_refused({{"a/../../escaped", "pwned"}}, "refusing a path with '..'");
}

TEST(ZooArchiveTest, RefusesSymlinksThatEscape) {
  expect_refused({{"link", "", "../escaped"}}, "escapes the extraction directory");
  expect_refused({{"link", "", "/etc/passwd"}}, "absolute path '/etc/passwd'");
  // A link that points outside, then a file written "through" it.
  expect_refused({{"dir", "", "/tmp"}, {"dir/skiff-zoo-test-escape", "pwned"}}, "absolute path");
}

TEST(ZooArchiveTest, RefusesChainsOfLinksThatEscapeTogether) {
  // Each link alone stays inside lexically; together they resolve above the root.
  expect_refused({{"x/", "", "", "", true}, {"x/up", "", ".."}, {"y", "", "x/up/.."}},
                 "resolves outside the extraction directory");
}

TEST(ZooArchiveTest, RefusesHardLinksOutsideTheArchive) {
  expect_refused({{"h", "", "", "../../etc/passwd"}}, "hard link");
}

TEST(ZooArchiveTest, RefusesOversizedEntries) {
  ArchiveLimits limits;
  limits.max_entry_bytes = 1000;
  expect_refused({{"big.bin", std::string(5000, 'x')}}, "larger than the limit of 1000 bytes", limits);
  limits = {};
  limits.max_total_bytes = 1500;
  expect_refused({{"a.bin", std::string(1000, 'x')}, {"b.bin", std::string(1000, 'y')}}, "expands past the limit",
                 limits);
}

TEST(ZooArchiveTest, ExtractMemberFindsNpmStylePaths) {
  TempDir t;
  auto arc = t.path / "pkg.tgz";
  test::write_archive(arc, {{"package/package.json", "{}"}, {"package/assets/m.onnx", "ONNX"}}, "tgz");
  auto out = t.path / "m.onnx";
  int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  EXPECT_EQ(extract_member(arc, "package/assets/m.onnx", fd, 100), 4u);
  ::close(fd);
  EXPECT_EQ(test::read_file(out), "ONNX");
  fd = ::open(out.c_str(), O_WRONLY | O_TRUNC);
  EXPECT_THROW(extract_member(arc, "package/assets/missing.onnx", fd, 100), ValueError);
  EXPECT_THROW(extract_member(arc, "package/assets/m.onnx", fd, 2), ValueError);  // larger than allowed
  ::close(fd);
}

}  // namespace
}  // namespace skiff::zoo
