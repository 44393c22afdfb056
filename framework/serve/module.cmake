# skiff_serve: `skiff serve` (framework/serve/): HTTP (cpp-httplib), the bounded
# work queue with dynamic batching, metrics, and the generic model endpoint.
# Suites register their endpoints (SKIFF_REGISTER_ENDPOINT) from their CLI targets.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
# The demo pages (framework/serve/web/), compiled in.
set(SKIFF_WEB_FILES ${CMAKE_CURRENT_LIST_DIR}/web/index.html ${CMAKE_CURRENT_LIST_DIR}/web/app.js
  ${CMAKE_CURRENT_LIST_DIR}/web/style.css)
set(SKIFF_WEB_CPP ${PROJECT_BINARY_DIR}/generated/skiff/web_assets_data.cpp)
add_custom_command(OUTPUT ${SKIFF_WEB_CPP}
  COMMAND ${CMAKE_COMMAND} "-DINPUTS=${SKIFF_WEB_FILES}" -DOUTPUT=${SKIFF_WEB_CPP}
          -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
  DEPENDS ${SKIFF_WEB_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
  COMMENT "Embedding the web pages of skiff serve" VERBATIM)
skiff_add_module(serve
  SOURCES serve/endpoint.cpp serve/web_assets.cpp ${SKIFF_WEB_CPP} serve/settings.cpp serve/request_fields.cpp serve/metrics.cpp serve/work_queue.cpp serve/server.cpp
          serve/tensor_json.cpp serve/model_endpoint.cpp
  DEPS skiff_engine skiff_zoo nlohmann_json::nlohmann_json
  PRIVATE_DEPS PkgConfig::HTTPLIB)
