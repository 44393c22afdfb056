// libskiff: the C API (include/skiff/skiff_c.h) over the Predictor and the endpoints
// that suites register for `skiff serve`. Every entry point catches everything: no C++
// exception crosses into C; the message goes to the calling thread's last error.
#include "skiff/skiff_c.h"

#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/engine/predictor.h"
#include "framework/io/base64.h"
#include "framework/serve/endpoint.h"
#include "framework/zoo/zoo.h"
#include "skiff/build_info.h"

using nlohmann::json;

struct skiff_model {
  std::unique_ptr<skiff::engine::Predictor> predictor;
  std::vector<std::vector<int64_t>> input_shapes, output_shapes;  // -1 for dynamic dims
};

struct skiff_outputs {
  std::vector<skiff::Tensor> tensors;  // contiguous
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
};

struct skiff_pipeline {
  std::unique_ptr<skiff::serve::Endpoint> endpoint;
  skiff::serve::RequestLimits limits;
};

namespace {

thread_local std::string t_last_error;

/// Runs `fn`, turning any exception into a status and the thread's last error.
template <typename Fn>
skiff_status guarded(Fn&& fn) {
  t_last_error.clear();
  try {
    fn();
    return SKIFF_OK;
  } catch (const skiff::Error& e) {
    t_last_error = std::string(e.kind()) + ": " + e.full_message();
    return skiff_status(e.exit_code());
  } catch (const json::exception& e) {
    t_last_error = std::string("malformed JSON: ") + e.what();
    return SKIFF_ERROR_BAD_INPUT;
  } catch (const std::filesystem::filesystem_error& e) {
    t_last_error = e.what();
    return SKIFF_ERROR_IO;
  } catch (const std::bad_alloc&) {
    t_last_error = "out of memory";
    return SKIFF_ERROR_DEVICE;
  } catch (const std::exception& e) {
    t_last_error = e.what();
    return SKIFF_ERROR;
  } catch (...) {
    t_last_error = "unknown error";
    return SKIFF_ERROR;
  }
}

void require(const void* p, const char* what) { SKIFF_CHECK(p != nullptr, "{}: NULL", what); }

/// The dtype field of a caller's tensor. C lets any int stand in an enum field, and a
/// C++ load of a value outside the enum's range is undefined: read it as its integer.
skiff::DType dtype_of_field(const skiff_dtype& field, size_t i) {
  std::underlying_type_t<skiff_dtype> raw;
  std::memcpy(&raw, &field, sizeof raw);
  switch (raw) {
    case SKIFF_BOOL: return skiff::DType::Bool;
    case SKIFF_UINT8: return skiff::DType::UInt8;
    case SKIFF_INT8: return skiff::DType::Int8;
    case SKIFF_INT32: return skiff::DType::Int32;
    case SKIFF_INT64: return skiff::DType::Int64;
    case SKIFF_FLOAT16: return skiff::DType::Float16;
    case SKIFF_BFLOAT16: return skiff::DType::BFloat16;
    case SKIFF_FLOAT32: return skiff::DType::Float32;
    case SKIFF_FLOAT64: return skiff::DType::Float64;
    default: break;
  }
  SKIFF_THROW(skiff::ValueError, "inputs[{}]: dtype {} is not a skiff_dtype", i, int64_t(raw));
}

skiff_dtype from_dtype(skiff::DType t) {
  switch (t) {
    case skiff::DType::Bool: return SKIFF_BOOL;
    case skiff::DType::UInt8: return SKIFF_UINT8;
    case skiff::DType::Int8: return SKIFF_INT8;
    case skiff::DType::Int32: return SKIFF_INT32;
    case skiff::DType::Int64: return SKIFF_INT64;
    case skiff::DType::Float16: return SKIFF_FLOAT16;
    case skiff::DType::BFloat16: return SKIFF_BFLOAT16;
    case skiff::DType::Float32: return SKIFF_FLOAT32;
    case skiff::DType::Float64: return SKIFF_FLOAT64;
    default: break;
  }
  SKIFF_THROW(skiff::NotImplementedError, "{} tensors have no C API dtype", skiff::dtype_name(t));
}

std::vector<int64_t> declared_shape(const skiff::graph::ValueInfo& v) {
  std::vector<int64_t> dims;
  for (const auto& d : v.shape) dims.push_back(d.known() ? d.value : -1);
  return dims;
}

/// A copy of the caller's tensor `t` (argument `i`).
skiff::Tensor copy_in(const skiff_tensor& t, size_t i) {
  SKIFF_CHECK(t.rank >= 0 && t.rank <= skiff::kMaxDims, "inputs[{}]: rank {} (expected 0..{})", i, t.rank,
              skiff::kMaxDims);
  SKIFF_CHECK(t.rank == 0 || t.shape, "inputs[{}]: shape is NULL", i);
  skiff::Shape shape;
  int64_t numel = 1;
  for (int32_t d = 0; d < t.rank; ++d) {
    SKIFF_CHECK(t.shape[d] >= 0, "inputs[{}]: shape[{}] is {}", i, d, t.shape[d]);
    SKIFF_CHECK(!__builtin_mul_overflow(numel, t.shape[d], &numel), "inputs[{}]: too many elements", i);
    shape.push_back(t.shape[d]);
  }
  skiff::Tensor out = skiff::empty(shape, dtype_of_field(t.dtype, i));
  SKIFF_CHECK(numel == 0 || t.data, "inputs[{}]: data is NULL", i);
  if (numel > 0) std::memcpy(out.data_ptr(), t.data, size_t(out.nbytes()));
  return out;
}

char* copy_string(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (!out) throw std::bad_alloc();
  std::memcpy(out, s.data(), s.size() + 1);
  return out;
}

void describe(const skiff::graph::ValueInfo& v, const std::vector<int64_t>& dims, skiff_tensor* info) {
  info->name = v.name.c_str();
  info->dtype = from_dtype(v.dtype);
  info->rank = int32_t(dims.size());
  info->shape = dims.data();
  info->data = nullptr;
}

}  // namespace

