#include "framework/nn/conv.h"

#include <cmath>

#include "framework/nn/init.h"
#include "framework/ops/nn/conv.h"

namespace skiff::nn {

namespace {

std::vector<int64_t> pair_of(std::vector<int64_t> v, const char* layer, const char* what, int64_t min) {
  SKIFF_CHECK(v.size() == 1 || v.size() == 2, "{}: {} takes 1 or 2 values, got {}", layer, what, v.size());
  if (v.size() == 1) v.push_back(v[0]);
  SKIFF_CHECK(v[0] >= min && v[1] >= min, "{}: {} must be >= {}, got [{}, {}]", layer, what, min, v[0], v[1]);
  return v;
}

void check_channels(const char* layer, int64_t in, int64_t out, int64_t groups) {
  SKIFF_CHECK(in > 0 && out > 0 && groups > 0, "{}: expected positive channels and groups, got in={} out={} groups={}",
              layer, in, out, groups);
  SKIFF_CHECK(in % groups == 0 && out % groups == 0,
              "{}: groups={} must divide in_channels={} and out_channels={}", layer, groups, in, out);
}

// PyTorch's default: kaiming_uniform(a = sqrt(5)) on the weight, bias bound 1/sqrt(fan_in).
void default_init(const Tensor& weight, const Tensor& bias, Generator* gen) {
  init::kaiming_uniform_(weight, std::sqrt(5.0), init::FanMode::FanIn, init::Nonlinearity::LeakyReLU, gen);
  if (bias.defined()) {
    double bound = 1.0 / std::sqrt(double(init::fan_in_and_fan_out(weight).first));
    init::uniform_(bias, -bound, bound, gen);
  }
}

void check_input(const char* layer, const Tensor& x, int64_t rank, int64_t channels) {
  SKIFF_CHECK_SHAPE(x.dim() == rank && x.size(1) == channels, "{}: expected input with {} dims and {} channels, got {}",
                    layer, rank, channels, x.shape());
}

}  // namespace

Conv1d::Conv1d(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t padding, int64_t dilation, int64_t groups,
               bool with_bias, Generator* gen)
    : in_(in), out_(out), k_(k), stride_(stride), padding_(padding), dilation_(dilation), groups_(groups) {
  check_channels("Conv1d", in, out, groups);
  SKIFF_CHECK(k > 0 && stride > 0 && dilation > 0 && padding >= 0,
              "Conv1d: expected kernel, stride, dilation > 0 and padding >= 0, got {} {} {} {}", k, stride, dilation,
              padding);
  weight = register_parameter("weight", empty({out, in / groups, k}));
  if (with_bias) bias = register_parameter("bias", empty({out}));
  default_init(weight, bias, gen);
}

Tensor Conv1d::forward(const Tensor& x) {
  check_input("Conv1d", x, 3, in_);
  return conv1d(x, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt, stride_, padding_, dilation_,
                groups_);
}

std::string Conv1d::extra_repr() const {
  return fmt::format("{}, {}, kernel_size={}, stride={}, padding={}, dilation={}, groups={}, bias={}", in_, out_, k_,
                     stride_, padding_, dilation_, groups_, bias.defined());
}

Conv2d::Conv2d(int64_t in, int64_t out, std::vector<int64_t> kernel, std::vector<int64_t> stride,
               std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups, bool with_bias,
               Generator* gen)
    : in_(in), out_(out), groups_(groups) {
  check_channels("Conv2d", in, out, groups);
  kernel_ = pair_of(kernel, "Conv2d", "kernel_size", 1);
  stride_ = pair_of(stride, "Conv2d", "stride", 1);
  padding_ = pair_of(padding, "Conv2d", "padding", 0);
  dilation_ = pair_of(dilation, "Conv2d", "dilation", 1);
  weight = register_parameter("weight", empty({out, in / groups, kernel_[0], kernel_[1]}));
  if (with_bias) bias = register_parameter("bias", empty({out}));
  default_init(weight, bias, gen);
}

Tensor Conv2d::forward(const Tensor& x) {
  check_input("Conv2d", x, 4, in_);
  return conv2d(x, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt, stride_, padding_, dilation_,
                groups_);
}

std::string Conv2d::extra_repr() const {
  return fmt::format("{}, {}, kernel_size={}, stride={}, padding={}, dilation={}, groups={}, bias={}", in_, out_,
                     kernel_, stride_, padding_, dilation_, groups_, bias.defined());
}

ConvTranspose2d::ConvTranspose2d(int64_t in, int64_t out, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                                 std::vector<int64_t> padding, std::vector<int64_t> output_padding, int64_t groups,
                                 bool with_bias, std::vector<int64_t> dilation, Generator* gen)
    : in_(in), out_(out), groups_(groups) {
  check_channels("ConvTranspose2d", in, out, groups);
  kernel_ = pair_of(kernel, "ConvTranspose2d", "kernel_size", 1);
  stride_ = pair_of(stride, "ConvTranspose2d", "stride", 1);
  padding_ = pair_of(padding, "ConvTranspose2d", "padding", 0);
  output_padding_ = pair_of(output_padding, "ConvTranspose2d", "output_padding", 0);
  dilation_ = pair_of(dilation, "ConvTranspose2d", "dilation", 1);
  for (int i = 0; i < 2; ++i)
    SKIFF_CHECK(output_padding_[i] < stride_[i] || output_padding_[i] < dilation_[i],
                "ConvTranspose2d: output_padding {} must be smaller than stride {} or dilation {}", output_padding_,
                stride_, dilation_);
  weight = register_parameter("weight", empty({in, out / groups, kernel_[0], kernel_[1]}));
  if (with_bias) bias = register_parameter("bias", empty({out}));
  default_init(weight, bias, gen);
}

Tensor ConvTranspose2d::forward(const Tensor& x) {
  check_input("ConvTranspose2d", x, 4, in_);
  return conv_transpose2d(x, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt, stride_, padding_,
                          output_padding_, groups_, dilation_);
}

std::string ConvTranspose2d::extra_repr() const {
  return fmt::format("{}, {}, kernel_size={}, stride={}, padding={}, output_padding={}, groups={}, bias={}", in_,
                     out_, kernel_, stride_, padding_, output_padding_, groups_, bias.defined());
}

}  // namespace skiff::nn
