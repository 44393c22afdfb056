#pragma once
/// \file text_classifier.h
/// A trained sequence classifier ready to use: a model directory (a training run's
/// save_dir or what `skiff export` wrote) holding encoder.json, tokenizer.model and the
/// weights (model.safetensors, else best_model.safetensors). What `skiff nlp classify`
/// and `skiff predict` run.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "framework/text/tokenizer.h"
#include "suites/nlp/encoder/heads.h"

namespace skiff::nlp {

struct Classification {
  std::string label;
  int index = 0;
  double probability = 0;            ///< of `label`
  std::vector<double> probabilities;  ///< per label, in EncoderConfig::labels order
};

class TextClassifier {
 public:
  /// \throws IoError naming the directory and the missing file; ValueError when the
  ///   weights do not fit encoder.json (naming the tensor).
  explicit TextClassifier(const std::filesystem::path& dir);
  /// Classifies each text (its first max_length - 1 tokens), in batches of `batch`.
  std::vector<Classification> classify(const std::vector<std::string>& texts, size_t batch = 32) const;
  const EncoderConfig& config() const { return config_; }
  const std::filesystem::path& weights() const { return weights_; }

 private:
  EncoderConfig config_;
  std::filesystem::path weights_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  std::shared_ptr<EncoderForSequenceClassification> model_;
};

/// Softmax probabilities of logits [B, C] -> Classification per row.
std::vector<Classification> classifications(const Tensor& logits, const std::vector<std::string>& labels);

}  // namespace skiff::nlp
