// The image tower from the zoo's NanoDet backbone (pulls the model on first use): any image
// size, the pretrained weights inside the trainable trunk, fresh ones with random_init, and a
// gradient that reaches the backbone.
#include <gtest/gtest.h>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/graph/graph_module.h"
#include "framework/graph/model_import.h"
#include "framework/ops/ops.h"
#include "framework/zoo/zoo.h"
#include "suites/multimodal/pretrained_tower.h"

namespace skiff::multimodal {
namespace {

TEST(PretrainedTower, NanoDetBackboneIsTrainableAtAnySize) {
  PretrainedTower tower({.embed_dim = 16});
  Generator g(3);
  for (int64_t s : {64, 96}) {
    const Tensor out = tower.forward(randn({2, 3, s, s}, DType::Float32, &g));
    EXPECT_EQ(out.shape(), (Shape{2, 16}));
  }
  // The trunk holds NanoDet's own weights: some trunk parameter equals an initializer of the
  // imported graph bit for bit.
  const graph::Graph nanodet = graph::import_model(zoo::resolve_model_path("nanodet-coco").string());
  int matched = 0;
  for (const auto& [name, t] : tower.trunk->named_parameters())
    for (const auto& [init_name, w] : nanodet.initializers)
      if (w.shape() == t.shape() && amax(abs(sub(w, t))).item<double>() == 0.0) ++matched;
  EXPECT_GT(matched, 10);
  // random_init: the same parameters, other values.
  PretrainedTower fresh({.embed_dim = 16, .random_init = true});
  ASSERT_EQ(fresh.trunk->named_parameters().size(), tower.trunk->named_parameters().size());
  double moved = 0;
  auto a = tower.trunk->named_parameters(), b = fresh.trunk->named_parameters();
  for (size_t i = 0; i < a.size(); ++i) moved = std::max(moved, amax(abs(sub(a[i].second, b[i].second))).item<double>());
  EXPECT_GT(moved, 0.01);
  // Gradients reach the backbone's first weights.
  Tensor loss = sum(tower.forward(randn({1, 3, 64, 64}, DType::Float32, &g)));
  backward(loss);
  int with_grad = 0;
  for (const auto& [name, t] : tower.trunk->named_parameters()) with_grad += t.grad().defined();
  EXPECT_EQ(with_grad, int(tower.trunk->named_parameters().size()));
  EXPECT_THROW(PretrainedTower({.output = "no-such-value"}), ValueError);
}

}  // namespace
}  // namespace skiff::multimodal
