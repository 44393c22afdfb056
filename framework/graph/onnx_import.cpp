#include "framework/graph/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <type_traits>

#include "framework/graph/op_registry.h"
#include "framework/io/file.h"

namespace skiff::graph {

namespace fs = std::filesystem;

DType dtype_from_onnx(int t, const std::string& where) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return DType::Float32;
    case onnx::TensorProto::DOUBLE: return DType::Float64;
    case onnx::TensorProto::FLOAT16: return DType::Float16;
    case onnx::TensorProto::BFLOAT16: return DType::BFloat16;
    case onnx::TensorProto::INT64: return DType::Int64;
    case onnx::TensorProto::INT32: return DType::Int32;
    case onnx::TensorProto::INT8: return DType::Int8;
    case onnx::TensorProto::UINT8: return DType::UInt8;
    case onnx::TensorProto::BOOL: return DType::Bool;
    case onnx::TensorProto::COMPLEX64: return DType::Complex64;
    case onnx::TensorProto::COMPLEX128: return DType::Complex128;
    default:
      SKIFF_THROW(NotImplementedError, "{}: ONNX data type {} ({}) is not supported", where, t,
                  onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(t)));
  }
}

int dtype_to_onnx(DType d) {
  switch (d) {
    case DType::Float32: return onnx::TensorProto::FLOAT;
    case DType::Float64: return onnx::TensorProto::DOUBLE;
    case DType::Float16: return onnx::TensorProto::FLOAT16;
    case DType::BFloat16: return onnx::TensorProto::BFLOAT16;
    case DType::Int64: return onnx::TensorProto::INT64;
    case DType::Int32: return onnx::TensorProto::INT32;
    case DType::Int8: return onnx::TensorProto::INT8;
    case DType::UInt8: return onnx::TensorProto::UINT8;
    case DType::Bool: return onnx::TensorProto::BOOL;
    case DType::Complex64: return onnx::TensorProto::COMPLEX64;
    case DType::Complex128: return onnx::TensorProto::COMPLEX128;
  }
  return onnx::TensorProto::UNDEFINED;
}

