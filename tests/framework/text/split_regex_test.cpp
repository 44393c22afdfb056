// Tests of framework/text/split_regex.h: the hand-written matchers against ICU's
// engine (the oracle) on the golden corpus and on random strings, and hand-checked
// splits that pin the ECMAScript semantics.
#include "framework/text/split_regex.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "framework/core/error.h"
#include "framework/text/unicode.h"

namespace skiff::text {
namespace {

const std::string kQwenPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::vector<std::string> corpus() {
  std::ifstream f(std::string(SKIFF_SOURCE_DIR) + "/tests/data/tokenizers/corpus.json");
  EXPECT_TRUE(f.good()) << "tests/data/tokenizers/corpus.json is missing";
  nlohmann::json j = nlohmann::json::parse(f);
  return j.at("texts").get<std::vector<std::string>>();
}

std::vector<std::string> split(const SplitRegex& re, std::string_view text) {
  std::vector<Span> spans;
  re.find_all(text, spans);
  std::vector<std::string> out;
  for (const Span& s : spans) out.emplace_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

using Pieces = std::vector<std::string>;

TEST(SplitRegexTest, KnownPatternsGetHandWrittenMatchers) {
  EXPECT_TRUE(SplitRegex(std::string(kGpt2Pattern)).hand_written());
  EXPECT_TRUE(SplitRegex(kQwenPattern).hand_written());
  EXPECT_TRUE(SplitRegex(kLlama3Pattern).hand_written());
  EXPECT_FALSE(SplitRegex(R"(\p{N}{1,4})").hand_written());
  EXPECT_FALSE(SplitRegex(kQwenPattern, SplitRegex::Engine::Icu).hand_written());
}

TEST(SplitRegexTest, Gpt2Splits) {
  SplitRegex re{std::string(kGpt2Pattern)};
  EXPECT_EQ(split(re, "I'll've gone, OK'S?"), (Pieces{"I", "'ll", "'ve", " gone", ",", " OK", "'", "S", "?"}));
  EXPECT_EQ(split(re, "a   b\n\n c  "), (Pieces{"a", "  ", " b", "\n\n", " c", "  "}));
  EXPECT_EQ(split(re, "x 123 4.5"), (Pieces{"x", " 123", " 4", ".", "5"}));
  EXPECT_EQ(split(re, "\t x"), (Pieces{"\t", " x"}));
  EXPECT_EQ(split(re, ""), Pieces{});
}

TEST(SplitRegexTest, Cl100kSplits) {
  SplitRegex qwen{kQwenPattern}, llama{kLlama3Pattern};
  // Contractions ignore ASCII case; digits go one (Qwen) or three (Llama 3) at a time.
  EXPECT_EQ(split(qwen, "I'LL've 12345"), (Pieces{"I", "'LL", "'ve", " ", "1", "2", "3", "4", "5"}));
  EXPECT_EQ(split(llama, "12345"), (Pieces{"123", "45"}));
  EXPECT_EQ(split(qwen, "x'LLama 'Sup"), (Pieces{"x", "'LL", "ama", " '", "Sup"}));
  // One non-letter may lead a word; punctuation keeps its newlines; a white-space run
  // ends after its last newline.
  EXPECT_EQ(split(qwen, "\tfoo (bar)\n\n  \n  baz"), (Pieces{"\tfoo", " (", "bar", ")\n\n", "  \n", " ", " baz"}));
  EXPECT_EQ(split(qwen, "x\r\n\r\ny"), (Pieces{"x", "\r\n\r\n", "y"}));
  // The long s folds to "s" under Unicode case folding, but not in the JavaScript rewrite.
  EXPECT_EQ(split(qwen, "it'\xC5\xBF"), (Pieces{"it", "'\xC5\xBF"}));
}

TEST(SplitRegexTest, IcuPatternsMeanWhatJavaScriptMeans) {
  // \s includes U+000B and U+FEFF as in ECMAScript; ICU alone would not match them.
  SplitRegex space{R"(\s+)"};
  EXPECT_EQ(split(space, "a\v\xEF\xBB\xBF b"), (Pieces{"\v\xEF\xBB\xBF "}));
  SplitRegex not_space{R"([^\s]+|\S)"};
  EXPECT_EQ(split(not_space, "a\vb"), (Pieces{"a", "b"}));
  EXPECT_EQ(js_pattern_for_icu(R"(\\s)"), R"(\\s)");  // an escaped backslash stays
  EXPECT_THROW(SplitRegex("(unclosed"), ValueError);
}

// The oracle: every corpus text and every suffix of it splits the same way with the
// hand-written matcher and with ICU running the same pattern.
TEST(SplitRegexTest, HandWrittenMatchersAgreeWithIcuOnTheCorpus) {
  const auto texts = corpus();
  ASSERT_GT(texts.size(), 50u);
  for (const std::string& pattern : {std::string(kGpt2Pattern), kQwenPattern, kLlama3Pattern}) {
    SplitRegex fast{pattern}, icu{pattern, SplitRegex::Engine::Icu};
    ASSERT_TRUE(fast.hand_written());
    for (size_t i = 0; i < texts.size(); ++i) {
      std::vector<Span> a, b;
      fast.find_all(texts[i], a);
      icu.find_all(texts[i], b);
      EXPECT_EQ(a, b) << "pattern " << pattern << ", corpus text " << i;
    }
  }
}

// Random strings over an alphabet of class boundaries: letters, digits, apostrophes,
// every kind of white space, newlines, punctuation, combining marks and emoji.
TEST(SplitRegexTest, HandWrittenMatchersAgreeWithIcuOnRandomStrings) {
  const std::vector<std::string> alphabet = {
      "a", "Z", "s", "S", "l", "L", "e", "v", "d", "\xC3\xA9", "\xE4\xB8\xAD", "1", "\xD9\xA3", "\xC2\xBD", "'",
      " ", " ", "\t", "\n", "\r", "\v", "\xC2\xA0", "\xE3\x80\x80", "\xEF\xBB\xBF", ".", "!", "(", "\xCC\x81",
      "\xF0\x9F\x91\x8D", "_", "\xE2\x80\xA8"};
  std::mt19937 rng(20);
  for (const std::string& pattern : {std::string(kGpt2Pattern), kQwenPattern, kLlama3Pattern}) {
    SplitRegex fast{pattern}, icu{pattern, SplitRegex::Engine::Icu};
    for (int trial = 0; trial < 3000; ++trial) {
      std::string text;
      int len = int(rng() % 12);
      for (int k = 0; k < len; ++k) text += alphabet[rng() % alphabet.size()];
      std::vector<Span> a, b;
      fast.find_all(text, a);
      icu.find_all(text, b);
      ASSERT_EQ(a, b) << "pattern " << pattern << ", text '" << text << "'";
    }
  }
}

}  // namespace
}  // namespace skiff::text
