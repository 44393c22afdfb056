# Tests of the synthetic renderer, the sample image and result drawing.
list(APPEND SKIFF_OCR_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/synth_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/draw_result_test.cpp)
