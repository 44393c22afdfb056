// Tests of framework/text/bpe_tokenizer.h on small tokenizers written by the tests:
// the merge loop, added tokens, offsets, batches and the errors for malformed files.
// The real GPT-2 and Qwen3 files are in golden_test.cpp.
#include "framework/text/bpe_tokenizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/text/unicode.h"

namespace skiff::text {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("skiff_text_test_" + std::to_string(::getpid()) + "_" + std::to_string(n_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return path_ / name;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  static inline int n_ = 0;
};

std::string byte_token(uint8_t b) {
  std::string s;
  append_utf8(s, byte_to_char(b));
  return s;
}

// Bytes 0..255 are ids 0..255; merges add ids from 256 in order.
json tiny_vocab(const std::vector<std::pair<std::string, std::string>>& merges) {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_token(uint8_t(b))] = b;
  int next = 256;
  for (const auto& [l, r] : merges)
    if (!vocab.contains(l + r)) vocab[l + r] = next++;
  return vocab;
}

const std::vector<std::pair<std::string, std::string>> kMerges = {
    {"l", "l"}, {"h", "e"}, {"he", "ll"}, {"hell", "o"}, {"\xC4\xA0", "w"}, {"o", "r"}, {"\xC4\xA0w", "or"},
    {"a", "a"}, {"b", "c"}, {"a", "b"}, {"-", "-"}, {"b", "-"}};

json tiny_tokenizer_json() {
  json merges = json::array();
  for (const auto& [l, r] : kMerges) merges.push_back(l + " " + r);
  return {{"version", "1.0"},
          {"added_tokens",
           json::array({{{"id", 1000}, {"content", "<|end|>"}, {"special", true}},
                        {{"id", 1001}, {"content", "<|end|>!"}, {"special", false}},
                        {{"id", 1002}, {"content", "[L]"}, {"special", true}, {"lstrip", true}, {"rstrip", true}}})},
          {"normalizer", {{"type", "NFC"}}},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers",
             json::array({{{"type", "Split"},
                           {"pattern", {{"Regex", std::string(kGpt2Pattern)}}},
                           {"behavior", "Isolated"},
                           {"invert", false}},
                          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}}},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model", {{"type", "BPE"}, {"vocab", tiny_vocab(kMerges)}, {"merges", merges}}}};
}

BpeTokenizer tiny(const TempDir& dir, const json& j = tiny_tokenizer_json()) {
  return BpeTokenizer::from_tokenizer_json(dir.write("tokenizer.json", j.dump()));
}

std::vector<std::string> tokens(const BpeTokenizer& t, std::string_view text) {
  std::vector<std::string> out;
  for (int32_t id : t.encode_ids(text)) out.push_back(t.id_to_token(id));
  return out;
}

template <typename E>
void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(BpeTokenizerTest, MergesByRankLeftmostFirst) {
  TempDir dir;
  BpeTokenizer t = tiny(dir);
  EXPECT_EQ(tokens(t, "hello world"), (std::vector<std::string>{"hello", "\xC4\xA0wor", "l", "d"}));
  // "aaa": the leftmost "a a" merges first; "abc": "b c" (rank 8) beats "a b" (rank 9).
  EXPECT_EQ(tokens(t, "aaa"), (std::vector<std::string>{"aa", "a"}));
  EXPECT_EQ(tokens(t, "abc"), (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(t.decode(t.encode_ids("hello world")), "hello world");
  EXPECT_EQ(t.encode_ids(""), std::vector<int32_t>{});
}

TEST(BpeTokenizerTest, ScanAndHeapMergeAgree) {
  TempDir dir;
  BpeTokenizer t = tiny(dir);
  for (std::string word : {"hellohellohello", "aaaaaaa", "abcabcaabbcc", "helloworld hello", "x"}) {
    std::vector<int32_t> a, b;
    for (char c : word) a.push_back(t.model().token_to_id(byte_token(uint8_t(c))));
    b = a;
    t.model().merge(a, false);
    t.model().merge(b, true);
    EXPECT_EQ(a, b) << word;
  }
}

TEST(BpeTokenizerTest, AddedTokensAreLongestFirstAndStrip) {
  TempDir dir;
  BpeTokenizer t = tiny(dir);
  EXPECT_EQ(t.encode_ids("<|end|>"), std::vector<int32_t>{1000});
  EXPECT_EQ(t.encode_ids("<|end|>!"), std::vector<int32_t>{1001});  // the longer token wins
  EXPECT_EQ(tokens(t, "he<|end|>ll"), (std::vector<std::string>{"he", "<|end|>", "ll"}));
  // [L] strips the white space on both sides.
  EXPECT_EQ(tokens(t, "he \t [L]  ll"), (std::vector<std::string>{"he", "[L]", "ll"}));
  EXPECT_EQ(t.decode(t.encode_ids("he<|end|>ll")), "he<|end|>ll");
  EXPECT_EQ(t.decode(t.encode_ids("he<|end|>ll<|end|>!"), /*skip_special_tokens=*/true), "hell<|end|>!");
  EXPECT_EQ(t.token_to_id("<|end|>"), 1000);
  EXPECT_EQ(t.vocab_size(), 1003);
}

TEST(BpeTokenizerTest, OffsetsPointIntoTheInput) {
  TempDir dir;
  BpeTokenizer t = tiny(dir);
  // "cafe" + U+0301 is composed by NFC: the token of U+00E9 covers "e" + U+0301.
  const std::string text = "hello <|end|> cafe\xCC\x81!";
  Encoding e = t.encode(text);
  ASSERT_EQ(e.ids.size(), e.offsets.size());
  std::vector<std::string> pieces;
  for (const Span& s : e.offsets) pieces.push_back(text.substr(s.begin, s.end - s.begin));
  EXPECT_EQ(pieces,
            (std::vector<std::string>{"hello", " ", "<|end|>", " ", "c", "a", "f", "e\xCC\x81", "e\xCC\x81", "!"}));
}

TEST(BpeTokenizerTest, ByteLevelPrefixSpaceIsAnEmptyOffset) {
  TempDir dir;
  json j = tiny_tokenizer_json();
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}};
  BpeTokenizer t = tiny(dir, j);
  Encoding e = t.encode("world");
  EXPECT_EQ(tokens(t, "world"), (std::vector<std::string>{"\xC4\xA0wor", "l", "d"}));
  EXPECT_EQ(e.offsets[0], (Span{0, 3}));  // "Ġwor": the added space has no input bytes
  EXPECT_EQ(tokens(t, " world"), tokens(t, "world"));
}

TEST(BpeTokenizerTest, SplitBehaviors) {
  TempDir dir;
  json j = tiny_tokenizer_json();
  auto with = [&](const std::string& behavior, bool invert) {
    j["pre_tokenizer"] = {{"type", "Sequence"},
                          {"pretokenizers",
                           json::array({{{"type", "Split"},
                                         {"pattern", {{"String", "-"}}},
                                         {"behavior", behavior},
                                         {"invert", invert}},
                                        {{"type", "ByteLevel"}, {"use_regex", false}}})}};
    j["added_tokens"] = json::array();
    return tokens(tiny(dir, j), "a--b-c");
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(with("Removed", false), (V{"a", "b", "c"}));
  EXPECT_EQ(with("Isolated", false), (V{"a", "-", "-", "b", "-", "c"}));
  // Pieces "a-", "-", "b-", "c" (Hugging Face merges only the first of two delimiters).
  EXPECT_EQ(with("MergedWithPrevious", false), (V{"a", "-", "-", "b-", "c"}));
  // Pieces "a", "--", "b", "-", "c".
  EXPECT_EQ(with("Contiguous", false), (V{"a", "--", "b", "-", "c"}));
  EXPECT_EQ(with("Removed", true), (V{"-", "-", "-"}));
}

TEST(BpeTokenizerTest, BatchesTruncateAndPad) {
  TempDir dir;
  BpeTokenizer t = tiny(dir);
  std::vector<std::string> texts = {"hello world", "aaa", ""};
  BatchEncoding b = t.encode_batch(texts, {.max_length = 3, .pad = true, .pad_id = 1000});
  ASSERT_EQ(b.ids.size(), 3u);
  EXPECT_EQ(b.ids[0], (std::vector<int32_t>{t.token_to_id("hello"), t.token_to_id("\xC4\xA0wor"), t.token_to_id("l")}));
  EXPECT_EQ(b.ids[1], (std::vector<int32_t>{t.token_to_id("aa"), t.token_to_id("a"), 1000}));
  EXPECT_EQ(b.ids[2], (std::vector<int32_t>{1000, 1000, 1000}));
  EXPECT_EQ(b.attention_mask[1], (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ(b.attention_mask[2], (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_THROW(t.encode_batch(texts, {.pad = true}), ValueError);
  std::vector<std::string> bad = {"ok", "bad \xFF"};
  expect_error<ValueError>([&] { t.encode_batch(bad); }, "text 1");
}

TEST(BpeTokenizerTest, InvalidUtf8NamesTheOffset) {
  TempDir dir;
  BpeTokenizer t = tiny(dir);
  expect_error<ValueError>([&] { t.encode("hello \xC3("); }, "invalid UTF-8 at byte offset 6 (byte 0xC3)");
}

TEST(BpeTokenizerTest, DecodeReplacesSplitCharactersAndRejectsUnknownIds) {
  TempDir dir;
  BpeTokenizer t = tiny(dir);
  std::vector<int32_t> ids = t.encode_ids("\xE4\xB8\xAD");  // three byte tokens
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(t.decode(ids), "\xE4\xB8\xAD");
  EXPECT_EQ(t.decode(std::vector<int32_t>(ids.begin(), ids.begin() + 2)), "\xEF\xBF\xBD");
  std::vector<int32_t> unknown = {999999};
  expect_error<IndexError>([&] { t.decode(unknown); }, "999999");
  expect_error<IndexError>([&] { t.id_to_token(-1); }, "-1");
}

TEST(BpeTokenizerTest, MalformedTokenizerJsonNamesFileAndKey) {
  TempDir dir;
  expect_error<ValueError>([&] { BpeTokenizer::from_tokenizer_json(dir.write("a.json", "{not json")); },
                           "a.json: not valid JSON");
  json j = tiny_tokenizer_json();
  j["model"].erase("merges");
  expect_error<ValueError>([&] { tiny(dir, j); }, "tokenizer.json: missing key 'model.merges'");
  j = tiny_tokenizer_json();
  j["model"]["merges"][3] = "nospace";
  expect_error<ValueError>([&] { tiny(dir, j); }, "model.merges[3]: expected \"left right\"");
  j = tiny_tokenizer_json();
  j["model"]["merges"][2] = "zz q";
  expect_error<ValueError>([&] { tiny(dir, j); }, "model.merges[2]: merge 'zz q': 'zz' is not in the vocabulary");
  j = tiny_tokenizer_json();
  j["model"]["vocab"]["h"] = "x";
  expect_error<ValueError>([&] { tiny(dir, j); }, "model.vocab: token 'h' has id \"x\"");
  j = tiny_tokenizer_json();
  j["model"]["vocab"]["h"] = json::array({1});
  expect_error<ValueError>([&] { tiny(dir, j); }, "model.vocab: token 'h' has id [...]");
  j = tiny_tokenizer_json();
  j["model"]["vocab"] = json::array();
  expect_error<ValueError>([&] { tiny(dir, j); }, "model: 'vocab' must be an object");
  j = tiny_tokenizer_json();
  j["model"]["merges"] = json::array({json::array({"h", "e"}), json::array({"l", 2})});
  expect_error<ValueError>([&] { tiny(dir, j); }, "model.merges[1]: expected \"left right\"");
  j = tiny_tokenizer_json();
  j["added_tokens"][0]["id"] = "x";
  expect_error<ValueError>([&] { tiny(dir, j); }, "added_tokens[0]: 'id' must be a non-negative integer");
  j = tiny_tokenizer_json();
  j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways";
  expect_error<ValueError>([&] { tiny(dir, j); }, "pre_tokenizer.pretokenizers[0]: unknown Split behavior 'Sideways'");
  j = tiny_tokenizer_json();
  j["model"]["vocab"].erase(byte_token('q'));
  expect_error<ValueError>([&] { tiny(dir, j); }, "no token for byte 0x71");
}

TEST(BpeTokenizerTest, UnsupportedComponentsAreNotImplemented) {
  TempDir dir;
  json j = tiny_tokenizer_json();
  j["normalizer"] = {{"type", "Lowercase"}};
  expect_error<NotImplementedError>([&] { tiny(dir, j); }, "normalizer type 'Lowercase' is not supported");
  j = tiny_tokenizer_json();
  j["model"]["type"] = "WordPiece";
  expect_error<NotImplementedError>([&] { tiny(dir, j); }, "model type 'WordPiece'");
  j = tiny_tokenizer_json();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", " "}}}, {"behavior", "Removed"}};
  expect_error<NotImplementedError>([&] { tiny(dir, j); }, "no ByteLevel step");
}

TEST(BpeTokenizerTest, Gpt2FilesAndBadMergeLines) {
  TempDir dir;
  dir.write("encoder.json", tiny_vocab(kMerges).dump());
  std::string merges = "#version: 0.2\n";
  for (const auto& [l, r] : kMerges) merges += l + " " + r + "\n";
  dir.write("vocab.bpe", merges);
  BpeTokenizer t = BpeTokenizer::load(dir.path());
  EXPECT_EQ(tokens(t, "hello world"), (std::vector<std::string>{"hello", "\xC4\xA0wor", "l", "d"}));
  EXPECT_EQ(tokens(BpeTokenizer::load(dir.path() / "encoder.json"), "hello"), (std::vector<std::string>{"hello"}));
  dir.write("vocab.bpe", "#version: 0.2\nl l\nh e x\n");
  expect_error<ValueError>([&] { BpeTokenizer::load(dir.path()); },
                           "vocab.bpe: line 3: expected two tokens separated by one space, got 'h e x'");
  dir.write("vocab.bpe", "#version: 0.2\nl l\n\nh q9\n");
  expect_error<ValueError>([&] { BpeTokenizer::load(dir.path()); }, "vocab.bpe: line 4: merge 'h q9'");
  expect_error<ValueError>([&] { BpeTokenizer::load(dir.path() / "missing.json"); }, "missing.json' does not exist");
  TempDir empty;
  expect_error<ValueError>([&] { BpeTokenizer::load(empty.path()); }, "holds neither tokenizer.json");
}

}  // namespace
}  // namespace skiff::text
