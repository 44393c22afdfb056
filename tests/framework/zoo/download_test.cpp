// Pulling through a real loopback HTTP server with injected faults. Each case
// must end in a verified file or a clear error with a clean cache.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>

#include "framework/core/error.h"
#include "framework/zoo/zoo.h"
#include "tests/framework/zoo/test_server.h"
#include "tests/framework/zoo/zoo_test_util.h"

namespace skiff::zoo {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::TestFile;
using test::TestServer;

class ZooDownloadTest : public ::testing::Test {
 protected:
  void SetUp() override { server.add_file("f.bin", data); }

  // A Zoo over a one-model index whose file has these sources.
  std::unique_ptr<Zoo> make_zoo(std::vector<std::string> sources, int attempts = 3) {
    TestFile f = test::test_file("f.bin", data, std::move(sources));
    test::write_file(dir.path / "index.yaml", test::index_yaml({{"m", {f}}}));
    auto o = test::test_options(dir.path / "home", dir.path / "index.yaml", &log);
    o.attempts = attempts;
    return std::make_unique<Zoo>(o);
  }

  std::string fetch_error(Zoo& z) {
    try {
      z.fetch_file("m", "f.bin");
    } catch (const IoError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected an IoError";
    return "";
  }

  void expect_good_file(Zoo& z) {
    fs::path p = z.fetch_file("m", "f.bin");
    EXPECT_EQ(p, dir.path / "home" / "models" / "m" / "f.bin");
    EXPECT_TRUE(fs::is_symlink(p));
    EXPECT_EQ(test::read_file(p), data);
    struct stat st {};
    ASSERT_EQ(::stat(z.blob_path(z.model("m").files[0]).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0222, 0u) << "blobs are read-only";
    test::expect_clean_cache(dir.path / "home", "no-such-sha");
  }

  std::string sha() const { return sha256_bytes(data); }

  TestServer server;
  TempDir dir;
  std::string data = test::payload(300 * 1024, 7);
  std::vector<std::string> log;
};

TEST_F(ZooDownloadTest, GoodSourceGivesAVerifiedLinkedFile) {
  auto z = make_zoo({server.url("ok", "f.bin")});
  expect_good_file(*z);
  EXPECT_TRUE(z->is_cached(z->model("m")));
  // A second pull is served from the cache.
  z->fetch_file("m", "f.bin");
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(ZooDownloadTest, TruncatedBodyFailsCleanlyAndNamesTheSource) {
  auto z = make_zoo({server.url("truncated", "f.bin")});
  auto msg = fetch_error(*z);
  EXPECT_NE(msg.find(server.url("truncated", "f.bin")), std::string::npos) << msg;
  EXPECT_NE(msg.find("the body ended after 153600 of 307200 bytes"), std::string::npos) << msg;
  EXPECT_EQ(server.requests("/truncated").size(), 3u);  // every attempt was made
  test::expect_clean_cache(dir.path / "home", sha());
}

TEST_F(ZooDownloadTest, TruncatedSourceFallsBackToTheNextSource) {
  auto z = make_zoo({server.url("truncated", "f.bin"), server.url("ok", "f.bin")});
  expect_good_file(*z);
}

TEST_F(ZooDownloadTest, WrongBytesAreDeletedAndTheSourceIsNamed) {
  auto z = make_zoo({server.url("wrong", "f.bin")});
  auto msg = fetch_error(*z);
  EXPECT_NE(msg.find(server.url("wrong", "f.bin") + ": sha256 mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find(sha()), std::string::npos) << msg;
  test::expect_clean_cache(dir.path / "home", sha());
  // With a good second source the wrong bytes are not resumed: a full, clean download.
  auto z2 = make_zoo({server.url("wrong", "f.bin"), server.url("ok", "f.bin")});
  expect_good_file(*z2);
  auto ok = server.requests("/ok");
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].range, "");
}

TEST_F(ZooDownloadTest, Http500IsRetriedWithBackoffThenTheNextSource) {
  auto z = make_zoo({server.url("error500", "f.bin"), server.url("ok", "f.bin")});
  expect_good_file(*z);
  EXPECT_EQ(server.requests("/error500").size(), 3u);
  auto z2 = make_zoo({server.url("error500", "f.bin")}, 2);
  z2->remove("m");
  auto msg = fetch_error(*z2);
  EXPECT_NE(msg.find("HTTP 500"), std::string::npos) << msg;
  test::expect_clean_cache(dir.path / "home", sha());
}

TEST_F(ZooDownloadTest, NotFoundIsNotRetried) {
  auto z = make_zoo({server.url("notfound", "f.bin"), server.url("ok", "f.bin")});
  expect_good_file(*z);
  EXPECT_EQ(server.requests("/notfound").size(), 1u);
}

TEST_F(ZooDownloadTest, StallPastTheTimeoutFailsCleanly) {
  auto z = make_zoo({server.url("stall", "f.bin")}, 2);
  auto t0 = std::chrono::steady_clock::now();
  auto msg = fetch_error(*z);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(msg.find("timed out"), std::string::npos) << msg;
  EXPECT_LT(secs, 8.0) << "the stall timeout (1 s) was not applied";
  EXPECT_EQ(server.requests("/stall").size(), 2u);
  // The second attempt resumed after the bytes that did arrive.
  EXPECT_EQ(server.requests("/stall")[1].range, "bytes=76800-");
  test::expect_clean_cache(dir.path / "home", sha());
}

TEST_F(ZooDownloadTest, DroppedConnectionIsResumedWithARangeRequest) {
  auto z = make_zoo({server.url("drop", "f.bin")});
  expect_good_file(*z);
  auto reqs = server.requests("/drop");
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].range, "");
  EXPECT_EQ(reqs[1].range, "bytes=" + std::to_string(data.size() / 2) + "-");
  EXPECT_EQ(reqs[0].body_bytes + reqs[1].body_bytes, data.size()) << "resumed, not downloaded twice";
}

TEST_F(ZooDownloadTest, PartialFileFromAnInterruptedRunIsResumed) {
  auto z = make_zoo({server.url("ok", "f.bin")});
  // What a killed process leaves behind.
  test::write_file(dir.path / "home" / "blobs" / "sha256" / (sha() + ".partial"), data.substr(0, 1000));
  expect_good_file(*z);
  auto reqs = server.requests("/ok");
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].range, "bytes=1000-");
}

