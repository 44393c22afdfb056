# Tests of skiff_suite_science.
skiff_add_test(skiff_science_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/geometry_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/derivatives_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/recipe_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/pinn_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/problems_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/operator_test.cpp
  DEPS skiff_suite_science)
target_compile_definitions(skiff_science_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
