#include "framework/graph/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>

#include "framework/graph/onnx_import.h"
#include "framework/io/file.h"

namespace skiff::graph {

namespace {

void fill_tensor(onnx::TensorProto* out, const std::string& name, const Tensor& t) {
  out->set_name(name);
  out->set_data_type(dtype_to_onnx(t.dtype()));
  for (auto d : t.shape()) out->add_dims(d);
  Tensor c = t.is_contiguous() ? t : skiff::detail::contiguous_copy(t);
  out->set_raw_data(std::string(static_cast<const char*>(c.data_ptr()), size_t(c.nbytes())));
}

void fill_value_info(onnx::ValueInfoProto* out, const ValueInfo& v) {
  out->set_name(v.name);
  auto* tt = out->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype_to_onnx(v.dtype));
  if (!v.has_shape) return;
  auto* shape = tt->mutable_shape();
  for (const auto& d : v.shape) {
    auto* dim = shape->add_dim();
    if (d.known()) dim->set_dim_value(d.value);
    else if (!d.symbol.empty()) dim->set_dim_param(d.symbol);
  }
}

void fill_attr(onnx::AttributeProto* a, const std::string& name, const AttrValue& v) {
  using A = onnx::AttributeProto;
  a->set_name(name);
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          a->set_type(A::INT);
          a->set_i(x);
        } else if constexpr (std::is_same_v<T, float>) {
          a->set_type(A::FLOAT);
          a->set_f(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          a->set_type(A::STRING);
          a->set_s(x);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          a->set_type(A::TENSOR);
          fill_tensor(a->mutable_t(), "", x);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          a->set_type(A::INTS);
          for (auto i : x) a->add_ints(i);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          a->set_type(A::FLOATS);
          for (auto f : x) a->add_floats(f);
        } else {
          a->set_type(A::STRINGS);
          for (const auto& s : x) a->add_strings(s);
        }
      },
      v);
}

}  // namespace

std::string export_onnx_bytes(const Graph& g, const OnnxExportOptions& options) {
  onnx::ModelProto model;
  model.set_ir_version(8);  // ONNX 1.12's IR version; every opset up to 17 is valid with it
  model.set_producer_name(options.producer_name);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(g.opset_version > 0 ? g.opset_version : 13);
  auto* gp = model.mutable_graph();
  gp->set_name(g.name.empty() ? "skiff" : g.name);
  for (const auto& in : g.inputs) fill_value_info(gp->add_input(), in);
  for (const auto& out : g.outputs) fill_value_info(gp->add_output(), out);
  // Deterministic output: initializers sorted by name.
  std::vector<std::string> names;
  for (const auto& [name, t] : g.initializers) names.push_back(name);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) fill_tensor(gp->add_initializer(), name, g.initializers.at(name));
  for (const auto& n : g.nodes) {
    SKIFF_CHECK_T(NotImplementedError, n.domain.empty() && n.op_type.rfind("skiff.", 0) != 0,
                  "onnx export: {} is a skiff-only op; export the graph before fusion passes", n.describe());
    auto* np = gp->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    for (const auto& in : n.inputs) np->add_input(in);
    for (const auto& out : n.outputs) np->add_output(out);
    for (const auto& [key, v] : n.attrs) fill_attr(np->add_attribute(), key, v);
  }
  // ONNX requires the outputs' shapes (symbolic dims allowed); fill in those the
  // graph does not declare with ONNX's own shape inference.
  bool missing_shape = false;
  for (const auto& out : g.outputs) missing_shape |= !out.has_shape;
  if (missing_shape) {
    try {
      onnx::shape_inference::InferShapes(model);
    } catch (const std::exception& e) {
      SKIFF_THROW(ValueError, "onnx export: shape inference failed: {}", e.what());
    }
    for (auto& out : *gp->mutable_output()) {
      if (out.type().tensor_type().has_shape()) continue;
      for (const auto& vi : gp->value_info())
        if (vi.name() == out.name() && vi.type().tensor_type().has_shape())
          *out.mutable_type()->mutable_tensor_type()->mutable_shape() = vi.type().tensor_type().shape();
    }
  }
  if (options.check) {
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception& e) {
      SKIFF_THROW(ValueError, "onnx export: the ONNX checker rejects the graph: {}", e.what());
    }
  }
  std::string bytes;
  SKIFF_CHECK(model.SerializeToString(&bytes), "onnx export: serialisation failed (model over 2 GiB?)");
  return bytes;
}

void export_onnx(const Graph& g, const std::string& path, const OnnxExportOptions& options) {
  std::string bytes = export_onnx_bytes(g, options);
  io::AtomicFileWriter out(path);
  out.write(bytes);
  out.commit();
}

}  // namespace skiff::graph
