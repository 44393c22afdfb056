#include "suites/detection/train/picodet.h"

#include <cmath>

#include "framework/core/error.h"
#include "framework/nn/init.h"
#include "framework/ops/ops.h"

namespace skiff::detection {

namespace {

// Channel counts rounded to multiples of 8 (as MobileNet-family widths are),
// never below 90% of the unrounded width.
int64_t make_divisible(double channels, int64_t divisor = 8) {
  int64_t rounded = std::max(divisor, int64_t(channels + divisor / 2.0) / divisor * divisor);
  if (double(rounded) < 0.9 * channels) rounded += divisor;
  return rounded;
}

enum class Act { None, HardSwish };

// conv (no bias) -> batch norm -> optional hard-swish.
class ConvBn : public nn::Module {
 public:
  ConvBn(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups, Act act) : act_(act) {
    conv_ = register_module("conv", std::make_shared<nn::Conv2d>(in, out, std::vector<int64_t>{kernel},
                                                                  std::vector<int64_t>{stride},
                                                                  std::vector<int64_t>{kernel / 2},
                                                                  std::vector<int64_t>{1}, groups, false));
    bn_ = register_module("bn", std::make_shared<nn::BatchNorm2d>(out));
  }
  std::string type_name() const override { return "ConvBNLayer"; }
  Tensor forward(const Tensor& x) override {
    Tensor y = (*bn_)((*conv_)(x));
    return act_ == Act::HardSwish ? hardswish(y) : y;
  }

 private:
  Act act_;
  std::shared_ptr<nn::Conv2d> conv_;
  std::shared_ptr<nn::BatchNorm2d> bn_;
};

std::shared_ptr<ConvBn> conv_bn(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1, int64_t groups = 1,
                                Act act = Act::HardSwish) {
  return std::make_shared<ConvBn>(in, out, kernel, stride, groups, act);
}

// Squeeze-and-excitation: x * hardsigmoid(conv(relu(conv(mean over H, W)))).
class SqueezeExcite : public nn::Module {
 public:
  explicit SqueezeExcite(int64_t channels) {
    const int64_t mid = std::max<int64_t>(8, channels / 4);
    reduce_ = register_module("conv1", std::make_shared<nn::Conv2d>(channels, mid, std::vector<int64_t>{1}));
    expand_ = register_module("conv2", std::make_shared<nn::Conv2d>(mid, channels, std::vector<int64_t>{1}));
  }
  std::string type_name() const override { return "SEModule"; }
  Tensor forward(const Tensor& x) override {
    return mul(x, hardsigmoid((*expand_)(relu((*reduce_)(global_avg_pool2d(x))))));
  }

 private:
  std::shared_ptr<nn::Conv2d> reduce_, expand_;
};

// LCNet's block: depthwise k x k (strided), optional SE, pointwise 1 x 1.
class DepthwiseSeparable : public nn::Module {
 public:
  DepthwiseSeparable(int64_t in, int64_t out, int64_t kernel, int64_t stride, bool se) {
    dw_ = register_module("dw_conv", conv_bn(in, in, kernel, stride, in));
    if (se) se_ = register_module("se", std::make_shared<SqueezeExcite>(in));
    pw_ = register_module("pw_conv", conv_bn(in, out, 1));
  }
  std::string type_name() const override { return "DepthwiseSeparable"; }
  Tensor forward(const Tensor& x) override {
    Tensor y = (*dw_)(x);
    if (se_) y = (*se_)(y);
    return (*pw_)(y);
  }

 private:
  std::shared_ptr<ConvBn> dw_, pw_;
  std::shared_ptr<SqueezeExcite> se_;
};

// The neck's and head's block: 1 x 1 reduce, 5 x 5 depthwise, 1 x 1.
class NeckBlock : public nn::Module {
 public:
  NeckBlock(int64_t in, int64_t out) {
    reduce_ = register_module("conv1", conv_bn(in, out, 1));
    dw_ = register_module("dw", conv_bn(out, out, 5, 1, out));
    pw_ = register_module("conv2", conv_bn(out, out, 1));
  }
  std::string type_name() const override { return "NeckBlock"; }
  Tensor forward(const Tensor& x) override { return (*pw_)((*dw_)((*reduce_)(x))); }

