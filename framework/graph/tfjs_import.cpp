#include "framework/graph/tfjs_import.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "framework/core/error.h"
#include "framework/core/half.h"
#include "framework/core/registry.h"
#include "framework/graph/op_registry.h"
#include "framework/io/base64.h"
#include "framework/ops/ops.h"

namespace skiff::graph {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------- file reading

std::string read_file(const fs::path& path, const std::string& what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) SKIFF_THROW(IoError, "{}: cannot open {} ({})", path.string(), what, std::strerror(errno));
  std::ostringstream ss;
  ss << f.rdbuf();
  if (!f && !f.eof()) SKIFF_THROW(IoError, "{}: read error", path.string());
  return ss.str();
}

DType dtype_from_tf(const std::string& t, const std::string& where) {
  if (t == "DT_FLOAT") return DType::Float32;
  if (t == "DT_INT32") return DType::Int32;
  if (t == "DT_INT64") return DType::Int64;
  if (t == "DT_BOOL") return DType::Bool;
  if (t == "DT_HALF") return DType::Float16;
  if (t == "DT_DOUBLE") return DType::Float64;
  if (t == "DT_UINT8") return DType::UInt8;
  if (t == "DT_INT8") return DType::Int8;
  SKIFF_THROW(NotImplementedError, "{}: TensorFlow dtype {} is not supported", where, t);
}

DType dtype_from_manifest(const std::string& t, const std::string& where) {
  if (t == "float32") return DType::Float32;
  if (t == "int32") return DType::Int32;
  if (t == "bool") return DType::Bool;
  SKIFF_THROW(NotImplementedError, "{}: weight dtype '{}' is not supported", where, t);
}

// ---------------------------------------------------------------- one TF node

struct TfNode {
  std::string name, op;
  std::vector<std::string> inputs;  // data inputs only ("^control" inputs dropped), "node:k" kept as written
  json attr;
  std::string where;  // "model.json: node 'x' (Conv2D)"

  const json* find(const std::string& key) const {
    auto it = attr.find(key);
    return it == attr.end() ? nullptr : &*it;
  }
  int64_t i(const std::string& key, int64_t fallback) const {
    const json* a = find(key);
    if (!a || !a->contains("i")) return fallback;
    const json& v = (*a)["i"];
    return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>();
  }
  float f(const std::string& key, float fallback) const {
    const json* a = find(key);
    return a && a->contains("f") ? (*a)["f"].get<float>() : fallback;
  }
  bool b(const std::string& key, bool fallback) const {
    const json* a = find(key);
    return a && a->contains("b") ? (*a)["b"].get<bool>() : fallback;
  }
  std::string s(const std::string& key, const std::string& fallback) const {
    const json* a = find(key);
    return a && a->contains("s") ? io::base64_decode((*a)["s"].get<std::string>(), where) : fallback;
  }
  std::vector<int64_t> ints(const std::string& key) const {
    std::vector<int64_t> out;
    const json* a = find(key);
    if (!a || !a->contains("list") || !(*a)["list"].contains("i")) return out;
    for (const auto& v : (*a)["list"]["i"]) out.push_back(v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>());
    return out;
  }
  std::vector<std::string> strings(const std::string& key) const {
    std::vector<std::string> out;
    const json* a = find(key);
    if (!a || !a->contains("list") || !(*a)["list"].contains("s")) return out;
    for (const auto& v : (*a)["list"]["s"]) out.push_back(io::base64_decode(v.get<std::string>(), where));
    return out;
  }
  std::string type(const std::string& key) const {
    const json* a = find(key);
    return a && a->contains("type") ? (*a)["type"].get<std::string>() : std::string();
  }
  const std::string& input(size_t k) const {
    SKIFF_CHECK(k < inputs.size(), "{}: expected at least {} inputs, got {}", where, k + 1, inputs.size());
    return inputs[k];
  }
};

/// "node:0" and "node" are the same value; "node:k" names output k of node.
std::string value_name(const std::string& ref) {
  auto colon = ref.rfind(':');
  if (colon != std::string::npos && ref.substr(colon + 1) == "0") return ref.substr(0, colon);
  return ref;
}

// ---------------------------------------------------------------- translation

class Importer;
using Translator = void (*)(Importer&, const TfNode&);
const std::map<std::string, Translator>& translators();

class Importer {
 public:
  Importer(std::string file, Graph& g) : file_(std::move(file)), g_(g) {}

  Graph& graph() { return g_; }
  const std::string& file() const { return file_; }

  /// A fresh value name derived from `hint`.
  std::string fresh(const std::string& hint) {
    std::string name = hint;
    for (int k = 1; taken_.count(name); ++k) name = fmt::format("{}__{}", hint, k);
    taken_.insert(name);
    return name;
  }
  void reserve(const std::string& name) { taken_.insert(name); }

  /// Appends a node; returns its first output.
  std::string emit(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                   std::map<std::string, AttrValue> attrs = {}) {
    Node n;
    n.name = fresh(outputs.empty() ? op : outputs[0] + "/" + op);
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.attrs = std::move(attrs);
    g_.nodes.push_back(std::move(n));
    return g_.nodes.back().outputs.empty() ? std::string() : g_.nodes.back().outputs[0];
  }
  /// Emits a node with one fresh output derived from `hint`.
  std::string emit1(const std::string& op, std::vector<std::string> inputs, const std::string& hint,
                    std::map<std::string, AttrValue> attrs = {}) {
    return emit(op, std::move(inputs), {fresh(hint)}, std::move(attrs));
  }
  std::string constant(const std::string& hint, Tensor t) {
    std::string name = fresh(hint);
    g_.initializers[name] = std::move(t);
    return name;
  }
  std::string int64s(const std::string& hint, const std::vector<int64_t>& v) {
    return constant(hint, from_vector(v));
  }
  std::string scalar(const std::string& hint, float v) { return constant(hint, from_vector(std::vector<float>{v}, Shape{})); }