namespace {

struct ImportContext {
  std::string file;      // for messages
  fs::path base_dir;     // for external data
};

Shape tensor_shape(const onnx::TensorProto& t, const std::string& where) {
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  SKIFF_CHECK(dims.size() <= 8, "{}: tensor '{}' has {} dims (at most 8 are supported)", where, t.name(), dims.size());
  for (auto d : dims) SKIFF_CHECK(d >= 0, "{}: tensor '{}' has a negative dim {}", where, t.name(), d);
  return Shape(dims);
}

/// Copies the values of a repeated proto field into the tensor, converting to its dtype.
/// The caller has checked that the field holds out.numel() values.
template <typename Src, typename Field>
void copy_field(const Field& field, Tensor& out, const std::string& where, const std::string& name) {
  switch (out.dtype()) {
    case DType::Float32: { auto* p = out.data<float>(); for (int i = 0; i < field.size(); ++i) p[i] = float(field[i]); break; }
    case DType::Float64: { auto* p = out.data<double>(); for (int i = 0; i < field.size(); ++i) p[i] = double(field[i]); break; }
    case DType::Int64: { auto* p = out.data<int64_t>(); for (int i = 0; i < field.size(); ++i) p[i] = int64_t(field[i]); break; }
    case DType::Int32: { auto* p = out.data<int32_t>(); for (int i = 0; i < field.size(); ++i) p[i] = int32_t(field[i]); break; }
    case DType::Int8: { auto* p = static_cast<int8_t*>(out.data_ptr()); for (int i = 0; i < field.size(); ++i) p[i] = int8_t(field[i]); break; }
    case DType::UInt8: { auto* p = static_cast<uint8_t*>(out.data_ptr()); for (int i = 0; i < field.size(); ++i) p[i] = uint8_t(field[i]); break; }
    case DType::Bool: { auto* p = static_cast<bool*>(out.data_ptr()); for (int i = 0; i < field.size(); ++i) p[i] = field[i] != 0; break; }
    case DType::Float16:
    case DType::BFloat16: {  // stored as raw 16-bit patterns in int32_data
      auto* p = static_cast<uint16_t*>(out.data_ptr());
      for (int i = 0; i < field.size(); ++i) p[i] = uint16_t(field[i]);
      break;
    }
    default:
      SKIFF_THROW(NotImplementedError, "{}: tensor '{}': typed-field storage of {} is not supported", where, name,
                  dtype_name(out.dtype()));
  }
}

// A non-negative decimal from an external_data entry.
int64_t external_number(const onnx::StringStringEntryProto& kv, const onnx::TensorProto& t, const std::string& where) {
  int64_t v = -1;
  const std::string& s = kv.value();
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  SKIFF_CHECK(ec == std::errc() && end == s.data() + s.size() && v >= 0,
              "{}: tensor '{}': external data {} '{}' is not a byte count", where, t.name(), kv.key(), s);
  return v;
}

// The `nbytes` bytes of a tensor stored in a file beside the model.
std::string read_external(const onnx::TensorProto& t, int64_t nbytes, const ImportContext& ctx,
                          const std::string& where) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = external_number(kv, t, where);
    else if (kv.key() == "length") length = external_number(kv, t, where);
  }
  SKIFF_CHECK(!location.empty(), "{}: tensor '{}' uses external data without a location", where, t.name());
  fs::path rel(location);
  // External files must stay beside the model: no absolute paths, no "..".
  SKIFF_CHECK(rel.is_relative() && std::find(rel.begin(), rel.end(), "..") == rel.end(),
              "{}: tensor '{}' points outside the model directory ('{}')", where, t.name(), location);
  fs::path path = ctx.base_dir / rel;
  std::ifstream f(path, std::ios::binary);
  if (!f) SKIFF_THROW(IoError, "{}: cannot open external data file '{}' of tensor '{}'", where, path.string(), t.name());
  f.seekg(0, std::ios::end);
  int64_t size = f.tellg();
  if (length < 0) length = std::max<int64_t>(size - offset, 0);
  SKIFF_CHECK(length == nbytes, "{}: tensor '{}' has {} bytes of external data, its shape and dtype need {}", where,
              t.name(), length, nbytes);
  SKIFF_CHECK(offset <= size && length <= size - offset, "{}: external data of tensor '{}' ({} bytes at {}) runs past "
              "the end of '{}' ({} bytes)", where, t.name(), length, offset, path.string(), size);
  std::string data(size_t(length), '\0');
  f.seekg(offset);
  f.read(data.data(), length);
  return data;
}

