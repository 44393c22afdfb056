// Tests of framework/text/subword_tokenizer.h and its steps on small tokenizers written by
// the tests (offline): SentencePiece-style BPE with byte fallback, the Metaspace
// pre-tokenizer, WordPiece with BERT's normalizer, the decoders, load_tokenizer()'s choice
// of kind and the errors for unsupported or malformed files. The real Llama 2, Gemma 3
// and BERT files are in golden_test.cpp.
#include "framework/text/subword_tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/text/tokenizer.h"
#include "framework/text/unicode.h"
#include "tests/temp_dir.h"

namespace skiff::text {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

const std::string kU = "\xE2\x96\x81";  // ▁

fs::path write(const fs::path& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name, std::ios::binary) << text;
  return dir / name;
}

template <typename E, typename F>
void expect_error(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing: " << needle;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// <unk> <s> </s>, the 256 byte tokens <0x00>..<0xFF> (ids 3..258), then pieces.
json sp_vocab(bool byte_tokens = true) {
  json v = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  if (byte_tokens)
    for (int b = 0; b < 256; ++b) v[fmt::format("<0x{:02X}>", b)] = 3 + b;
  int id = 259;
  for (std::string t : {kU, std::string("a"), std::string("b"), kU + "a", kU + "b", std::string("ab"), kU + "ab",
                        std::string("c"), kU + kU})
    v[t] = id++;
  return v;
}
constexpr int32_t kSpace = 259, kA = 260, kB = 261, kSpaceA = 262, kSpaceB = 263, kSpaceAB = 265, kC = 266,
                  kSpaceSpace = 267;
constexpr int32_t byte_id(uint8_t b) { return 3 + b; }

// Llama 2's layout: Prepend("▁") + Replace(" " -> "▁"), no pre-tokenizer, byte fallback.
json llama_like(bool byte_tokens = true) {
  json j;
  j["model"] = {{"type", "BPE"}, {"vocab", sp_vocab(byte_tokens)}, {"unk_token", "<unk>"}, {"byte_fallback", true},
                {"fuse_unk", true}};
  j["model"]["merges"] = json::array({kU + " " + kU, kU + " a", kU + " b", "a b", kU + "a b"});
  json prepend = {{"type", "Prepend"}, {"prepend", kU}};
  json replace = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kU}};
  j["normalizer"] = {{"type", "Sequence"}, {"normalizers", json::array({prepend, replace})}};
  j["pre_tokenizer"] = nullptr;
  json unspace = {{"type", "Replace"}, {"pattern", {{"String", kU}}}, {"content", " "}};
  json strip = {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}};
  j["decoder"] = {{"type", "Sequence"},
                  {"decoders", json::array({unspace, {{"type", "ByteFallback"}}, {{"type", "Fuse"}}, strip})}};
  j["added_tokens"] = json::array();
  for (auto [id, content] : {std::pair{0, "<unk>"}, std::pair{1, "<s>"}, std::pair{2, "</s>"}})
    j["added_tokens"].push_back({{"id", id}, {"content", content}, {"special", true}});
  return j;
}

std::unique_ptr<Tokenizer> load_json(const skiff::testing::TempDir& dir, const json& j) {
  return load_tokenizer(write(dir.path, "tokenizer.json", j.dump()));
}

using Ids = std::vector<int32_t>;

TEST(SubwordTokenizerTest, MetaspaceBpeMergesCharactersLowestRankLeftmostFirst) {
  skiff::testing::TempDir dir;
  auto t = load_json(dir, llama_like());
  EXPECT_EQ(t->kind(), "BPE (byte fallback)");
  // "▁ab▁ab": "▁ a" merges at 0 then 3, then "▁a b" twice.
  EXPECT_EQ(t->encode_ids("ab ab"), (Ids{kSpaceAB, kSpaceAB}));
  // The prepended ▁ covers no input; the space does.
  Encoding e = t->encode("ab ab");
  EXPECT_EQ(e.offsets, (std::vector<Span>{{0, 2}, {2, 5}}));
  EXPECT_EQ(t->decode(e.ids), "ab ab");
}