  /// The value a TF input reference names.
  std::string value(const std::string& ref) const { return value_name(ref); }
  /// A constant input's tensor. \throws NotImplementedError naming the node when it is computed.
  const Tensor& const_input(const TfNode& n, size_t k, const std::string& what) const {
    std::string v = value(n.input(k));
    auto it = g_.initializers.find(v);
    if (it == g_.initializers.end())
      SKIFF_THROW(NotImplementedError, "{}: {} (input {}) must be a constant, it is computed by '{}'", n.where, what, k,
                  v);
    return it->second;
  }
  std::vector<int64_t> const_ints(const TfNode& n, size_t k, const std::string& what) const {
    const Tensor& t = const_input(n, k, what);
    SKIFF_CHECK(t.dtype() == DType::Int32 || t.dtype() == DType::Int64, "{}: {} must be integers, got {}", n.where, what,
                dtype_name(t.dtype()));
    return t.to_vector<int64_t>();
  }
  /// The node's output names: "name" for output 0, "name:k" after that.
  std::vector<std::string> outputs(const TfNode& n, size_t count) {
    std::vector<std::string> out;
    for (size_t k = 0; k < count; ++k) out.push_back(k == 0 ? n.name : fmt::format("{}:{}", n.name, k));
    for (const auto& o : out) reserve(o);
    return out;
  }

  /// Wraps an NHWC value into NCHW and back.
  std::string to_nchw(const std::string& v) {
    return emit1("Transpose", {v}, v + "/nchw", {{"perm", std::vector<int64_t>{0, 3, 1, 2}}});
  }
  void from_nchw(const std::string& v, const std::string& out) {
    emit("Transpose", {v}, {out}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}});
  }

 private:
  std::string file_;
  Graph& g_;
  std::unordered_set<std::string> taken_;
};

// ---- helpers shared by the conv / pool translators

struct Spatial {
  bool nhwc = true;
  std::vector<int64_t> strides{1, 1}, dilations{1, 1}, kernel;
  std::map<std::string, AttrValue> pad_attrs;  // auto_pad or pads
};

/// Reads data_format, strides, dilations and padding of a conv/pool node.
Spatial spatial_attrs(const TfNode& n, bool pool) {
  Spatial s;
  std::string format = n.s("data_format", "NHWC");
  SKIFF_CHECK(format == "NHWC" || format == "NCHW", "{}: data_format '{}' is not supported (NHWC or NCHW)", n.where,
              format);
  s.nhwc = format == "NHWC";
  const size_t h = s.nhwc ? 1 : 2, w = s.nhwc ? 2 : 3;
  auto spatial = [&](const std::vector<int64_t>& v, const char* key) {
    if (v.empty()) return std::vector<int64_t>{1, 1};
    SKIFF_CHECK(v.size() == 4, "{}: attribute '{}' has {} values, expected 4", n.where, key, v.size());
    return std::vector<int64_t>{v[h], v[w]};
  };
  s.strides = spatial(n.ints("strides"), "strides");
  if (!pool) s.dilations = spatial(n.ints("dilations"), "dilations");
  if (pool) s.kernel = spatial(n.ints("ksize"), "ksize");
  std::string padding = n.s("padding", "VALID");
  if (padding == "VALID") {
    s.pad_attrs["pads"] = std::vector<int64_t>{0, 0, 0, 0};
  } else if (padding == "SAME") {
    s.pad_attrs["auto_pad"] = std::string("SAME_UPPER");  // TF puts the odd pixel at the end, like SAME_UPPER
  } else if (padding == "EXPLICIT") {
    auto p = n.ints("explicit_paddings");
    SKIFF_CHECK(p.size() == 8, "{}: explicit_paddings has {} values, expected 8", n.where, p.size());
    s.pad_attrs["pads"] = std::vector<int64_t>{p[2 * h], p[2 * w], p[2 * h + 1], p[2 * w + 1]};
  } else {
    SKIFF_THROW(NotImplementedError, "{}: padding '{}' is not supported", n.where, padding);
  }
  return s;
}

/// The activation of a fused op ("Relu", "Relu6", ...) applied to x; returns its output.
std::string emit_activation(Importer& im, const TfNode& n, const std::string& act, const std::string& x,
                            const std::string& alpha_value) {
  if (act == "Relu") return im.emit1("Relu", {x}, x + "/relu");
  if (act == "Relu6")
    return im.emit1("Clip", {x, im.scalar(x + "/min", 0.f), im.scalar(x + "/max", 6.f)}, x + "/relu6");
  if (act == "Elu") return im.emit1("Elu", {x}, x + "/elu");
  if (act == "Sigmoid") return im.emit1("Sigmoid", {x}, x + "/sigmoid");
  if (act == "Tanh") return im.emit1("Tanh", {x}, x + "/tanh");
  if (act == "LeakyRelu") return im.emit1("LeakyRelu", {x}, x + "/leaky_relu", {{"alpha", n.f("leakyrelu_alpha", 0.2f)}});
  if (act == "Prelu") {
    SKIFF_CHECK(!alpha_value.empty(), "{}: Prelu needs an alpha argument", n.where);
    return im.emit1("PRelu", {x, alpha_value}, x + "/prelu");
  }
  SKIFF_THROW(NotImplementedError, "{}: fused activation '{}' is not supported", n.where, act);
}

