# Helpers that give every module the same shape (see docs/design.md).

# skiff_add_module(<name> SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
# Creates the shared library skiff_<name>. Headers are included by their path
# from the repository root: #include "framework/core/dtype.h".
function(skiff_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(skiff_${name} ${ARG_SOURCES})
  target_include_directories(skiff_${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(skiff_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# skiff_add_suite(<name> SOURCES ... [DEPS ...]) -> skiff_suite_<name>
function(skiff_add_suite name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(skiff_suite_${name} ${ARG_SOURCES})
  target_include_directories(skiff_suite_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(skiff_suite_${name} PUBLIC skiff_framework ${ARG_DEPS})
endfunction()

# skiff_add_test(<binary> SOURCES ... DEPS ... [LABELS ...])
function(skiff_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${ARG_LABELS}")
endfunction()
