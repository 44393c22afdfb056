// Specs of the unary element-wise ops: each is its public function plus the
// std:: scalar function it must match, over the same six layouts.
#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

using cd = std::complex<double>;
using Fn1 = std::function<Tensor(const Tensor&)>;

// Contiguous (long enough for the vectorised body and its tail), 0-d, transposed,
// stepped, expanded and empty inputs in [lo, hi).
std::vector<std::pair<std::string, Tensor>> unary_inputs(DType t, Generator& g, double lo, double hi) {
  return {{"[5,13]", make({5, 13}, t, g, lo, hi)},
          {"0-d", make({}, t, g, lo, hi)},
          {"transposed [4,3]", transposed({4, 3}, t, g, lo, hi)},
          {"stepped [2,5]", stepped({2, 5}, t, g, lo, hi)},
          {"expanded [3,4]", expanded({3, 4}, t, g, lo, hi)},
          {"permuted [2,3,5]", permuted({2, 3, 5}, t, g, lo, hi)},
          {"empty [0,3]", make({0, 3}, t, g, lo, hi)}};
}

struct Unary {
  std::string op;
  std::vector<DType> dtypes;
  Fn1 fn;
  Scalar1 ref;
  double lo = -2, hi = 2;
  bool gradgrad = true;
  std::function<cd(cd)> cref = nullptr;  ///< complex inputs
  bool real_out = false;                 ///< complex input gives its real dtype (abs)
  bool float_only = true;                ///< a complex input has no kernel
};

OpSpec unary_spec(Unary u) {
  OpSpec s{.op = u.op, .dtypes = u.dtypes, .grad = true, .gradgrad = u.gradgrad};
  s.samples = [u](DType t, Generator& g) {
    std::vector<Sample> out;
    for (auto& [note, x] : unary_inputs(t, g, u.lo, u.hi)) {
      Sample smp{.note = note, .inputs = {x}};
      smp.run = [f = u.fn](const Tensors& in) { return Tensors{f(in[0])}; };
      smp.ref = [u, t](const Tensors& in) {
        if (is_complex(t)) return Tensors{map1c(in[0], u.cref, u.real_out ? to_real(t) : t)};
        return Tensors{map1(in[0], u.ref, t)};
      };
      out.push_back(smp);
    }
    // NaN and infinities, in a row long enough for the vectorised body: they must come
    // out as std:: gives them (NaN propagates).
    if (is_floating(t)) {
      std::vector<double> v = values(make({40}, DType::Float64, g, u.lo, u.hi));
      const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, NAN};
      for (size_t i = 0; i < 6; ++i) v[i * 7] = special[i];
      Sample smp{.note = "NaN, +-inf, +-0 among [40]", .inputs = {tensor_of(v, {40}, t)}, .gradcheck = false};
      smp.run = [f = u.fn](const Tensors& in) { return Tensors{f(in[0])}; };
      smp.ref = [u, t](const Tensors& in) { return Tensors{map1(in[0], u.ref, t)}; };
      out.push_back(smp);
    }
    return out;
  };
  if (u.float_only)
    s.errors = [u] {
      return std::vector<ErrorCase>{throws_<NotImplementedError>(
          "complex input", u.op, [f = u.fn] { f(zeros({2}, DType::Complex64)); })};
    };
  return s;
}

constexpr double kPi = 3.141592653589793;
const std::vector<DType> kReal = kFloats + kInts;

SKIFF_OP_SPEC(unary_spec({.op = "neg", .dtypes = kReal + kComplex, .fn = [](auto& x) { return neg(x); },
                          .ref = [](double x) { return -x; }, .gradgrad = false, .cref = [](cd z) { return -z; }, .float_only = false}));
SKIFF_OP_SPEC(unary_spec({.op = "abs", .dtypes = kReal + kComplex, .fn = [](auto& x) { return abs(x); },
                          .ref = [](double x) { return std::abs(x); }, .cref = [](cd z) { return cd(std::abs(z)); },
                          .real_out = true, .float_only = false}));
SKIFF_OP_SPEC(unary_spec({.op = "sign", .dtypes = kReal, .fn = [](auto& x) { return sign(x); },
                          .ref = [](double x) { return double((x > 0) - (x < 0)); }, .gradgrad = false}));
SKIFF_OP_SPEC(unary_spec({.op = "square", .dtypes = kReal, .fn = [](auto& x) { return square(x); },
                          .ref = [](double x) { return x * x; }}));
SKIFF_OP_SPEC(unary_spec({.op = "exp", .dtypes = kFloats, .fn = [](auto& x) { return exp(x); },
                          .ref = [](double x) { return std::exp(x); }}));
