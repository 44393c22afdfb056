// Shape, indexing, constant-producing and reduction ONNX ops.
#include <cmath>
#include <numeric>

#include "framework/graph/onnx_import.h"
#include "framework/graph/ops/common.h"

namespace skiff::graph::ops {
namespace {

std::vector<Tensor> constant_op(const OpContext& c) {
  const Node& n = c.node;
  if (n.has_attr("value")) return one(n.attr_tensor("value"));
  if (n.has_attr("value_float")) return one(scalar_tensor(n.attr_float("value_float", 0), DType::Float32));
  if (n.has_attr("value_int")) return one(scalar_tensor(double(n.attr_int("value_int", 0)), DType::Int64));
  if (n.has_attr("value_floats")) return one(from_vector(n.attr_floats("value_floats")));
  if (n.has_attr("value_ints")) return one(from_vector(n.attr_ints("value_ints")));
  SKIFF_THROW(NotImplementedError, "{}: no supported value attribute (value, value_float(s), value_int(s))",
              n.describe());
}

std::vector<Tensor> constant_of_shape_op(const OpContext& c) {
  auto dims = c.ints(0);
  Shape shape(dims);
  if (!c.node.has_attr("value")) return one(zeros(shape, DType::Float32));
  const Tensor& v = c.node.attr_tensor("value");
  SKIFF_CHECK(v.numel() == 1, "{}: 'value' must hold one element", c.node.describe());
  return one(full(shape, v.item<double>(), v.dtype()));
}

std::vector<Tensor> shape_op(const OpContext& c) {
  auto dims = shape_vec(c.input(0));
  int64_t rank = int64_t(dims.size());
  int64_t start = c.node.attr_int("start", 0), end = c.node.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  return one(from_vector(std::vector<int64_t>(dims.begin() + start, dims.begin() + end)));
}

std::vector<Tensor> size_op(const OpContext& c) { return one(scalar_tensor(double(c.input(0).numel()), DType::Int64)); }

std::vector<Tensor> cast_op(const OpContext& c) {
  DType to_type = dtype_from_onnx(int(c.node.attr_int("to", 0)), c.node.describe());
  return one(to(c.input(0), to_type));
}

std::vector<Tensor> reshape_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> target = c.opset < 5 ? c.node.attr_ints("shape") : c.ints(1);
  bool allow_zero = c.node.attr_int("allowzero", 0) != 0;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allow_zero) {
      SKIFF_CHECK_SHAPE(int64_t(i) < x.dim(), "{}: shape {} copies dim {} of a rank-{} input", c.node.describe(),
                        fmt::join(target, "x"), i, x.dim());
      target[i] = x.size(int64_t(i));
    }
  }
  return one(reshape(x, Shape(target)));
}

std::vector<Tensor> flatten_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  int64_t axis = c.node.attr_int("axis", 1);
  if (axis < 0) axis += x.dim();
  SKIFF_CHECK_INDEX(axis >= 0 && axis <= x.dim(), "{}: axis out of range for shape {}", c.node.describe(), x.shape());
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.size(d);
  return one(reshape(x, Shape{outer, outer ? x.numel() / outer : 0}));
}

std::vector<Tensor> transpose_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> perm(size_t(x.dim()));
  std::iota(perm.rbegin(), perm.rend(), 0);
  perm = c.node.attr_ints("perm", perm);
  return one(permute(x, perm));
}

std::vector<Tensor> squeeze_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  auto axes = c.opset < 13 ? c.node.attr_ints("axes") : (c.has(1) ? c.ints(1) : std::vector<int64_t>{});
  if (axes.empty()) return one(squeeze(x));
  for (auto& a : axes) a = axis_of(c, a, x.dim());
  std::sort(axes.rbegin(), axes.rend());
  Tensor y = x;
  for (auto a : axes) {
    SKIFF_CHECK_SHAPE(x.size(a) == 1, "{}: cannot squeeze dim {} of size {}", c.node.describe(), a, x.size(a));
    y = squeeze(y, a);
  }
  return one(y);
}

std::vector<Tensor> unsqueeze_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  auto axes = c.opset < 13 ? c.node.attr_ints("axes") : c.ints(1);
  int64_t out_rank = x.dim() + int64_t(axes.size());
  for (auto& a : axes) a = axis_of(c, a, out_rank);
  std::sort(axes.begin(), axes.end());
  Tensor y = x;
  for (auto a : axes) y = unsqueeze(y, a);
  return one(y);
}