/// Conv2D, DepthwiseConv2dNative and their fused forms.
void translate_conv(Importer& im, const TfNode& n) {
  const bool depthwise = n.op.find("Depthwise") != std::string::npos;
  const bool fused = n.op[0] == '_' || n.op.rfind("Fused", 0) == 0;
  Spatial s = spatial_attrs(n, false);
  const Tensor& filter = im.const_input(n, 1, "the filter");
  SKIFF_CHECK(filter.dim() == 4, "{}: the filter has shape {}, expected [H, W, in, out]", n.where, filter.shape());
  Tensor f32 = to(filter, DType::Float32);
  Tensor w;
  int64_t group = 1;
  if (depthwise) {
    // [H, W, C, M] -> [C * M, 1, H, W]: TF's output channel c * M + m.
    const int64_t c = f32.size(2), m = f32.size(3);
    w = reshape(contiguous(permute(f32, {2, 3, 0, 1})), {c * m, 1, f32.size(0), f32.size(1)});
    group = c;
  } else {
    w = contiguous(permute(f32, {3, 2, 0, 1}));  // HWIO -> OIHW
  }
  std::vector<std::string> conv_inputs{s.nhwc ? im.to_nchw(im.value(n.input(0))) : im.value(n.input(0)),
                                       im.constant(n.name + "/weight", w)};
  std::vector<std::string> ops;
  std::vector<std::string> args;
  if (fused) {
    ops = n.strings("fused_ops");
    for (size_t k = 2; k < n.inputs.size(); ++k) args.push_back(im.value(n.inputs[k]));
  }
  size_t next_arg = 0;
  if (!ops.empty() && ops[0] == "BiasAdd") {
    SKIFF_CHECK(next_arg < args.size(), "{}: BiasAdd needs a bias argument", n.where);
    conv_inputs.push_back(args[next_arg++]);
    ops.erase(ops.begin());
  }
  auto attrs = s.pad_attrs;
  attrs["strides"] = s.strides;
  attrs["dilations"] = s.dilations;
  attrs["group"] = group;
  attrs["kernel_shape"] = std::vector<int64_t>{w.size(2), w.size(3)};
  std::string y = im.emit1("Conv", conv_inputs, n.name + "/conv", attrs);
  SKIFF_CHECK(ops.size() <= 1, "{}: fused ops {} are not supported (BiasAdd and one activation)", n.where,
              fmt::join(n.strings("fused_ops"), ","));
  if (!ops.empty()) {
    std::string alpha;
    if (ops[0] == "Prelu" && next_arg < args.size()) {
      // TF's alpha broadcasts over the last (channel) axis; in NCHW it needs [C, 1, 1].
      alpha = im.emit1("Reshape", {args[next_arg++], im.int64s(n.name + "/alpha_shape", {-1, 1, 1})}, n.name + "/alpha");
    }
    y = emit_activation(im, n, ops[0], y, alpha);
  }
  auto out = im.outputs(n, 1);
  if (s.nhwc) im.from_nchw(y, out[0]);
  else im.emit("Identity", {y}, out);
}

void translate_pool(Importer& im, const TfNode& n) {
  Spatial s = spatial_attrs(n, true);
  auto attrs = s.pad_attrs;
  attrs["strides"] = s.strides;
  attrs["kernel_shape"] = s.kernel;
  std::string x = im.value(n.input(0));
  std::string y = im.emit1(n.op == "MaxPool" ? "MaxPool" : "AveragePool", {s.nhwc ? im.to_nchw(x) : x},
                           n.name + "/pool", attrs);
  auto out = im.outputs(n, 1);
  if (s.nhwc) im.from_nchw(y, out[0]);
  else im.emit("Identity", {y}, out);
}

/// ResizeBilinear / ResizeNearestNeighbor(images NHWC, size [2]).
void translate_resize(Importer& im, const TfNode& n) {
  const bool linear = n.op == "ResizeBilinear";
  const bool align = n.b("align_corners", false), half = n.b("half_pixel_centers", false);
  std::map<std::string, AttrValue> attrs;
  attrs["mode"] = std::string(linear ? "linear" : "nearest");
  attrs["coordinate_transformation_mode"] = std::string(align ? "align_corners" : half ? "half_pixel" : "asymmetric");
  // TF's nearest neighbour: floor without centres, round with them (or with align_corners).
  if (!linear) attrs["nearest_mode"] = std::string(align || half ? "round_prefer_ceil" : "floor");
  std::string x = im.to_nchw(im.value(n.input(0)));
  // sizes = [N, C] of the input ++ the requested [H, W].
  std::string shape = im.emit1("Shape", {x}, n.name + "/shape");
  std::string nc = im.emit1("Slice", {shape, im.int64s(n.name + "/s0", {0}), im.int64s(n.name + "/s2", {2})},
                            n.name + "/nc");
  std::string hw = im.emit1("Cast", {im.value(n.input(1))}, n.name + "/hw", {{"to", int64_t(7)}});
  std::string sizes = im.emit1("Concat", {nc, hw}, n.name + "/sizes", {{"axis", int64_t(0)}});
  std::string y = im.emit1("Resize", {x, "", "", sizes}, n.name + "/resize", attrs);
  im.from_nchw(y, im.outputs(n, 1)[0]);
}

void translate_pad(Importer& im, const TfNode& n) {
  auto p = im.const_ints(n, 1, "the paddings");
  SKIFF_CHECK(p.size() % 2 == 0, "{}: paddings has {} values, expected [rank, 2]", n.where, p.size());
  const size_t rank = p.size() / 2;
  std::vector<int64_t> pads(2 * rank);
  for (size_t d = 0; d < rank; ++d) {
    pads[d] = p[2 * d];
    pads[rank + d] = p[2 * d + 1];
  }
  std::vector<std::string> inputs{im.value(n.input(0)), im.int64s(n.name + "/pads", pads)};
  std::map<std::string, AttrValue> attrs;
  if (n.op == "PadV2") inputs.push_back(im.value(n.input(2)));
  if (n.op == "MirrorPad") {
    std::string mode = n.s("mode", "REFLECT");
    SKIFF_CHECK(mode == "REFLECT", "{}: MirrorPad mode '{}' is not supported (REFLECT only)", n.where, mode);
    attrs["mode"] = std::string("reflect");
  }
  im.emit("Pad", inputs, im.outputs(n, 1), attrs);
}