SKIFF_OP_SPEC(unary_spec({.op = "log", .dtypes = kFloats, .fn = [](auto& x) { return log(x); },
                          .ref = [](double x) { return std::log(x); }, .lo = 0.2, .hi = 3}));
SKIFF_OP_SPEC(unary_spec({.op = "log1p", .dtypes = kFloats, .fn = [](auto& x) { return log1p(x); },
                          .ref = [](double x) { return std::log1p(x); }, .lo = -0.5, .hi = 3}));
SKIFF_OP_SPEC(unary_spec({.op = "sqrt", .dtypes = kFloats, .fn = [](auto& x) { return sqrt(x); },
                          .ref = [](double x) { return std::sqrt(x); }, .lo = 0.2, .hi = 3}));
SKIFF_OP_SPEC(unary_spec({.op = "rsqrt", .dtypes = kFloats, .fn = [](auto& x) { return rsqrt(x); },
                          .ref = [](double x) { return 1 / std::sqrt(x); }, .lo = 0.2, .hi = 3}));
SKIFF_OP_SPEC(unary_spec({.op = "reciprocal", .dtypes = kFloats, .fn = [](auto& x) { return reciprocal(x); },
                          .ref = [](double x) { return 1 / x; }, .lo = 0.5, .hi = 2}));
SKIFF_OP_SPEC(unary_spec({.op = "sin", .dtypes = kFloats, .fn = [](auto& x) { return sin(x); },
                          .ref = [](double x) { return std::sin(x); }, .lo = -kPi, .hi = kPi}));
SKIFF_OP_SPEC(unary_spec({.op = "cos", .dtypes = kFloats, .fn = [](auto& x) { return cos(x); },
                          .ref = [](double x) { return std::cos(x); }, .lo = -kPi, .hi = kPi}));
SKIFF_OP_SPEC(unary_spec({.op = "tan", .dtypes = kFloats, .fn = [](auto& x) { return tan(x); },
                          .ref = [](double x) { return std::tan(x); }, .lo = -1.2, .hi = 1.2}));
SKIFF_OP_SPEC(unary_spec({.op = "tanh", .dtypes = kFloats, .fn = [](auto& x) { return tanh(x); },
                          .ref = [](double x) { return std::tanh(x); }, .lo = -3, .hi = 3}));
SKIFF_OP_SPEC(unary_spec({.op = "sigmoid", .dtypes = kFloats, .fn = [](auto& x) { return sigmoid(x); },
                          .ref = [](double x) { return 1 / (1 + std::exp(-x)); }, .lo = -4, .hi = 4}));
SKIFF_OP_SPEC(unary_spec({.op = "erf", .dtypes = kFloats, .fn = [](auto& x) { return erf(x); },
                          .ref = [](double x) { return std::erf(x); }}));
SKIFF_OP_SPEC(unary_spec({.op = "floor", .dtypes = kFloats, .fn = [](auto& x) { return floor(x); },
                          .ref = [](double x) { return std::floor(x); }, .gradgrad = false}));
SKIFF_OP_SPEC(unary_spec({.op = "ceil", .dtypes = kFloats, .fn = [](auto& x) { return ceil(x); },
                          .ref = [](double x) { return std::ceil(x); }, .gradgrad = false}));
// Ties go to even, as std::nearbyint does in the default rounding mode.
SKIFF_OP_SPEC(unary_spec({.op = "round", .dtypes = kFloats, .fn = [](auto& x) { return round(x); },
                          .ref = [](double x) { return std::nearbyint(x); }, .lo = -4, .hi = 4,
                          .gradgrad = false}));
// relu(NaN) is 0 here, as the fused conv post-ops (blocked_conv's v > 0 ? v : 0) give it;
// PyTorch gives NaN. Left as is so eager and fused graphs agree until that is decided.
SKIFF_OP_SPEC(unary_spec({.op = "relu", .dtypes = kReal, .fn = [](auto& x) { return relu(x); },
                          .ref = [](double x) { return x > 0 ? x : 0.0; }, .gradgrad = false}));
SKIFF_OP_SPEC(unary_spec({.op = "leaky_relu", .dtypes = kFloats, .fn = [](auto& x) { return leaky_relu(x, 0.2); },
                          .ref = [](double x) { return x > 0 ? x : 0.2 * x; }, .gradgrad = false}));
SKIFF_OP_SPEC(unary_spec({.op = "hardswish", .dtypes = kFloats, .fn = [](auto& x) { return hardswish(x); },
                          .ref = [](double x) { return x * std::clamp(x + 3, 0.0, 6.0) / 6; }, .lo = -4.5,
                          .hi = 4.5}));

