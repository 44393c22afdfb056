// The decoder recipes' parts: text documents and their split, config.json written back,
// and streaming text of tokenizers without byte-level BPE (SentencePiece byte pieces).

#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "framework/io/file.h"
#include "framework/text/sentencepiece_tokenizer.h"
#include "framework/text/unicode.h"
#include "suites/nlp/decoder/text_documents.h"
#include "suites/nlp/llama/config.h"
#include "suites/nlp/llama/streamer.h"
#include "tests/temp_dir.h"

namespace skiff::nlp {
namespace {

namespace fs = std::filesystem;

TEST(TextDocumentsTest, CutsAtSeparatorLinesAndTrimsBlankLines) {
  skiff::testing::TempDir dir;
  io::write_file_atomic(dir.path / "jokes", "a\n%\n\n\tindented line\nsecond  \n\n%\n%\r\nlast");
  auto docs = read_text_documents({dir.path / "jokes"}, "%");
  EXPECT_EQ(docs, (std::vector<std::string>{"a", "\tindented line\nsecond", "last"}));
  // No separator: each file is one document.
  EXPECT_EQ(read_text_documents({dir.path / "jokes"}, "").size(), 1u);
}

TEST(TextDocumentsTest, ADirectoryIsItsPlainFilesSortedMinusTheExcluded) {
  skiff::testing::TempDir dir;
  io::write_file_atomic(dir.path / "b", "two\n%\nthree\n");
  io::write_file_atomic(dir.path / "a", "one\n");
  io::write_file_atomic(dir.path / "a.dat", "index, not text");
  io::write_file_atomic(dir.path / "skipme", "excluded\n");
  fs::create_symlink(dir.path / "a", dir.path / "a_link");
  auto docs = read_text_documents({dir.path}, "%", {"skipme"});
  EXPECT_EQ(docs, (std::vector<std::string>{"one", "two", "three"}));
  // Invalid UTF-8 becomes U+FFFD rather than failing the tokenizer later.
  io::write_file_atomic(dir.path / "bad", "caf\xE9\n");
  EXPECT_EQ(read_text_documents({dir.path / "bad"}, "%"), (std::vector<std::string>{"caf\xEF\xBF\xBD"}));
}

TEST(TextDocumentsTest, ErrorsNameThePath) {
  skiff::testing::TempDir dir;
  try {
    read_text_documents({dir.path / "absent"}, "%");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("absent does not exist"), std::string::npos) << e.what();
  }
  io::write_file_atomic(dir.path / "empty", "%\n\n%\n");
  EXPECT_THROW(read_text_documents({dir.path / "empty"}, "%"), ValueError);
}

TEST(TextDocumentsTest, SplitIsSeededDisjointAndComplete) {
  std::vector<std::string> docs;
  for (int i = 0; i < 100; ++i) docs.push_back("doc " + std::to_string(i));
  DocumentSplit a = split_documents(docs, 0.1, 7), b = split_documents(docs, 0.1, 7), c = split_documents(docs, 0.1, 8);
  EXPECT_EQ(a.eval.size(), 10u);
  EXPECT_EQ(a.train.size(), 90u);
  EXPECT_EQ(a.eval, b.eval);
  EXPECT_NE(a.eval, c.eval);
  std::set<std::string> all(a.train.begin(), a.train.end());
  all.insert(a.eval.begin(), a.eval.end());
  EXPECT_EQ(all.size(), 100u);
  EXPECT_THROW(split_documents({"only one"}, 0.1, 1), ValueError);
  EXPECT_THROW(split_documents(docs, 1.0, 1), ValueError);
}

TEST(LlamaConfigTest, ToJsonReadsBackTheSameConfig) {
  LlamaConfig c;
  c.vocab_size = 400;
  c.hidden_size = 64;
  c.intermediate_size = 128;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.rms_norm_eps = 1e-5;
  c.rope_theta = 5000;
  c.max_position_embeddings = 32;
  c.tie_word_embeddings = true;
  c.bos_token_ids = {1};
  c.eos_token_ids = {2};
  LlamaConfig d = LlamaConfig::from_json(c.to_json());
  EXPECT_EQ(d.vocab_size, 400);
  EXPECT_EQ(d.num_key_value_heads, 2);
  EXPECT_EQ(d.head_dim, 16);
  EXPECT_EQ(d.rms_norm_eps, 1e-5);
  EXPECT_EQ(d.rope_theta, 5000);
  EXPECT_EQ(d.max_position_embeddings, 32);
  EXPECT_TRUE(d.tie_word_embeddings);
  EXPECT_EQ(d.bos_token_ids, (std::vector<int64_t>{1}));
  EXPECT_EQ(d.eos_token_ids, (std::vector<int64_t>{2}));
}

TEST(StreamerTest, DecodeStreamerOnASentencePieceModelWithBytePieces) {
  skiff::testing::TempDir dir;
  std::string corpus;
  for (int i = 0; i < 50; ++i) corpus += "the quick brown fox jumps over the lazy dog number " + std::to_string(i) + "\n";
  io::write_file_atomic(dir.path / "corpus.txt", corpus);
  text::SentencePieceTrainOptions o;
  o.inputs = {dir.path / "corpus.txt"};
  o.output = dir.path / "sp.model";
  o.vocab_size = 340;  // 256 byte pieces, the characters, a few merges
  o.model_type = "bpe";
  o.byte_fallback = true;
  o.normalization = "identity";
  text::train_sentencepiece(o);
  text::SentencePieceTokenizer tok(o.output);
  // Chinese, an emoji and a newline are not in the vocabulary: they arrive as byte pieces.
  const std::string text = "the fox \xE4\xB8\x96\xE7\x95\x8C\n\xF0\x9F\x98\x80 dog";
  std::vector<int32_t> ids = tok.encode_ids(text);
  DecodeStreamer st(tok);
  std::string out;
  for (int32_t id : ids) {
    std::string piece = st.push(id);
    EXPECT_EQ(text::find_invalid_utf8(piece), std::string::npos);
    EXPECT_EQ(piece.find("\xEF\xBF\xBD"), std::string::npos) << "a character is printed only once complete";
    out += piece;
  }
  out += st.flush();
  EXPECT_EQ(out, tok.decode(ids, true));
  EXPECT_EQ(out, text);

  // After a prompt, a continuation keeps the space SentencePiece drops at a text's start.
  std::vector<int32_t> the_fox = tok.encode_ids("the fox"), prompt(the_fox.begin(), the_fox.begin() + 1);
  ASSERT_EQ(tok.decode(prompt), "the");
  std::vector<int32_t> rest(the_fox.begin() + 1, the_fox.end());
  DecodeStreamer after(tok, true, prompt);
  std::string continued;
  for (int32_t id : rest) continued += after.push(id);
  continued += after.flush();
  EXPECT_EQ(continued, " fox");
  EXPECT_EQ(continuation_text(tok, prompt, rest), " fox");
  EXPECT_EQ(tok.decode(rest), "fox");  // what decoding the new tokens alone gives
}

}  // namespace
}  // namespace skiff::nlp
