#include "suites/ocr/train/rec_model.h"

#include "framework/core/error.h"
#include "suites/ocr/train/imported_graph.h"
#include "framework/graph/trace.h"
#include "framework/ops/ops.h"

namespace skiff::ocr {

ImportedRecognizer::ImportedRecognizer(const std::string& onnx_path) {
  graph_ = register_module("graph", import_trainable_graph(onnx_path, "recognizer"));
  // The class count: run a tiny input once rather than trusting declared output shapes.
  NoGradGuard no_grad;
  Tensor probe = graph_->forward(zeros({1, 3, 48, 64}, DType::Float32));
  SKIFF_CHECK_SHAPE(probe.dim() == 3, "{}: expected a [N, T, C] output, got {}", onnx_path, probe.shape());
  classes_ = probe.size(2);
}

Tensor ImportedRecognizer::forward(const Tensor& images) { return graph_->forward(images); }

Tensor ImportedRecognizer::log_probs(const Tensor& images) {
  // The graph ends in softmax; the floor keeps log() finite where a probability underflows.
  return log(clamp_min(graph_->forward(images), 1e-10));
}

graph::Graph ImportedRecognizer::inference_graph(int, int) { return graph_->to_graph(); }

Crnn::Crnn(CrnnOptions options) : options_(std::move(options)) {
  SKIFF_CHECK(options_.num_classes >= 2, "CRNN needs at least 2 classes (blank + one character), got {}",
              options_.num_classes);
  SKIFF_CHECK(options_.channels.size() == 6, "CRNN takes 6 channel counts (one per conv block), got {}",
              options_.channels.size());
  SKIFF_CHECK(options_.hidden_size >= 1, "CRNN hidden_size must be >= 1, got {}", options_.hidden_size);
  int64_t in = 3;
  for (size_t i = 0; i < 6; ++i) {
    int64_t out = options_.channels[i];
    convs_.push_back(register_module(fmt::format("conv{}", i),
                                     std::make_shared<nn::Conv2d>(in, out, std::vector<int64_t>{3}, std::vector<int64_t>{1},
                                                                  std::vector<int64_t>{1}, std::vector<int64_t>{1}, 1, false)));
    norms_.push_back(register_module(fmt::format("bn{}", i), std::make_shared<nn::BatchNorm2d>(out)));
    in = out;
  }
  rnn_ = register_module("rnn", std::make_shared<nn::LSTM>(in, options_.hidden_size,
                                                           nn::RNNOptions{.num_layers = 2, .bidirectional = true}));
  head_ = register_module("head", std::make_shared<nn::Linear>(2 * options_.hidden_size, options_.num_classes));
}

Tensor Crnn::logits(const Tensor& images) {
  SKIFF_CHECK_SHAPE(images.dim() == 4 && images.size(1) == 3 && images.size(2) % 16 == 0 && images.size(3) % 4 == 0,
                    "CRNN input must be [N, 3, H, W] with H a multiple of 16 and W of 4, got {}", images.shape());
  Tensor h = images;
  for (size_t i = 0; i < 6; ++i) {
    h = relu((*norms_[i])((*convs_[i])(h)));
    if (i == 0 || i == 1) h = max_pool2d(h, {2, 2});  // H/4, W/4
    if (i == 3 || i == 5) h = max_pool2d(h, {2, 1});  // H/16
  }
  h = amax(h, {2}, false);               // height pooled to 1: [N, C, T]
  Tensor seq = (*rnn_)(permute(h, {2, 0, 1}));  // [T, N, 2 * hidden]
  return (*head_)(permute(seq, {1, 0, 2}));     // [N, T, classes]
}

Tensor Crnn::forward(const Tensor& images) { return softmax(logits(images), -1); }

Tensor Crnn::log_probs(const Tensor& images) { return log_softmax(logits(images), -1); }

graph::Graph Crnn::inference_graph(int height, int width) {
  bool was_training = is_training();
  eval();
  graph::Graph g = graph::trace(*this, {zeros({1, 3, height, width}, DType::Float32)},
                                {.dynamic_batch = true, .input_names = {"x"}, .output_names = {"softmax"},
                                 .graph_name = "skiff_crnn"});
  train(was_training);
  return g;
}

}  // namespace skiff::ocr
