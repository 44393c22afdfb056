#include "suites/detection/train/pretrained_gfl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "framework/core/error.h"
#include "framework/graph/graph_module.h"
#include "framework/graph/model_import.h"
#include "framework/graph/passes.h"
#include "framework/nn/init.h"
#include "framework/ops/ops.h"
#include "framework/zoo/zoo.h"

namespace skiff::detection {
namespace {

/// One level's final convolution in the imported graph.
struct HeadConv {
  std::string input;  ///< the feature map it reads (NCHW), where the trunk ends
  Tensor weight;      ///< [classes + 4 bins, C, kh, kw]
  Tensor bias;        ///< [classes + 4 bins]
  std::vector<int64_t> pads;
};

int64_t known_dim(const graph::ValueInfo& v, size_t i) {
  return v.has_shape && i < v.shape.size() && v.shape[i].known() ? v.shape[i].value : -1;
}

/// The class count of the score outputs [1, cells, C] beside box outputs [1, cells, 4 bins].
int score_classes(const graph::Graph& g, int64_t box_width, const std::string& path) {
  int64_t classes = -1;
  for (const auto& out : g.outputs) {
    const int64_t width = known_dim(out, 2);
    SKIFF_CHECK(out.has_shape && out.shape.size() == 3 && width > 0,
                "{}: output '{}' is not [1, cells, width]: not a GFL detector", path, out.name);
    if (width == box_width) continue;
    SKIFF_CHECK(classes < 0 || classes == width, "{}: score outputs disagree on the class count ({} and {})", path,
                classes, width);
    classes = width;
  }
  SKIFF_CHECK(classes > 0, "{}: no [1, cells, classes] score output beside the [1, cells, {}] box outputs "
              "(is reg_max right?)", path, box_width);
  return int(classes);
}

/// The bias added after a head conv: its own third input, or an Add of a constant
/// reached through layout-only nodes (TF.js adds it after transposing back to NHWC).
Tensor head_bias(const graph::Graph& g, const graph::Node& conv, int64_t width,
                 const std::multimap<std::string, size_t>& readers) {
  if (conv.inputs.size() > 2 && g.is_initializer(conv.inputs[2])) return g.initializers.at(conv.inputs[2]);
  std::string v = conv.outputs[0];
  for (int hops = 0; hops < 4; ++hops) {
    if (readers.count(v) != 1) break;
    const graph::Node& next = g.nodes[readers.find(v)->second];
    if (next.op_type == "Transpose" || next.op_type == "Identity") {
      v = next.outputs[0];
      continue;
    }
    if (next.op_type == "Add")
      for (const auto& in : next.inputs)
        if (in != v && g.is_initializer(in) && g.initializers.at(in).numel() == width)
          return reshape(to(g.initializers.at(in), DType::Float32), {width});
    break;
  }
  return zeros({width}, DType::Float32);
}

std::vector<HeadConv> find_head_convs(const graph::Graph& g, int64_t width, const std::string& path) {
  std::multimap<std::string, size_t> readers;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& in : g.nodes[i].inputs) readers.emplace(in, i);
  std::vector<HeadConv> heads;
  for (const auto& n : g.nodes) {
    if (n.op_type != "Conv" || n.inputs.size() < 2 || !g.is_initializer(n.inputs[1])) continue;
    const Tensor& w = g.initializers.at(n.inputs[1]);
    if (w.dim() != 4 || w.size(0) != width) continue;
    SKIFF_CHECK(n.attr_int("group", 1) == 1 && n.attr_ints("strides", {1, 1}) == std::vector<int64_t>({1, 1}) &&
                    n.attr_ints("dilations", {1, 1}) == std::vector<int64_t>({1, 1}),
                "{}: {} gives the {} head channels but is grouped, strided or dilated", path, n.describe(), width);
    HeadConv h;
    h.input = n.inputs[0];
    h.weight = contiguous(to(w, DType::Float32));
    h.bias = head_bias(g, n, width, readers);
    h.pads = n.attr_ints("pads", {0, 0, 0, 0});
    SKIFF_CHECK(h.pads.size() == 4 && h.pads[0] == h.pads[2] && h.pads[1] == h.pads[3],
                "{}: {} pads asymmetrically", path, n.describe());
    heads.push_back(std::move(h));
  }
  return heads;
}

}  // namespace