void translate_unary(Importer& im, const TfNode& n) {
  static const std::map<std::string, std::string> onnx{
      {"Relu", "Relu"}, {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"},   {"Elu", "Elu"},       {"Exp", "Exp"},
      {"Log", "Log"},   {"Sqrt", "Sqrt"},       {"Neg", "Neg"},     {"Abs", "Abs"},       {"Floor", "Floor"},
      {"Ceil", "Ceil"}, {"Round", "Round"},     {"Sign", "Sign"},   {"Reciprocal", "Reciprocal"},
      {"Identity", "Identity"}, {"StopGradient", "Identity"}, {"Snapshot", "Identity"}, {"Erf", "Erf"},
      {"Softplus", "Softplus"}, {"Sin", "Sin"}, {"Cos", "Cos"}};
  im.emit(onnx.at(n.op), {im.value(n.input(0))}, im.outputs(n, 1));
}

void translate_binary(Importer& im, const TfNode& n) {
  static const std::map<std::string, std::string> onnx{
      {"Add", "Add"}, {"AddV2", "Add"}, {"BiasAdd", "Add"}, {"Sub", "Sub"}, {"Mul", "Mul"}, {"RealDiv", "Div"},
      {"Div", "Div"}, {"Maximum", "Max"}, {"Minimum", "Min"}, {"Pow", "Pow"}, {"Greater", "Greater"},
      {"Less", "Less"}, {"Equal", "Equal"}, {"GreaterEqual", "GreaterOrEqual"}, {"LessEqual", "LessOrEqual"},
      {"LogicalAnd", "And"}, {"LogicalOr", "Or"}};
  std::string a = im.value(n.input(0)), b = im.value(n.input(1));
  if (n.op == "BiasAdd" && n.s("data_format", "NHWC") == "NCHW")
    b = im.emit1("Reshape", {b, im.int64s(n.name + "/bias_shape", {-1, 1, 1})}, n.name + "/bias");
  im.emit(onnx.at(n.op), {a, b}, im.outputs(n, 1));
}

void translate_misc_math(Importer& im, const TfNode& n) {
  std::string x = im.value(n.input(0));
  auto out = im.outputs(n, 1);
  if (n.op == "Relu6") {
    im.emit("Clip", {x, im.scalar(n.name + "/min", 0.f), im.scalar(n.name + "/max", 6.f)}, out);
  } else if (n.op == "LeakyRelu") {
    im.emit("LeakyRelu", {x}, out, {{"alpha", n.f("alpha", 0.2f)}});
  } else if (n.op == "Rsqrt") {
    im.emit("Reciprocal", {im.emit1("Sqrt", {x}, n.name + "/sqrt")}, out);
  } else if (n.op == "Square") {
    im.emit("Mul", {x, x}, out);
  } else if (n.op == "SquaredDifference") {
    std::string d = im.emit1("Sub", {x, im.value(n.input(1))}, n.name + "/diff");
    im.emit("Mul", {d, d}, out);
  } else if (n.op == "Prelu") {
    im.emit("PRelu", {x, im.value(n.input(1))}, out);
  } else if (n.op == "Softmax") {
    im.emit("Softmax", {x}, out, {{"axis", int64_t(-1)}});
  } else {
    SKIFF_THROW(NotImplementedError, "{}: no translation", n.where);
  }
}

void translate_shape_op(Importer& im, const TfNode& n) {
  std::string x = im.value(n.input(0));
  if (n.op == "Transpose") {
    im.emit("Transpose", {x}, im.outputs(n, 1), {{"perm", im.const_ints(n, 1, "the permutation")}});
  } else if (n.op == "Reshape") {
    std::string shape = im.value(n.input(1));
    auto it = im.graph().initializers.find(shape);
    if (it != im.graph().initializers.end()) shape = im.int64s(n.name + "/shape", it->second.to_vector<int64_t>());
    else shape = im.emit1("Cast", {shape}, n.name + "/shape", {{"to", int64_t(7)}});
    im.emit("Reshape", {x, shape}, im.outputs(n, 1));
  } else if (n.op == "ConcatV2" || n.op == "Concat") {
    const bool v2 = n.op == "ConcatV2";
    SKIFF_CHECK(n.inputs.size() >= 2, "{}: expected the tensors and an axis", n.where);
    auto axis = im.const_ints(n, v2 ? n.inputs.size() - 1 : 0, "the axis");
    std::vector<std::string> parts;
    for (size_t k = v2 ? 0 : 1; k < (v2 ? n.inputs.size() - 1 : n.inputs.size()); ++k) parts.push_back(im.value(n.inputs[k]));
    im.emit("Concat", parts, im.outputs(n, 1), {{"axis", axis.at(0)}});
  } else if (n.op == "SplitV") {
    auto sizes = im.const_ints(n, 1, "the split sizes");
    auto axis = im.const_ints(n, 2, "the axis");
    SKIFF_CHECK(std::count(sizes.begin(), sizes.end(), -1) == 0,
                "{}: split sizes with -1 are not supported (sizes {})", n.where, fmt::join(sizes, ","));
    im.emit("Split", {x, im.int64s(n.name + "/sizes", sizes)}, im.outputs(n, sizes.size()), {{"axis", axis.at(0)}});
  } else if (n.op == "Split") {
    auto axis = im.const_ints(n, 0, "the axis");
    std::string value = im.value(n.input(1));
    im.emit("Split", {value}, im.outputs(n, size_t(n.i("num_split", 1))),
            {{"axis", axis.at(0)}, {"num_outputs", n.i("num_split", 1)}});
  } else if (n.op == "ExpandDims") {
    im.emit("Unsqueeze", {x, im.int64s(n.name + "/axes", im.const_ints(n, 1, "the axis"))}, im.outputs(n, 1));
  } else if (n.op == "Squeeze") {
    auto dims = n.ints("squeeze_dims");
    std::vector<std::string> inputs{x};
    if (!dims.empty()) inputs.push_back(im.int64s(n.name + "/axes", dims));
    im.emit("Squeeze", inputs, im.outputs(n, 1));
  } else if (n.op == "Pack") {
    int64_t axis = n.i("axis", 0);
    std::vector<std::string> parts;
    for (size_t k = 0; k < n.inputs.size(); ++k)
      parts.push_back(im.emit1("Unsqueeze", {im.value(n.inputs[k]), im.int64s(n.name + "/axes", {axis})},
                               fmt::format("{}/part{}", n.name, k)));
    im.emit("Concat", parts, im.outputs(n, 1), {{"axis", axis}});
  } else if (n.op == "Shape") {
    std::string s = im.emit1("Shape", {x}, n.name + "/shape64");
    im.emit("Cast", {s}, im.outputs(n, 1), {{"to", int64_t(n.type("out_type") == "DT_INT64" ? 7 : 6)}});
  } else if (n.op == "Cast") {
    DType to = dtype_from_tf(n.type("DstT"), n.where);
    static const std::map<DType, int64_t> onnx{{DType::Float32, 1}, {DType::UInt8, 2}, {DType::Int8, 3},
                                               {DType::Int32, 6},   {DType::Int64, 7}, {DType::Bool, 9},
                                               {DType::Float16, 10}, {DType::Float64, 11}};
    im.emit("Cast", {x}, im.outputs(n, 1), {{"to", onnx.at(to)}});
  } else if (n.op == "GatherV2") {
    auto axis = im.const_ints(n, 2, "the axis");
    SKIFF_CHECK(n.i("batch_dims", 0) == 0, "{}: batch_dims {} is not supported", n.where, n.i("batch_dims", 0));
    im.emit("Gather", {x, im.value(n.input(1))}, im.outputs(n, 1), {{"axis", axis.at(0)}});
  } else if (n.op == "Tile") {
    im.emit("Tile", {x, im.int64s(n.name + "/repeats", im.const_ints(n, 1, "the multiples"))}, im.outputs(n, 1));
  } else {
    SKIFF_THROW(NotImplementedError, "{}: no translation", n.where);
  }
}

/// StridedSlice with begin/end/strides constants; ellipsis and new-axis masks are not supported.
void translate_strided_slice(Importer& im, const TfNode& n) {
  auto begin = im.const_ints(n, 1, "begin"), end = im.const_ints(n, 2, "end"), strides = im.const_ints(n, 3, "strides");
  SKIFF_CHECK(begin.size() == end.size() && end.size() == strides.size(), "{}: begin/end/strides differ in length",
              n.where);
  SKIFF_CHECK(n.i("ellipsis_mask", 0) == 0 && n.i("new_axis_mask", 0) == 0,
              "{}: ellipsis_mask and new_axis_mask are not supported", n.where);
  const int64_t begin_mask = n.i("begin_mask", 0), end_mask = n.i("end_mask", 0), shrink = n.i("shrink_axis_mask", 0);
  std::vector<int64_t> starts, ends, axes, steps, squeeze;
  constexpr int64_t kBig = std::numeric_limits<int64_t>::max();
  for (size_t d = 0; d < begin.size(); ++d) {
    int64_t step = strides[d];
    int64_t b = begin[d], e = end[d];
    if (shrink >> d & 1) {
      e = b + 1 == 0 ? kBig : b + 1;
      step = 1;
      squeeze.push_back(int64_t(d));
    } else {
      if (begin_mask >> d & 1) b = step > 0 ? 0 : -1;
      if (end_mask >> d & 1) e = step > 0 ? kBig : -kBig;
    }
    starts.push_back(b);
    ends.push_back(e);
    axes.push_back(int64_t(d));
    steps.push_back(step);
  }
  std::string x = im.value(n.input(0));
  auto out = im.outputs(n, 1);
  std::vector<std::string> in{x, im.int64s(n.name + "/starts", starts), im.int64s(n.name + "/ends", ends),
                              im.int64s(n.name + "/axes", axes), im.int64s(n.name + "/steps", steps)};
  if (squeeze.empty()) {
    im.emit("Slice", in, out);
  } else {
    std::string y = im.emit1("Slice", in, n.name + "/slice");
    im.emit("Squeeze", {y, im.int64s(n.name + "/squeeze", squeeze)}, out);
  }
}

void translate_reduce(Importer& im, const TfNode& n) {
  static const std::map<std::string, std::string> onnx{
      {"Mean", "ReduceMean"}, {"Sum", "ReduceSum"}, {"Max", "ReduceMax"}, {"Min", "ReduceMin"}, {"Prod", "ReduceProd"}};
  auto axes = im.const_ints(n, 1, "the reduction axes");
  const int64_t keep = n.b("keep_dims", false) ? 1 : 0;
  std::string op = onnx.at(n.op);
  // Opset 17: only ReduceSum takes its axes as an input.
  if (op == "ReduceSum")
    im.emit(op, {im.value(n.input(0)), im.int64s(n.name + "/axes", axes)}, im.outputs(n, 1), {{"keepdims", keep}});
  else
    im.emit(op, {im.value(n.input(0))}, im.outputs(n, 1), {{"axes", axes}, {"keepdims", keep}});
}

void translate_matmul(Importer& im, const TfNode& n) {
  const bool batch = n.op.rfind("BatchMatMul", 0) == 0;
  const bool ta = batch ? n.b("adj_x", false) : n.b("transpose_a", false);
  const bool tb = batch ? n.b("adj_y", false) : n.b("transpose_b", false);
  auto maybe_t = [&](std::string v, bool t, const char* tag) {
    if (!t) return v;
    return im.emit1("Transpose", {v}, n.name + tag);  // no perm: reverses the (2-D) dims
  };
  std::string a = im.value(n.input(0)), b = im.value(n.input(1));
  if ((ta || tb) && batch)
    SKIFF_THROW(NotImplementedError, "{}: adjoint batched matmuls are not supported", n.where);
  std::string y = im.emit1("MatMul", {maybe_t(a, ta, "/a_t"), maybe_t(b, tb, "/b_t")}, n.name + "/matmul");
  std::vector<std::string> ops = n.op == "_FusedMatMul" ? n.strings("fused_ops") : std::vector<std::string>{};
  size_t arg = 2;
  if (!ops.empty() && ops[0] == "BiasAdd") {
    y = im.emit1("Add", {y, im.value(n.input(arg++))}, n.name + "/bias_add");
    ops.erase(ops.begin());
  }
  SKIFF_CHECK(ops.size() <= 1, "{}: fused ops {} are not supported", n.where, fmt::join(n.strings("fused_ops"), ","));
  if (!ops.empty()) y = emit_activation(im, n, ops[0], y, arg < n.inputs.size() ? im.value(n.inputs[arg]) : "");
  im.emit("Identity", {y}, im.outputs(n, 1));
}

void translate_topk(Importer& im, const TfNode& n) {
  std::string k = im.emit1("Reshape", {im.emit1("Cast", {im.value(n.input(1))}, n.name + "/k64", {{"to", int64_t(7)}}),
                                       im.int64s(n.name + "/one", {1})},
                           n.name + "/k");
  auto out = im.outputs(n, 2);
  std::string idx = im.fresh(n.name + "/indices64");
  im.emit("TopK", {im.value(n.input(0)), k}, {out[0], idx},
          {{"axis", int64_t(-1)}, {"largest", int64_t(1)}, {"sorted", int64_t(n.b("sorted", true) ? 1 : 0)}});
  im.emit("Cast", {idx}, {out[1]}, {{"to", int64_t(6)}});  // TF's indices are int32
}

void translate_batch_norm(Importer& im, const TfNode& n) {
  SKIFF_CHECK(!n.b("is_training", false), "{}: training-mode batch norm is not supported", n.where);
  std::string format = n.s("data_format", "NHWC");
  std::string x = im.value(n.input(0));
  const bool nhwc = format == "NHWC";
  std::vector<std::string> in{nhwc ? im.to_nchw(x) : x};
  for (size_t k = 1; k < 5; ++k) in.push_back(im.value(n.input(k)));
  std::string y = im.emit1("BatchNormalization", in, n.name + "/bn", {{"epsilon", n.f("epsilon", 1e-3f)}});
  auto out = im.outputs(n, 1);
  if (nhwc) im.from_nchw(y, out[0]);
  else im.emit("Identity", {y}, out);
}

/// SparseToDense(indices, output_shape, values, default) on constants, folded here: TF.js
/// converters emit it for shape arithmetic. ONNX has no such op.
void translate_sparse_to_dense(Importer& im, const TfNode& n) {
  const Tensor& idx = im.const_input(n, 0, "the indices");
  auto shape = im.const_ints(n, 1, "the output shape");
  const Tensor& values = im.const_input(n, 2, "the values");
  const Tensor& fill = im.const_input(n, 3, "the default value");
  SKIFF_CHECK(fill.numel() == 1, "{}: the default value must be a scalar, got shape {}", n.where, fill.shape());
  for (auto d : shape) SKIFF_CHECK(d >= 0, "{}: output shape {} has a negative dim", n.where, fmt::join(shape, ","));
  std::vector<double> dense(size_t(std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<>())),
                            fill.item<double>());
  const int64_t rank = int64_t(shape.size());
  auto ix = idx.to_vector<int64_t>();
  const int64_t count = idx.dim() == 0 ? 1 : idx.size(0);
  const int64_t per = idx.dim() <= 1 ? 1 : idx.size(1);
  SKIFF_CHECK(per == rank || (rank == 1 && per == 1), "{}: indices of shape {} for an output of rank {}", n.where,
              idx.shape(), rank);
  SKIFF_CHECK(values.numel() == 1 || values.numel() == count, "{}: {} values for {} indices", n.where, values.numel(),
              count);
  auto vals = values.to_vector<double>();
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t v = ix[size_t(i * per + d)];
      SKIFF_CHECK(v >= 0 && v < shape[size_t(d)], "{}: index {} out of range for dim {} of size {}", n.where, v, d,
                  shape[size_t(d)]);
      offset = offset * shape[size_t(d)] + v;
    }
    dense[size_t(offset)] = vals[values.numel() == 1 ? 0 : size_t(i)];
  }
  Tensor out = to(from_vector(dense, Shape(shape)), values.dtype());
  std::string name = n.name;
  im.reserve(name);
  im.graph().initializers[name] = out;
}

