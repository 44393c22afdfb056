# Tests of synthetic data, reader transforms and collation (suites/detection/synth.cmake).
list(APPEND SKIFF_DETECTION_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/synth_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transforms_test.cpp)
