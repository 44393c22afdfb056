// ONNX lowerings of the shape and view ops (framework/ops/shape/). With a dynamic
// batch they write shape-carrying inputs so the graph runs at any batch size (trace.h).
#include <algorithm>
#include <limits>

#include "framework/graph/lowering.h"
#include "framework/graph/onnx_import.h"

namespace skiff::graph {
namespace {

/// A Slice end meaning "to the end of the dim".
constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

/// The Reshape target for `out` from `in` whose dims are `fin`: static sizes, 0
/// to copy a batch dim in place, -1 for the one batch-derived dim that moved.
/// Dims are matched in groups of equal products ([B, T, C] -> [B*T, C]).
std::pair<std::vector<int64_t>, DimFlags> reshape_target(const Shape& in, const DimFlags& fin, const Shape& out) {
  std::vector<int64_t> target(out.begin(), out.end());
  DimFlags fout(size_t(out.size()), kStatic);
  if (std::all_of(fin.begin(), fin.end(), [](uint8_t f) { return f == kStatic; })) return {target, fout};
  size_t i = 0, j = 0, ni = size_t(in.size()), no = size_t(out.size());
  int inferred = 0;
  while (i < ni || j < no) {
    std::vector<size_t> gi, gj;
    int64_t pi = 1, pj = 1;
    if (i < ni) pi = in[int64_t(i)], gi.push_back(i++);
    if (j < no) pj = out[int64_t(j)], gj.push_back(j++);
    while (pi != pj) {
      if (pi < pj && i < ni) pi *= in[int64_t(i)], gi.push_back(i++);
      else if (pj < pi && j < no) pj *= out[int64_t(j)], gj.push_back(j++);
      else break;
    }
    uint8_t f = kStatic;
    for (size_t a : gi) f = std::max(f, fin[a]);
    if (f == kStatic || gj.empty()) continue;
    size_t o = gj[0];  // the batch leads its group
    if (gi.size() == 1 && gj.size() == 1 && gi[0] == o) {
      target[o] = 0;
      fout[o] = f;
    } else {
      target[o] = -1;
      fout[o] = gi.size() == 1 && gj.size() == 1 ? f : uint8_t(kDerived);
      ++inferred;
    }
  }
  SKIFF_CHECK_T(NotImplementedError, inferred <= 1,
                "trace: reshape {} -> {} spreads the dynamic batch over several dims; trace without "
                "dynamic_batch",
                in, out);
  return {target, fout};
}

void lower_reshape(LoweringContext& c) {
  auto [target, flags] = reshape_target(c.input(0).shape(), c.flags(0), c.output(0).shape());
  c.set_output(0, c.node("Reshape", {c.value(0), c.const_ints(target)}, {}), flags);
}

void lower_permute(LoweringContext& c) {
  const auto& dims = c.attrs().get_ints("dims");
  DimFlags flags;
  for (int64_t d : dims) flags.push_back(c.flags(0)[size_t(d)]);
  c.set_output(0, c.node("Transpose", {c.value(0)}, {{"perm", dims}}), flags);
}

/// A slice to the end of a batch-derived dim stays "to the end"; any other slice
/// of it has a fixed size.
void lower_slice(LoweringContext& c) {
  const Attrs& a = c.attrs();
  int64_t dim = a.get_int("dim"), start = a.get_int("start"), end = a.get_int("end"), step = a.get_int("step");
  DimFlags flags = c.flags(0);
  if (flags[size_t(dim)] != kStatic) {
    if (end == c.input(0).size(dim)) {
      end = kToEnd;
      if (start != 0 || step != 1) flags[size_t(dim)] = kDerived;
    } else {
      flags[size_t(dim)] = kStatic;
    }
  }
  c.set_output(0,
               c.node("Slice",
                      {c.value(0), c.const_ints({start}), c.const_ints({end}), c.const_ints({dim}), c.const_ints({step})},
                      {}),
               flags);
}

/// Expand keeps (1) the batch-derived dims of the input.
void lower_expand(LoweringContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> shape(c.output(0).shape().begin(), c.output(0).shape().end());
  const size_t lead = shape.size() - size_t(x.dim());
  DimFlags flags(shape.size(), kStatic);
  for (size_t d = 0; d < size_t(x.dim()); ++d)
    if (c.flags(0)[d] != kStatic) shape[lead + d] = 1, flags[lead + d] = c.flags(0)[d];
  c.set_output(0, c.node("Expand", {c.value(0), c.const_ints(shape)}, {}), flags);
}

void lower_concat(LoweringContext& c) {
  c.set_output(0, c.node("Concat", c.values(), {{"axis", c.attrs().get_int("dim")}}),
               broadcast_flags(c.flags(), size_t(c.output(0).dim())));
}

/// squeeze(dim) / unsqueeze(dim).
void lower_restride(LoweringContext& c) {
  DimFlags flags = c.flags(0);
  if (c.attrs().has("drop")) {
    int64_t d = c.attrs().get_int("drop");
    flags.erase(flags.begin() + d);
    c.set_output(0, c.node("Squeeze", {c.value(0), c.const_ints({d})}, {}), flags);
  } else {
    int64_t d = c.attrs().get_int("insert");
    flags.insert(flags.begin() + d, kStatic);
    c.set_output(0, c.node("Unsqueeze", {c.value(0), c.const_ints({d})}, {}), flags);
  }
}

/// contiguous()/clone(): the same value in a graph.
void lower_copy(LoweringContext& c) { c.set_output(0, c.value(0), c.flags(0)); }

void lower_cast(LoweringContext& c) {
  c.set_output(0, c.node("Cast", {c.value(0)}, {{"to", int64_t(dtype_to_onnx(c.output(0).dtype()))}}), c.flags(0));
}

}  // namespace

SKIFF_REGISTER_LOWERING(reshape, lower_reshape);
SKIFF_REGISTER_LOWERING(permute, lower_permute);
SKIFF_REGISTER_LOWERING(slice, lower_slice);
SKIFF_REGISTER_LOWERING(expand, lower_expand);
SKIFF_REGISTER_LOWERING(concat, lower_concat);
SKIFF_REGISTER_LOWERING(restride, lower_restride);
SKIFF_REGISTER_LOWERING(copy, lower_copy);
SKIFF_REGISTER_LOWERING(cast, lower_cast);

SKIFF_NOT_EXPORTABLE(diagonal, "'diagonal' has no ONNX lowering: ONNX has no diagonal op (a Gather of the "
                               "flattened input could express it; none is written yet)");
SKIFF_NOT_EXPORTABLE(diagonal_backward, "'diagonal_backward' is the gradient of diagonal; export traces inference");
SKIFF_NOT_EXPORTABLE(slice_backward, "'slice_backward' is the gradient of slice; export traces inference");

}  // namespace skiff::graph
