# Tests of the synthetic image-caption set (suites/multimodal/synth.cmake).
list(APPEND SKIFF_MULTIMODAL_TEST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/synth_test.cpp)
