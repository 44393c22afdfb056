// An image tower from a pretrained detector's backbone (pretrained_tower.h).
#include "suites/multimodal/pretrained_tower.h"

#include "framework/core/error.h"
#include "framework/graph/graph_module.h"
#include "framework/graph/model_import.h"
#include "framework/graph/passes.h"
#include "framework/nn/init.h"
#include "framework/ops/ops.h"
#include "framework/zoo/zoo.h"
#include "suites/multimodal/caption_dataset.h"

namespace skiff::multimodal {

PretrainedTower::PretrainedTower(const PretrainedTowerOptions& o) {
  const std::string path = zoo::resolve_model_path(o.model).string();
  graph::Graph g = graph::import_model(path);
  SKIFF_CHECK(g.inputs.size() == 1 && g.inputs[0].has_shape && g.inputs[0].shape.size() == 4,
              "{}: a pretrained image tower takes one [N, 3, H, W] image", path);
  bool found = false;
  for (const auto& n : g.nodes)
    for (const auto& out : n.outputs) found |= out == o.output;
  SKIFF_CHECK(found, "{}: no value '{}' to cut the backbone at", path, o.output);
  graph::ValueInfo cut;
  cut.name = o.output;
  g.outputs = {cut};
  // Any batch and size: the cut backbone is convolutional.
  for (int d : {0, 2, 3}) g.inputs[0].shape[size_t(d)] = graph::Dim::dynamic();
  graph::eliminate_dead_nodes(g);
  graph::optimize(g, {.level = 1});  // folding and transpose sinking only: every op stays trainable
  trunk = register_module("trunk", std::make_shared<graph::GraphModule>(std::move(g)));
  if (o.random_init) {
    NoGradGuard no_grad;
    for (auto& [name, t] : trunk->named_parameters()) {
      if (t.dim() >= 2) nn::init::kaiming_normal_(t);
      else detail::fill(t, 0.0);
    }
  }
  Tensor probe;
  {
    NoGradGuard no_grad;
    probe = trunk->forward(std::vector<Tensor>{zeros({1, 3, 64, 64})})[0];
  }
  SKIFF_CHECK(probe.dim() == 4, "{}: '{}' is not a [N, C, H, W] feature map (shape {})", path, o.output, probe.shape());
  proj = register_module("proj", std::make_shared<nn::Linear>(probe.size(1), o.embed_dim, false));
}

PretrainedTower::~PretrainedTower() = default;

Tensor PretrainedTower::forward(const Tensor& images) {
  SKIFF_CHECK_SHAPE(images.dim() == 4 && images.size(1) == 3, "PretrainedTower: expected images [B, 3, H, W], got {}",
                    images.shape());
  // The dual encoder's RGB normalisation (caption_dataset.h) -> BGR (v - mean) / std with
  // NanoDet's mean and std (0..255 pixels).
  const Tensor v = mul(add(mul(images, double(kImageStd)), double(kImageMean)), 255.0);
  const Tensor bgr = index_select(v, 1, from_vector(std::vector<int64_t>{2, 1, 0}));
  const Tensor centre = reshape(from_vector(std::vector<float>{103.53f, 116.28f, 123.675f}), {1, 3, 1, 1});
  const Tensor scale = reshape(from_vector(std::vector<float>{57.375f, 57.12f, 58.395f}), {1, 3, 1, 1});
  const Tensor x = div(sub(bgr, centre), scale);
  return (*proj)(mean(trunk->forward(std::vector<Tensor>{x})[0], {2, 3}));
}

}  // namespace skiff::multimodal
