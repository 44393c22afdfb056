// Tests of framework/text/sentencepiece_tokenizer.h: training a model with libsentencepiece
// on text in the repository (docs/*.md), then the trained model's round trip, its
// determinism, its ids against the `spm_encode` command-line tool (Debian sentencepiece),
// and the errors for bad inputs.
#include "framework/text/sentencepiece_tokenizer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "framework/core/error.h"
#include "framework/io/file.h"
#include "tests/temp_dir.h"

namespace skiff::text {
namespace {
namespace fs = std::filesystem;

const fs::path kSource = SKIFF_SOURCE_DIR;

std::vector<std::string> lines_of(const fs::path& file) {
  std::vector<std::string> out;
  std::istringstream in(io::read_file(file));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

SentencePieceTrainOptions docs_options(const fs::path& output) {
  SentencePieceTrainOptions o;
  o.inputs = {kSource / "docs/nlp.md", kSource / "docs/nlp.zh.md", kSource / "docs/design.md"};
  o.output = output;
  o.vocab_size = 1000;
  o.character_coverage = 0.98;  // rare characters become byte pieces
  o.byte_fallback = true;
  o.normalization = "identity";
  o.remove_extra_whitespaces = false;
  return o;
}

// One trained model for the tests that only read it.
const fs::path& trained_model() {
  static skiff::testing::TempDir dir;
  static const fs::path model = [] {
    fs::path m = dir.path / "docs.model";
    train_sentencepiece(docs_options(m));
    return m;
  }();
  return model;
}

TEST(SentencePieceTest, TrainedModelRoundTripsItsCorpus) {
  SentencePieceTokenizer t(trained_model());
  EXPECT_EQ(t.vocab_size(), 1000);
  EXPECT_EQ(t.kind(), "SentencePiece");
  EXPECT_TRUE(fs::exists(fs::path(trained_model()).replace_extension(".vocab")));
  size_t n = 0, tokens = 0;
  for (const char* doc : {"docs/nlp.md", "docs/nlp.zh.md", "docs/design.md", "docs/ocr.md"}) {
    for (const std::string& line : lines_of(kSource / doc)) {
      // U+2581 is SentencePiece's own stand-in for a space: the library decodes it as one.
      if (line.find("\xE2\x96\x81") != std::string::npos) continue;
      std::vector<int32_t> ids = t.encode_ids(line);
      EXPECT_EQ(t.decode(ids), line) << doc;
      tokens += ids.size();
      ++n;
    }
  }
  EXPECT_GT(n, 300u);
  EXPECT_GT(tokens, n);  // pieces, not whole lines
  // Offsets: ordered byte ranges inside the text.
  const std::string text = "Tokenizers 把文本变成 ids.";
  Encoding e = t.encode(text);
  ASSERT_EQ(e.ids, t.encode_ids(text));
  uint32_t at = 0;
  for (const Span& s : e.offsets) {
    EXPECT_LE(at, s.begin);
    EXPECT_LE(s.end, text.size());
    at = s.end;
  }
  EXPECT_EQ(at, text.size());
}

TEST(SentencePieceTest, TrainingIsDeterministic) {
  skiff::testing::TempDir dir;
  train_sentencepiece(docs_options(dir.path / "again.model"));
  // The .vocab files list every piece with its score. (The .model files differ only in
  // the training options they record, such as the output path.)
  fs::path first_vocab = trained_model();
  first_vocab.replace_extension(".vocab");
  EXPECT_TRUE(io::read_file(dir.path / "again.vocab") == io::read_file(first_vocab));
  SentencePieceTokenizer a(trained_model()), b(dir.path / "again.model");
  const std::string text = io::read_file(kSource / "docs/nlp.md");
  EXPECT_EQ(a.encode_ids(text), b.encode_ids(text));
  // Only the two outputs are left (no temporary files).
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path)) ++files;
  EXPECT_EQ(files, 2u);
}

TEST(SentencePieceTest, IdsEqualSpmEncode) {
  if (std::system("command -v spm_encode > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "spm_encode is not installed (Debian package sentencepiece; scripts/setup.sh installs it)";
  SentencePieceTokenizer t(trained_model());
  skiff::testing::TempDir dir;
  const std::vector<std::string> lines = lines_of(kSource / "docs/nlp.md");
  {
    std::ofstream in(dir.path / "in.txt");
    for (const auto& l : lines) in << l << "\n";
  }
  const std::string cmd = "spm_encode --model='" + trained_model().string() + "' --output_format=id < '" +
                          (dir.path / "in.txt").string() + "' > '" + (dir.path / "out.txt").string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<std::string> out = lines_of(dir.path / "out.txt");
  ASSERT_EQ(out.size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<int32_t> ids = t.encode_ids(lines[i]);
    std::string joined;
    for (size_t k = 0; k < ids.size(); ++k) joined += (k ? " " : "") + std::to_string(ids[k]);
    EXPECT_EQ(joined, out[i]) << "line " << i << ": " << lines[i];
  }
}

TEST(SentencePieceTest, SpecialTokensAndLookups) {
  SentencePieceTokenizer t(trained_model());
  const int32_t s = t.token_to_id("<s>"), unk = t.token_to_id("<unk>");
  EXPECT_GE(s, 0);
  EXPECT_GE(unk, 0);
  EXPECT_EQ(t.token_to_id("no such piece at all"), -1);
  std::vector<int32_t> ids = t.encode_ids("hello");
  ids.insert(ids.begin(), s);
  // Control pieces decode to nothing (the library's behaviour), skipped or not.
  EXPECT_EQ(t.decode(ids), "hello");
  EXPECT_EQ(t.decode(ids, /*skip_special_tokens=*/true), "hello");
  EXPECT_THROW(t.decode(std::vector<int32_t>{t.vocab_size()}), IndexError);
  EXPECT_THROW(t.id_to_token(-1), IndexError);
}

TEST(SentencePieceTest, BadInputsAreClearErrors) {
  skiff::testing::TempDir dir;
  SentencePieceTokenizer t(trained_model());
  try {
    t.encode_ids("ok \xC3(");
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("invalid UTF-8 at byte offset 3"), std::string::npos) << e.what();
  }
  { std::ofstream(dir.path / "bad.txt") << "fine\nnot \xFF fine\n"; }
  SentencePieceTrainOptions o = docs_options(dir.path / "m.model");
  o.inputs = {dir.path / "bad.txt"};
  try {
    train_sentencepiece(o);
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt: invalid UTF-8 at byte offset 9"), std::string::npos) << e.what();
  }
  o = docs_options(dir.path / "m.model");
  o.vocab_size = 1000000;  // more pieces than the text has
  EXPECT_THROW(train_sentencepiece(o), ValueError);
  EXPECT_FALSE(fs::exists(dir.path / "m.model"));
  o = docs_options(dir.path / "m.txt");
  EXPECT_THROW(train_sentencepiece(o), ValueError);
  EXPECT_THROW(SentencePieceTokenizer(dir.path / "missing.model"), ValueError);
}

}  // namespace
}  // namespace skiff::text