Tensor convert_tensor(const onnx::TensorProto& t, const ImportContext& ctx, const std::string& where) {
  DType dtype = dtype_from_onnx(t.data_type(), where + ": tensor '" + t.name() + "'");
  const Shape shape = tensor_shape(t, where);
  // The size the shape declares, checked against the data before anything is allocated:
  // a corrupt file can declare any shape.
  int64_t numel = 1, nbytes = 0;
  for (int64_t d : shape)
    SKIFF_CHECK(!__builtin_mul_overflow(numel, d, &numel), "{}: tensor '{}' has an impossible shape {}", where,
                t.name(), shape);
  SKIFF_CHECK(!__builtin_mul_overflow(numel, int64_t(itemsize(dtype)), &nbytes),
              "{}: tensor '{}' has an impossible shape {}", where, t.name(), shape);
  auto check_count = [&](int64_t have, const char* what, int64_t need) {
    SKIFF_CHECK(have == need, "{}: tensor '{}' has {} {} of data, its shape {} and dtype {} need {} "
                "(truncated or corrupt file?)", where, t.name(), have, what, shape, dtype_name(dtype), need);
  };
  auto copy_raw = [&](const std::string& raw) {
    check_count(int64_t(raw.size()), "bytes", nbytes);
    Tensor out = empty(shape, dtype);
    if (nbytes) std::memcpy(out.data_ptr(), raw.data(), size_t(nbytes));
    return out;
  };
  auto typed = [&](const auto& field, auto source_type) {
    using Src = decltype(source_type);
    // Each dtype has its field (onnx.proto): float_data, double_data, int64_data, and
    // int32_data for the narrower ints, bool and 16-bit floats. Reading another field would
    // convert, e.g. a float of 4e25 into an int8, which C++ leaves undefined.
    const char* field_name = std::is_same_v<Src, float>    ? "float_data"
                             : std::is_same_v<Src, double> ? "double_data"
                             : std::is_same_v<Src, int64_t> ? "int64_data"
                                                            : "int32_data";
    const bool matches = std::is_same_v<Src, float>     ? dtype == DType::Float32
                         : std::is_same_v<Src, double>  ? dtype == DType::Float64
                         : std::is_same_v<Src, int64_t> ? dtype == DType::Int64
                                                        : dtype == DType::Int32 || dtype == DType::Int8 ||
                                                              dtype == DType::UInt8 || dtype == DType::Bool ||
                                                              dtype == DType::Float16 || dtype == DType::BFloat16;
    SKIFF_CHECK(matches, "{}: tensor '{}' of dtype {} stores its values in {}, which onnx.proto keeps for other dtypes",
                where, t.name(), dtype_name(dtype), field_name);
    check_count(int64_t(field.size()), "values", numel);
    Tensor out = empty(shape, dtype);
    copy_field<Src>(field, out, where, t.name());
    return out;
  };
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return copy_raw(read_external(t, nbytes, ctx, where));
  if (t.has_raw_data()) return copy_raw(t.raw_data());
  if (t.float_data_size()) return typed(t.float_data(), float{});
  if (t.double_data_size()) return typed(t.double_data(), double{});
  if (t.int64_data_size()) return typed(t.int64_data(), int64_t{});
  if (t.int32_data_size()) return typed(t.int32_data(), int32_t{});
  SKIFF_CHECK(numel == 0, "{}: tensor '{}' of shape {} has no data", where, t.name(), shape);
  return empty(shape, dtype);
}

ValueInfo convert_value_info(const onnx::ValueInfoProto& v, const std::string& where) {
  ValueInfo info;
  info.name = v.name();
  if (!v.has_type() || !v.type().has_tensor_type()) return info;
  const auto& tt = v.type().tensor_type();
  if (tt.elem_type() != 0) info.dtype = dtype_from_onnx(tt.elem_type(), where + ": value '" + v.name() + "'");
  if (tt.has_shape()) {
    info.has_shape = true;
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) info.shape.push_back(Dim::fixed(d.dim_value()));
      else info.shape.push_back(Dim::dynamic(d.dim_param()));
    }
  }
  return info;
}

AttrValue convert_attr(const onnx::AttributeProto& a, const ImportContext& ctx, const std::string& where) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::INT: return int64_t(a.i());
    case A::FLOAT: return a.f();
    case A::STRING: return a.s();
    case A::TENSOR: return convert_tensor(a.t(), ctx, where);
    case A::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case A::FLOATS: return std::vector<float>(a.floats().begin(), a.floats().end());
    case A::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
    default:
      SKIFF_THROW(NotImplementedError, "{}: attribute '{}' of type {} is not supported (sub-graphs and sparse "
                  "tensors cannot be imported)", where, a.name(), A::AttributeType_Name(a.type()));
  }
}

}  // namespace

