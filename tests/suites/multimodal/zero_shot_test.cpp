// Captions as token rows with mm synth's vocabulary, and zero-shot class embeddings.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/ops/ops.h"
#include "suites/multimodal/synth.h"
#include "suites/multimodal/zero_shot.h"
#include "tests/temp_dir.h"

namespace skiff::multimodal {
namespace {

struct SynthVocab {
  skiff::testing::TempDir tmp;
  std::unique_ptr<text::Tokenizer> tok;
  SynthVocab() {
    write_synth_mm_dataset((tmp.path / "mm").string(), {.train = 60, .val = 0, .heldout = 10}, 1, 32);
    tok = text::load_tokenizer(tmp.path / "mm" / "vocab.txt");
  }
};

TEST(TokenizeCaptions, EndTokenPaddingAndCut) {
  SynthVocab v;
  const auto [end, pad] = end_and_pad_ids(*v.tok);
  const int32_t a = v.tok->token_to_id("a"), red = v.tok->token_to_id("red"), star = v.tok->token_to_id("star");
  ASSERT_GE(a, 0);
  const std::vector<std::string> caps{"a red star", "A  Red,  STAR in two", "a"};
  const CaptionTokens t = tokenize_captions(*v.tok, caps, 5, end, pad);
  ASSERT_EQ(t.ids.shape(), (Shape{3, 5}));
  const auto ids = t.ids.to_vector<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(ids.begin(), ids.begin() + 5), (std::vector<int64_t>{a, red, star, end, pad}));
  // Lower-cased; BERT's pre-tokenizer makes "," a token of its own ([UNK] here); cut to 4 tokens
  // ("in two" dropped), then the end token.
  EXPECT_EQ(std::vector<int64_t>(ids.begin() + 5, ids.begin() + 10),
            (std::vector<int64_t>{a, red, v.tok->token_to_id("[UNK]"), star, end}));
  EXPECT_EQ(std::vector<int64_t>(ids.begin() + 10, ids.end()), (std::vector<int64_t>{a, end, pad, pad, pad}));
  const auto p = t.pad.to_vector<bool>();
  EXPECT_EQ(std::vector<bool>(p.begin() + 10, p.end()), (std::vector<bool>{false, false, true, true, true}));
  EXPECT_THROW(tokenize_captions(*v.tok, caps, 1, end, pad), ValueError);
}

TEST(TokenizeCaptions, EverySynthCaptionWordIsInTheVocabulary) {
  SynthVocab v;
  const int32_t unk = v.tok->token_to_id("[UNK]");
  for (const char* split : {"train", "heldout"}) {
    const auto doc = nlohmann::json::parse(std::ifstream(v.tmp.path / "mm" / (std::string("captions_") + split + ".json")));
    for (const auto& ann : doc["annotations"])
      for (int32_t id : v.tok->encode_ids(ann["caption"].get<std::string>())) EXPECT_NE(id, unk) << ann["caption"];
  }
  for (const std::string& t : default_prompt_templates())
    for (int32_t id : v.tok->encode_ids(t.substr(0, t.find("{}")))) EXPECT_NE(id, unk) << t;
}

TEST(ClassEmbeddings, NormalisedMeanOverTemplates) {
  SynthVocab v;
  ClipConfig c;
  c.image_size = 16, c.patch_size = 8, c.vision_width = 32, c.vision_layers = 1, c.vision_heads = 2;
  c.vocab_size = v.tok->vocab_size(), c.context_length = 8, c.text_width = 32, c.text_layers = 1, c.text_heads = 2;
  c.embed_dim = 16;
  ClipModel m(c);
  const std::vector<std::string> classes{"red star", "blue circle", "green cross"}, templates{"a {}", "one {}"};
  const Tensor e = class_embeddings(m, *v.tok, classes, templates);
  ASSERT_EQ(e.shape(), (Shape{3, 16}));
  // Class 1 by hand: the two prompts' unit embeddings, averaged, normalised.
  const auto [end, pad] = end_and_pad_ids(*v.tok);
  const std::vector<std::string> prompts{"a blue circle", "one blue circle"};
  const CaptionTokens t = tokenize_captions(*v.tok, prompts, 8, end, pad);
  const Tensor expected = l2_normalize(mean(m.encode_text(t.ids, t.pad), {0}));
  EXPECT_LT(amax(abs(sub(select(e, 0, 1), expected))).item<double>(), 1e-5);
  EXPECT_LT(amax(abs(sub(norm(e, 2.0, {1}), 1.0))).item<double>(), 1e-5);
  // "a {}" before a vowel reads "an {}", as the captions do.
  const CaptionTokens an = tokenize_captions(*v.tok, std::vector<std::string>{"an orange star"}, 8, end, pad);
  EXPECT_LT(amax(abs(sub(select(class_embeddings(m, *v.tok, {"orange star"}, {"a {}"}), 0, 0),
                         select(m.encode_text(an.ids, an.pad), 0, 0))))
                .item<double>(),
            1e-5);
  EXPECT_THROW(class_embeddings(m, *v.tok, classes, {"no placeholder"}), ValueError);
  EXPECT_THROW(class_embeddings(m, *v.tok, {}, templates), ValueError);
}

}  // namespace
}  // namespace skiff::multimodal
