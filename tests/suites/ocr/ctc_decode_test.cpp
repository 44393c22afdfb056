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

// Word spaces (WordSpaceParams): a 6-class charset {blank, a, b, 中, 国, space}. Each step
// is the argmax class at 0.9 with, on blank steps, the given probability of the space
// class; the rest of the mass is spread over the other classes.
constexpr int kW = 6, kSpace = 5;
const Charset& word_charset() {
  static const Charset cs({"a", "b", "\xE4\xB8\xAD", "\xE5\x9B\xBD"});  // a b 中 国, then space
  return cs;
}
std::vector<float> word_rows(const std::vector<int>& best, const std::vector<float>& space) {
  std::vector<float> out;
  for (std::size_t t = 0; t < best.size(); ++t) {
    const float sp = best[t] == kSpace ? 0.9f : space[t];
    const float rest = (1.0f - 0.9f - (best[t] == kSpace ? 0.0f : sp)) / float(kW - 2);
    for (int c = 0; c < kW; ++c) out.push_back(c == best[t] ? 0.9f : c == kSpace ? sp : rest);
  }
  return out;
}
std::string with_spaces(const std::vector<int>& best, const std::vector<float>& space) {
  const auto probs = word_rows(best, space);
  const CtcAlignment a = ctc_greedy_align(probs.data(), int(best.size()), kW, word_charset());
  const DecodedText greedy = ctc_greedy_decode(probs.data(), int(best.size()), kW, word_charset());
  EXPECT_EQ(ctc_text(a, word_charset()).text, greedy.text);
  return ctc_text(a, word_charset(), WordSpaceParams{}).text;
}

TEST(CtcWordSpacesTest, AlignmentRecordsEachCharactersRunAndTheSpaceClass) {
  // a a _ b _ _ a: runs [0, 1], [3, 3], [6, 6].
  const auto probs = word_rows({1, 1, 0, 2, 0, 0, 1}, {0, 0, 0.2f, 0, 0, 0.03f, 0});
  const CtcAlignment a = ctc_greedy_align(probs.data(), 7, kW, word_charset());
  ASSERT_EQ(a.chars.size(), 3u);
  EXPECT_EQ(a.chars[0].cls, 1);
  EXPECT_EQ(a.chars[0].first, 0);
  EXPECT_EQ(a.chars[0].last, 1);
  EXPECT_EQ(a.chars[1].first, 3);
  EXPECT_EQ(a.chars[2].last, 6);
  EXPECT_EQ(word_charset().space(), kSpace);
  ASSERT_EQ(a.space_probs.size(), 7u);
  EXPECT_FLOAT_EQ(a.space_probs[2], 0.2f);
  EXPECT_EQ(Charset({"a"}, false).space(), -1);
}

TEST(CtcWordSpacesTest, SpaceClassEvidenceInTheBlankGapGivesASpace) {
  // a _ b: the blank won the gap, but the space class has 0.05 there.
  EXPECT_EQ(with_spaces({1, 0, 2}, {0, 0.05f, 0}), "a b");
  // Below min_space_prob at a gap no wider than the others: no space.
  EXPECT_EQ(with_spaces({1, 0, 2}, {0, 0.005f, 0}), "ab");
}

TEST(CtcWordSpacesTest, WideBlankGapGivesASpaceNarrowOneDoesNot) {
  // Pitch 2 (a _ b _ a _); the last gap is 5 steps, 2.5 times the pitch. With weak
  // space evidence (0.003, below min_space_prob) the wide gap gets a space...
  const std::vector<int> wide = {1, 0, 2, 0, 1, 0, 0, 0, 0, 2};
  const std::vector<float> weak = {0, 0, 0, 0, 0, 0, 0.003f, 0, 0, 0};
  EXPECT_EQ(with_spaces(wide, weak), "aba b");
  // ...the same evidence in a gap of the usual width does not...
  EXPECT_EQ(with_spaces({1, 0, 2, 0, 1, 0, 2}, {0, 0, 0, 0, 0, 0.003f, 0}), "abab");
  // ...and width without any space evidence does not either.
  EXPECT_EQ(with_spaces(wide, std::vector<float>(10, 0.0f)), "abab");
}

TEST(CtcWordSpacesTest, NeverNextToCjkCharacters) {
  // 中 _ _ _ _ a, a _ _ _ _ 国, 中 _ _ _ _ 国: wide gaps with strong space evidence.
  const std::vector<float> strong = {0, 0.3f, 0.3f, 0.3f, 0.3f, 0};
  EXPECT_EQ(with_spaces({3, 0, 0, 0, 0, 1}, strong), "\xE4\xB8\xAD" "a");
  EXPECT_EQ(with_spaces({1, 0, 0, 0, 0, 4}, strong), "a\xE5\x9B\xBD");
  EXPECT_EQ(with_spaces({3, 0, 0, 0, 0, 4}, strong), "\xE4\xB8\xAD\xE5\x9B\xBD");
  // In a mixed line only the Latin pair gets one: 中 a _ b.
  EXPECT_EQ(with_spaces({3, 1, 0, 2}, {0, 0, 0.3f, 0}), "\xE4\xB8\xAD" "a b");
}

TEST(CtcWordSpacesTest, ExistingSpacesAreNotDoubled) {
  // a _ ' ' _ b with space evidence on the blanks beside the decoded space.
  EXPECT_EQ(with_spaces({1, 0, kSpace, 0, 2}, {0, 0.3f, 0, 0.3f, 0}), "a b");
  EXPECT_EQ(with_spaces({1, kSpace, kSpace, 2}, {0, 0, 0, 0}), "a b");
}

TEST(CtcWordSpacesTest, ScoreIsTheGreedyScore) {
  const auto probs = word_rows({1, 0, 2, 0, 0, 1}, {0, 0.3f, 0, 0.3f, 0.3f, 0});
  const CtcAlignment a = ctc_greedy_align(probs.data(), 6, kW, word_charset());
  const DecodedText plain = ctc_greedy_decode(probs.data(), 6, kW, word_charset());
  const DecodedText spaced = ctc_text(a, word_charset(), WordSpaceParams{});
  EXPECT_EQ(spaced.text, "a b a");
  EXPECT_EQ(spaced.score, plain.score);
}

TEST(CtcWordSpacesTest, NoSpaceClassNoRestoredSpaces) {
  const Charset cs({"a", "b"}, false);
  // a _ b with every other class at 0.05: nothing says "space".
  const std::vector<float> probs = {0.9f, 0.05f, 0.05f, 0.05f, 0.9f, 0.05f, 0.05f, 0.05f, 0.9f};
  EXPECT_EQ(ctc_text(ctc_greedy_align(probs.data(), 3, 3, cs), cs, WordSpaceParams{}).text, "ab");
}

}  // namespace
}  // namespace skiff::ocr
