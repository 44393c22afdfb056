// Tests of suites/ocr/ctc_decode.h: charset layout, dictionary loading, greedy decode.
#include "suites/ocr/ctc_decode.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "framework/core/error.h"

namespace skiff::ocr {
namespace {
namespace fs = std::filesystem;

struct TempDir {
  TempDir() {
    path = fs::temp_directory_path() / ("skiff_ocr_ctc_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path write(const std::string& name, const std::string& content) const {
    const fs::path p = path / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  fs::path path;
  static inline int n = 0;
};

// [T, C] rows: probability p at index `best`, the rest spread evenly.
std::vector<float> one_hot_rows(const std::vector<int>& best, const std::vector<float>& p, int classes) {
  std::vector<float> out;
  for (std::size_t t = 0; t < best.size(); ++t)
    for (int c = 0; c < classes; ++c) out.push_back(c == best[t] ? p[t] : (1.0f - p[t]) / float(classes - 1));
  return out;
}

TEST(CharsetTest, LayoutIsBlankEntriesSpace) {
  const Charset cs({"a", "b", "c"});
  ASSERT_EQ(cs.size(), 5u);
  EXPECT_EQ(cs.at(0), "");
  EXPECT_EQ(cs.at(1), "a");
  EXPECT_EQ(cs.at(3), "c");
  EXPECT_EQ(cs.at(4), " ");
  EXPECT_EQ(Charset({"a", "b", "c"}, false).size(), 4u);
  EXPECT_THROW(cs.at(5), IndexError);
}

TEST(CharsetTest, LoadsDictionaryLikeCtcLabelDecode) {
  TempDir dir;
  // CRLF is stripped, an empty line stays an (empty) entry, the last line needs no newline.
  const fs::path p = dir.write("keys.txt", "a\nb\r\n\n\xE4\xB8\xAD\n \nd");
  const Charset cs = Charset::load(p);
  ASSERT_EQ(cs.size(), 1u + 6u + 1u);
  EXPECT_EQ(cs.at(1), "a");
  EXPECT_EQ(cs.at(2), "b");
  EXPECT_EQ(cs.at(3), "");
  EXPECT_EQ(cs.at(4), "\xE4\xB8\xAD");  // 中
  EXPECT_EQ(cs.at(5), " ");
  EXPECT_EQ(cs.at(6), "d");
  EXPECT_EQ(cs.at(7), " ");
  EXPECT_EQ(Charset::load(p, false).size(), 7u);
  // A trailing newline does not add an entry.
  EXPECT_EQ(Charset::load(dir.write("k2.txt", "x\ny\n"), false).size(), 3u);
}

TEST(CharsetTest, UnreadableEmptyOrInvalidFilesNameTheFile) {
  TempDir dir;
  const fs::path missing = dir.path / "missing_keys.txt";
  try {
    Charset::load(missing);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("missing_keys.txt"), std::string::npos) << e.what();
  }
  const fs::path empty = dir.write("empty_keys.txt", "");
  try {
    Charset::load(empty);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("empty_keys.txt"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Charset::load(dir.write("bad.txt", "a\n\xFF\xFE\n")), IoError);
}

TEST(CtcDecodeTest, MergesRepeatsAndDropsBlanks) {
  const Charset cs({"a", "b", "c"});
  // argmax: a a _ a b b c _ -> "aabc" (a blank separates the two a's).
  const std::vector<int> best = {1, 1, 0, 1, 2, 2, 3, 0};
  const std::vector<float> p = {0.9f, 0.8f, 0.99f, 0.7f, 0.6f, 0.95f, 0.5f, 0.9f};
  const auto probs = one_hot_rows(best, p, 5);
  const DecodedText d = ctc_greedy_decode(probs.data(), 8, 5, cs);
  EXPECT_EQ(d.text, "aabc");
  // Kept steps 0, 3, 4, 6.
  EXPECT_FLOAT_EQ(d.score, (0.9f + 0.7f + 0.6f + 0.5f) / 4.0f);
}

TEST(CtcDecodeTest, SpaceAndMultibyteCharacters) {
  const Charset cs({"\xE4\xB8\xAD", "x"});  // 中, x, then space at 3
  const auto probs = one_hot_rows({1, 3, 2, 2}, {0.9f, 0.9f, 0.9f, 0.9f}, 4);
  EXPECT_EQ(ctc_greedy_decode(probs.data(), 4, 4, cs).text, "\xE4\xB8\xAD x");
}

TEST(CtcDecodeTest, AllBlankGivesEmptyTextAndZeroScore) {
  const Charset cs({"a", "b"});
  const auto probs = one_hot_rows({0, 0, 0}, {0.99f, 0.99f, 0.99f}, 4);
  const DecodedText d = ctc_greedy_decode(probs.data(), 3, 4, cs);
  EXPECT_EQ(d.text, "");
  EXPECT_EQ(d.score, 0.0f);
  EXPECT_EQ(ctc_greedy_decode(nullptr, 0, 4, cs).text, "");
}

TEST(CtcDecodeTest, TiesPickTheFirstClass) {
  const Charset cs({"a", "b"});
  const std::vector<float> probs = {0.1f, 0.45f, 0.45f, 0.0f};
  EXPECT_EQ(ctc_greedy_decode(probs.data(), 1, 4, cs).text, "a");
}

TEST(CtcDecodeTest, LongSequenceScoreIsTheMean) {
  const Charset cs({"a", "b"});
  std::vector<int> best;
  std::vector<float> p;
  for (int t = 0; t < 200; ++t) {
    best.push_back(1 + t % 2);  // a b a b ... every step kept
    p.push_back(0.5f + 0.002f * float(t));
  }
  const auto probs = one_hot_rows(best, p, 4);
  const DecodedText d = ctc_greedy_decode(probs.data(), 200, 4, cs);
  EXPECT_EQ(d.text.size(), 200u);
  double mean = 0;
  for (float v : p) mean += v;
  mean /= 200;
  EXPECT_NEAR(d.score, mean, 1e-6);
}

TEST(CtcDecodeTest, ClassCountMismatchNamesBothNumbers) {
  const Charset cs({"a", "b", "c"});  // 5 classes
  const std::vector<float> probs(2 * 7, 0.1f);
  try {
    ctc_greedy_decode(probs.data(), 2, 7, cs);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find('7'), std::string::npos) << msg;
    EXPECT_NE(msg.find('5'), std::string::npos) << msg;
  }
  EXPECT_THROW(ctc_greedy_decode(nullptr, 3, 5, cs), ValueError);
}

}  // namespace
}  // namespace skiff::ocr
