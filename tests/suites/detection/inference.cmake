# Tests of GFL decoding and NMS (suites/detection/inference.cmake).
list(APPEND SKIFF_DETECTION_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/boxes_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/deploy_config_test.cpp)