TEST_F(ZooDownloadTest, StaleWrongPartialIsDiscardedNotBlamedOnTheSource) {
  auto z = make_zoo({server.url("ok", "f.bin")});
  test::write_file(dir.path / "home" / "blobs" / "sha256" / (sha() + ".partial"), std::string(1000, 'z'));
  expect_good_file(*z);
  auto reqs = server.requests("/ok");
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].range, "");
}

TEST_F(ZooDownloadTest, MirrorsAreTriedFirst) {
  server.add_file("m/f.bin", data);
  auto f = test::test_file("f.bin", data, {server.url("ok", "f.bin")});
  test::write_file(dir.path / "index.yaml", test::index_yaml({{"m", {f}}}));
  auto o = test::test_options(dir.path / "home", dir.path / "index.yaml", &log);
  o.mirrors = {"http://127.0.0.1:" + std::to_string(server.port()) + "/ok/"};
  Zoo z(o);
  expect_good_file(z);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/ok/m/f.bin");
}

TEST_F(ZooDownloadTest, FileSourcesAndArchiveMembersWork) {
  test::write_file(dir.path / "src" / "f.bin", data);
  test::write_archive(dir.path / "src" / "bundle.tgz", {{"inner/f.bin", data}}, "tgz");
  auto z = make_zoo({"file://" + (dir.path / "src" / "f.bin").string()});
  expect_good_file(*z);
  z->remove("m");
  auto z2 = make_zoo({"file://" + (dir.path / "src" / "bundle.tgz").string() + "#inner/f.bin"});
  expect_good_file(*z2);
  // An archive member on a web server.
  server.add_file("bundle.tgz", test::read_file(dir.path / "src" / "bundle.tgz"));
  z2->remove("m");
  auto z3 = make_zoo({server.url("ok", "bundle.tgz") + "#inner/f.bin"});
  expect_good_file(*z3);
}

