// Specs of the binary element-wise ops (arithmetic, comparisons, logical ops,
// where): broadcasting, strided and empty operands, type promotion, all dtypes.
#include <cmath>

#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

using cd = std::complex<double>;
using Fn2 = std::function<Tensor(const Tensor&, const Tensor&)>;

// Pairs of operands: equal shapes (vector body + tail), broadcast [3,1] x [4],
// 0-d x [2,3], transposed x stepped, expanded x contiguous, empty x broadcast.
// `lo_b`: the right operand's range (a divisor stays away from 0).
std::vector<std::pair<std::string, Tensors>> binary_inputs(DType t, Generator& g, double lo_b, double hi_b) {
  return {{"[5,13] x [5,13]", {make({5, 13}, t, g), make({5, 13}, t, g, lo_b, hi_b)}},
          {"broadcast [3,1] x [4]", {make({3, 1}, t, g), make({4}, t, g, lo_b, hi_b)}},
          {"0-d x [2,3]", {make({}, t, g), make({2, 3}, t, g, lo_b, hi_b)}},
          {"transposed x stepped", {transposed({3, 4}, t, g), stepped({3, 4}, t, g, lo_b, hi_b)}},
          {"expanded x [3,4]", {expanded({3, 4}, t, g), make({3, 4}, t, g, lo_b, hi_b)}},
          {"permuted [2,3,5] x middle-broadcast [2,1,5]", {permuted({2, 3, 5}, t, g), make({2, 1, 5}, t, g, lo_b, hi_b)}},
          {"[2,1,5] x permuted [1,3,1]", {make({2, 1, 5}, t, g), permuted({1, 3, 1}, t, g, lo_b, hi_b)}},
          {"empty [0,4] x [4]", {make({0, 4}, t, g), make({4}, t, g, lo_b, hi_b)}}};
}

struct Binary {
  std::string op;
  std::vector<DType> dtypes;
  Fn2 fn;
  Scalar2 ref;
  std::function<cd(cd, cd)> cref = nullptr;
  double lo_b = -2, hi_b = 2;
  bool grad = true, gradgrad = true;
  bool boolean_out = false;       ///< comparisons
  bool int_gives_float = false;   ///< div: integer operands divide in float32
};

OpSpec binary_spec(Binary b) {
  OpSpec s{.op = b.op, .dtypes = b.dtypes, .grad = b.grad, .gradgrad = b.gradgrad};
  s.samples = [b](DType t, Generator& g) {
    DType out = b.boolean_out ? DType::Bool : (b.int_gives_float && !is_differentiable(t)) ? DType::Float32 : t;
    auto ref = [b, out, t](const Tensors& in) {
      if (is_complex(t)) return Tensors{map2c(in[0], in[1], b.cref, out)};
      return Tensors{map2(in[0], in[1], b.ref, out)};
    };
    auto run = [f = b.fn](const Tensors& in) { return Tensors{f(in[0], in[1])}; };
    std::vector<Sample> v;
    for (auto& [note, xs] : binary_inputs(t, g, b.lo_b, b.hi_b)) v.push_back({.note = note, .inputs = xs, .run = run, .ref = ref});
    // Mixed dtypes promote (float32 x int32 -> float32, int8 x uint8 -> int32).
    if (is_floating(t) || t == DType::Int8) {
      DType other = is_floating(t) ? DType::Int32 : DType::UInt8;
      DType p = b.boolean_out ? DType::Bool : promote_types(t, other);
      if (b.int_gives_float && !is_differentiable(p)) p = DType::Float32;
      v.push_back({.note = "promotes with " + std::string(dtype_name(other)),
                   .inputs = {make({2, 3}, t, g), make({2, 3}, other, g, std::max(b.lo_b, 1.0), 2)},
                   .run = run,
                   .ref = [b, p](const Tensors& in) { return Tensors{map2(in[0], in[1], b.ref, p)}; },
                   .gradcheck = false});
    }
    return v;
  };
  s.errors = [b] {
    return std::vector<ErrorCase>{throws_<ShapeError>("shapes [2,3] and [4] do not broadcast", "shapes [2, 3] and [4]",
                                                      [f = b.fn] { f(zeros({2, 3}), zeros({4})); })};
  };
  return s;
}