TEST(SubwordTokenizerTest, ByteFallbackSpellsUnknownCharactersAsBytes) {
  skiff::testing::TempDir dir;
  auto t = load_json(dir, llama_like());
  Encoding e = t->encode("ac\xE2\x82\xAC");  // "ac€": € has no token
  EXPECT_EQ(e.ids, (Ids{kSpaceA, kC, byte_id(0xE2), byte_id(0x82), byte_id(0xAC)}));
  EXPECT_EQ(e.offsets, (std::vector<Span>{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}}));
  EXPECT_EQ(t->decode(e.ids), "ac\xE2\x82\xAC");
  // A byte run that is no UTF-8 decodes to U+FFFD, as TextDecoder.
  EXPECT_EQ(t->decode(Ids{kSpaceA, byte_id(0xE2)}), "a\xEF\xBF\xBD");
  // Without byte tokens: the unknown token, a run of them fused into one.
  auto u = load_json(dir, llama_like(/*byte_tokens=*/false));
  Encoding f = u->encode("a\xE2\x82\xAC\xE2\x82\xAC" "b");
  EXPECT_EQ(f.ids, (Ids{kSpaceA, 0, kB}));
  EXPECT_EQ(f.offsets, (std::vector<Span>{{0, 1}, {1, 7}, {7, 8}}));
}

TEST(SubwordTokenizerTest, PrependAddsToEachStretchAndSpecialTokensDecode) {
  skiff::testing::TempDir dir;
  auto t = load_json(dir, llama_like());
  EXPECT_EQ(t->encode_ids("a<s>a"), (Ids{kSpaceA, 1, kSpaceA}));
  EXPECT_EQ(t->decode(Ids{1, kSpaceA}), "<s> a");
  EXPECT_EQ(t->decode(Ids{1, kSpaceA}, /*skip_special_tokens=*/true), "a");
  EXPECT_EQ(t->token_to_id("<s>"), 1);
  EXPECT_EQ(t->id_to_token(kSpaceAB), kU + "ab");
}

json metaspace_like(const std::string& scheme, bool split) {
  json j = llama_like();
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", kU}, {"prepend_scheme", scheme}, {"split", split}};
  return j;
}

TEST(SubwordTokenizerTest, MetaspacePreTokenizerSchemesAndSplit) {
  skiff::testing::TempDir dir;
  // "a  b" -> "▁a▁▁b". Unsplit, "▁ ▁" (rank 0) merges first; split, each ▁ starts a word.
  EXPECT_EQ(load_json(dir, metaspace_like("always", false))->encode_ids("a  b"), (Ids{kSpaceA, kSpaceSpace, kB}));
  EXPECT_EQ(load_json(dir, metaspace_like("always", true))->encode_ids("a  b"), (Ids{kSpaceA, kSpace, kSpaceB}));
  // "first": only the input's first stretch gets the ▁, not the one after an added token.
  EXPECT_EQ(load_json(dir, metaspace_like("first", false))->encode_ids("a<s>a"), (Ids{kSpaceA, 1, kA}));
  EXPECT_EQ(load_json(dir, metaspace_like("always", false))->encode_ids("a<s>a"), (Ids{kSpaceA, 1, kSpaceA}));
  EXPECT_EQ(load_json(dir, metaspace_like("never", false))->encode_ids("a"), (Ids{kA}));
  json no_prefix = metaspace_like("always", false);
  no_prefix["pre_tokenizer"]["add_prefix_space"] = false;
  EXPECT_EQ(load_json(dir, no_prefix)->encode_ids("a"), (Ids{kA}));
}

