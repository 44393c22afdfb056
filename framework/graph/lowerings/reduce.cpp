// ONNX lowerings of the reductions (framework/ops/reduce/).
#include <algorithm>
#include <cmath>

#include "framework/graph/lowering.h"
#include "framework/graph/onnx_import.h"

namespace skiff::graph {
namespace {

/// The flags left after reducing `dims` of `in` (a kept dim has size 1).
DimFlags reduced_flags(const DimFlags& in, const std::vector<int64_t>& dims, bool keep) {
  DimFlags out;
  for (size_t d = 0; d < in.size(); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), int64_t(d)) != dims.end();
    if (!reduced) out.push_back(in[d]);
    else if (keep) out.push_back(kStatic);
  }
  return out;
}

/// A reduction over attr "dims" (ReduceSum takes its axes as an input; the others
/// as an attribute at opset 17). The input is cast first when the result's dtype
/// differs (sum of bools or ints).
LoweringFn reduction(std::string onnx_type) {
  return [onnx_type](LoweringContext& c) {
    const auto& dims = c.attrs().get_ints("dims");
    const bool keep = c.attrs().get_bool("keepdim");
    const DType dtype = c.output(0).dtype();
    std::string src = c.value(0);
    if (dtype != c.input(0).dtype()) src = c.node("Cast", {src}, {{"to", int64_t(dtype_to_onnx(dtype))}});
    std::string out = onnx_type == "ReduceSum"
                          ? c.node(onnx_type, {src, c.const_ints(dims)}, {{"keepdims", int64_t(keep)}})
                          : c.node(onnx_type, {src}, {{"axes", dims}, {"keepdims", int64_t(keep)}});
    c.set_output(0, out, reduced_flags(c.flags(0), dims, keep));
  };
}

/// max/min over one dim with its indices: ReduceMax/Min plus ArgMax/Min (cast
/// when the indices are not int64).
LoweringFn extreme_dim(std::string reduce_type, std::string arg_type) {
  return [reduce_type, arg_type](LoweringContext& c) {
    const int64_t dim = c.attrs().get_int("dim");
    const int64_t keep = c.attrs().get_bool("keepdim");
    const std::string& x = c.value(0);
    std::string values = c.node(reduce_type, {x}, {{"axes", std::vector<int64_t>{dim}}, {"keepdims", keep}});
    std::string idx = c.node(arg_type, {x}, {{"axis", dim}, {"keepdims", keep}});
    DimFlags flags = reduced_flags(c.flags(0), {dim}, keep);
    c.set_output(0, values, flags);
    if (c.outputs().size() > 1) {
      const DType dtype = c.output(1).dtype();
      c.set_output(1, dtype == DType::Int64 ? idx : c.node("Cast", {idx}, {{"to", int64_t(dtype_to_onnx(dtype))}}),
                   flags);
    }
  };
}

void lower_cumsum(LoweringContext& c) {
  c.set_output(0,
               c.node("CumSum", {c.value(0), c.constant(full({}, double(c.attrs().get_int("dim")), DType::Int64))},
                      {{"reverse", int64_t(c.attrs().get_bool("reverse"))}}),
               c.flags(0));
}

/// The p-norm over attr "dims": ReduceL2 for p = 2, the sum of |x| for p = 1 (skiff's own
/// engine has no ReduceL1), the largest / smallest |x|
/// for p = inf / -inf, (sum |x|^p)^(1/p) for other p > 0. p <= 0 (a count of non-zeros, or
/// worse) has no lowering.
void lower_norm(LoweringContext& c) {
  const auto& dims = c.attrs().get_ints("dims");
  const bool keep = c.attrs().get_bool("keepdim");
  const double p = c.attrs().get_float("p");
  const std::string& x = c.value(0);
  auto reduce = [&](const std::string& type, const std::string& in) {
    return type == "ReduceSum" ? c.node(type, {in, c.const_ints(dims)}, {{"keepdims", int64_t(keep)}})
                               : c.node(type, {in}, {{"axes", dims}, {"keepdims", int64_t(keep)}});
  };
  std::string out;
  if (p == 2.0) {
    out = reduce("ReduceL2", x);
  } else if (p == 1.0) {
    out = reduce("ReduceSum", c.node("Abs", {x}, {}));
  } else if (std::isinf(p)) {
    out = reduce(p > 0 ? "ReduceMax" : "ReduceMin", c.node("Abs", {x}, {}));
  } else {
    SKIFF_CHECK_T(NotImplementedError, p > 0, "trace: 'norm' with p = {} has no ONNX lowering (p > 0 and +-inf do)", p);
    const std::string exponent = c.constant(full({}, p, c.input(0).dtype()));
    const std::string inverse = c.constant(full({}, 1.0 / p, c.input(0).dtype()));
    out = c.node("Pow", {reduce("ReduceSum", c.node("Pow", {c.node("Abs", {x}, {}), exponent}, {})), inverse}, {});
  }
  c.set_output(0, out, reduced_flags(c.flags(0), dims, keep));
}

}  // namespace

SKIFF_REGISTER_LOWERING(sum, reduction("ReduceSum"));
SKIFF_REGISTER_LOWERING(amax, reduction("ReduceMax"));
SKIFF_REGISTER_LOWERING(amin, reduction("ReduceMin"));
SKIFF_REGISTER_LOWERING(prod, reduction("ReduceProd"));
SKIFF_REGISTER_LOWERING(logsumexp, reduction("ReduceLogSumExp"));
SKIFF_REGISTER_LOWERING(max_dim, extreme_dim("ReduceMax", "ArgMax"));
SKIFF_REGISTER_LOWERING(min_dim, extreme_dim("ReduceMin", "ArgMin"));
SKIFF_REGISTER_LOWERING(cumsum, lower_cumsum);

SKIFF_NOT_EXPORTABLE(var, "'var' has no ONNX lowering: ONNX has no variance op (a ReduceMean of squared "
                          "deviations could express it; none is written yet)");
SKIFF_REGISTER_LOWERING(norm, lower_norm);

}  // namespace skiff::graph
