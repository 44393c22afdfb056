#pragma once
/// \file det_model.h
/// A DB (Differentiable Binarization) text detector written with skiff's nn
/// API, in the three parts PaddleOCR names:
///   - Backbone MiniResNet: a stem and four residual stages at strides 4, 8, 16
///     and 32 (one basic block each);
///   - Neck DBFPN: 1x1 lateral convs, a top-down sum, 3x3 convs to C/4 and the
///     four levels upsampled to stride 4 and concatenated (C channels);
///   - Head DBHead: a probability branch and a threshold branch, each a 3x3
///     conv and two (nearest x2 upsample, 3x3 conv) steps back to full size.
///
/// Training uses all three DB maps: the probability P, the threshold T and the
/// approximate binary map B = sigmoid(k (P - T)). Inference returns P
/// [N, 1, H, W] only, as PaddleOCR's exported detectors do, so the export runs
/// through the OCR pipeline's DB post-processing unchanged. H and W must be
/// multiples of 32. ImportedDetector wraps an exported detector (the zoo's
/// PP-OCRv4) for fine-tuning instead.
#include <memory>
#include <vector>

#include "framework/graph/graph_module.h"
#include "framework/graph/ir.h"
#include "framework/nn/nn.h"

namespace skiff::ocr {

struct DbNetOptions {
  std::vector<int64_t> backbone_channels = {16, 32, 64, 96, 128};  ///< stem, then the four stages
  int64_t fpn_channels = 64;  ///< DBFPN out_channels (a multiple of 4)
  double k = 50;              ///< DBHead k, the binarization steepness
};

/// The maps of one forward pass, each [N, 1, H, W].
struct DbMaps {
  Tensor shrink_logits;  ///< logit of P (for a stable cross-entropy); undefined when the model gives P only
  Tensor shrink;         ///< P
  Tensor threshold;      ///< T; undefined for a model without a threshold branch
  Tensor binary;         ///< B = sigmoid(k (P - T)), or P itself without a threshold branch
};

/// A trainable text detector: P at inference, the DB maps for training.
class DetModel : public nn::Module {
 public:
  /// P [N, 1, H, W] (inference).
  Tensor forward(const Tensor& images) override = 0;
  /// The maps the DB loss needs (training).
  virtual DbMaps maps(const Tensor& images) = 0;
  /// The inference graph: input [batch, 3, height, width] (all three dynamic)
  /// -> P [batch, 1, height, width]. `height` x `width` is an example size.
  virtual graph::Graph inference_graph(int height, int width) = 0;
};

/// An ONNX text detector (the PP-OCRv4 detector from the zoo) as a trainable
/// graph::GraphModule. Exported detectors keep only the probability branch, so
/// fine-tuning trains P alone: the loss's threshold term is left out and its
/// dice term is taken on P.
class ImportedDetector : public DetModel {
 public:
  /// `onnx_path`: a detector with one input [N, 3, H, W] and one output P [N, 1, H, W].
  /// \throws IoError / ValueError for a missing or malformed file.
  explicit ImportedDetector(const std::string& onnx_path);
  std::string type_name() const override { return "ImportedDetector"; }
  Tensor forward(const Tensor& images) override;
  DbMaps maps(const Tensor& images) override;
  graph::Graph inference_graph(int height, int width) override;

 private:
  std::shared_ptr<graph::GraphModule> graph_;
};

class DbNet : public DetModel {
 public:
  /// \throws ValueError for channel counts that are not 5 positive numbers, or
  /// fpn_channels not a positive multiple of 4.
  explicit DbNet(DbNetOptions options);
  std::string type_name() const override { return "DbNet"; }
  Tensor forward(const Tensor& images) override;
  DbMaps maps(const Tensor& images) override;
  graph::Graph inference_graph(int height, int width) override;

  const DbNetOptions& options() const { return options_; }

 private:
  class Block;
  class Branch;
  Tensor features(const Tensor& images);

  DbNetOptions options_;
  std::shared_ptr<nn::Module> stem_;
  std::vector<std::shared_ptr<Block>> stages_;
  std::vector<std::shared_ptr<nn::Conv2d>> lateral_, smooth_;
  std::shared_ptr<Branch> prob_, thresh_;
};

}  // namespace skiff::ocr