// BERT-style WordPiece: [UNK] [CLS] [SEP] then pieces.
json bert_like() {
  json vocab = {{"[UNK]", 0}, {"[CLS]", 1}, {"[SEP]", 2}, {"un", 3},     {"##aff", 4}, {"##able", 5}, {"aff", 6},
                {"able", 7},  {"##a", 8},   {",", 9},     {"hello", 10}, {"##ing", 11}, {"play", 12},  {"##s", 13}};
  return {{"model",
           {{"type", "WordPiece"}, {"vocab", vocab}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"},
            {"max_input_chars_per_word", 100}}},
          {"normalizer",
           {{"type", "BertNormalizer"}, {"clean_text", true}, {"handle_chinese_chars", true},
            {"strip_accents", nullptr}, {"lowercase", true}}},
          {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
          {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
          {"added_tokens", {{{"id", 1}, {"content", "[CLS]"}, {"special", true}}}}};
}

TEST(SubwordTokenizerTest, WordPieceIsGreedyLongestFirstWithContinuations) {
  skiff::testing::TempDir dir;
  auto t = load_json(dir, bert_like());
  EXPECT_EQ(t->kind(), "WordPiece");
  Encoding e = t->encode("Unaffable, playing plays");
  EXPECT_EQ(e.ids, (Ids{3, 4, 5, 9, 12, 11, 12, 13}));
  EXPECT_EQ(e.offsets, (std::vector<Span>{{0, 2}, {2, 5}, {5, 9}, {9, 10}, {11, 15}, {15, 18}, {19, 23}, {23, 24}}));
  EXPECT_EQ(t->decode(e.ids), "unaffable, playing plays");
  // A word with a stretch no piece matches is [UNK] as a whole; so is each ideograph here.
  EXPECT_EQ(t->encode_ids("playx hello \xE4\xBD\xA0\xE5\xA5\xBD"), (Ids{0, 10, 0, 0}));
  // Accents go (NFD, then marks): "Ü" covers its two input bytes.
  Encoding u = t->encode("\xC3\x9Cnaffable");
  EXPECT_EQ(u.ids, (Ids{3, 4, 5}));
  EXPECT_EQ(u.offsets.front(), (Span{0, 3}));
  EXPECT_EQ(t->encode_ids("[CLS] hello"), (Ids{1, 10}));
  EXPECT_EQ(t->decode(Ids{1, 10}, /*skip_special_tokens=*/true), "hello");
  json short_words = bert_like();
  short_words["model"]["max_input_chars_per_word"] = 5;
  EXPECT_EQ(load_json(dir, short_words)->encode_ids("unaffable hello"), (Ids{0, 10}));
}

// UnicodeWords cuts text written without spaces into dictionary words (ICU's word
// boundaries), so a WordPiece vocabulary of whole Thai, Chinese and Japanese words applies.
TEST(SubwordTokenizerTest, UnicodeWordsSegmentsThaiChineseAndJapanese) {
  skiff::testing::TempDir dir;
  const std::vector<std::string> words = {"[UNK]", "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35", "\u0e04\u0e23\u0e31\u0e1a",
                                          "\u6211\u4eec", "\u5728", "\u5317\u4eac", "\u6771\u4eac", "\u306b",
                                          "\u884c\u304d", "\u307e\u3059", "hello", ",", "world's"};
  json vocab = json::object();
  for (size_t i = 0; i < words.size(); ++i) vocab[json::parse("\"" + words[i] + "\"").get<std::string>()] = i;
  json j = {{"model", {{"type", "WordPiece"}, {"vocab", vocab}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"}}},
            {"normalizer", nullptr},
            {"pre_tokenizer", {{"type", "UnicodeWords"}}},
            {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", false}}},
            {"added_tokens", json::array()}};
  auto t = load_json(dir, j);
  // "สวัสดีครับ 我们在北京 東京に行きます hello, world's": every word found, white space dropped.
  const std::string text = json::parse(
      "\"\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31\u0e1a \u6211\u4eec\u5728\u5317\u4eac "
      "\u6771\u4eac\u306b\u884c\u304d\u307e\u3059 hello, world's\"").get<std::string>();
  Encoding e = t->encode(text);
  EXPECT_EQ(e.ids, (Ids{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(e.offsets.front(), (Span{0, 18}));  // สวัสดี: six Thai characters of 3 bytes
  // The same text under BertPreTokenizer cuts no Thai words: one [UNK] for the whole run.
  j["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
  EXPECT_EQ(load_json(dir, j)->encode_ids(text).front(), 0);
}

TEST(SubwordTokenizerTest, BertVocabTxtLoadsWithBertDefaults) {
  skiff::testing::TempDir dir;
  auto t = load_tokenizer(write(dir.path, "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n##s\n,\n"));
  EXPECT_EQ(t->kind(), "WordPiece");
  EXPECT_EQ(t->encode_ids("[CLS] HELLOS, hello [MASK]?"), (Ids{2, 5, 6, 7, 5, 4, 1}));
  EXPECT_EQ(t->decode(Ids{2, 5, 6, 7, 5}), "[CLS] hellos, hello");
  EXPECT_EQ(t->decode(Ids{2, 5, 6, 7, 5}, true), "hellos, hello");
  expect_error<ValueError>([&] { load_tokenizer(write(dir.path, "dup.txt", "[UNK]\na\na\n")); }, "dup.txt: line 3");
  expect_error<ValueError>([&] { load_tokenizer(write(dir.path, "nounk.txt", "a\nb\n")); }, "no [UNK]");
}

TEST(SubwordTokenizerTest, NormalizerSteps) {
  // JavaScript's toLowerCase: final sigma, İ's dot, ß unchanged.
  EXPECT_EQ(js_lowercase("\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3 \xCE\xA3\xCE\x91\xCE\xA3"),
            "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82 \xCF\x83\xCE\xB1\xCF\x82");
  EXPECT_EQ(js_lowercase("\xC4\xB0X\xC3\x9F"), "i\xCC\x87x\xC3\x9F");
  // BertNormalizer: controls and format characters go, white space becomes " ", BMP
  // ideographs get spaces (U+20000 does not: the reference walks UTF-16 units).
  NormalizerStep bert{.kind = NormalizerStep::Kind::Bert};
  AlignedText t = AlignedText::identity("A\x01" "b\xE2\x80\x8D" "c\td\xE4\xBD\xA0\xF0\xA0\x80\x80", 0, true);
  apply_normalizer(bert, t);
  EXPECT_EQ(t.text, "abc d \xE4\xBD\xA0 \xF0\xA0\x80\x80");
  ASSERT_EQ(t.align.size(), t.text.size());
  EXPECT_EQ(t.align[0], (Span{0, 1}));
  EXPECT_EQ(t.align[1], (Span{2, 3}));  // "b" after the dropped \x01
  // StripAccents removes every mark, as the reference (without decomposing).
  AlignedText s = AlignedText::identity("e\xCC\x81\xC3\xA9", 0, false);
  apply_normalizer({.kind = NormalizerStep::Kind::StripAccents}, s);
  EXPECT_EQ(s.text, "e\xC3\xA9");
}

TEST(SubwordTokenizerTest, DecoderSteps) {
  std::vector<std::string> tokens{"  ab ", "c"};
  apply_decoder({.kind = DecoderSpec::Kind::Strip, .content = " ", .start = 1, .stop = 1}, tokens);
  EXPECT_EQ(tokens, (std::vector<std::string>{" ab", "c"}));
  EXPECT_EQ(clean_up_tokenization("do n't , ok . it 's"), "don't, ok. it's");
  std::vector<std::string> bytes{"<0x61>", "<0xC3>", "x", "<0xA9>"};
  apply_decoder({.kind = DecoderSpec::Kind::ByteFallback}, bytes);
  EXPECT_EQ(bytes, (std::vector<std::string>{"a\xEF\xBF\xBD", "x", "\xEF\xBF\xBD"}));
}

TEST(SubwordTokenizerTest, InvalidUtf8NamesTheOffset) {
  skiff::testing::TempDir dir;
  auto t = load_json(dir, llama_like());
  expect_error<ValueError>([&] { t->encode("ab\xFF"); }, "invalid UTF-8 at byte offset 2");
  auto w = load_json(dir, bert_like());
  expect_error<ValueError>([&] { w->encode_ids("hello \xC3"); }, "invalid UTF-8 at byte offset 6");
}

TEST(SubwordTokenizerTest, UnsupportedComponentsNameTheFileAndKey) {
  skiff::testing::TempDir dir;
  json j = llama_like();
  j["pre_tokenizer"] = {{"type", "Digits"}, {"individual_digits", true}};
  expect_error<NotImplementedError>([&] { load_json(dir, j); }, "tokenizer.json: pre_tokenizer: pre-tokenizer type "
                                                                 "'Digits' is not supported");
  j = llama_like();
  j["decoder"]["decoders"][1] = {{"type", "CTC"}};
  expect_error<NotImplementedError>([&] { load_json(dir, j); }, "decoder.decoders[1]: decoder type 'CTC'");
  j = llama_like();
  j["normalizer"]["normalizers"][0] = {{"type", "Precompiled"}};
  expect_error<NotImplementedError>([&] { load_json(dir, j); }, "normalizer type 'Precompiled'");
  j = llama_like();
  j["model"] = {{"type", "Unigram"}, {"vocab", json::array({json::array({"a", -1.0})})}};
  expect_error<NotImplementedError>([&] { load_json(dir, j); }, "model type 'Unigram' is not supported");
  j = bert_like();
  j["model"]["unk_token"] = "<nope>";
  expect_error<ValueError>([&] { load_json(dir, j); }, "unknown token '<nope>' is not in the vocabulary");
  j = llama_like(/*byte_tokens=*/false);
  j["model"].erase("unk_token");
  auto t = load_json(dir, j);
  expect_error<ValueError>([&] { t->encode_ids("\xE2\x82\xAC"); }, "has no token");
  j = llama_like();
  j["model"]["merges"].push_back("a c");
  expect_error<ValueError>([&] { load_json(dir, j); }, "model.merges[5]");
}

TEST(SubwordTokenizerTest, LoadTokenizerPicksTheKindFromTheFile) {
  skiff::testing::TempDir dir;
  EXPECT_EQ(load_json(dir, llama_like())->kind(), "BPE (byte fallback)");
  EXPECT_EQ(load_tokenizer(dir.path)->kind(), "BPE (byte fallback)");  // directory: its tokenizer.json
  // BPE on characters without byte fallback: unknown characters are <unk>.
  json plain = llama_like(/*byte_tokens=*/false);
  plain["model"]["byte_fallback"] = false;
  auto p = load_json(dir, plain);
  EXPECT_EQ(p->kind(), "BPE");
  EXPECT_EQ(p->encode_ids("a\xE2\x82\xAC"), (Ids{kSpaceA, 0}));
  // A ByteLevel step makes it GPT-2's byte-level BPE (and its vocabulary must spell bytes).
  plain["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}};
  expect_error<ValueError>([&] { load_json(dir, plain); }, "a byte-level BPE needs all 256");
  expect_error<ValueError>([&] { load_tokenizer(dir.path / "missing.json"); }, "does not exist");
  fs::create_directories(dir.path / "empty");
  expect_error<ValueError>([&] { load_tokenizer(dir.path / "empty"); }, "holds no tokenizer.json");
  expect_error<IoError>([&] { load_tokenizer(write(dir.path, "bad.model", "not a model")); }, "bad.model");
  expect_error<ValueError>([&] { load_tokenizer(write(dir.path, "x.bin", "")); }, "is not a tokenizer file");
}

}  // namespace
}  // namespace skiff::text