const std::vector<DType> kReal = kFloats + kInts;
const std::vector<DType> kNumeric = kReal + kComplex;

SKIFF_OP_SPEC(binary_spec({.op = "add", .dtypes = kNumeric, .fn = [](auto& a, auto& b) { return add(a, b); },
                           .ref = [](double a, double b) { return a + b; },
                           .cref = [](cd a, cd b) { return a + b; }, .gradgrad = false}));
SKIFF_OP_SPEC(binary_spec({.op = "sub", .dtypes = kNumeric, .fn = [](auto& a, auto& b) { return sub(a, b); },
                           .ref = [](double a, double b) { return a - b; },
                           .cref = [](cd a, cd b) { return a - b; }, .gradgrad = false}));
SKIFF_OP_SPEC(binary_spec({.op = "mul", .dtypes = kNumeric, .fn = [](auto& a, auto& b) { return mul(a, b); },
                           .ref = [](double a, double b) { return a * b; },
                           .cref = [](cd a, cd b) { return a * b; }}));
// Integer operands divide in float32 (the public function converts them first).
OpSpec div_spec() {
  OpSpec s = binary_spec({.op = "div", .dtypes = kNumeric, .fn = [](auto& a, auto& b) { return div(a, b); },
                          .ref = [](double a, double b) { return a / b; }, .cref = [](cd a, cd b) { return a / b; },
                          .lo_b = 0.5, .hi_b = 2, .int_gives_float = true});
  s.unreachable_dtypes = kInts;
  return s;
}
SKIFF_OP_SPEC(div_spec());
// Positive real bases keep real powers real; integer exponents stay >= 0 (integer
// pow). Complex powers take the principal branch, as std::pow does.
OpSpec pow_spec() {
  OpSpec s = binary_spec({.op = "pow", .dtypes = kNumeric, .fn = [](auto& a, auto& b) { return pow(a, b); },
                          .ref = [](double a, double b) { return std::pow(a, b); },
                          .cref = [](cd a, cd b) { return std::pow(a, b); }, .lo_b = 0, .hi_b = 3});
  auto base = s.samples;
  s.samples = [base](DType t, Generator& g) {
    std::vector<Sample> v = base(t, g);
    if (!is_complex(t))
      for (auto& smp : v) smp.inputs[0] = abs(smp.inputs[0]) + (is_integral(t) ? 0.0 : 0.5);
    return v;
  };
  return s;
}
SKIFF_OP_SPEC(pow_spec());
SKIFF_OP_SPEC(binary_spec({.op = "maximum", .dtypes = kReal, .fn = [](auto& a, auto& b) { return maximum(a, b); },
                           .ref = [](double a, double b) { return std::max(a, b); }, .gradgrad = false}));
SKIFF_OP_SPEC(binary_spec({.op = "minimum", .dtypes = kReal, .fn = [](auto& a, auto& b) { return minimum(a, b); },
                           .ref = [](double a, double b) { return std::min(a, b); }, .gradgrad = false}));

// Comparisons: integer samples in [-2, 2] tie often, so equality is exercised.
Binary compare_op(std::string op, Fn2 fn, Scalar2 ref, std::vector<DType> dtypes) {
  return {.op = std::move(op), .dtypes = std::move(dtypes), .fn = std::move(fn), .ref = std::move(ref),
          .grad = false, .gradgrad = false, .boolean_out = true};
}
const std::vector<DType> kOrdered = kReal + std::vector<DType>{DType::Bool};
OpSpec eq_spec() {
  Binary b = compare_op("eq", [](auto& a, auto& b) { return eq(a, b); }, [](double a, double b) { return double(a == b); },
                        kOrdered + kComplex);
  b.cref = [](cd a, cd b) { return cd(a == b); };
  return binary_spec(b);
}
SKIFF_OP_SPEC(eq_spec());
SKIFF_OP_SPEC(binary_spec(compare_op("ne", [](auto& a, auto& b) { return ne(a, b); },
                                     [](double a, double b) { return double(a != b); }, kOrdered)));