PretrainedGflDetector::PretrainedGflDetector(PretrainedGflOptions options) : options_(std::move(options)) {
  SKIFF_CHECK(options_.num_classes >= 1, "{}: num_classes must be >= 1, got {}", options_.model, options_.num_classes);
  SKIFF_CHECK(options_.reg_max >= 1, "{}: reg_max must be >= 1, got {}", options_.model, options_.reg_max);
  const std::string path = zoo::resolve_model_path(options_.model).string();
  graph::Graph g = graph::import_model(path);
  SKIFF_CHECK(g.inputs.size() == 1 && g.inputs[0].has_shape && g.inputs[0].shape.size() == 4 &&
                  known_dim(g.inputs[0], 1) == 3 && known_dim(g.inputs[0], 2) > 0 && known_dim(g.inputs[0], 3) > 0,
              "{}: a detector to fine-tune takes one fixed [1, 3, H, W] image", path);
  input_h_ = int(known_dim(g.inputs[0], 2));
  input_w_ = int(known_dim(g.inputs[0], 3));
  const int64_t bins = options_.reg_max + 1;
  pretrained_classes_ = score_classes(g, 4 * bins, path);
  const int64_t old_width = pretrained_classes_ + 4 * bins;
  std::vector<HeadConv> heads = find_head_convs(g, old_width, path);
  SKIFF_CHECK(!heads.empty() && 2 * heads.size() == g.outputs.size(),
              "{}: expected one convolution giving {} channels per level ({} levels), found {}", path, old_width,
              g.outputs.size() / 2, heads.size());

  // The trunk: everything up to the head convolutions' inputs.
  g.outputs.clear();
  for (const HeadConv& h : heads) g.outputs.push_back(graph::ValueInfo{.name = h.input});
  graph::eliminate_dead_nodes(g);
  graph::optimize(g, {.level = 1});  // folding and transpose sinking only: every op stays trainable
  trunk_ = register_module("trunk", std::make_shared<graph::GraphModule>(std::move(g)));

  // Level strides from one probe run; levels are kept in stride order.
  std::vector<Tensor> probe;
  {
    NoGradGuard no_grad;
    probe = trunk_->forward(std::vector<Tensor>{zeros({1, 3, input_h_, input_w_}, DType::Float32)});
  }
  std::vector<size_t> order(heads.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return probe[a].size(2) > probe[b].size(2); });
  level_outputs_ = order;

  const int64_t classes = options_.num_classes, width = classes + 4 * bins;
  const bool same_classes = classes == pretrained_classes_;
  NoGradGuard no_grad;
  for (size_t l = 0; l < order.size(); ++l) {
    const HeadConv& h = heads[order[l]];
    const int64_t feature_h = probe[order[l]].size(2);
    SKIFF_CHECK(feature_h > 0 && input_h_ % feature_h == 0, "{}: a {}-row feature map does not divide the {}-row input",
                path, feature_h, input_h_);
    strides_.push_back(int(input_h_ / feature_h));
    auto conv = std::make_shared<nn::Conv2d>(h.weight.size(1), width,
                                             std::vector<int64_t>{h.weight.size(2), h.weight.size(3)},
                                             std::vector<int64_t>{1}, std::vector<int64_t>{h.pads[0], h.pads[1]});
    // Box rows: the pretrained ones. Class rows: the pretrained ones for the same
    // classes, else fresh at the focal-loss prior 0.01 so background does not swamp them.
    detail::copy_into(narrow(conv->weight, 0, classes, 4 * bins), narrow(h.weight, 0, pretrained_classes_, 4 * bins));
    detail::copy_into(narrow(conv->bias, 0, classes, 4 * bins), narrow(h.bias, 0, pretrained_classes_, 4 * bins));
    if (same_classes) {
      detail::copy_into(narrow(conv->weight, 0, 0, classes), narrow(h.weight, 0, 0, classes));
      detail::copy_into(narrow(conv->bias, 0, 0, classes), narrow(h.bias, 0, 0, classes));
    } else {
      nn::init::normal_(narrow(conv->weight, 0, 0, classes), 0.0, 0.01);
      nn::init::constant_(narrow(conv->bias, 0, 0, classes), -std::log((1 - 0.01) / 0.01));
    }
    predictors_.push_back(register_module(fmt::format("head{}", l), conv));
  }
}

PretrainedGflDetector::~PretrainedGflDetector() = default;

DenseOutputs PretrainedGflDetector::dense(const Tensor& images) {
  SKIFF_CHECK_SHAPE(images.dim() == 4 && images.size(1) == 3 && images.size(2) == input_h_ &&
                        images.size(3) == input_w_,
                    "{} takes [N, 3, {}, {}] images (resize to its input size), got {}", options_.model, input_h_,
                    input_w_, images.shape());
  Tensor x = images;
  if (options_.bgr) x = concat({narrow(images, 1, 2, 1), narrow(images, 1, 1, 1), narrow(images, 1, 0, 1)}, 1);
  std::vector<Tensor> features = trunk_->forward(std::vector<Tensor>{x});
  std::vector<Tensor> maps;
  for (size_t l = 0; l < predictors_.size(); ++l) maps.push_back((*predictors_[l])(features[level_outputs_[l]]));
  return dense_outputs(maps, options_.num_classes, options_.reg_max + 1);
}

}  // namespace skiff::detection