std::vector<Tensor> concat_op(const OpContext& c) {
  std::vector<Tensor> xs;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (c.has(i)) xs.push_back(c.inputs[i]);
  SKIFF_CHECK(!xs.empty(), "{}: no inputs", c.node.describe());
  int64_t axis = axis_of(c, c.node.attr_int("axis", 0), xs[0].dim());
  // ONNX allows mixed integer widths in shape arithmetic only by accident; promote to the first input's type.
  for (auto& t : xs)
    if (t.dtype() != xs[0].dtype()) t = to(t, xs[0].dtype());
  return one(concat(xs, axis));
}

std::vector<Tensor> split_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  int64_t axis = axis_of(c, c.node.attr_int("axis", 0), x.dim());
  std::vector<int64_t> sizes = c.opset < 13 ? c.node.attr_ints("split") : (c.has(1) ? c.ints(1) : std::vector<int64_t>{});
  size_t parts = c.node.outputs.size();
  if (sizes.empty()) {
    if (c.node.has_attr("num_outputs")) parts = size_t(c.node.attr_int("num_outputs", 1));
    int64_t chunk = (x.size(axis) + int64_t(parts) - 1) / int64_t(parts);
    int64_t left = x.size(axis);
    for (size_t i = 0; i < parts; ++i) {
      sizes.push_back(std::min(chunk, left));
      left -= sizes.back();
    }
  }
  int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t(0));
  SKIFF_CHECK_SHAPE(total == x.size(axis), "{}: split sizes {} do not add up to dim {} of shape {}", c.node.describe(),
                    fmt::join(sizes, ","), axis, x.shape());
  return split(x, sizes, axis);
}

std::vector<Tensor> slice_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = c.node.attr_ints("starts");
    ends = c.node.attr_ints("ends");
    axes = c.node.attr_ints("axes");
  } else {
    starts = c.ints(1);
    ends = c.ints(2);
    if (c.has(3)) axes = c.ints(3);
    if (c.has(4)) steps = c.ints(4);
  }
  SKIFF_CHECK(starts.size() == ends.size(), "{}: starts and ends differ in length", c.node.describe());
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  SKIFF_CHECK(axes.size() == starts.size() && steps.size() == starts.size(), "{}: starts/ends/axes/steps lengths differ",
              c.node.describe());
  Tensor y = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axis_of(c, axes[i], x.dim());
    int64_t n = x.size(axis), step = steps[i];
    SKIFF_CHECK(step != 0, "{}: step 0", c.node.describe());
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += n;
    if (e < 0) e += n;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      y = slice(y, axis, s, std::max(s, e), step);
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      std::vector<int64_t> idx;
      for (int64_t k = s; k > e; k += step) idx.push_back(k);
      y = index_select(y, axis, from_vector(idx));
    }
  }
  return one(y);
}

Tensor normalized_indices(const OpContext& c, const Tensor& indices, int64_t n) {
  auto idx = indices.to_vector<int64_t>();
  for (auto& i : idx) {
    SKIFF_CHECK_INDEX(i >= -n && i < n, "{}: index {} is out of range for a dim of size {}", c.node.describe(), i, n);
    if (i < 0) i += n;
  }
  return from_vector(idx);
}

std::vector<Tensor> gather_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& indices = c.input(1);
  int64_t axis = axis_of(c, c.node.attr_int("axis", 0), x.dim());
  Tensor flat = normalized_indices(c, indices, x.size(axis));
  Tensor picked = index_select(x, axis, flat);
  std::vector<int64_t> out_shape(x.shape().begin(), x.shape().begin() + axis);
  for (auto d : indices.shape()) out_shape.push_back(d);
  for (int64_t d = axis + 1; d < x.dim(); ++d) out_shape.push_back(x.size(d));
  return one(reshape(picked, Shape(out_shape)));
}

std::vector<Tensor> gather_elements_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  int64_t axis = axis_of(c, c.node.attr_int("axis", 0), x.dim());
  Tensor idx = reshape(normalized_indices(c, c.input(1), x.size(axis)), c.input(1).shape());
  return one(gather(x, axis, idx));
}

