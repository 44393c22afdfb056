#pragma once
/// \file rec_model.h
/// Trainable CTC text recognizers.
///
///  - ImportedRecognizer: an ONNX recognizer (the PP-OCRv4 model from the zoo)
///    wrapped as a graph::GraphModule, so its weights train like any module's
///    and the fine-tuned graph exports back to ONNX with the same structure.
///  - Crnn: a CRNN written with skiff's nn API (a VGG-style conv stack that
///    reduces the height to 1, a bidirectional LSTM, a linear CTC head).
///
/// Both map images [N, 3, H, W] to per-step class scores [N, T, C] and output
/// probabilities at inference, as PaddleOCR's CTC head does, so an exported
/// model drops into the OCR pipeline unchanged.
#include <memory>
#include <string>
#include <vector>

#include "framework/graph/graph_module.h"
#include "framework/nn/nn.h"

namespace skiff::ocr {

class RecModel : public nn::Module {
 public:
  /// Log-probabilities [N, T, C] for the CTC loss.
  virtual Tensor log_probs(const Tensor& images) = 0;
  /// The inference graph: input "x" [batch, 3, height, width] (any batch) -> probabilities [batch, T, C].
  virtual graph::Graph inference_graph(int height, int width) = 0;
  /// Number of classes C (blank included).
  virtual int64_t num_classes() const = 0;
};

class ImportedRecognizer : public RecModel {
 public:
  /// `onnx_path`: a recognizer whose output is softmax probabilities [N, T, C].
  /// \throws IoError / ValueError for a missing or malformed file.
  explicit ImportedRecognizer(const std::string& onnx_path);
  std::string type_name() const override { return "ImportedRecognizer"; }
  /// Probabilities [N, T, C].
  Tensor forward(const Tensor& images) override;
  Tensor log_probs(const Tensor& images) override;
  graph::Graph inference_graph(int height, int width) override;
  int64_t num_classes() const override { return classes_; }

 private:
  std::shared_ptr<graph::GraphModule> graph_;
  int64_t classes_ = 0;
};

struct CrnnOptions {
  int64_t num_classes = 0;  ///< dictionary + blank (+ space)
  std::vector<int64_t> channels = {32, 64, 128, 128, 256, 256};  ///< six conv-bn-relu blocks
  int64_t hidden_size = 96;  ///< LSTM size per direction
};

class Crnn : public RecModel {
 public:
  /// \throws ValueError for fewer than 2 classes or not exactly 6 channel counts.
  explicit Crnn(CrnnOptions options);
  std::string type_name() const override { return "Crnn"; }
  /// Probabilities [N, T, C] with T = W / 4.
  Tensor forward(const Tensor& images) override;
  Tensor log_probs(const Tensor& images) override;
  graph::Graph inference_graph(int height, int width) override;

  int64_t num_classes() const override { return options_.num_classes; }

 private:
  Tensor logits(const Tensor& images);
  CrnnOptions options_;
  std::vector<std::shared_ptr<nn::Conv2d>> convs_;
  std::vector<std::shared_ptr<nn::BatchNorm2d>> norms_;
  std::shared_ptr<nn::LSTM> rnn_;
  std::shared_ptr<nn::Linear> head_;
};

}  // namespace skiff::ocr