const std::map<std::string, Translator>& translators() {
  static const std::map<std::string, Translator> table = [] {
    std::map<std::string, Translator> t;
    for (const char* op : {"Conv2D", "DepthwiseConv2dNative", "_FusedConv2D", "FusedDepthwiseConv2dNative"})
      t[op] = translate_conv;
    for (const char* op : {"MaxPool", "AvgPool"}) t[op] = translate_pool;
    for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor"}) t[op] = translate_resize;
    for (const char* op : {"Pad", "PadV2", "MirrorPad"}) t[op] = translate_pad;
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Elu", "Exp", "Log", "Sqrt", "Neg", "Abs", "Floor", "Ceil",
                           "Round", "Sign", "Reciprocal", "Identity", "StopGradient", "Snapshot", "Erf", "Softplus",
                           "Sin", "Cos"})
      t[op] = translate_unary;
    for (const char* op : {"Add", "AddV2", "BiasAdd", "Sub", "Mul", "RealDiv", "Div", "Maximum", "Minimum", "Pow",
                           "Greater", "Less", "Equal", "GreaterEqual", "LessEqual", "LogicalAnd", "LogicalOr"})
      t[op] = translate_binary;
    for (const char* op : {"Relu6", "LeakyRelu", "Rsqrt", "Square", "SquaredDifference", "Prelu", "Softmax"})
      t[op] = translate_misc_math;
    for (const char* op : {"Transpose", "Reshape", "ConcatV2", "Concat", "SplitV", "Split", "ExpandDims", "Squeeze",
                           "Pack", "Shape", "Cast", "GatherV2", "Tile"})
      t[op] = translate_shape_op;
    t["StridedSlice"] = translate_strided_slice;
    for (const char* op : {"Mean", "Sum", "Max", "Min", "Prod"}) t[op] = translate_reduce;
    for (const char* op : {"MatMul", "BatchMatMul", "BatchMatMulV2", "_FusedMatMul"}) t[op] = translate_matmul;
    t["TopKV2"] = translate_topk;
    for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) t[op] = translate_batch_norm;
    t["SparseToDense"] = translate_sparse_to_dense;
    return t;
  }();
  return table;
}