std::vector<int64_t> broadcast_shapes(const OpContext& c, std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.size() < b.size()) std::swap(a, b);
  b.insert(b.begin(), a.size() - b.size(), 1);
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i] || b[i] == 1) continue;
    SKIFF_CHECK_SHAPE(a[i] == 1, "{}: shapes do not broadcast ({} vs {})", c.node.describe(), a[i], b[i]);
    a[i] = b[i];
  }
  return a;
}

std::vector<Tensor> expand_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  auto target = broadcast_shapes(c, shape_vec(x), c.ints(1));
  return one(expand(x, Shape(target)));
}

std::vector<Tensor> tile_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  auto repeats = c.ints(1);
  SKIFF_CHECK_SHAPE(int64_t(repeats.size()) == x.dim(), "{}: {} repeats for a rank-{} input", c.node.describe(),
                    repeats.size(), x.dim());
  // [a, b] -> [1, a, 1, b] -> expand [ra, a, rb, b] -> reshape [ra * a, rb * b].
  std::vector<int64_t> interleaved, expanded, out;
  for (int64_t d = 0; d < x.dim(); ++d) {
    interleaved.insert(interleaved.end(), {1, x.size(d)});
    expanded.insert(expanded.end(), {repeats[size_t(d)], x.size(d)});
    out.push_back(repeats[size_t(d)] * x.size(d));
  }
  Tensor y = expand(reshape(x, Shape(interleaved)), Shape(expanded));
  return one(reshape(contiguous(y), Shape(out)));
}

std::vector<Tensor> pad_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> pads;
  double value = 0.0;
  if (c.opset < 11) {
    pads = c.node.attr_ints("pads");
    value = c.node.attr_float("value", 0.0f);
  } else {
    pads = c.ints(1);
    if (c.has(2) && c.input(2).numel() > 0) value = c.scalar(2);
  }
  std::vector<int64_t> axes;
  if (c.opset >= 18 && c.has(3)) axes = c.ints(3);
  if (axes.empty()) {
    axes.resize(size_t(x.dim()));
    std::iota(axes.begin(), axes.end(), 0);
  }
  SKIFF_CHECK(pads.size() == 2 * axes.size(), "{}: pads has {} values for {} axes", c.node.describe(), pads.size(),
              axes.size());
  std::vector<int64_t> begin(size_t(x.dim()), 0), end(size_t(x.dim()), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axis_of(c, axes[i], x.dim());
    begin[size_t(a)] = pads[i];
    end[size_t(a)] = pads[i + axes.size()];
  }
  // skiff's pad takes PyTorch order: last dim first.
  std::vector<int64_t> torch_pads;
  for (int64_t d = x.dim(); d-- > 0;) {
    torch_pads.push_back(begin[size_t(d)]);
    torch_pads.push_back(end[size_t(d)]);
  }
  std::string mode = c.node.attr_string("mode", "constant");
  if (mode == "edge") mode = "replicate";
  return one(pad(x, torch_pads, mode, value));
}

std::vector<Tensor> range_op(const OpContext& c) {
  const Tensor& start = c.input(0);
  double s = c.scalar(0), limit = c.scalar(1), delta = c.scalar(2);
  SKIFF_CHECK(delta != 0, "{}: delta is 0", c.node.describe());
  return one(arange(s, limit, delta, start.dtype()));
}

/// Axes of a Reduce* node: an attribute before the op's switch opset, an input after.
std::vector<Tensor> reduce_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  const std::string& op = c.node.op_type;
  int64_t axes_input_opset = op == "ReduceSum" ? 13 : 18;
  std::vector<int64_t> axes = c.opset < axes_input_opset ? c.node.attr_ints("axes")
                                                         : (c.has(1) ? c.ints(1) : std::vector<int64_t>{});
  bool keep = c.node.attr_int("keepdims", 1) != 0;
  if (axes.empty()) {
    if (c.node.attr_int("noop_with_empty_axes", 0)) return one(x);
    axes.resize(size_t(x.dim()));
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (auto& a : axes) a = axis_of(c, a, x.dim());
  if (op == "ReduceMean") return one(mean(x, axes, keep));
  if (op == "ReduceSum") return one(sum(x, axes, keep));
  if (op == "ReduceMax") return one(amax(x, axes, keep));
  if (op == "ReduceMin") return one(amin(x, axes, keep));
  if (op == "ReduceProd") return one(prod(x, axes, keep));
  if (op == "ReduceL2") return one(sqrt(sum(square(x), axes, keep)));
  if (op == "ReduceSumSquare") return one(sum(square(x), axes, keep));
  SKIFF_ASSERT(op == "ReduceLogSumExp", "unexpected reduce op {}", op);
  return one(logsumexp(x, axes, keep));
}

