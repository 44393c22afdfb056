// The fused inference ops (framework/ops/nn/fused.h): every kernel registered for an op agrees
// with its reference "cpu" kernel on the same call, the reference agrees with the unfused ops
// written out here, strided inputs fall through to a kernel that takes them, and bad arguments
// get errors naming the op.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "framework/core/rng.h"
#include "framework/ops/ops.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;

/// Records the outermost op call a function makes (its inputs and attributes).
struct CallRecorder : detail::OpObserver {
  std::string op;
  std::vector<Tensor> inputs;
  Attrs attrs;
  void on_op(const OpDef& def, const std::vector<Tensor>& in, const std::vector<Tensor>&, const Attrs& a,
             bool) override {
    op = def.name, inputs = in, attrs = a;
  }
};

/// Output 0 of one kernel entry run directly on a call.
Tensor run_entry(const KernelEntry& k, const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  std::vector<Tensor> outputs;
  for (const TensorMeta& m : op_def(op).infer(inputs, attrs)) outputs.push_back(full(m.shape, std::nan(""), m.dtype));
  KernelContext ctx{inputs, outputs, attrs};
  k.fn(ctx);
  return outputs[0];
}

/// Runs `call`, then every kernel of its op that takes the call, comparing each with the
/// reference kernel. Returns the reference result. `fast_must_run`: some non-reference kernel
/// must take the call (the geometry was picked for it).
Tensor expect_kernels_agree(const std::string& op, const std::function<Tensor()>& call, bool fast_must_run,
                            double tol = 1e-5) {
  CallRecorder rec;
  detail::OpObserver* prev = detail::set_op_observer(&rec);
  const Tensor result = call();
  detail::set_op_observer(prev);
  EXPECT_EQ(rec.op, op);
  const DType dtype = rec.inputs[0].dtype();
  Tensor reference;
  for (const KernelEntry& k : kernels_for(op))
    if (k.device == DeviceType::CPU && k.backend == "cpu" && k.priority == 0 && (k.dtypes & dtype_bit(dtype)))
      reference = run_entry(k, op, rec.inputs, rec.attrs);
  EXPECT_TRUE(reference.defined()) << op << " has no reference kernel for " << dtype_name(dtype);
  if (!reference.defined()) return result;
  expect_allclose(result, reference, tol, tol);
  bool fast_ran = false;
  for (const KernelEntry& k : kernels_for(op)) {
    if (k.device != DeviceType::CPU || !(k.dtypes & dtype_bit(dtype)) || (k.backend == "cpu" && k.priority == 0))
      continue;
    std::vector<Tensor> probe_out;
    for (const TensorMeta& m : op_def(op).infer(rec.inputs, rec.attrs)) probe_out.push_back(empty(m.shape, m.dtype));
    if (k.supports && !k.supports(KernelContext{rec.inputs, probe_out, rec.attrs})) continue;
    fast_ran = true;
    SCOPED_TRACE(op + " kernel of backend " + k.backend + ", priority " + std::to_string(k.priority));
    expect_allclose(run_entry(k, op, rec.inputs, rec.attrs), reference, tol, tol);
  }
  if (fast_must_run) EXPECT_TRUE(fast_ran) << op << ": no fast kernel took the call";
  return reference;
}

Tensor apply_chain(Tensor y, const std::vector<PostStep>& chain, const Tensor& residual) {
  for (const PostStep& s : chain) {
    switch (s.kind) {
      case PostOpKind::Relu: y = relu(y); break;
      case PostOpKind::LeakyRelu: y = leaky_relu(y, s.alpha); break;
      case PostOpKind::Clip: y = clamp(y, s.alpha, s.beta); break;
      case PostOpKind::HardSwish: y = hardswish(y); break;
      case PostOpKind::Linear: y = add(mul(y, double(s.alpha)), double(s.beta)); break;
      case PostOpKind::Logistic: y = sigmoid(y); break;
      case PostOpKind::Swish: y = mul(y, sigmoid(mul(y, double(s.alpha)))); break;
      case PostOpKind::Sum: y = add(y, residual); break;
    }
  }
  return y;
}

bool fast_backend_built() {
  for (const KernelEntry& k : kernels_for("fused_conv2d"))
    if (k.backend != "cpu") return true;
  return false;
}

struct ConvCase {
  int64_t n, c, h, w, o, k, stride, pad, groups;
  std::vector<PostStep> chain;
  bool bias, src_blocked, dst_blocked;
};

