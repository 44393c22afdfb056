#include "suites/ocr/train/det_model.h"

#include "framework/core/error.h"
#include "framework/graph/trace.h"
#include "framework/ops/ops.h"
#include "suites/ocr/train/imported_graph.h"

namespace skiff::ocr {

namespace {

std::shared_ptr<nn::Conv2d> conv(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1, bool bias = false) {
  return std::make_shared<nn::Conv2d>(in, out, std::vector<int64_t>{kernel}, std::vector<int64_t>{stride},
                                      std::vector<int64_t>{kernel / 2}, std::vector<int64_t>{1}, 1, bias);
}

// conv -> batch norm -> ReLU.
std::shared_ptr<nn::Sequential> conv_bn_relu(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1) {
  return std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      conv(in, out, kernel, stride), std::make_shared<nn::BatchNorm2d>(out), std::make_shared<nn::ReLU>()});
}

Tensor upsample(const Tensor& x, double factor) {
  return interpolate(x, InterpolateOptions{.size = {}, .scale_factor = {factor}, .mode = "nearest"});
}

}  // namespace

// A residual basic block: two 3x3 conv-bn (the first strided) plus a 1x1 projection shortcut.
class DbNet::Block : public nn::Module {
 public:
  Block(int64_t in, int64_t out, int64_t stride) {
    conv1_ = register_module("conv1", conv_bn_relu(in, out, 3, stride));
    conv2_ = register_module("conv2", conv(out, out, 3));
    bn2_ = register_module("bn2", std::make_shared<nn::BatchNorm2d>(out));
    shortcut_ = register_module("shortcut", conv(in, out, 1, stride));
    bn_shortcut_ = register_module("bn_shortcut", std::make_shared<nn::BatchNorm2d>(out));
  }
  std::string type_name() const override { return "BasicBlock"; }
  Tensor forward(const Tensor& x) override {
    Tensor y = (*bn2_)((*conv2_)((*conv1_)(x)));
    return relu(add(y, (*bn_shortcut_)((*shortcut_)(x))));
  }

 private:
  std::shared_ptr<nn::Sequential> conv1_;
  std::shared_ptr<nn::Conv2d> conv2_, shortcut_;
  std::shared_ptr<nn::BatchNorm2d> bn2_, bn_shortcut_;
};

// One DBHead branch: stride-4 features -> one full-size logit map.
class DbNet::Branch : public nn::Module {
 public:
  explicit Branch(int64_t in) {
    const int64_t mid = in / 4;
    reduce_ = register_module("conv1", conv_bn_relu(in, mid, 3));
    up1_ = register_module("conv2", conv_bn_relu(mid, mid, 3));
    up2_ = register_module("conv3", conv(mid, 1, 3, 1, true));
  }
  std::string type_name() const override { return "DBHeadBranch"; }
  Tensor forward(const Tensor& x) override {
    return (*up2_)(upsample((*up1_)(upsample((*reduce_)(x), 2)), 2));
  }

 private:
  std::shared_ptr<nn::Sequential> reduce_, up1_;
  std::shared_ptr<nn::Conv2d> up2_;
};

ImportedDetector::ImportedDetector(const std::string& onnx_path) {
  graph_ = register_module("graph", import_trainable_graph(onnx_path, "text detector"));
  NoGradGuard no_grad;
  Tensor probe = graph_->forward(zeros({1, 3, 64, 64}, DType::Float32));
  SKIFF_CHECK_SHAPE(probe.dim() == 4 && probe.size(1) == 1 && probe.size(2) == 64 && probe.size(3) == 64,
                    "{}: expected a probability map [N, 1, H, W] of the input's size, got {} for [1, 3, 64, 64]",
                    onnx_path, probe.shape());
}

Tensor ImportedDetector::forward(const Tensor& images) { return graph_->forward(images); }

DbMaps ImportedDetector::maps(const Tensor& images) {
  DbMaps m;
  m.shrink = graph_->forward(images);
  m.binary = m.shrink;
  return m;
}