 private:
  std::shared_ptr<ConvBn> reduce_, dw_, pw_;
};

Tensor upsample2x(const Tensor& x) {
  return interpolate(x, InterpolateOptions{.size = {}, .scale_factor = {2.0}, .mode = "nearest"});
}

}  // namespace

// PP-LCNet's stacks as (kernel, out channels at scale 1, stride, SE); the
// first block of stacks 3, 4 and 5 halves the size (strides 8, 16, 32).
class PicoDet::Backbone : public nn::Module {
 public:
  explicit Backbone(double scale) {
    struct Spec { int64_t kernel, out, stride; bool se; };
    const std::vector<std::vector<Spec>> stacks = {
        {{3, 32, 1, false}},                                          // stride 2
        {{3, 64, 2, false}, {3, 64, 1, false}},                       // stride 4
        {{3, 128, 2, false}, {3, 128, 1, false}},                     // stride 8
        {{3, 256, 2, false}, {5, 256, 1, false}, {5, 256, 1, false}},  // stride 16
        {{5, 512, 2, true}, {5, 512, 1, true}},                       // stride 32
    };
    int64_t channels = make_divisible(16 * scale);
    stem_ = register_module("conv1", conv_bn(3, channels, 3, 2));
    for (size_t s = 0; s < stacks.size(); ++s) {
      auto stack = std::make_shared<nn::Sequential>();
      for (const Spec& b : stacks[s]) {
        const int64_t out = make_divisible(double(b.out) * scale);
        stack->push_back(std::make_shared<DepthwiseSeparable>(channels, out, b.kernel, b.stride, b.se));
        channels = out;
      }
      stacks_.push_back(register_module(fmt::format("blocks{}", s + 2), stack));
      if (s >= 2) out_channels.push_back(channels);
    }
  }
  std::string type_name() const override { return "LCNet"; }
  Tensor forward(const Tensor& x) override { return levels(x).back(); }
  /// The stride 8, 16 and 32 feature maps.
  std::vector<Tensor> levels(const Tensor& x) {
    std::vector<Tensor> out;
    Tensor h = (*stem_)(x);
    for (size_t s = 0; s < stacks_.size(); ++s) {
      h = (*stacks_[s])(h);
      if (s >= 2) out.push_back(h);
    }
    return out;
  }

  std::vector<int64_t> out_channels;

 private:
  std::shared_ptr<ConvBn> stem_;
  std::vector<std::shared_ptr<nn::Sequential>> stacks_;
};

class PicoDet::Neck : public nn::Module {
 public:
  Neck(const std::vector<int64_t>& in_channels, int64_t channels) {
    for (size_t i = 0; i < in_channels.size(); ++i)
      lateral_.push_back(register_module(fmt::format("conv_t{}", i), conv_bn(in_channels[i], channels, 1)));
    for (size_t i = 0; i + 1 < in_channels.size(); ++i) {
      top_down_.push_back(register_module(fmt::format("top_down_blocks{}", i),
                                          std::make_shared<NeckBlock>(2 * channels, channels)));
      downsample_.push_back(register_module(fmt::format("downsamples{}", i),
                                            conv_bn(channels, channels, 5, 2, channels)));
      bottom_up_.push_back(register_module(fmt::format("bottom_up_blocks{}", i),
                                           std::make_shared<NeckBlock>(2 * channels, channels)));
    }
  }
  std::string type_name() const override { return "LCPAN"; }
  Tensor forward(const Tensor&) override { SKIFF_THROW(ValueError, "LCPAN takes a list of levels: call levels()"); }
  std::vector<Tensor> levels(const std::vector<Tensor>& inputs) {
    const size_t n = inputs.size();
    std::vector<Tensor> lat(n);
    for (size_t i = 0; i < n; ++i) lat[i] = (*lateral_[i])(inputs[i]);
    // Top-down: each finer level takes the coarser one, upsampled.
    std::vector<Tensor> td(n);
    td[n - 1] = lat[n - 1];
    for (size_t i = n - 1; i-- > 0;) td[i] = (*top_down_[i])(concat({upsample2x(td[i + 1]), lat[i]}, 1));
    // Bottom-up: each coarser level takes the finer one, downsampled.
    std::vector<Tensor> out(n);
    out[0] = td[0];
    for (size_t i = 0; i + 1 < n; ++i) out[i + 1] = (*bottom_up_[i])(concat({(*downsample_[i])(out[i]), td[i + 1]}, 1));
    return out;
  }

