// activation_jet: the op definition, its backward, and the unfused reference.
#include "framework/ops/taylor/taylor.h"

#include "framework/core/error.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/elementwise/unary.h"
#include "framework/ops/node.h"
#include "framework/ops/op.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/shape/shape_ops.h"
#include "framework/ops/taylor/jet_formulas.h"

namespace skiff {
namespace {

// Tensor arithmetic where an undefined tensor is zero: most coefficients of a
// series entering the first hidden layer are exactly zero and cost nothing.
struct TensorOps {
  Tensor add(const Tensor& a, const Tensor& b) const {
    if (!a.defined()) return b;
    if (!b.defined()) return a;
    return skiff::add(a, b);
  }
  Tensor mul(const Tensor& a, const Tensor& b) const {
    return a.defined() && b.defined() ? skiff::mul(a, b) : Tensor();
  }
  Tensor scale(double c, const Tensor& a) const { return a.defined() ? skiff::mul(a, c) : Tensor(); }
};

void check_activation(const std::string& a) {
  SKIFF_CHECK(a == "tanh" || a == "sin", "activation_jet: activation must be 'tanh' or 'sin', got '{}'", a);
}

// f^(1..count)(z0) with differentiable ops.
std::vector<Tensor> derivatives(const Tensor& z0, const std::string& act, int count) {
  std::vector<Tensor> f;
  if (act == "tanh") {
    Tensor t = tanh(z0), t2 = mul(t, t), f1 = sub(1.0, t2);
    f = {f1, mul(mul(t, f1), -2.0), mul(f1, sub(mul(t2, 6.0), 2.0)), mul(mul(f1, t), sub(16.0, mul(t2, 24.0))),
         mul(f1, add(sub(16.0, mul(t2, 120.0)), mul(mul(t2, t2), 120.0)))};
  } else {
    Tensor s = sin(z0), c = cos(z0);
    f = {c, neg(s), neg(c), s, c};
  }
  f.resize(size_t(count));
  return f;
}

template <int K>
std::vector<Tensor> compose_tensors(const std::vector<Tensor>& f, std::vector<Tensor> z) {
  z.resize(K);
  Tensor y[K];
  jet::compose<K>(f.data(), z.data(), y, TensorOps{});
  return std::vector<Tensor>(y, y + K);
}

std::vector<TensorMeta> infer_jet(const std::vector<Tensor>& in, const Attrs& attrs) {
  const int order = int(attrs.get_int("order"));
  const Tensor& z0 = in[0];
  SKIFF_CHECK_DTYPE(z0.dtype() == DType::Float32 || z0.dtype() == DType::Float64,
                    "activation_jet: expected float32 or float64, got {}", dtype_name(z0.dtype()));
  SKIFF_CHECK_SHAPE(z0.dim() == 2, "activation_jet: z0 must be [N, H], got {}", z0.shape());
  const int64_t n = z0.size(0), h = z0.size(1);
  SKIFF_CHECK_SHAPE(in[1].dim() == 3 && in[1].size(2) == h && (in[1].size(1) == n || in[1].size(1) == 1),
                    "activation_jet: z1 must be [M, {}, {}] or [M, 1, {}], got {}", n, h, h, in[1].shape());
  const int64_t m = in[1].size(0);
  for (size_t k = 1; k < in.size(); ++k) {
    SKIFF_CHECK_DTYPE(in[k].dtype() == z0.dtype(), "activation_jet: coefficient {} is {}, z0 is {}", k,
                      dtype_name(in[k].dtype()), dtype_name(z0.dtype()));
    if (k >= 2)
      SKIFF_CHECK_SHAPE(in[k].shape() == (Shape{m, n, h}), "activation_jet: z{} must be [{}, {}, {}], got {}", k, m,
                        n, h, in[k].shape());
  }
  std::vector<TensorMeta> out{{z0.shape(), z0.dtype()}};
  for (int k = 0; k < order; ++k) out.push_back({Shape{m, n, h}, z0.dtype()});
  return out;
}

std::vector<TensorMeta> infer_jet_backward(const std::vector<Tensor>& in, const Attrs& attrs) {
  const int g = int(attrs.get_int("given"));
  std::vector<TensorMeta> out{{in[0].shape(), in[0].dtype()}};
  const Shape full{in[2].size(0), in[0].size(0), in[0].size(1)};  // inputs: z0, y0, z1, ...
  for (int k = 0; k < g; ++k) out.push_back({full, in[0].dtype()});
  return out;
}

const OpDef kJetBackward{.name = "activation_jet_backward", .infer = infer_jet_backward};
SKIFF_REGISTER_OP(kJetBackward);

template <int K>
std::vector<Tensor> differentiable_adjoint(const std::vector<Tensor>& f, std::vector<Tensor> z,
                                           std::vector<Tensor> g) {
  z.resize(K);
  Tensor gz[K], gz0;
  jet::adjoint<K>(f.data(), z.data(), g.data(), gz, gz0, TensorOps{});
  std::vector<Tensor> out{gz0};
  out.insert(out.end(), gz, gz + K);
  return out;
}

std::vector<Tensor> jet_backward(BackwardContext& c) {
  const int order = int(c.attrs().get_int("order"));
  const std::string& act = c.attrs().get_string("activation");
  const int given = c.num_inputs() - 1;
  std::vector<Tensor> z;
  for (int k = 1; k <= given; ++k) z.push_back(c.input(k));
  std::vector<Tensor> gz;  // gz[0]: z0's gradient, gz[k]: z_k's (full [M, N, H])
  if (GradMode::enabled()) {
    // create_graph: build the gradient from differentiable ops so it can be differentiated again.
    Tensor z0 = c.input(0);
    auto f = derivatives(z0, act, order + 1);
    std::vector<Tensor> g;
    for (int k = 1; k <= order; ++k) g.push_back(c.grad(k));
    switch (order) {
      case 1: gz = differentiable_adjoint<1>(f, z, g); break;
      case 2: gz = differentiable_adjoint<2>(f, z, g); break;
      case 3: gz = differentiable_adjoint<3>(f, z, g); break;
      default: gz = differentiable_adjoint<4>(f, z, g); break;
    }
    gz[0] = add(mul(c.grad(0), f[0]), sum(gz[0], {0}));
    gz.resize(size_t(given) + 1);
    for (auto& t : gz)
      if (!t.defined()) t = zeros(c.input_meta(0).shape, c.input_meta(0).dtype);
  } else {
    std::vector<Tensor> in{c.input(0), c.output(0)};
    in.insert(in.end(), z.begin(), z.end());
    for (int k = 0; k <= order; ++k) in.push_back(c.grad(k));
    gz = call_op(kJetBackward, in, {{"order", int64_t(order)}, {"activation", act}, {"given", int64_t(given)}});
  }
  // z1 shared by every point: its gradient sums over the points.
  if (z[0].size(1) == 1 && c.input_meta(0).shape[0] != 1) gz[1] = sum(gz[1], {1}, true);
  if (gz[1].shape() != z[0].shape()) gz[1] = reshape(gz[1], z[0].shape());
  return gz;
}

const OpDef kJet{.name = "activation_jet", .infer = infer_jet, .backward = jet_backward, .save_inputs = 0x1f,
                .save_outputs = 1};
SKIFF_REGISTER_OP(kJet);

void check_args(const std::vector<Tensor>& z, int order, const std::string& activation) {
  check_activation(activation);
  SKIFF_CHECK(order >= 1 && order <= 4, "activation_jet: order must be 1..4, got {}", order);
  SKIFF_CHECK(!z.empty() && int(z.size()) <= order, "activation_jet: need 1..{} coefficients, got {}", order,
              z.size());
  for (size_t k = 0; k < z.size(); ++k)
    SKIFF_CHECK(z[k].defined(), "activation_jet: coefficient {} is undefined", k + 1);
}

}  // namespace

std::vector<Tensor> activation_jet(const Tensor& z0, const std::vector<Tensor>& z, int order,
                                   const std::string& activation) {
  check_args(z, order, activation);
  std::vector<Tensor> in{z0};
  in.insert(in.end(), z.begin(), z.end());
  return call_op(kJet, in, {{"order", int64_t(order)}, {"activation", activation}});
}

std::vector<Tensor> activation_jet_reference(const Tensor& z0, const std::vector<Tensor>& z, int order,
                                             const std::string& activation) {
  check_args(z, order, activation);
  auto f = derivatives(z0, activation, order);
  std::vector<Tensor> y;
  switch (order) {
    case 1: y = compose_tensors<1>(f, z); break;
    case 2: y = compose_tensors<2>(f, z); break;
    case 3: y = compose_tensors<3>(f, z); break;
    default: y = compose_tensors<4>(f, z); break;
  }
  y.insert(y.begin(), activation == "tanh" ? tanh(z0) : sin(z0));
  return y;
}

}  // namespace skiff
