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

# skiff_add_suite(<name> SOURCES ... [DEPS ...] [CLI_SOURCES ...])
# -> skiff_suite_<name> (the suite; its register.cpp registers its components and
# recipe runners) and, with CLI_SOURCES, skiff_suite_<name>_cli (its skiff
# subcommands, framework/cli/command_registry.h). The skiff executable links every
# suite declared this way (the global property SKIFF_SUITE_TARGETS), so a suite's
# static registrations run without anything outside suites/ naming it.
function(skiff_add_suite name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;CLI_SOURCES" ${ARGN})
  add_library(skiff_suite_${name} ${ARG_SOURCES})
  target_include_directories(skiff_suite_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(skiff_suite_${name} PUBLIC skiff_framework ${ARG_DEPS})
  set_property(GLOBAL APPEND PROPERTY SKIFF_SUITE_TARGETS skiff_suite_${name})
  if(ARG_CLI_SOURCES)
    add_library(skiff_suite_${name}_cli ${ARG_CLI_SOURCES})
    target_link_libraries(skiff_suite_${name}_cli PUBLIC skiff_suite_${name} skiff_cli)
    set_property(GLOBAL APPEND PROPERTY SKIFF_SUITE_TARGETS skiff_suite_${name}_cli)
  endif()
endfunction()

# skiff_add_test(<binary> SOURCES ... DEPS ... [LABELS ...])
# A GoogleTest binary; its tests carry the label `unit` besides LABELS, and the target
# skiff_unit_tests builds every such binary (scripts/sanitize.sh runs them all).
function(skiff_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "unit;${ARG_LABELS}")
  if(NOT TARGET skiff_unit_tests)
    add_custom_target(skiff_unit_tests)
  endif()
  add_dependencies(skiff_unit_tests ${name})
endfunction()
