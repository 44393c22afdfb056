// The BERT-style encoder (suites/nlp/encoder/): what padding may and may not change,
// BERT's 80/10/10 masking, the heads' shapes, a short training run whose loss falls,
// the mail reader and split, and recipe errors that name file, line and key.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "framework/autograd/engine.h"
#include "framework/core/error.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"
#include "framework/optim/optimizers.h"
#include "framework/train/recipe_runner.h"
#include "suites/nlp/encoder/classifier_recipe.h"
#include "suites/nlp/encoder/heads.h"
#include "suites/nlp/encoder/mail_corpus.h"
#include "suites/nlp/encoder/mlm_masking.h"

namespace skiff::nlp {
namespace {
namespace fs = std::filesystem;

EncoderConfig small_config(bool pre_norm = true) {
  EncoderConfig c;
  c.pieces = 50;
  c.hidden_size = 16;
  c.num_layers = 2;
  c.num_heads = 2;
  c.intermediate_size = 32;
  c.max_length = 12;
  c.pre_norm = pre_norm;
  c.dropout = 0.0;
  c.labels = {"ham", "spam"};
  return c;
}

std::vector<double> values(const Tensor& t) { return contiguous(to(t, DType::Float64)).to_vector<double>(); }

// Padding must change nothing at the real tokens: a padded row's states equal those of
// the row alone, in pre-norm and post-norm encoders.
TEST(EncoderTest, PaddingMaskHidesPadTokens) {
  for (int variant = 0; variant < 3; ++variant) {
    const bool pre_norm = variant != 1;
    manual_seed(1);
    EncoderConfig c = small_config(pre_norm);
    if (variant == 2) c.positions = "rotary";
    TextEncoder enc(c);
    enc.eval();
    NoGradGuard no_grad;
    std::vector<int64_t> row{c.cls_id(), 7, 8, 9, 10};
    Tensor alone = from_vector(row, {1, 5});
    std::vector<int64_t> padded = row;
    for (int i = 0; i < 4; ++i) padded.push_back(c.pad_id());
    Tensor with_pad = from_vector(padded, {1, 9});
    auto a = values(enc.forward(alone, padding_mask(alone, c.pad_id())));
    auto b = values(narrow(enc.forward(with_pad, padding_mask(with_pad, c.pad_id())), 1, 0, 5));
    ASSERT_EQ(a.size(), b.size());
    double diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(a[i] - b[i]));
    EXPECT_LT(diff, 1e-5) << "pre_norm=" << pre_norm << " positions=" << c.positions;
  }
}

// Rotary positions: no position table, the config says so (and older configs without the
// key read as learned), and token order matters though no position is added to the tokens.
TEST(EncoderTest, RotaryPositionsReplaceThePositionTable) {
  manual_seed(2);
  EncoderConfig c = small_config();
  c.positions = "rotary";
  TextEncoder enc(c);
  enc.eval();
  for (const auto& [name, p] : enc.named_parameters()) EXPECT_EQ(name.find("pos_embed"), std::string::npos) << name;
  EXPECT_EQ(encoder_config_from_json(to_json(c), "test").positions, "rotary");
  nlohmann::json old = to_json(small_config());
  old.erase("positions");
  old.erase("rope_theta");
  EXPECT_EQ(encoder_config_from_json(old, "test").positions, "learned");
  c.positions = "sinusoidal";
  EXPECT_THROW(c.check("test"), ValueError);

  NoGradGuard no_grad;
  Tensor ab = from_vector(std::vector<int64_t>{c.cls_id(), 7, 8, 9}, {1, 4});
  Tensor ba = from_vector(std::vector<int64_t>{c.cls_id(), 8, 7, 9}, {1, 4});
  auto x = values(narrow(enc.forward(ab, Tensor()), 1, 0, 1)), y = values(narrow(enc.forward(ba, Tensor()), 1, 0, 1));
  double diff = 0;
  for (size_t i = 0; i < x.size(); ++i) diff = std::max(diff, std::abs(x[i] - y[i]));
  EXPECT_GT(diff, 1e-4) << "[CLS] must see the order of the tokens";
}

TEST(EncoderTest, PaddingMaskMarksPadIds) {
  Tensor ids = from_vector(std::vector<int64_t>{51, 4, 50, 50}, {1, 4});
  Tensor m = padding_mask(ids, 50);
  EXPECT_EQ(m.dtype(), DType::Bool);
  EXPECT_EQ(values(m), (std::vector<double>{0, 0, 1, 1}));
}

// 80/10/10 over many tokens; [CLS] and [PAD] never selected; labels are the originals.
TEST(EncoderTest, MlmMaskingFollowsBert) {
  EncoderConfig c = small_config();
  const int64_t b = 64, t = 12;
  std::vector<int64_t> ids;
  for (int64_t r = 0; r < b; ++r) {
    ids.push_back(c.cls_id());
    for (int64_t j = 1; j < t; ++j) ids.push_back(j < 9 ? 3 + (r * 7 + j) % 47 : c.pad_id());
  }
  Tensor in = from_vector(ids, {b, t});
  MaskedBatch m = mask_tokens(in, c, MlmMaskOptions{}, 7, 0);
  auto pos = contiguous(m.positions).to_vector<int64_t>();
  auto labels = contiguous(m.labels).to_vector<int64_t>();
  auto out = contiguous(m.ids).to_vector<int64_t>();
  ASSERT_EQ(pos.size(), labels.size());
  const double real = double(b * 8);
  EXPECT_NEAR(double(pos.size()) / real, 0.15, 0.03);
  int masked = 0, random = 0, kept = 0;
  std::set<int64_t> selected(pos.begin(), pos.end());
  for (size_t i = 0; i < pos.size(); ++i) {
    const int64_t p = pos[i];
    EXPECT_NE(ids[size_t(p)], c.cls_id());
    EXPECT_NE(ids[size_t(p)], c.pad_id());
    EXPECT_EQ(labels[i], ids[size_t(p)]);
    if (out[size_t(p)] == c.mask_id()) ++masked;
    else if (out[size_t(p)] == ids[size_t(p)]) ++kept;
    else {
      ++random;
      EXPECT_GE(out[size_t(p)], c.first_regular_id());
      EXPECT_LT(out[size_t(p)], c.pieces);
    }
  }
  for (size_t i = 0; i < ids.size(); ++i)
    if (!selected.count(int64_t(i))) EXPECT_EQ(out[i], ids[i]) << "unselected token " << i << " changed";
  const double n = double(pos.size());
  EXPECT_NEAR(masked / n, 0.8, 0.08);
  EXPECT_NEAR(random / n, 0.1, 0.06);
  EXPECT_NEAR(kept / n, 0.1, 0.06);
  // Same (seed, step): same masks; another step: other masks.
  EXPECT_EQ(contiguous(mask_tokens(in, c, MlmMaskOptions{}, 7, 0).positions).to_vector<int64_t>(), pos);
  EXPECT_NE(contiguous(mask_tokens(in, c, MlmMaskOptions{}, 7, 1).positions).to_vector<int64_t>(), pos);
}

TEST(EncoderTest, HeadsHaveTheirShapes) {
  for (const char* pooling : {"cls", "mean"}) {
    EncoderConfig c = small_config();
    c.pooling = pooling;
    EncoderForSequenceClassification model(c);
    Tensor ids = from_vector(std::vector<int64_t>{c.cls_id(), 5, 6, c.pad_id(), c.cls_id(), 7, 8, 9}, {2, 4});
    EXPECT_EQ(model.forward(ids).shape(), Shape({2, 2})) << pooling;
    EXPECT_EQ(model.pooler != nullptr, std::string(pooling) == "cls");
  }
  EncoderConfig c = small_config();
  EncoderForMaskedLM mlm(c);
  Tensor ids = from_vector(std::vector<int64_t>{c.cls_id(), c.mask_id(), 6, c.pad_id()}, {1, 4});
  Tensor logits = mlm.forward(ids, padding_mask(ids, c.pad_id()), from_vector(std::vector<int64_t>{1, 2}));
  EXPECT_EQ(logits.shape(), Shape({2, c.vocab_size()}));
  // The output projection is the embedding itself (tied), not a copy.
  auto sd = mlm.state_dict();
  EXPECT_TRUE(sd.count("encoder.tok_embed.weight"));
  for (const auto& [name, t] : sd) EXPECT_EQ(name.find("decoder"), std::string::npos) << name;
}

// A few steps on two separable classes: the loss must fall.
TEST(EncoderTest, ShortTrainingRunLowersTheLoss) {
 for (const char* positions : {"learned", "rotary"}) {
  manual_seed(3);
  EncoderConfig c = small_config(false);
  c.positions = positions;
  EncoderForSequenceClassification model(c);
  std::vector<int64_t> ids, labels;
  for (int r = 0; r < 16; ++r) {
    const int label = r % 2;
    ids.push_back(c.cls_id());
    for (int j = 1; j < 6; ++j) ids.push_back(label ? 3 + (r + j) % 10 : 20 + (r + j) % 10);
    labels.push_back(label);
  }
  Tensor x = from_vector(ids, {16, 6}), y = from_vector(labels);
  optim::AdamW opt(model.parameters(), optim::AdamOptions{.lr = 3e-3});
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    Tensor loss = cross_entropy(model.forward(x), y);
    skiff::backward(loss);
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, first * 0.5) << positions << ": first " << first << " last " << last;
 }
}