// ---------------------------------------------------------------- weights

/// Reads every weight of the manifest into name -> tensor (dequantized to its original dtype).
std::unordered_map<std::string, Tensor> read_weights(const json& manifest, const fs::path& dir, const std::string& file) {
  std::unordered_map<std::string, Tensor> out;
  SKIFF_CHECK(manifest.is_array(), "{}: weightsManifest must be a list", file);
  for (size_t gi = 0; gi < manifest.size(); ++gi) {
    const json& group = manifest[gi];
    std::string where = fmt::format("{}: weightsManifest[{}]", file, gi);
    SKIFF_CHECK(group.contains("paths") && group["paths"].is_array() && group.contains("weights"),
                "{}: expected 'paths' and 'weights'", where);
    std::string bytes;
    for (const auto& p : group["paths"]) {
      fs::path rel(p.get<std::string>());
      SKIFF_CHECK(rel.is_relative() && std::find(rel.begin(), rel.end(), "..") == rel.end(),
                  "{}: shard '{}' points outside the model directory", where, rel.string());
      bytes += read_file(dir / rel, "weight shard");
    }
    size_t offset = 0;
    for (size_t wi = 0; wi < group["weights"].size(); ++wi) {
      const json& w = group["weights"][wi];
      std::string wwhere = fmt::format("{}.weights[{}]", where, wi);
      SKIFF_CHECK(w.contains("name") && w.contains("shape") && w.contains("dtype"), "{}: expected name, shape, dtype",
                  wwhere);
      std::string name = w["name"].get<std::string>();
      std::vector<int64_t> shape = w["shape"].get<std::vector<int64_t>>();
      for (auto d : shape) SKIFF_CHECK(d >= 0, "{} ('{}'): negative dim in shape", wwhere, name);
      DType dtype = dtype_from_manifest(w["dtype"].get<std::string>(), wwhere + " ('" + name + "')");
      Tensor t = empty(Shape(shape), dtype);
      const int64_t n = t.numel();
      std::string qtype = w.contains("quantization") ? w["quantization"].value("dtype", "") : "";
      const size_t stored = size_t(n) * (qtype == "uint8" ? 1 : qtype.empty() ? size_t(itemsize(dtype)) : 2);
      SKIFF_CHECK(offset + stored <= bytes.size(),
                  "{} ('{}'): needs {} bytes at offset {}, the shards hold {} (truncated .bin file?)", wwhere, name,
                  stored, offset, bytes.size());
      const char* src = bytes.data() + offset;
      if (qtype.empty()) {
        if (stored) std::memcpy(t.data_ptr(), src, stored);
      } else {
        std::vector<float> v(static_cast<size_t>(n));
        if (qtype == "float16") {
          for (int64_t i = 0; i < n; ++i) {
            Half h;
            std::memcpy(&h.bits, src + 2 * i, 2);
            v[size_t(i)] = float(h);
          }
        } else if (qtype == "uint8" || qtype == "uint16") {
          const float scale = w["quantization"].value("scale", 1.f), min = w["quantization"].value("min", 0.f);
          for (int64_t i = 0; i < n; ++i) {
            uint16_t q = 0;
            if (qtype == "uint8") q = uint8_t(src[i]);
            else std::memcpy(&q, src + 2 * i, 2);
            v[size_t(i)] = float(q) * scale + min;
          }
        } else {
          SKIFF_THROW(NotImplementedError, "{} ('{}'): quantization dtype '{}' is not supported", wwhere, name, qtype);
        }
        Tensor f = from_vector(v, Shape(shape));
        t = dtype == DType::Float32 ? f : to(dtype == DType::Int32 ? round(f) : f, dtype);
      }
      offset += stored;
      out[name] = t;
    }
  }
  return out;
}

