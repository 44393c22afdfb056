// Specs of the fused inference ops other than fused_conv2d (conv_pool_specs.cpp has it):
// eltwise_chain, unblock_channels, channel_mul and upsample_nearest2d. References are the
// element-wise formulas and index arithmetic in float64. Float32 samples reach the fast kernels
// (the blocked_conv chain loops, the register-transpose unblock, the CPU float32 loops); none of
// these ops is differentiable (they run inference graphs).
#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

OpSpec eltwise_chain_spec() {
  OpSpec s{.op = "eltwise_chain", .dtypes = kF32F64};
  s.samples = [](DType t, Generator& g) {
    const std::vector<std::vector<PostStep>> chains{
        {{PostOpKind::Linear, 2.f, 0.5f}, {PostOpKind::HardSwish}, {PostOpKind::Swish, 0.7f}, {PostOpKind::Clip, -0.5f, 3.f}},
        {{PostOpKind::LeakyRelu, 0.1f}, {PostOpKind::Logistic}, {PostOpKind::Relu}},
        {}};
    const std::vector<std::pair<std::string, Tensor>> inputs{{"[3,37,5]", make({3, 37, 5}, t, g, -6, 6)},
                                                             {"transposed [6,9]", transposed({6, 9}, t, g, -6, 6)},
                                                             {"empty [0,4]", make({0, 4}, t, g)}};
    std::vector<Sample> v;
    for (size_t k = 0; k < chains.size(); ++k)
      for (const auto& [note, x] : inputs) {
        const std::vector<PostStep> chain = chains[k];
        v.push_back({.note = "chain " + std::to_string(k) + " on " + note,
                     .inputs = {x},
                     .run = [chain](const Tensors& in) { return Tensors{eltwise_chain(in[0], chain)}; },
                     .ref = [chain, t](const Tensors& in) {
                       return Tensors{map1(in[0], [&](double e) {
                         for (const PostStep& st : chain) e = post_step(st, e, 0);
                         return e;
                       }, t)};
                     },
                     .gradcheck = false});
      }
    return v;
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ValueError>("Sum step", "eltwise_chain: a Sum step needs a residual",
                            [] { eltwise_chain(zeros({2}), {{PostOpKind::Sum}}); }),
        throws_<TypeError>("int64 input", "eltwise_chain", [] { eltwise_chain(zeros({2}, DType::Int64), {}); })};
  };
  return s;
}
SKIFF_OP_SPEC(eltwise_chain_spec());

OpSpec unblock_channels_spec() {
  OpSpec s{.op = "unblock_channels", .dtypes = kF32F64};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    for (const Shape& shape : {Shape{2, 5, 3, 7}, Shape{1, 16, 2, 2}, Shape{1, 37, 4, 3}, Shape{0, 20, 2, 2}}) {
      const int64_t channels = shape[1];
      v.push_back({.note = "[" + std::to_string(shape[0]) + "," + std::to_string(channels) + ",..] blocked",
                   .inputs = {block_channels_ref(make(shape, t, g), t)},
                   .run = [channels](const Tensors& in) { return Tensors{unblock_channels(in[0], channels)}; },
                   .ref = [channels, t](const Tensors& in) { return Tensors{unblock_channels_ref(in[0], channels, t)}; },
                   .gradcheck = false});
    }
    // A strided blocked value: every other row of a taller one.
    Tensor tall = block_channels_ref(make({1, 20, 6, 3}, t, g), t);
    v.push_back({.note = "strided rows",
                 .inputs = {slice(tall, 2, 0, 6, 2)},
                 .run = [](const Tensors& in) { return Tensors{unblock_channels(in[0], 20)}; },
                 .ref = [t](const Tensors& in) { return Tensors{unblock_channels_ref(in[0], 20, t)}; },
                 .gradcheck = false});
    return v;
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("too many channels for the blocks", "unblock_channels: expected a channel-blocked input",
                            [] { unblock_channels(zeros({1, 2, 3, 3, 16}), 40); }),
        throws_<ShapeError>("4-D input", "unblock_channels", [] { unblock_channels(zeros({1, 16, 3, 3}), 16); })};
  };
  return s;
}
SKIFF_OP_SPEC(unblock_channels_spec());