TEST(FusedConv2d, EveryKernelMatchesTheUnfusedOps) {
  const std::vector<PostStep> sum_relu{{PostOpKind::Sum}, {PostOpKind::Relu}};
  const std::vector<PostStep> hs{{PostOpKind::HardSwish}};
  const std::vector<PostStep> lin_clip{{PostOpKind::Linear, 0.5f, -0.25f}, {PostOpKind::Clip, -1.f, 2.f}};
  const std::vector<PostStep> swish{{PostOpKind::Swish, 1.5f}, {PostOpKind::LeakyRelu, 0.1f}, {PostOpKind::Logistic}};
  for (const ConvCase& t : std::vector<ConvCase>{
           {1, 20, 6, 9, 40, 1, 1, 0, 1, hs, true, false, false},          // pointwise, channel tails
           {2, 32, 7, 7, 32, 3, 1, 1, 32, sum_relu, true, true, true},     // depthwise, blocked both ways
           {1, 16, 9, 11, 24, 3, 2, 1, 1, lin_clip, false, true, false},   // dense stride 2, no bias
           {1, 3, 12, 12, 16, 3, 2, 1, 1, swish, true, false, true},       // 3-channel stem
           {1, 64, 28, 28, 64, 3, 1, 1, 1, sum_relu, true, false, false},  // Winograd-sized 3x3
           {1, 8, 5, 5, 8, 3, 1, 1, 2, {}, true, false, false}}) {         // grouped
    SCOPED_TRACE("conv " + std::to_string(t.c) + "->" + std::to_string(t.o) + " k" + std::to_string(t.k) + " g" +
                 std::to_string(t.groups));
    Generator gen(7);
    const Tensor x = randn({t.n, t.c, t.h, t.w}, DType::Float32, &gen);
    const Tensor w = mul(randn({t.o, t.c / t.groups, t.k, t.k}, DType::Float32, &gen), 0.3);
    const Tensor b = t.bias ? randn({t.o}, DType::Float32, &gen) : Tensor();
    const Tensor conv = conv2d(x, w, t.bias ? std::optional<Tensor>(b) : std::nullopt, {t.stride}, {t.pad}, {1},
                               t.groups);
    const bool with_sum = !t.chain.empty() && t.chain[0].kind == PostOpKind::Sum;
    const Tensor residual = with_sum ? randn(conv.shape(), DType::Float32, &gen) : Tensor();
    const Tensor expected = apply_chain(conv, t.chain, residual);
    FusedConv2dOptions o;
    o.stride = {t.stride, t.stride}, o.padding = {t.pad, t.pad}, o.groups = t.groups, o.post_ops = t.chain;
    o.blocked_output = t.dst_blocked;
    const Tensor xin = t.src_blocked ? to_channel_blocked(x) : x;
    const Tensor got = expect_kernels_agree(
        "fused_conv2d", [&] { return fused_conv2d(xin, w, b, residual, o); }, fast_backend_built() && (t.groups == 1 || t.groups == t.c),
        1e-4);  // Winograd and blocked sums round differently from the reference's
    expect_allclose(t.dst_blocked ? unblock_channels(got, t.o) : got, expected, 1e-4, 1e-4);
    if (t.dst_blocked) {  // the padded channels of a blocked result are zero
      const Tensor tail = narrow(reshape(permute(got, {0, 1, 4, 2, 3}), {got.size(0), got.size(1) * 16, got.size(2),
                                                                          got.size(3)}),
                                 1, t.o, got.size(1) * 16 - t.o);
      EXPECT_EQ(to(sum(abs(tail)), DType::Float64).to_vector<double>()[0], 0.0);
    }
  }
}

TEST(FusedConv2d, Float64AndStridedInputsRunTheReference) {
  Generator gen(3);
  const Tensor x = randn({1, 4, 6, 6}, DType::Float64, &gen);
  const Tensor w = randn({8, 4, 3, 3}, DType::Float64, &gen);
  FusedConv2dOptions o;
  o.padding = {1, 1};
  o.post_ops = {{PostOpKind::Relu}};
  expect_allclose(fused_conv2d(x, w, Tensor(), Tensor(), o), relu(conv2d(x, w, std::nullopt, {1}, {1})), 1e-12);
  // A transposed (strided) float32 input: the fast kernel declines it and the result is the same.
  const Tensor xt = transpose(randn({1, 16, 8, 8}, DType::Float32, &gen), 2, 3);
  const Tensor w32 = randn({16, 16, 1, 1}, DType::Float32, &gen);
  FusedConv2dOptions pw;
  expect_allclose(fused_conv2d(xt, w32, Tensor(), Tensor(), pw), conv2d(xt, w32), 1e-4, 1e-4);
}

