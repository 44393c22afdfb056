# Tests of skiff_suite_ocr: one list per part of the suite (same owners as suites/ocr/).
set(SKIFF_OCR_TEST_SOURCES)
include(${CMAKE_CURRENT_LIST_DIR}/processing.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/synth.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/pipeline.cmake OPTIONAL)
if(SKIFF_OCR_TEST_SOURCES)
  skiff_add_test(skiff_ocr_test SOURCES ${SKIFF_OCR_TEST_SOURCES} DEPS skiff_suite_ocr)
  target_compile_definitions(skiff_ocr_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