ValueInfo value_info_from_signature(const std::string& name, const json& sig) {
  ValueInfo vi;
  vi.name = name;
  if (sig.contains("dtype")) vi.dtype = dtype_from_tf(sig["dtype"].get<std::string>(), name);
  if (sig.contains("tensorShape") && sig["tensorShape"].contains("dim")) {
    vi.has_shape = true;
    int k = 0;
    for (const auto& d : sig["tensorShape"]["dim"]) {
      int64_t size = d.contains("size") ? std::stoll(d["size"].get<std::string>()) : -1;
      vi.shape.push_back(size >= 0 ? Dim::fixed(size) : Dim::dynamic(fmt::format("{}_d{}", name, k)));
      ++k;
    }
  }
  return vi;
}

/// Orders nodes so every input is produced first (TF.js files need not be sorted).
std::vector<const TfNode*> topological_order(const std::vector<TfNode>& nodes, const std::string& file) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) {
    SKIFF_CHECK(index.emplace(nodes[i].name, i).second, "{}: two nodes are named '{}'", file, nodes[i].name);
  }
  std::vector<int> state(nodes.size(), 0);  // 0 new, 1 on stack, 2 done
  std::vector<const TfNode*> order;
  for (size_t root = 0; root < nodes.size(); ++root) {
    if (state[root]) continue;
    std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      if (next < nodes[i].inputs.size()) {
        std::string ref = nodes[i].inputs[next++];
        std::string producer = ref.substr(0, ref.rfind(':') == std::string::npos ? ref.size() : ref.rfind(':'));
        auto it = index.find(producer);
        if (it == index.end()) it = index.find(ref);  // names may contain ':'? then the full ref
        SKIFF_CHECK(it != index.end(), "{}: input '{}' is produced by no node", nodes[i].where, ref);
        SKIFF_CHECK(state[it->second] != 1, "{}: the graph has a cycle through '{}'", nodes[i].where, producer);
        if (state[it->second] == 0) {
          state[it->second] = 1;
          stack.emplace_back(it->second, 0);
        }
      } else {
        state[i] = 2;
        order.push_back(&nodes[i]);
        stack.pop_back();
      }
    }
  }
  return order;
}

}  // namespace