TEST(FusedConv2d, BadArgumentsNameTheOp) {
  const Tensor x = zeros({1, 4, 5, 5}), w = zeros({8, 4, 3, 3});
  FusedConv2dOptions o;
  o.post_ops = {{PostOpKind::Sum}};
  EXPECT_THROW(
      {
        try {
          fused_conv2d(x, w, Tensor(), Tensor(), o);
        } catch (const ValueError& e) {
          EXPECT_NE(std::string(e.what()).find("fused_conv2d: the Sum step needs a residual"), std::string::npos)
              << e.what();
          throw;
        }
      },
      ValueError);
  o.post_ops = {};
  EXPECT_THROW(fused_conv2d(x, zeros({8, 3, 3, 3}), Tensor(), Tensor(), o), ShapeError);
  EXPECT_THROW(fused_conv2d(x, w, zeros({7}), Tensor(), o), ShapeError);
  EXPECT_THROW(fused_conv2d(to(x, DType::Int32), to(w, DType::Int32), Tensor(), Tensor(), o), TypeError);
  try {
    fused_conv2d(zeros({1, 2, 5, 5, 16}), w, Tensor(), Tensor(), o);
    FAIL() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("fused_conv2d: expected a channel-blocked input [N, 1, H, W, 16]"),
              std::string::npos)
        << e.what();
  }
}

TEST(EltwiseChain, EveryKernelMatchesTheSteps) {
  Generator gen(11);
  const Tensor x = mul(randn({3, 37, 5}, DType::Float32, &gen), 4.0);
  const std::vector<PostStep> chain{{PostOpKind::Linear, 2.f, 0.5f}, {PostOpKind::HardSwish},
                                    {PostOpKind::Swish, 0.7f}, {PostOpKind::Clip, -0.5f, 3.f}};
  const Tensor got = expect_kernels_agree("eltwise_chain", [&] { return eltwise_chain(x, chain); }, fast_backend_built());
  expect_allclose(got, apply_chain(x, chain, Tensor()), 1e-5, 1e-5);
  EXPECT_THROW(eltwise_chain(x, {{PostOpKind::Sum}}), ValueError);
  EXPECT_THROW(eltwise_chain(zeros({2}, DType::Int64), {}), TypeError);
}

TEST(UnblockChannels, InvertsToChannelBlockedOnEveryKernel) {
  Generator gen(5);
  for (int64_t c : {5, 16, 37}) {
    const Tensor x = randn({2, c, 3, 7}, DType::Float32, &gen);
    const Tensor blocked = to_channel_blocked(x);
    EXPECT_EQ(blocked.shape(), (Shape{2, (c + 15) / 16, 3, 7, 16}));
    const Tensor back =
        expect_kernels_agree("unblock_channels", [&] { return unblock_channels(blocked, c); }, fast_backend_built());
    expect_allclose(back, x, 0, 0);
  }
  EXPECT_THROW(unblock_channels(zeros({1, 2, 3, 3, 16}), 40), ShapeError);
}

TEST(ChannelMul, EveryKernelMatchesMulAndAdd) {
  Generator gen(9);
  const Tensor x = randn({2, 6, 5, 7}, DType::Float32, &gen);
  for (const Shape& s : {Shape{2, 6, 1, 1}, Shape{1, 6, 1, 1}}) {
    const Tensor scale = randn(s, DType::Float32, &gen);
    for (bool add_input : {false, true}) {
      const Tensor got =
          expect_kernels_agree("channel_mul", [&] { return channel_mul(x, scale, add_input); }, true);
      const Tensor m = mul(x, scale);
      expect_allclose(got, add_input ? add(x, m) : m, 1e-6, 1e-6);
    }
  }
  EXPECT_THROW(channel_mul(x, zeros({1, 5, 1, 1}), false), ShapeError);
}

TEST(UpsampleNearest2d, EveryKernelMatchesIndexing) {
  Generator gen(13);
  const Tensor x = randn({1, 3, 4, 5}, DType::Float32, &gen);
  for (auto [fh, fw] : {std::pair<int64_t, int64_t>{2, 2}, {1, 3}, {3, 1}}) {
    const Tensor residual = randn({1, 3, 4 * fh, 5 * fw}, DType::Float32, &gen);
    for (bool with_residual : {false, true}) {
      const Tensor r = with_residual ? residual : Tensor();
      const Tensor got = expect_kernels_agree("upsample_nearest2d", [&] { return upsample_nearest2d(x, fh, fw, r); },
                                              true);
      const auto xv = x.to_vector<float>(), rv = residual.to_vector<float>(), gv = got.to_vector<float>();
      const int64_t oh = 4 * fh, ow = 5 * fw;
      for (int64_t p = 0; p < 3; ++p)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            const size_t o = size_t((p * oh + i) * ow + j);
            const float want = xv[size_t((p * 4 + i / fh) * 5 + j / fw)] + (with_residual ? rv[o] : 0.f);
            ASSERT_FLOAT_EQ(gv[o], want) << "plane " << p << " at " << i << ", " << j;
          }
    }
  }
  EXPECT_THROW(upsample_nearest2d(x, 2, 2, zeros({1, 3, 8, 9})), ShapeError);
  EXPECT_THROW(upsample_nearest2d(x, 0, 2), ValueError);
}

}  // namespace
}  // namespace skiff