std::vector<Tensor> arg_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  int64_t axis = axis_of(c, c.node.attr_int("axis", 0), x.dim());
  bool keep = c.node.attr_int("keepdims", 1) != 0;
  SKIFF_CHECK(c.node.attr_int("select_last_index", 0) == 0, "{}: select_last_index=1 is not supported",
              c.node.describe());
  return one(c.node.op_type == "ArgMax" ? argmax(x, axis, keep) : argmin(x, axis, keep));
}

std::vector<Tensor> topk_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  int64_t k = c.opset < 10 ? c.node.attr_int("k", 1) : c.ints(1).at(0);
  int64_t axis = axis_of(c, c.node.attr_int("axis", -1), x.dim());
  bool largest = c.node.attr_int("largest", 1) != 0;
  SKIFF_CHECK_INDEX(k >= 0 && k <= x.size(axis), "{}: k={} but the axis has {} elements", c.node.describe(), k,
                    x.size(axis));
  Tensor order = slice(argsort(x, axis, largest, true), axis, 0, k);
  return {gather(x, axis, order), order};
}

std::vector<Tensor> cumsum_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  int64_t axis = axis_of(c, c.ints(1).at(0), x.dim());
  SKIFF_CHECK(!c.node.attr_int("exclusive", 0) && !c.node.attr_int("reverse", 0),
              "{}: exclusive/reverse CumSum is not supported", c.node.describe());
  return one(cumsum(x, axis));
}

SKIFF_REGISTER_GRAPH_OP("Constant", constant_op);
SKIFF_REGISTER_GRAPH_OP("ConstantOfShape", constant_of_shape_op);
SKIFF_REGISTER_GRAPH_OP("Shape", shape_op);
SKIFF_REGISTER_GRAPH_OP("Size", size_op);
SKIFF_REGISTER_GRAPH_OP("Cast", cast_op);
SKIFF_REGISTER_GRAPH_OP("Reshape", reshape_op);
SKIFF_REGISTER_GRAPH_OP("Flatten", flatten_op);
SKIFF_REGISTER_GRAPH_OP("Transpose", transpose_op);
SKIFF_REGISTER_GRAPH_OP("Squeeze", squeeze_op);
SKIFF_REGISTER_GRAPH_OP("Unsqueeze", unsqueeze_op);
SKIFF_REGISTER_GRAPH_OP("Concat", concat_op);
SKIFF_REGISTER_GRAPH_OP("Split", split_op);
SKIFF_REGISTER_GRAPH_OP("Slice", slice_op);
SKIFF_REGISTER_GRAPH_OP("Gather", gather_op);
SKIFF_REGISTER_GRAPH_OP("GatherElements", gather_elements_op);
SKIFF_REGISTER_GRAPH_OP("Expand", expand_op);
SKIFF_REGISTER_GRAPH_OP("Tile", tile_op);
SKIFF_REGISTER_GRAPH_OP("Pad", pad_op);
SKIFF_REGISTER_GRAPH_OP("Range", range_op);
SKIFF_REGISTER_GRAPH_OP("ReduceMean", reduce_op);
SKIFF_REGISTER_GRAPH_OP("ReduceSum", reduce_op);
SKIFF_REGISTER_GRAPH_OP("ReduceMax", reduce_op);
SKIFF_REGISTER_GRAPH_OP("ReduceMin", reduce_op);
SKIFF_REGISTER_GRAPH_OP("ReduceProd", reduce_op);
SKIFF_REGISTER_GRAPH_OP("ReduceL2", reduce_op);
SKIFF_REGISTER_GRAPH_OP("ReduceSumSquare", reduce_op);
SKIFF_REGISTER_GRAPH_OP("ReduceLogSumExp", reduce_op);
SKIFF_REGISTER_GRAPH_OP("ArgMax", arg_op);
SKIFF_REGISTER_GRAPH_OP("ArgMin", arg_op);
SKIFF_REGISTER_GRAPH_OP("TopK", topk_op);
SKIFF_REGISTER_GRAPH_OP("CumSum", cumsum_op);

}  // namespace
}  // namespace skiff::graph::ops