TEST_F(ZooDownloadTest, UnpackedArchiveBecomesADirectory) {
  auto arc = dir.path / "model.tgz";
  test::write_archive(arc, {{"model/inference.onnx", "ONNX"}, {"model/dict.txt", "a\nb\n"}}, "tgz");
  std::string bytes = test::read_file(arc);
  server.add_file("model.tgz", bytes);
  TestFile f = test::test_file("model.tgz", bytes, {server.url("ok", "model.tgz")});
  f.unpack = true;
  test::write_file(dir.path / "index.yaml", test::index_yaml({{"m", {f}}}));
  Zoo z(test::test_options(dir.path / "home", dir.path / "index.yaml"));
  fs::path p = z.fetch_file("m", "model.tgz");
  EXPECT_EQ(p.filename(), "model");
  EXPECT_EQ(test::read_file(p / "model" / "inference.onnx"), "ONNX");
  EXPECT_TRUE(z.is_cached(z.model("m")));
}

TEST_F(ZooDownloadTest, MaliciousArchiveIsRefusedWithACleanCache) {
  const std::vector<std::vector<test::ArchiveItem>> evil = {
      {{"ok.txt", "fine"}, {"/tmp/skiff-zoo-evil", "pwned"}},
      {{"a/../../skiff-zoo-evil", "pwned"}},
      {{"link", "", "../../../../skiff-zoo-evil"}},
  };
  for (size_t i = 0; i < evil.size(); ++i) {
    auto arc = dir.path / ("evil" + std::to_string(i) + ".tar");
    test::write_archive(arc, evil[i], "tar");
    std::string bytes = test::read_file(arc);
    server.add_file(arc.filename().string(), bytes);
    TestFile f = test::test_file(arc.filename().string(), bytes, {server.url("ok", arc.filename().string())});
    f.unpack = true;
    test::write_file(dir.path / "index.yaml", test::index_yaml({{"m", {f}}}));
    Zoo z(test::test_options(dir.path / "home", dir.path / "index.yaml"));
    try {
      z.fetch_file("m", f.path);
      ADD_FAILURE() << "hostile archive " << i << " was accepted";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("refusing"), std::string::npos) << e.what();
      EXPECT_NE(e.full_message().find("while unpacking zoo file m/" + f.path), std::string::npos) << e.full_message();
    }
    test::expect_clean_cache(dir.path / "home", f.sha256);
    EXPECT_FALSE(fs::exists(dir.path / "home" / "models" / "m" / ("evil" + std::to_string(i))));
    EXPECT_FALSE(fs::exists("/tmp/skiff-zoo-evil"));
  }
}

TEST_F(ZooDownloadTest, ProgressLinesGoToStderrWhenNotATerminal) {
  TestFile f = test::test_file("f.bin", data, {server.url("slow", "f.bin")});
  test::write_file(dir.path / "index.yaml", test::index_yaml({{"m", {f}}}));
  auto o = test::test_options(dir.path / "home", dir.path / "index.yaml");
  o.progress = ZooOptions::Progress::Lines;
  Zoo z(o);
  ::testing::internal::CaptureStderr();
  z.fetch_file("m", "f.bin");
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("m/f.bin: 100% (307.2 kB of 307.2 kB"), std::string::npos) << err;
  EXPECT_EQ(err.find('\r'), std::string::npos) << "no bar redraws in non-terminal mode";
}

}  // namespace
}  // namespace skiff::zoo
