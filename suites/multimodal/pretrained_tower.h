#pragma once
/// \file pretrained_tower.h
/// An image tower that starts from a pretrained detector's backbone: the zoo's NanoDet (a
/// TF.js graph model) imported, cut at one of its backbone's values (by default its stride-32
/// features, 512 channels), and made trainable (graph::GraphModule), then averaged over the map
/// and projected into the embedding space. NanoDet takes BGR pixels normalised with its own
/// mean and std; the tower converts the dual encoder's RGB inputs ((v / 255 - 0.5) / 0.25) to
/// that, so both towers see the same images. The cut is before NanoDet's feature pyramid, whose
/// resizes are fixed to 416 x 416: the backbone is convolutional and takes any size.

#include <memory>
#include <string>

#include "framework/nn/linear.h"
#include "framework/nn/module.h"

namespace skiff::graph {
class GraphModule;
}

namespace skiff::multimodal {

struct PretrainedTowerOptions {
  std::string model = "nanodet-coco";  ///< zoo name, TF.js model.json or .onnx
  std::string output = "PartitionedCall/onnx_tf_prefix_Concat_62";  ///< the value to cut at
  int64_t embed_dim = 64;
  /// Re-draw the backbone's weights (Kaiming normal, biases zero): the same architecture from
  /// scratch, to measure what the pretrained weights bring.
  bool random_init = false;
};

class PretrainedTower : public nn::Module {
 public:
  /// Imports the model (pulling a zoo model on first use). \throws ValueError naming the model
  /// when it has no value `output` or it is not a [N, C, H, W] feature map.
  explicit PretrainedTower(const PretrainedTowerOptions& options);
  ~PretrainedTower() override;
  std::string type_name() const override { return "PretrainedTower"; }
  /// images [B, 3, S, S] as the dual encoder normalises them -> [B, embed_dim].
  Tensor forward(const Tensor& images) override;

  std::shared_ptr<graph::GraphModule> trunk;
  std::shared_ptr<nn::Linear> proj;
};

}  // namespace skiff::multimodal