graph::Graph ImportedDetector::inference_graph(int, int) { return graph_->to_graph(); }

DbNet::DbNet(DbNetOptions options) : options_(std::move(options)) {
  const auto& c = options_.backbone_channels;
  SKIFF_CHECK(c.size() == 5, "MiniResNet takes 5 channel counts (stem and four stages), got {}", c.size());
  for (int64_t v : c) SKIFF_CHECK(v >= 1, "MiniResNet channel counts must be positive, got {}", v);
  SKIFF_CHECK(options_.fpn_channels >= 4 && options_.fpn_channels % 4 == 0,
              "DBFPN out_channels must be a positive multiple of 4, got {}", options_.fpn_channels);
  stem_ = register_module("backbone_stem", conv_bn_relu(3, c[0], 3, 2));
  for (size_t i = 0; i < 4; ++i)
    stages_.push_back(register_module(fmt::format("backbone_stage{}", i), std::make_shared<Block>(c[i], c[i + 1], 2)));
  const int64_t inner = options_.fpn_channels;
  for (size_t i = 0; i < 4; ++i) {
    lateral_.push_back(register_module(fmt::format("neck_in{}", i + 2), conv(c[i + 1], inner, 1)));
    smooth_.push_back(register_module(fmt::format("neck_p{}", i + 2), conv(inner, inner / 4, 3)));
  }
  prob_ = register_module("head_binarize", std::make_shared<Branch>(inner));
  thresh_ = register_module("head_thresh", std::make_shared<Branch>(inner));
}

Tensor DbNet::features(const Tensor& images) {
  SKIFF_CHECK_SHAPE(images.dim() == 4 && images.size(1) == 3 && images.size(2) % 32 == 0 && images.size(3) % 32 == 0 &&
                        images.size(2) > 0 && images.size(3) > 0,
                    "DB input must be [N, 3, H, W] with H and W multiples of 32, got {}", images.shape());
  std::vector<Tensor> levels;  // strides 4, 8, 16, 32
  Tensor h = (*stem_)(images);
  for (auto& s : stages_) levels.push_back(h = (*s)(h));
  // Top-down: each level adds the upsampled coarser one.
  std::vector<Tensor> merged(4);
  merged[3] = (*lateral_[3])(levels[3]);
  for (int i = 2; i >= 0; --i) merged[size_t(i)] = add((*lateral_[size_t(i)])(levels[size_t(i)]), upsample(merged[size_t(i) + 1], 2));
  std::vector<Tensor> fused;
  for (size_t i = 0; i < 4; ++i) {
    Tensor p = (*smooth_[i])(merged[i]);
    fused.push_back(i == 0 ? p : upsample(p, double(1 << i)));
  }
  return concat(fused, 1);
}

DbMaps DbNet::maps(const Tensor& images) {
  Tensor f = features(images);
  DbMaps m;
  m.shrink_logits = (*prob_)(f);
  m.shrink = sigmoid(m.shrink_logits);
  m.threshold = sigmoid((*thresh_)(f));
  m.binary = sigmoid(mul(sub(m.shrink, m.threshold), options_.k));
  return m;
}

Tensor DbNet::forward(const Tensor& images) { return sigmoid((*prob_)(features(images))); }

graph::Graph DbNet::inference_graph(int height, int width) {
  bool was_training = is_training();
  eval();
  graph::Graph g = graph::trace(*this, {zeros({1, 3, height, width}, DType::Float32)},
                                {.dynamic_batch = true, .input_names = {"x"}, .output_names = {"sigmoid_0.tmp_0"},
                                 .graph_name = "skiff_db"});
  train(was_training);
  // Fully convolutional: nothing in the graph fixes the spatial size, so the
  // input and output take any height and width (the pipeline's limit_side_len rule).
  for (auto* v : {&g.inputs[0], &g.outputs[0]}) {
    v->shape[2] = graph::Dim::dynamic("height");
    v->shape[3] = graph::Dim::dynamic("width");
  }
  g.value_info.clear();
  return g;
}

}  // namespace skiff::ocr
