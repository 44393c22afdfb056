# Tests of skiff_suite_multimodal: one list per part of the suite (same owners as suites/multimodal/).
set(SKIFF_MULTIMODAL_TEST_SOURCES)
include(${CMAKE_CURRENT_LIST_DIR}/metrics.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/synth.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/models.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/train.cmake OPTIONAL)
if(SKIFF_MULTIMODAL_TEST_SOURCES)
  skiff_add_test(skiff_multimodal_test SOURCES ${SKIFF_MULTIMODAL_TEST_SOURCES} DEPS skiff_suite_multimodal)
  target_compile_definitions(skiff_multimodal_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
# The image tower from the zoo's NanoDet (pulls the model on first use).
skiff_add_test(skiff_multimodal_models_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/pretrained_tower_test.cpp
  DEPS skiff_suite_multimodal
  LABELS network)