 private:
  std::vector<std::shared_ptr<ConvBn>> lateral_, downsample_;
  std::vector<std::shared_ptr<NeckBlock>> top_down_, bottom_up_;
};

class PicoDet::Head : public nn::Module {
 public:
  Head(int64_t channels, int levels, const PicoDetOptions& o) : classes_(o.num_classes), bins_(o.reg_max + 1) {
    for (int l = 0; l < levels; ++l) {
      auto tower = std::make_shared<nn::Sequential>();
      for (int i = 0; i < o.feat_convs; ++i) {
        tower->push_back(conv_bn(channels, channels, 5, 1, channels));
        tower->push_back(conv_bn(channels, channels, 1));
      }
      towers_.push_back(register_module(fmt::format("conv_feat{}", l), tower));
      auto out = std::make_shared<nn::Conv2d>(channels, classes_ + 4 * bins_, std::vector<int64_t>{1});
      // Class logits start at the prior probability 0.01 (the focal-loss
      // paper's initialisation): without it the many background cells swamp
      // the first steps.
      NoGradGuard no_grad;
      nn::init::normal_(out->weight, 0.0, 0.01);
      nn::init::constant_(out->bias, 0.0);
      nn::init::constant_(narrow(out->bias, 0, 0, classes_), -std::log((1 - 0.01) / 0.01));
      predictors_.push_back(register_module(fmt::format("head_cls{}", l), out));
    }
  }
  std::string type_name() const override { return "PicoHeadV2"; }
  Tensor forward(const Tensor&) override { SKIFF_THROW(ValueError, "PicoHeadV2 takes a list of levels: call dense()"); }

  DenseOutputs dense(const std::vector<Tensor>& levels) {
    std::vector<Tensor> maps;
    for (size_t l = 0; l < levels.size(); ++l) maps.push_back((*predictors_[l])((*towers_[l])(levels[l])));
    return dense_outputs(maps, classes_, bins_);
  }

 private:
  int64_t classes_, bins_;
  std::vector<std::shared_ptr<nn::Sequential>> towers_;
  std::vector<std::shared_ptr<nn::Conv2d>> predictors_;
};

PicoDet::PicoDet(PicoDetOptions options) : options_(std::move(options)) {
  SKIFF_CHECK(options_.num_classes >= 1, "PicoDet: num_classes must be >= 1, got {}", options_.num_classes);
  SKIFF_CHECK(options_.backbone_scale > 0 && std::isfinite(options_.backbone_scale),
              "LCNet: scale must be > 0, got {}", options_.backbone_scale);
  SKIFF_CHECK(options_.neck_channels >= 1, "LCPAN: out_channels must be >= 1, got {}", options_.neck_channels);
  SKIFF_CHECK(options_.feat_convs >= 0, "PicoHeadV2: feat_in_chan convs must be >= 0, got {}", options_.feat_convs);
  SKIFF_CHECK(options_.reg_max >= 1, "PicoHeadV2: reg_max must be >= 1, got {}", options_.reg_max);
  backbone_ = register_module("backbone", std::make_shared<Backbone>(options_.backbone_scale));
  neck_ = register_module("neck", std::make_shared<Neck>(backbone_->out_channels, options_.neck_channels));
  head_ = register_module("head", std::make_shared<Head>(options_.neck_channels, int(picodet_strides().size()), options_));
}

DenseOutputs PicoDet::dense(const Tensor& images) {
  const int64_t s = picodet_strides().back();
  SKIFF_CHECK_SHAPE(images.dim() == 4 && images.size(1) == 3 && images.size(2) > 0 && images.size(3) > 0 &&
                        images.size(2) % s == 0 && images.size(3) % s == 0,
                    "PicoDet input must be [N, 3, H, W] with H and W multiples of {}, got {}", s, images.shape());
  return head_->dense(neck_->levels(backbone_->levels(images)));
}

}  // namespace skiff::detection
