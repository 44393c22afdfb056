#pragma once
/// \file endpoint.h
/// What `skiff serve` serves. An Endpoint answers one kind of request: a suite's
/// pipeline (`POST /ocr`), or one model's raw tensors (`POST /v1/models/NAME:predict`,
/// serve/model_endpoint.h). Suites register theirs by name, the way they register
/// commands, and `skiff serve ocr det` loads the ones asked for:
///
///   // suites/ocr/cli/ocr_endpoint.cpp
///   SKIFF_REGISTER_ENDPOINT("ocr", make_ocr_endpoint);   // POST /ocr
///
/// A request goes through two steps. prepare() runs on the connection's thread as
/// soon as the body is parsed: it checks the fields (a ValueError naming the field
/// becomes 400) and says which requests may run together (the batch key). run()
/// runs on one of the server's workers, with up to `max_batch` prepared calls of the
/// same key, inside the worker's share of the OpenMP threads.

#include <any>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "framework/core/registry.h"

namespace skiff::serve {

/// One request to an endpoint, from its body to its answer.
struct Call {
  nlohmann::json request;  ///< the JSON body as sent
  std::any input;          ///< what prepare() made of it (decoded bytes, tensors)
  nlohmann::json result;   ///< run() sets this, the response's "result"
  /// Streaming endpoints send events through this while run() works (server-sent
  /// events); it returns false once the client has gone, and run() should stop.
  std::function<bool(const nlohmann::json& event)> emit;
};

/// Where requests may read files from and how large an upload may be; endpoints
/// that accept a file field read it with read_file_field() (request_fields.h).
struct RequestLimits {
  /// Requests may name files under this directory instead of sending their bytes;
  /// "" (the default) accepts bytes only.
  std::string files_root;
  /// Any file path is read (the C API, whose caller is the process itself).
  bool any_file = false;
  size_t max_file_bytes = size_t(32) << 20;
};

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  /// Checks `call.request` and fills `call.input`. Returns the batch key: calls with
  /// the same non-empty key may be run together; "" runs this call alone.
  /// \throws ValueError (or another input error) naming the field: the client gets 400.
  virtual std::string prepare(Call& call, const RequestLimits& limits) const = 0;
  /// Runs prepared calls (one, or several with the same batch key) and sets each one's
  /// result. An exception fails every call of the batch: input errors with 400, others 500.
  virtual void run(std::span<Call* const> calls) const = 0;
  /// Whether the answer to this prepared call is a stream of server-sent events.
  virtual bool streams(const Call& /*call*/) const { return false; }
  /// The request field that carries an image ("file" for /ocr, "image" for /det), or
  /// null: the C API's skiff_pipeline_run_image() and the web pages fill it.
  virtual const char* image_field() const { return nullptr; }
  /// What GET /v1/endpoints says about it (models, settings).
  virtual nlohmann::json describe() const { return nlohmann::json::object(); }
};

/// Settings given on the command line as `--set NAME.key=value` for endpoint NAME.
using EndpointSettings = std::map<std::string, std::string>;
/// Loads an endpoint's models. \throws naming the setting or model that cannot be had.
using EndpointFactory = std::function<std::unique_ptr<Endpoint>(const EndpointSettings&)>;

/// Every registered endpoint, by route name ("ocr" is served at POST /ocr).
Registry<EndpointFactory>& endpoints();

namespace detail {
struct EndpointRegistrar {
  EndpointRegistrar(const std::string& name, EndpointFactory make) { endpoints().add(name, std::move(make)); }
};
}  // namespace detail

}  // namespace skiff::serve

#define SKIFF_ENDPOINT_CONCAT2(a, b) a##b
#define SKIFF_ENDPOINT_CONCAT(a, b) SKIFF_ENDPOINT_CONCAT2(a, b)
/// Registers `make` (an EndpointFactory) as the endpoint served at POST /<name>.
#define SKIFF_REGISTER_ENDPOINT(name, make) \
  static const ::skiff::serve::detail::EndpointRegistrar SKIFF_ENDPOINT_CONCAT(skiff_endpoint_, __COUNTER__)(name, make)
