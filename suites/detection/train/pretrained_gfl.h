#pragma once
/// \file pretrained_gfl.h
/// A pretrained dense GFL detector (NanoDet from the zoo, or any model with its
/// outputs) made trainable for a new class list, as PaddleDetection fine-tunes
/// from `pretrain_weights`:
///   - the imported graph is cut before each level's final convolution (the one
///     giving classes + 4 (reg_max + 1) channels); what remains (backbone, neck,
///     head towers) becomes a trainable GraphModule;
///   - each final convolution is rebuilt as an nn::Conv2d with the new class
///     count: its box rows keep the pretrained weights, its class rows start
///     fresh at the 0.01 prior (kept as they are when the class count is unchanged).
/// The imported graph has a fixed input size (its resize sizes are constants), so
/// training and evaluation resize to it. NanoDet takes BGR: the module flips the
/// RGB images the readers give, in training and in its exported graph.
#include <memory>
#include <string>
#include <vector>

#include "suites/detection/train/dense_detector.h"

namespace skiff::graph {
class GraphModule;
}

namespace skiff::detection {

struct PretrainedGflOptions {
  std::string model = "nanodet-coco";  ///< zoo name, TF.js model.json or .onnx
  int num_classes = 80;                ///< of the new task
  int reg_max = 10;                    ///< of the model (NanoDet: 10)
  bool bgr = true;                     ///< the model takes BGR (flip the RGB input)
};

class PretrainedGflDetector : public DenseDetector {
 public:
  /// Imports the model (pulling a zoo model on first use) and rebuilds its head.
  /// \throws ValueError naming the model when its outputs or head convolutions are
  ///         not those of a GFL detector with this reg_max.
  explicit PretrainedGflDetector(PretrainedGflOptions options);
  ~PretrainedGflDetector() override;
  std::string type_name() const override { return "PretrainedGfl"; }

  /// images [N, 3, input_height(), input_width()], RGB.
  DenseOutputs dense(const Tensor& images) override;
  int reg_max() const override { return options_.reg_max; }
  const std::vector<int>& strides() const override { return strides_; }
  int num_classes() const override { return options_.num_classes; }

  int input_height() const { return input_h_; }
  int input_width() const { return input_w_; }
  /// The class count of the imported model.
  int pretrained_classes() const { return pretrained_classes_; }

 private:
  PretrainedGflOptions options_;
  std::shared_ptr<graph::GraphModule> trunk_;
  std::vector<std::shared_ptr<nn::Conv2d>> predictors_;  ///< one per level, stride order
  std::vector<int> strides_;
  std::vector<size_t> level_outputs_;  ///< trunk output of each level, stride order
  int input_h_ = 0, input_w_ = 0, pretrained_classes_ = 0;
};

}  // namespace skiff::detection