// clamp: also integer inputs, and a min above max is refused before any kernel runs.
OpSpec clamp_spec() {
  OpSpec s = unary_spec({.op = "clamp", .dtypes = kReal, .fn = [](auto& x) { return clamp(x, -0.7, 1.2); },
                         .ref = [](double x) { return std::clamp(x, -0.7, 1.2); }, .gradgrad = false,
                         .float_only = false});
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ValueError>("min > max", "clamp", [] { clamp(zeros({2}), 2.0, 1.0); }),
        throws_<NotImplementedError>("complex input", "clamp", [] { clamp(zeros({2}, DType::Complex64), 0, 1); })};
  };
  // Integer samples clamp to [-0.7, 1.2] compared in double; the kernel casts the
  // bounds to the integer type first, which gives the same result for these bounds
  // only after rounding: use integral bounds there.
  auto base = s.samples;
  s.samples = [base](DType t, Generator& g) {
    std::vector<Sample> v = base(t, g);
    if (is_integral(t))
      for (auto& smp : v) {
        smp.run = [](const Tensors& in) { return Tensors{clamp(in[0], -1.0, 1.0)}; };
        smp.ref = [t](const Tensors& in) {
          return Tensors{map1(in[0], [](double x) { return std::clamp(x, -1.0, 1.0); }, t)};
        };
      }
    return v;
  };
  return s;
}
SKIFF_OP_SPEC(clamp_spec());

// relu_backward(grad, y) = grad where y > 0: relu's backward, also a public function.
OpSpec relu_backward_spec() {
  OpSpec s{.op = "relu_backward", .dtypes = kFloats, .grad = true, .backward_of = "relu"};
  s.samples = [](DType t, Generator& g) {
    auto ref = [t](const Tensors& in) {
      return Tensors{map2(in[0], in[1], [](double gr, double y) { return y > 0 ? gr : 0.0; }, t)};
    };
    auto run = [](const Tensors& in) { return Tensors{relu_backward(in[0], in[1])}; };
    return std::vector<Sample>{
        {.note = "[5,13]", .inputs = {make({5, 13}, t, g), make({5, 13}, t, g)}, .run = run, .ref = ref},
        {.note = "transposed grad, stepped y", .inputs = {transposed({3, 4}, t, g), stepped({3, 4}, t, g)},
         .run = run, .ref = ref},
        {.note = "empty", .inputs = {make({0, 2}, t, g), make({0, 2}, t, g)}, .run = run, .ref = ref}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("shapes differ", "relu_backward", [] { relu_backward(zeros({2}), zeros({3})); }),
        throws_<TypeError>("dtypes differ", "relu_backward",
                           [] { relu_backward(zeros({2}), zeros({2}, DType::Float64)); })};
  };
  return s;
}
SKIFF_OP_SPEC(relu_backward_spec());

// hardswish_backward has no public function: its samples differentiate hardswish,
// against the derivative 0 / (2x + 3) / 6 / 1 written out.
OpSpec hardswish_backward_spec() {
  OpSpec s{.op = "hardswish_backward", .dtypes = kFloats, .grad = true, .backward_of = "hardswish"};
  s.samples = [](DType t, Generator& g) {
    auto run = [](const Tensors& in) {
      // Under gradcheck x is already a leaf: keep it, so d/dx of the gradient is checked too.
      Tensor x = in[0].requires_grad() ? in[0] : detail::contiguous_copy(in[0]).set_requires_grad();
      return autograd::grad({hardswish(x)}, {x}, {in[1]}, /*create_graph=*/true);  // differentiable in grad
    };
    auto ref = [t](const Tensors& in) {
      return Tensors{map2(in[0], in[1], [](double x, double gr) {
        return x < -3 ? 0.0 : x <= 3 ? gr * (2 * x + 3) / 6 : gr;
      }, t)};
    };
    return std::vector<Sample>{
        {.note = "[5,13]", .inputs = {make({5, 13}, t, g, -4.5, 4.5), make({5, 13}, t, g)}, .run = run, .ref = ref},
        {.note = "transposed grad", .inputs = {make({3, 4}, t, g, -4.5, 4.5), transposed({3, 4}, t, g)},
         .run = run, .ref = ref},
        {.note = "empty", .inputs = {make({0, 3}, t, g), make({0, 3}, t, g)}, .run = run, .ref = ref}};
  };
  return s;
}
SKIFF_OP_SPEC(hardswish_backward_spec());

}  // namespace
}  // namespace skiff::spec