TEST(EncoderTest, MailTextKeepsSubjectAndBody) {
  const std::string raw =
      "From a@b.c  Thu Aug 22 2002\nReceived: from relay.example (1.2.3.4)\nSubject: Cheap\n\tpills\n"
      "X-Spam: yes\n\nBuy now.\nReally.";
  EXPECT_EQ(mail_text(raw, 1000), "Cheap pills\nBuy now.\nReally.");
  EXPECT_EQ(mail_text(raw, 16), "Cheap pills\nBuy ");
  EXPECT_TRUE(looks_like_mail(raw));
  EXPECT_FALSE(looks_like_mail("hello: there is no header here"));
  EXPECT_FALSE(looks_like_mail("plain text"));
  EXPECT_TRUE(looks_like_mail("Subject: hi\nTo: you\n\nbody"));
}

TEST(EncoderTest, SplitIsStratifiedAndSeeded) {
  std::vector<Mail> mails;
  for (int i = 0; i < 100; ++i) mails.push_back(Mail{"m" + std::to_string(i), "t", i < 70 ? 0 : 1});
  CorpusSplit a = split_corpus(mails, 0.2, 5), b = split_corpus(mails, 0.2, 5), c = split_corpus(mails, 0.2, 6);
  ASSERT_EQ(a.eval.size(), 20u);
  int spam = 0;
  for (const Mail& m : a.eval) spam += m.label;
  EXPECT_EQ(spam, 6);  // 20% of the 30 spam
  std::vector<std::string> na, nb, nc;
  for (const Mail& m : a.eval) na.push_back(m.name);
  for (const Mail& m : b.eval) nb.push_back(m.name);
  for (const Mail& m : c.eval) nc.push_back(m.name);
  EXPECT_EQ(na, nb);
  EXPECT_NE(na, nc);
}

