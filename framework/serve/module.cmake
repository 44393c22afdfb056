# skiff_serve: `skiff serve` (framework/serve/): HTTP (cpp-httplib), the bounded
# work queue with dynamic batching, metrics, and the generic model endpoint.
# Suites register their endpoints (SKIFF_REGISTER_ENDPOINT) from their CLI targets.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
skiff_add_module(serve
  SOURCES serve/endpoint.cpp serve/settings.cpp serve/request_fields.cpp serve/metrics.cpp serve/work_queue.cpp serve/server.cpp
          serve/tensor_json.cpp serve/model_endpoint.cpp
  DEPS skiff_engine skiff_zoo nlohmann_json::nlohmann_json
  PRIVATE_DEPS PkgConfig::HTTPLIB)