SKIFF_OP_SPEC(binary_spec(compare_op("lt", [](auto& a, auto& b) { return lt(a, b); },
                                     [](double a, double b) { return double(a < b); }, kOrdered)));
SKIFF_OP_SPEC(binary_spec(compare_op("le", [](auto& a, auto& b) { return le(a, b); },
                                     [](double a, double b) { return double(a <= b); }, kOrdered)));
SKIFF_OP_SPEC(binary_spec(compare_op("gt", [](auto& a, auto& b) { return gt(a, b); },
                                     [](double a, double b) { return double(a > b); }, kOrdered)));
SKIFF_OP_SPEC(binary_spec(compare_op("ge", [](auto& a, auto& b) { return ge(a, b); },
                                     [](double a, double b) { return double(a >= b); }, kOrdered)));

// Logical ops convert any operand to bool (non-zero is true); their kernels take bool.
const std::vector<DType> kLogical{DType::Bool, DType::Float32, DType::Int32};
SKIFF_OP_SPEC(binary_spec(compare_op("logical_and", [](auto& a, auto& b) { return logical_and(a, b); },
                                     [](double a, double b) { return double(a != 0 && b != 0); }, kLogical)));
SKIFF_OP_SPEC(binary_spec(compare_op("logical_or", [](auto& a, auto& b) { return logical_or(a, b); },
                                     [](double a, double b) { return double(a != 0 || b != 0); }, kLogical)));
SKIFF_OP_SPEC(binary_spec(compare_op("logical_xor", [](auto& a, auto& b) { return logical_xor(a, b); },
                                     [](double a, double b) { return double((a != 0) != (b != 0)); }, kLogical)));
// logical_not is unary: the second operand only sets the shape the sample broadcasts to.
OpSpec logical_not_spec() {
  OpSpec s = binary_spec(compare_op("logical_not", [](auto& a, auto&) { return logical_not(a); },
                                    [](double a, double) { return double(a == 0); }, kLogical));
  auto base = s.samples;
  s.samples = [base](DType t, Generator& g) {
    std::vector<Sample> v;
    for (auto& smp : base(t, g)) {
      smp.inputs.resize(1);
      smp.ref = [](const Tensors& in) { return Tensors{map1(in[0], [](double a) { return double(a == 0); }, DType::Bool)}; };
      smp.run = [](const Tensors& in) { return Tensors{logical_not(in[0])}; };
      v.push_back(smp);
    }
    return v;
  };
  s.errors = nullptr;  // any dtype converts to bool; there is nothing to get wrong
  return s;
}
SKIFF_OP_SPEC(logical_not_spec());

// where(cond, a, b): all three broadcast; a and b promote.
OpSpec where_spec() {
  // Linear in a and b: no second-order check (its second derivative does not exist as a graph).
  OpSpec s{.op = "where", .dtypes = kOrdered + kComplex, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto run = [](const Tensors& in) { return Tensors{where(in[0], in[1], in[2])}; };
    auto ref = [t](const Tensors& in) { return Tensors{select3(in[0], in[1], in[2], t)}; };
    const DType b = DType::Bool;
    return std::vector<Sample>{
        {.note = "[5,13]", .inputs = {make({5, 13}, b, g), make({5, 13}, t, g), make({5, 13}, t, g)}, .run = run,
         .ref = ref},
        {.note = "broadcast [3,1] [4] 0-d", .inputs = {make({3, 1}, b, g), make({4}, t, g), make({}, t, g)},
         .run = run, .ref = ref},
        {.note = "strided", .inputs = {transposed({3, 4}, b, g), stepped({3, 4}, t, g), expanded({3, 4}, t, g)},
         .run = run, .ref = ref},
        {.note = "empty", .inputs = {make({0, 4}, b, g), make({4}, t, g), make({0, 4}, t, g)}, .run = run,
         .ref = ref}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<TypeError>("float condition", "where", [] { where(zeros({2}), zeros({2}), zeros({2})); }),
        throws_<ShapeError>("shapes do not broadcast", "where",
                            [] { where(zeros({2}, DType::Bool), zeros({3}), zeros({2})); })};
  };
  return s;
}
SKIFF_OP_SPEC(where_spec());

}  // namespace
}  // namespace skiff::spec
