#include "suites/nlp/encoder/text_classifier.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "framework/text/sentencepiece_tokenizer.h"
#include "framework/train/trainer.h"
#include "suites/nlp/encoder/token_rows.h"

namespace skiff::nlp {

namespace fs = std::filesystem;

TextClassifier::TextClassifier(const fs::path& dir) {
  SKIFF_CHECK_T(IoError, fs::is_directory(dir), "{}: no such model directory", dir.string());
  for (const char* f : {"encoder.json", "tokenizer.model"})
    SKIFF_CHECK_T(IoError, fs::exists(dir / f), "{}: the model directory has no {} (train or export a "
                  "text_classification recipe into it)", dir.string(), f);
  config_ = load_encoder_config(dir / "encoder.json");
  SKIFF_CHECK(config_.labels.size() >= 2, "{}: no classification labels: this is not a classifier's directory "
              "(a masked-LM run?)", (dir / "encoder.json").string());
  weights_ = fs::exists(dir / "model.safetensors") ? dir / "model.safetensors" : dir / "best_model.safetensors";
  SKIFF_CHECK_T(IoError, fs::exists(weights_), "{}: no model.safetensors or best_model.safetensors", dir.string());
  tokenizer_ = std::make_unique<text::SentencePieceTokenizer>(dir / "tokenizer.model");
  model_ = std::make_shared<EncoderForSequenceClassification>(config_);
  train::load_weights(*model_, weights_);
  model_->eval();
}

std::vector<Classification> classifications(const Tensor& logits, const std::vector<std::string>& labels) {
  Tensor p = contiguous(to(softmax(logits, -1), DType::Float64));
  const int64_t n = p.size(0), k = p.size(1);
  const double* v = p.data<double>();
  std::vector<Classification> out;
  for (int64_t i = 0; i < n; ++i) {
    Classification c;
    c.probabilities.assign(v + i * k, v + (i + 1) * k);
    c.index = int(std::max_element(c.probabilities.begin(), c.probabilities.end()) - c.probabilities.begin());
    c.probability = c.probabilities[size_t(c.index)];
    c.label = labels.at(size_t(c.index));
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Classification> TextClassifier::classify(const std::vector<std::string>& texts, size_t batch) const {
  NoGradGuard no_grad;
  TokenRows rows(*tokenizer_, texts, config_);
  std::vector<Classification> out;
  for (size_t start = 0; start < rows.size(); start += batch) {
    std::vector<size_t> index;
    for (size_t i = start; i < std::min(rows.size(), start + batch); ++i) index.push_back(i);
    Tensor ids = rows.batch(index);
    auto part = classifications(model_->forward(ids, padding_mask(ids, config_.pad_id())), config_.labels);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

}  // namespace skiff::nlp
