#pragma once
/// \file conv.h
/// Convolution layers over channel-first tensors (see framework/ops/nn/conv.h
/// for the exact formulas and output sizes).
///
/// 2-D hyper-parameters (kernel, stride, padding, dilation, output_padding)
/// take one value (used for both H and W) or two ({h, w}).
/// Initialization (PyTorch's): weight kaiming_uniform(a = sqrt(5)) and bias
/// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = weight.size(1) * kh * kw,
/// drawn from `gen` (default generator when null). Parameters are float32.
/// Constructors throw ValueError for non-positive sizes or when groups does
/// not divide the channel counts; forward throws ShapeError on a wrong input rank or
/// channel count.

#include <string>
#include <vector>

#include "framework/core/rng.h"
#include "framework/nn/module.h"

namespace skiff::nn {

/// x [N, C_in, L] -> [N, C_out, L_out]; weight [C_out, C_in / groups, k], bias [C_out].
class Conv1d : public Module {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1, int64_t padding = 0,
         int64_t dilation = 1, int64_t groups = 1, bool bias = true, Generator* gen = nullptr);
  std::string type_name() const override { return "Conv1d"; }
  Tensor forward(const Tensor& x) override;

  Tensor weight, bias;

 protected:
  std::string extra_repr() const override;

 private:
  int64_t in_, out_, k_, stride_, padding_, dilation_, groups_;
};

/// x [N, C_in, H, W] -> [N, C_out, H_out, W_out]; weight [C_out, C_in / groups, kh, kw], bias [C_out].
class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size,
         std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1},
         int64_t groups = 1, bool bias = true, Generator* gen = nullptr);
  std::string type_name() const override { return "Conv2d"; }
  Tensor forward(const Tensor& x) override;

  Tensor weight, bias;

 protected:
  std::string extra_repr() const override;

 private:
  int64_t in_, out_, groups_;
  std::vector<int64_t> kernel_, stride_, padding_, dilation_;
};

/// Transposed convolution (the input-gradient of Conv2d):
/// x [N, C_in, H, W] -> [N, C_out, H_out, W_out] with
/// H_out = (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1.
/// weight [C_in, C_out / groups, kh, kw], bias [C_out].
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size,
                  std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0},
                  std::vector<int64_t> output_padding = {0}, int64_t groups = 1, bool bias = true,
                  std::vector<int64_t> dilation = {1}, Generator* gen = nullptr);
  std::string type_name() const override { return "ConvTranspose2d"; }
  Tensor forward(const Tensor& x) override;

  Tensor weight, bias;

 protected:
  std::string extra_repr() const override;

 private:
  int64_t in_, out_, groups_;
  std::vector<int64_t> kernel_, stride_, padding_, output_padding_, dilation_;
};

}  // namespace skiff::nn