OpSpec channel_mul_spec() {
  OpSpec s{.op = "channel_mul", .dtypes = kF32F64};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    struct Case {
      std::string note;
      Tensor x, scale;
    };
    const std::vector<Case> cases{{"per-sample scale", make({2, 6, 5, 7}, t, g), make({2, 6, 1, 1}, t, g)},
                                  {"shared scale", make({3, 4, 2, 9}, t, g), make({1, 4, 1, 1}, t, g)},
                                  {"transposed x", transposed({1, 3, 4, 6}, t, g), make({1, 3, 1, 1}, t, g)},
                                  {"empty planes", make({2, 3, 0, 4}, t, g), make({2, 3, 1, 1}, t, g)}};
    for (const Case& c : cases)
      for (bool add_input : {false, true})
        v.push_back({.note = c.note + (add_input ? ", + x" : ""),
                     .inputs = {c.x, c.scale},
                     .run = [add_input](const Tensors& in) { return Tensors{channel_mul(in[0], in[1], add_input)}; },
                     .ref = [add_input, t](const Tensors& in) {
                       return Tensors{map2(in[0], in[1], [&](double x, double k) { return add_input ? x + x * k : x * k; },
                                           t)};
                     },
                     .gradcheck = false});
    return v;
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("scale of another channel count", "channel_mul: expected x [N, C, H, W] and a scale",
                            [] { channel_mul(zeros({1, 6, 2, 2}), zeros({1, 5, 1, 1}), false); }),
        throws_<TypeError>("mixed dtypes", "channel_mul",
                           [] { channel_mul(zeros({1, 2, 2, 2}), zeros({1, 2, 1, 1}, DType::Float64), false); })};
  };
  return s;
}
SKIFF_OP_SPEC(channel_mul_spec());

OpSpec upsample_nearest2d_spec() {
  OpSpec s{.op = "upsample_nearest2d", .dtypes = kF32F64};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    struct Case {
      std::string note;
      Tensor x;
      int64_t fh, fw;
      bool residual;
    };
    const std::vector<Case> cases{{"x2", make({1, 3, 4, 5}, t, g), 2, 2, false},
                                  {"x2 + residual", make({2, 2, 3, 3}, t, g), 2, 2, true},
                                  {"1x3 + residual", make({1, 2, 4, 5}, t, g), 1, 3, true},
                                  {"3x1 transposed", transposed({1, 2, 4, 3}, t, g), 3, 1, false},
                                  {"empty batch", make({0, 2, 3, 3}, t, g), 2, 2, true}};
    for (const Case& c : cases) {
      Tensors in{c.x};
      const Shape out{c.x.size(0), c.x.size(1), c.x.size(2) * c.fh, c.x.size(3) * c.fw};
      if (c.residual) in.push_back(make(out, t, g));
      const int64_t fh = c.fh, fw = c.fw;
      v.push_back({.note = c.note,
                   .inputs = in,
                   .run = [fh, fw](const Tensors& in) {
                     return Tensors{upsample_nearest2d(in[0], fh, fw, in.size() > 1 ? in[1] : Tensor())};
                   },
                   .ref = [fh, fw, out, t](const Tensors& in) {
                     Tensor up = index_map(in[0], out, [&](const std::vector<int64_t>& i) {
                       return ravel({i[0], i[1], i[2] / fh, i[3] / fw}, in[0].shape());
                     }, DType::Float64);
                     if (in.size() > 1) up = map2(up, in[1], [](double a, double b) { return a + b; }, DType::Float64);
                     return Tensors{tensor_of(values(up), out, t)};
                   },
                   .gradcheck = false});
    }
    return v;
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("residual shape", "upsample_nearest2d: expected a residual of shape [1, 3, 8, 10]",
                            [] { upsample_nearest2d(zeros({1, 3, 4, 5}), 2, 2, zeros({1, 3, 8, 9})); }),
        throws_<ValueError>("zero factor", "upsample_nearest2d", [] { upsample_nearest2d(zeros({1, 3, 4, 5}), 0, 2); }),
        throws_<ShapeError>("3-D input", "upsample_nearest2d", [] { upsample_nearest2d(zeros({3, 4, 5}), 2, 2); })};
  };
  return s;
}
SKIFF_OP_SPEC(upsample_nearest2d_spec());

}  // namespace
}  // namespace skiff::spec
