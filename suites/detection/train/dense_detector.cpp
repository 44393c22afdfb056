#include "suites/detection/train/dense_detector.h"

#include <fmt/format.h>

#include "framework/core/error.h"
#include "framework/graph/trace.h"
#include "framework/ops/ops.h"

namespace skiff::detection {

AnchorPoints anchor_points(const std::vector<int64_t>& heights, const std::vector<int64_t>& widths,
                           const std::vector<int>& strides) {
  SKIFF_CHECK(heights.size() == widths.size() && heights.size() == strides.size(),
              "anchor_points: {} heights, {} widths and {} strides", heights.size(), widths.size(), strides.size());
  AnchorPoints a;
  for (size_t l = 0; l < strides.size(); ++l)
    for (int64_t r = 0; r < heights[l]; ++r)
      for (int64_t c = 0; c < widths[l]; ++c) {
        a.cx.push_back((float(c) + 0.5f) * float(strides[l]));
        a.cy.push_back((float(r) + 0.5f) * float(strides[l]));
        a.stride.push_back(float(strides[l]));
      }
  return a;
}

DenseOutputs dense_outputs(const std::vector<Tensor>& level_maps, int64_t classes, int64_t bins) {
  DenseOutputs out;
  std::vector<Tensor> cls, reg;
  for (const Tensor& y : level_maps) {
    const int64_t n = y.size(0), h = y.size(2), w = y.size(3);
    Tensor cells = permute(reshape(y, {n, classes + 4 * bins, h * w}), {0, 2, 1});  // [N, HW, C + 4 bins]
    cls.push_back(narrow(cells, 2, 0, classes));
    reg.push_back(narrow(cells, 2, classes, 4 * bins));
    out.level_heights.push_back(h);
    out.level_widths.push_back(w);
  }
  out.cls_logits = concat(cls, 1);
  out.reg_logits = concat(reg, 1);
  return out;
}

graph::Graph DenseDetector::inference_graph(int height, int width) {
  const bool was_training = is_training();
  eval();
  std::vector<std::string> names;
  for (int s : strides()) names.push_back(fmt::format("cls_{}", s));
  for (int s : strides()) names.push_back(fmt::format("reg_{}", s));
  // Per level: probabilities and box logits, split back out of the concatenation.
  graph::TraceFn fn = [this](const std::vector<Tensor>& inputs) {
    DenseOutputs d = dense(inputs[0]);
    std::vector<int64_t> cells;
    for (size_t l = 0; l < d.level_heights.size(); ++l) cells.push_back(d.level_heights[l] * d.level_widths[l]);
    std::vector<Tensor> outputs = split(sigmoid(d.cls_logits), cells, 1);
    for (Tensor& t : split(d.reg_logits, cells, 1)) outputs.push_back(t);
    return outputs;
  };
  graph::Graph g = graph::trace(this, fn, {zeros({1, 3, height, width}, DType::Float32)},
                                {.dynamic_batch = true, .input_names = {"image"}, .output_names = names,
                                 .graph_name = "skiff_" + type_name()});
  train(was_training);
  g.value_info.clear();
  return g;
}

}  // namespace skiff::detection
