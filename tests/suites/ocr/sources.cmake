# Tests of skiff_suite_ocr: one list per part of the suite (same owners as suites/ocr/).
set(SKIFF_OCR_TEST_SOURCES)
include(${CMAKE_CURRENT_LIST_DIR}/processing.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/synth.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/pipeline.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/train.cmake OPTIONAL)
if(SKIFF_OCR_TEST_SOURCES)
  # One binary, registered twice: the tests that pull zoo models (OcrPipeline.*, and
  # every test suite named *Network, e.g. RecRecipeNetwork, DetRecipeNetwork) carry the
  # label "network", so an offline `ctest -LE network` runs only the others.
  set(SKIFF_OCR_NETWORK_TESTS "OcrPipeline.*:*Network.*")
  add_executable(skiff_ocr_test ${SKIFF_OCR_TEST_SOURCES})
  target_link_libraries(skiff_ocr_test PRIVATE skiff_suite_ocr GTest::gtest GTest::gtest_main)
  target_include_directories(skiff_ocr_test PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(skiff_ocr_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  gtest_discover_tests(skiff_ocr_test DISCOVERY_TIMEOUT 60 TEST_FILTER "-${SKIFF_OCR_NETWORK_TESTS}")
  gtest_discover_tests(skiff_ocr_test DISCOVERY_TIMEOUT 60 TEST_FILTER "${SKIFF_OCR_NETWORK_TESTS}"
                       PROPERTIES LABELS network)
endif()