namespace {

Graph import_tfjs_json(const std::string& model_json_path, const TfjsImportOptions& options) {
  const std::string& file = model_json_path;
  json model;
  try {
    model = json::parse(read_file(file, "TF.js model"));
  } catch (const json::exception& e) {
    SKIFF_THROW(ValueError, "{}: not valid JSON ({})", file, e.what());
  }
  SKIFF_CHECK(model.is_object() && model.contains("modelTopology"), "{}: not a TF.js model (no 'modelTopology')", file);
  const std::string format = model.value("format", "graph-model");
  if (format == "layers-model")
    SKIFF_THROW(NotImplementedError, "{}: TF.js layers models are not supported; convert it to a graph model "
                "(tensorflowjs_converter --output_format tfjs_graph_model)", file);
  const json& topology = model["modelTopology"];
  SKIFF_CHECK(topology.contains("node") && topology["node"].is_array(), "{}: modelTopology has no 'node' list", file);
  SKIFF_CHECK(!topology.contains("library") || topology["library"].empty() ||
                  !topology["library"].contains("function") || topology["library"]["function"].empty(),
              "{}: graph functions (control flow) are not supported", file);

  Graph g;
  g.name = fs::path(file).stem().string();
  g.producer = "tfjs " + model.value("convertedBy", model.value("generatedBy", std::string("graph-model")));
  g.opset_version = 17;
  fs::path dir = fs::path(file).has_parent_path() ? fs::path(file).parent_path() : fs::path(".");
  auto weights = model.contains("weightsManifest") ? read_weights(model["weightsManifest"], dir, file)
                                                   : std::unordered_map<std::string, Tensor>{};

  std::vector<TfNode> nodes;
  for (size_t i = 0; i < topology["node"].size(); ++i) {
    const json& jn = topology["node"][i];
    SKIFF_CHECK(jn.contains("name") && jn.contains("op"), "{}: modelTopology.node[{}] has no name or op", file, i);
    TfNode n;
    n.name = jn["name"].get<std::string>();
    n.op = jn["op"].get<std::string>();
    n.where = fmt::format("{}: node '{}' ({})", file, n.name, n.op);
    if (jn.contains("input"))
      for (const auto& in : jn["input"]) {
        std::string ref = in.get<std::string>();
        if (!ref.empty() && ref[0] != '^') n.inputs.push_back(ref);
      }
    n.attr = jn.value("attr", json::object());
    nodes.push_back(std::move(n));
  }
  auto order = topological_order(nodes, file);

  Importer im(file, g);
  const auto& table = translators();
  for (const TfNode* np : order) {
    const TfNode& n = *np;
    im.reserve(n.name);
    if (n.op == "Const") {
      auto it = weights.find(n.name);
      SKIFF_CHECK(it != weights.end(), "{}: the weights manifest has no value for this constant", n.where);
      Tensor t = it->second;
      std::string declared = n.type("dtype");
      if (!declared.empty()) {
        DType want = dtype_from_tf(declared, n.where);
        if (want != t.dtype()) t = to(t, want);  // TF.js stores int64 constants as int32
      }
      g.initializers[n.name] = t;
      continue;
    }
    if (n.op == "Placeholder" || n.op == "PlaceholderWithDefault") {
      ValueInfo vi;
      vi.name = n.name;
      vi.dtype = dtype_from_tf(n.type("dtype").empty() ? "DT_FLOAT" : n.type("dtype"), n.where);
      const json* shape = n.find("shape");
      if (shape && shape->contains("shape") && (*shape)["shape"].contains("dim")) {
        vi.has_shape = true;
        int k = 0;
        for (const auto& d : (*shape)["shape"]["dim"]) {
          int64_t size = d.contains("size") ? std::stoll(d["size"].get<std::string>()) : -1;
          vi.shape.push_back(size >= 0 ? Dim::fixed(size) : Dim::dynamic(fmt::format("{}_d{}", n.name, k)));
          ++k;
        }
      }
      g.inputs.push_back(vi);
      continue;
    }
    auto t = table.find(n.op);
    if (t == table.end()) {
      std::vector<std::string> known;
      for (const auto& [op, fn] : table) known.push_back(op);
      std::string hint = closest_match(n.op, known);
      SKIFF_THROW(NotImplementedError, "{}: op '{}' is not supported by the TF.js importer{}", n.where, n.op,
                  hint.empty() ? std::string() : fmt::format(" (closest supported op: {})", hint));
    }
    try {
      t->second(im, n);
    } catch (Error& e) {
      if (std::string(e.what()).find(n.where) == std::string::npos) e.add_context("while translating " + n.where);
      throw;
    }
  }

  // Outputs: the signature's, sorted by name; without one, values nobody consumes.
  if (model.contains("signature") && model["signature"].contains("outputs")) {
    for (const auto& [key, sig] : model["signature"]["outputs"].items()) {
      std::string name = value_name(sig.value("name", key));
      g.outputs.push_back(value_info_from_signature(name, sig));
    }
    std::sort(g.outputs.begin(), g.outputs.end(), [](const ValueInfo& a, const ValueInfo& b) { return a.name < b.name; });
  } else {
    auto uses = g.use_counts();
    for (const auto& n : g.nodes)
      for (const auto& o : n.outputs)
        if (!o.empty() && !uses.count(o)) g.outputs.push_back(ValueInfo{o, DType::Float32, false, {}});
  }
  SKIFF_CHECK(!g.outputs.empty(), "{}: the model has no outputs", file);
  for (const auto& o : g.outputs)
    if (g.is_initializer(o.name)) {
      // A constant output still needs a node producing it.
      std::string c = im.fresh(o.name + "/const");
      g.initializers[c] = g.initializers.at(o.name);
      g.initializers.erase(o.name);
      im.emit("Identity", {c}, {o.name});
    }

  // Constants the translation replaced (HWIO filters, int32 shapes) are not part of the model.
  std::unordered_set<std::string> used;
  for (const auto& n : g.nodes) used.insert(n.inputs.begin(), n.inputs.end());
  for (auto it = g.initializers.begin(); it != g.initializers.end();)
    it = used.count(it->first) ? std::next(it) : g.initializers.erase(it);

  g.name_nodes();
  if (options.require_supported_ops) {
    for (const auto& n : g.nodes)
      SKIFF_CHECK_T(NotImplementedError, find_graph_op(n.op_type) != nullptr, "{}: {} uses op '{}', which skiff cannot run",
                    file, n.describe(), n.op_type);
  }
  try {
    g.validate();
  } catch (Error& e) {
    e.add_context(fmt::format("while importing {}", file));
    throw;
  }
  return g;
}

}  // namespace

Graph import_tfjs(const std::string& model_json_path, const TfjsImportOptions& options) {
  // The translation reads the JSON with typed accessors and parses numbers from strings;
  // a value of the wrong type or range anywhere in the file surfaces as one of these.
  try {
    return import_tfjs_json(model_json_path, options);
  } catch (const json::exception& e) {
    SKIFF_THROW(ValueError, "{}: malformed TF.js model: {}", model_json_path, e.what());
  } catch (const std::invalid_argument& e) {
    SKIFF_THROW(ValueError, "{}: malformed TF.js model: a number is not a number ({})", model_json_path, e.what());
  } catch (const std::out_of_range& e) {
    SKIFF_THROW(ValueError, "{}: malformed TF.js model: a value or list is out of range ({})", model_json_path,
                e.what());
  } catch (const std::length_error& e) {
    SKIFF_THROW(ValueError, "{}: malformed TF.js model: a size is out of range ({})", model_json_path, e.what());
  }
}

bool is_tfjs_model(const std::string& path) {
  if (fs::path(path).extension() != ".json") return false;
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  try {
    json j = json::parse(f);
    return j.is_object() && j.contains("modelTopology") &&
           (j.value("format", "") == "graph-model" || j["modelTopology"].contains("node"));
  } catch (const json::exception&) {
    return false;
  }
}

std::vector<std::string> tfjs_supported_ops() {
  std::vector<std::string> out{"Const", "Placeholder", "PlaceholderWithDefault"};
  for (const auto& [op, fn] : translators()) out.push_back(op);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace skiff::graph