TEST(EncoderTest, BinaryMetricsOfSpam) {
  auto m = binary_metrics({1, 1, 0, 0, 1}, {1, 0, 0, 1, 1});
  EXPECT_DOUBLE_EQ(m["accuracy"], 0.6);
  EXPECT_DOUBLE_EQ(m["precision"], 2.0 / 3);
  EXPECT_DOUBLE_EQ(m["recall"], 2.0 / 3);
  EXPECT_DOUBLE_EQ(m["f1"], 2.0 / 3);
}

std::string recipe_error(const std::string& yaml) {
  fs::path dir = fs::temp_directory_path() / ("skiff_enc_recipe_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path file = dir / "r.yml";
  std::ofstream(file) << yaml;
  try {
    train::load_recipe(file.string(), {}, config::ValidateOptions{.check_files = false});
  } catch (const Error& e) {
    fs::remove_all(dir);
    return e.what();
  }
  fs::remove_all(dir);
  return "";
}

TEST(EncoderTest, RecipeErrorsNameFileLineAndKey) {
  const std::string good =
      "task: text_classification\n"
      "Data: {dataset: spam-assassin}\n"
      "Tokenizer: {model: t.model}\n"
      "Encoder:\n"
      "  hidden_size: 64\n"
      "batch_size: 8\n"
      "epoch: 1\n"
      "LearningRate: {base_lr: 0.001}\n";
  EXPECT_EQ(recipe_error(good), "");
  std::string typo = good;
  typo.replace(typo.find("hidden_size"), 11, "hiden_size");
  std::string msg = recipe_error(typo);
  EXPECT_NE(msg.find("r.yml:5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hiden_size"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hidden_size"), std::string::npos) << msg;  // the suggestion
  std::string bad_pool = good;
  bad_pool.replace(bad_pool.find("  hidden_size: 64"), 17, "  pooling: max");
  msg = recipe_error(bad_pool);
  EXPECT_NE(msg.find("r.yml:5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pooling"), std::string::npos) << msg;
}

}  // namespace
}  // namespace skiff::nlp
