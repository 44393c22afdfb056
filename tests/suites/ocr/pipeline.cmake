# End-to-end tests of ocr::Pipeline with the real models (owner: OCR pipeline).
list(APPEND SKIFF_OCR_TEST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/pipeline_test.cpp)
