# Tests of the PicoDet model, the assigner and the GFL losses (suites/detection/train.cmake).
list(APPEND SKIFF_DETECTION_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/assigner_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gfl_loss_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/picodet_test.cpp)
