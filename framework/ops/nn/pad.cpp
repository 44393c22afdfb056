// pad: constant padding (constant_pad op, backward = slice) and reflect/replicate
// padding (pad op gathering through per-dim index tables, backward = pad_backward
// scattering back; pad_backward's own backward is pad, as the pair is adjoint).
// Attrs: "pads" in PyTorch order (last dim first, before/after pairs), all >= 0.
#include <algorithm>

#include "framework/ops/common.h"
#include "framework/ops/nn/resample.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

Shape padded_shape(const Shape& in, const std::vector<int64_t>& pads, int64_t sign) {
  Shape s = in;
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    int64_t d = in.size() - 1 - int64_t(i);
    s[d] += sign * (pads[2 * i] + pads[2 * i + 1]);
  }
  return s;
}

// The un-padded region of a padded tensor.
Tensor crop(const Tensor& padded, const std::vector<int64_t>& pads) {
  Tensor t = padded;
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    int64_t d = t.dim() - 1 - int64_t(i);
    if (pads[2 * i] == 0 && pads[2 * i + 1] == 0) continue;
    t = slice(t, d, pads[2 * i], t.shape()[d] - pads[2 * i + 1]);
  }
  return t;
}

std::vector<TensorMeta> pad_infer(const std::vector<Tensor>& in, const Attrs& a) {
  return {{padded_shape(in[0].shape(), a.get_ints("pads"), 1), in[0].dtype()}};
}
std::vector<TensorMeta> unpad_infer(const std::vector<Tensor>& in, const Attrs& a) {
  return {{padded_shape(in[0].shape(), a.get_ints("pads"), -1), in[0].dtype()}};
}

std::vector<Tensor> constant_pad_backward(BackwardContext& ctx) { return {crop(ctx.grad(), ctx.attrs().get_ints("pads"))}; }
const OpDef kConstantPad{.name = "constant_pad", .infer = pad_infer, .backward = constant_pad_backward};
SKIFF_REGISTER_OP(kConstantPad);

const OpDef& pad_op();
const OpDef& pad_backward_op();
std::vector<Tensor> pad_grad(BackwardContext& ctx) { return {call_op1(pad_backward_op(), {ctx.grad()}, ctx.attrs())}; }
std::vector<Tensor> pad_backward_grad(BackwardContext& ctx) { return {call_op1(pad_op(), {ctx.grad()}, ctx.attrs())}; }
const OpDef kPad{.name = "pad", .infer = pad_infer, .backward = pad_grad};
SKIFF_REGISTER_OP(kPad);
const OpDef kPadBackward{.name = "pad_backward", .infer = unpad_infer, .backward = pad_backward_grad};
SKIFF_REGISTER_OP(kPadBackward);
const OpDef& pad_op() { return kPad; }
const OpDef& pad_backward_op() { return kPadBackward; }

}  // namespace

Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, const std::string& mode, double value) {
  SKIFF_CHECK(pads.size() % 2 == 0 && int64_t(pads.size()) <= 2 * x.dim(),
              "pad: expected an even number of pads, at most 2 * {} for input shape {}, got {}", x.dim(), x.shape(),
              pads);
  // Pads come from model files; bounding them keeps the size arithmetic below exact.
  constexpr int64_t kMaxPad = int64_t(1) << 40;
  for (int64_t p : pads) SKIFF_CHECK(p >= -kMaxPad && p <= kMaxPad, "pad: pad {} is out of range (shape {})", p, x.shape());
  SKIFF_CHECK(mode == "constant" || mode == "reflect" || mode == "replicate",
              "pad: expected mode constant, reflect or replicate, got '{}'", mode);
  if (mode == "constant") {
    // Negative pads crop first; the op then only adds.
    Tensor t = x;
    std::vector<int64_t> grow(pads.size());
    for (size_t i = 0; i < pads.size() / 2; ++i) {
      int64_t d = x.dim() - 1 - int64_t(i), before = pads[2 * i], after = pads[2 * i + 1];
      SKIFF_CHECK(x.shape()[d] + before + after >= 0, "pad: pads ({}, {}) remove more than dim {} of size {} (shape {})",
                  before, after, d, x.shape()[d], x.shape());
      if (before < 0 || after < 0)
        t = slice(t, d, std::max<int64_t>(0, -before), x.shape()[d] - std::max<int64_t>(0, -after));
      grow[2 * i] = std::max<int64_t>(0, before);
      grow[2 * i + 1] = std::max<int64_t>(0, after);
    }
    if (std::all_of(grow.begin(), grow.end(), [](int64_t p) { return p == 0; })) return t;
    return call_op1(kConstantPad, {t}, {{"pads", grow}, {"value", value}});
  }
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    int64_t d = x.dim() - 1 - int64_t(i), size = x.shape()[d];
    for (int64_t p : {pads[2 * i], pads[2 * i + 1]}) {
      SKIFF_CHECK(p >= 0, "pad: {} mode expects non-negative pads, got {}", mode, pads);
      if (mode == "reflect")
        SKIFF_CHECK(p < size, "pad: reflect padding {} must be smaller than dim {} of size {} (input shape {})", p, d,
                    size, x.shape());
      else
        SKIFF_CHECK(size > 0 || p == 0, "pad: replicate padding needs a non-empty dim {} (input shape {})", d,
                    x.shape());
    }
  }
  return call_op1(kPad, {x}, {{"pads", pads}, {"mode", mode}});
}

}  // namespace skiff
