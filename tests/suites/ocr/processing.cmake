# Tests of the PP-OCR pre- and post-processing steps (suites/ocr/processing.cmake).
list(APPEND SKIFF_OCR_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/geometry_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/preprocess_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/db_postprocess_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/box_order_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/crop_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ctc_decode_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/orientation_test.cpp
  # PaddleOCR rules worked out by hand (issue 30): unclip, min size, score modes, resize, order, CTC.
  ${CMAKE_CURRENT_LIST_DIR}/paddle_rules_test.cpp)