Graph import_onnx_bytes(std::string_view bytes, const std::string& name, const std::string& base_dir,
                        const OnnxImportOptions& options) {
  onnx::ModelProto model;
  SKIFF_CHECK_T(NotImplementedError, bytes.size() <= size_t(std::numeric_limits<int>::max()),
                "{}: ONNX models over 2 GiB (protobuf's limit) are not supported; keep weights as external data", name);
  if (bytes.empty() || !model.ParseFromArray(bytes.data(), int(bytes.size())))
    // The file was read: its content is wrong, so this is bad input (exit 2), not an I/O failure.
    SKIFF_THROW(ValueError, "{}: not a valid ONNX model (empty, truncated or corrupt protobuf)", name);
  SKIFF_CHECK(model.has_graph(), "{}: the ONNX model has no graph", name);
  ImportContext ctx{name, fs::path(base_dir)};

  Graph g;
  g.name = model.graph().name();
  g.producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
  for (const auto& op : model.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") g.opset_version = op.version();
    else if (op.domain() != "ai.onnx.ml")
      SKIFF_THROW(NotImplementedError, "{}: operator domain '{}' is not supported", name, op.domain());
  }
  if (g.opset_version == 0 && model.opset_import_size() == 0) g.opset_version = 1;
  if (g.opset_version < 7 || g.opset_version > 18)
    SKIFF_THROW(NotImplementedError, "{}: ONNX opset {} is not supported (skiff imports opsets 7 to 18)", name,
                g.opset_version);

  const auto& gp = model.graph();
  for (const auto& t : gp.initializer()) {
    SKIFF_CHECK(!t.name().empty(), "{}: an initializer has no name", name);
    g.initializers[t.name()] = convert_tensor(t, ctx, name);
  }
  SKIFF_CHECK(gp.sparse_initializer_size() == 0, "{}: sparse initializers are not supported", name);
  for (const auto& in : gp.input()) {
    // Old exporters also list initializers as graph inputs; they are constants here.
    if (g.initializers.count(in.name())) continue;
    g.inputs.push_back(convert_value_info(in, name));
  }
  for (const auto& out : gp.output()) g.outputs.push_back(convert_value_info(out, name));
  for (const auto& vi : gp.value_info()) g.value_info[vi.name()] = convert_value_info(vi, name);

  g.nodes.reserve(size_t(gp.node_size()));
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& np = gp.node(i);
    Node n;
    n.name = np.name();
    n.op_type = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    std::string where = fmt::format("{}: node '{}' ({})", name, n.name.empty() ? std::to_string(i) : n.name, n.op_type);
    SKIFF_CHECK(n.domain.empty(), "{}: domain '{}' is not supported", where, n.domain);
    for (const auto& a : np.attribute()) {
      SKIFF_CHECK(!a.ref_attr_name().size(), "{}: attribute references (functions) are not supported", where);
      n.attrs[a.name()] = convert_attr(a, ctx, where);
    }
    g.nodes.push_back(std::move(n));
  }
  g.name_nodes();

  if (options.require_supported_ops) {
    for (const auto& n : g.nodes) {
      if (find_graph_op(n.op_type)) continue;
      std::string hint = closest_graph_op(n.op_type);
      SKIFF_THROW(NotImplementedError, "{}: {} uses op '{}', which skiff cannot run{}", name, n.describe(), n.op_type,
                  hint.empty() ? std::string() : fmt::format(" (closest supported op: {})", hint));
    }
  }
  try {
    g.validate();
  } catch (Error& e) {
    e.add_context(fmt::format("while importing {}", name));
    throw;
  }
  return g;
}

Graph import_onnx(const std::string& path, const OnnxImportOptions& options) {
  // Parsed straight from a mapping of the file: read through a string stream, loading copied
  // the model three times, a fifth of the page faults of a whole `skiff ocr` run.
  std::shared_ptr<io::MappedFile> file = io::MappedFile::open(path);
  fs::path p(path);
  return import_onnx_bytes(std::string_view(reinterpret_cast<const char*>(file->data()), file->size()), path,
                           p.has_parent_path() ? p.parent_path().string() : ".", options);
}

}  // namespace skiff::graph