extern "C" {

int32_t skiff_api_version(void) { return SKIFF_C_API_VERSION; }
const char* skiff_version(void) { return SKIFF_VERSION; }
const char* skiff_last_error(void) { return t_last_error.c_str(); }
void skiff_string_free(char* s) { std::free(s); }

skiff_status skiff_set_num_threads(int32_t n) {
  return guarded([&] { skiff::set_num_threads(n); });
}

skiff_status skiff_model_load(const char* path_or_zoo_name, skiff_model** model) {
  return guarded([&] {
    require(path_or_zoo_name, "path_or_zoo_name");
    require(model, "model");
    *model = nullptr;
    auto m = std::make_unique<skiff_model>();
    m->predictor = std::make_unique<skiff::engine::Predictor>(skiff::zoo::resolve_model_path(path_or_zoo_name).string());
    for (const auto& v : m->predictor->inputs()) m->input_shapes.push_back(declared_shape(v));
    for (const auto& v : m->predictor->outputs()) m->output_shapes.push_back(declared_shape(v));
    *model = m.release();
  });
}

void skiff_model_free(skiff_model* model) { delete model; }
size_t skiff_model_num_inputs(const skiff_model* model) { return model ? model->predictor->inputs().size() : 0; }
size_t skiff_model_num_outputs(const skiff_model* model) { return model ? model->predictor->outputs().size() : 0; }

skiff_status skiff_model_input(const skiff_model* model, size_t index, skiff_tensor* info) {
  return guarded([&] {
    require(model, "model");
    require(info, "info");
    SKIFF_CHECK_INDEX(index < model->input_shapes.size(), "input {}: the model has {}", index, model->input_shapes.size());
    describe(model->predictor->inputs()[index], model->input_shapes[index], info);
  });
}

skiff_status skiff_model_output(const skiff_model* model, size_t index, skiff_tensor* info) {
  return guarded([&] {
    require(model, "model");
    require(info, "info");
    SKIFF_CHECK_INDEX(index < model->output_shapes.size(), "output {}: the model has {}", index,
                      model->output_shapes.size());
    describe(model->predictor->outputs()[index], model->output_shapes[index], info);
  });
}

skiff_status skiff_model_run(const skiff_model* model, const skiff_tensor* inputs, size_t num_inputs,
                             skiff_outputs** outputs) {
  return guarded([&] {
    require(model, "model");
    require(outputs, "outputs");
    *outputs = nullptr;
    SKIFF_CHECK(num_inputs == 0 || inputs, "inputs: NULL");
    const auto& declared = model->predictor->inputs();
    SKIFF_CHECK(num_inputs == declared.size(), "the model takes {} inputs, got {}", declared.size(), num_inputs);
    std::vector<skiff::Tensor> ordered(declared.size());
    for (size_t i = 0; i < num_inputs; ++i) {
      size_t slot = i;
      if (inputs[i].name) {
        slot = declared.size();
        for (size_t j = 0; j < declared.size(); ++j)
          if (declared[j].name == inputs[i].name) slot = j;
        SKIFF_CHECK(slot < declared.size(), "inputs[{}]: the model has no input named '{}'", i, inputs[i].name);
      }
      SKIFF_CHECK(!ordered[slot].defined(), "inputs[{}]: input '{}' given twice", i, declared[slot].name);
      ordered[slot] = copy_in(inputs[i], i);
    }
    auto out = std::make_unique<skiff_outputs>();
    std::vector<skiff::Tensor> results = model->predictor->run(ordered);
    for (size_t i = 0; i < results.size(); ++i) {
      skiff::Tensor t = results[i].is_contiguous() ? results[i] : skiff::detail::contiguous_copy(results[i]);
      from_dtype(t.dtype());  // refuses dtypes C cannot name before anything is returned
      out->shapes.emplace_back(t.shape().begin(), t.shape().end());
      out->names.push_back(model->predictor->outputs()[i].name);
      out->tensors.push_back(std::move(t));
    }
    *outputs = out.release();
  });
}

size_t skiff_outputs_count(const skiff_outputs* outputs) { return outputs ? outputs->tensors.size() : 0; }

skiff_status skiff_outputs_get(const skiff_outputs* outputs, size_t index, skiff_tensor* tensor) {
  return guarded([&] {
    require(outputs, "outputs");
    require(tensor, "tensor");
    SKIFF_CHECK_INDEX(index < outputs->tensors.size(), "output {}: there are {}", index, outputs->tensors.size());
    const skiff::Tensor& t = outputs->tensors[index];
    tensor->name = outputs->names[index].c_str();
    tensor->dtype = from_dtype(t.dtype());
    tensor->rank = int32_t(t.dim());
    tensor->shape = outputs->shapes[index].data();
    tensor->data = t.data_ptr();
  });
}

void skiff_outputs_free(skiff_outputs* outputs) { delete outputs; }

skiff_status skiff_pipeline_load(const char* name, const char* settings_json, skiff_pipeline** pipeline) {
  return guarded([&] {
    require(name, "name");
    require(pipeline, "pipeline");
    *pipeline = nullptr;
    skiff::serve::EndpointSettings settings;
    if (settings_json) {
      const json s = json::parse(settings_json);
      SKIFF_CHECK(s.is_object(), "settings: expected a JSON object, got {}", s.type_name());
      for (const auto& [key, value] : s.items()) {
        SKIFF_CHECK(value.is_string() || value.is_number() || value.is_boolean(),
                    "settings.{}: expected a string, number or boolean", key);
        settings[key] = value.is_string() ? value.get<std::string>() : value.dump();
      }
    }
    auto p = std::make_unique<skiff_pipeline>();
    p->endpoint = skiff::serve::endpoints().get(name)(settings);
    p->limits.any_file = true;
    p->limits.max_file_bytes = size_t(1) << 30;
    *pipeline = p.release();
  });
}

void skiff_pipeline_free(skiff_pipeline* pipeline) { delete pipeline; }

namespace {

std::string run_request(const skiff_pipeline& p, json request) {
  skiff::serve::Call call;
  call.request = std::move(request);
  p.endpoint->prepare(call, p.limits);
  skiff::serve::Call* calls[] = {&call};
  p.endpoint->run(calls);
  return call.result.dump();
}

}  // namespace

skiff_status skiff_pipeline_run(const skiff_pipeline* pipeline, const char* request_json, char** result_json) {
  return guarded([&] {
    require(pipeline, "pipeline");
    require(request_json, "request_json");
    require(result_json, "result_json");
    *result_json = nullptr;
    *result_json = copy_string(run_request(*pipeline, json::parse(request_json)));
  });
}

skiff_status skiff_pipeline_run_image(const skiff_pipeline* pipeline, const void* encoded_image, size_t size,
                                      const char* options_json, char** result_json) {
  return guarded([&] {
    require(pipeline, "pipeline");
    require(encoded_image, "encoded_image");
    require(result_json, "result_json");
    *result_json = nullptr;
    const char* field = pipeline->endpoint->image_field();
    SKIFF_CHECK(field, "this pipeline takes no image; use skiff_pipeline_run");
    json request = options_json ? json::parse(options_json) : json::object();
    SKIFF_CHECK(request.is_object(), "options: expected a JSON object");
    request[field] = skiff::io::base64_encode({static_cast<const char*>(encoded_image), size});
    *result_json = copy_string(run_request(*pipeline, std::move(request)));
  });
}

}  // extern "C"
