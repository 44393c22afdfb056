# Tests of skiff_suite_nlp: one list per part of the suite (same owners as suites/nlp/).
set(SKIFF_NLP_TEST_SOURCES)
include(${CMAKE_CURRENT_LIST_DIR}/llama.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/encoder.cmake)
if(SKIFF_NLP_TEST_SOURCES)
  skiff_add_test(skiff_nlp_test SOURCES ${SKIFF_NLP_TEST_SOURCES} DEPS skiff_suite_nlp)
  target_compile_definitions(skiff_nlp_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
