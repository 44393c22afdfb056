# Pre- and post-processing steps of the PP-OCR pipeline (owner: OCR processing).
list(APPEND SKIFF_OCR_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/geometry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/preprocess.cpp
  ${CMAKE_CURRENT_LIST_DIR}/db_postprocess.cpp
  ${CMAKE_CURRENT_LIST_DIR}/box_order.cpp
  ${CMAKE_CURRENT_LIST_DIR}/crop.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ctc_decode.cpp
  ${CMAKE_CURRENT_LIST_DIR}/orientation.cpp)
