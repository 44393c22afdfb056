# Tests of skiff_suite_detection: one list per part of the suite (same owners as suites/detection/).
set(SKIFF_DETECTION_TEST_SOURCES)
include(${CMAKE_CURRENT_LIST_DIR}/coco.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/inference.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/train.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/synth.cmake OPTIONAL)
if(SKIFF_DETECTION_TEST_SOURCES)
  skiff_add_test(skiff_detection_test SOURCES ${SKIFF_DETECTION_TEST_SOURCES} DEPS skiff_suite_detection)
  target_compile_definitions(skiff_detection_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
# The zoo's NanoDet on real photos (python3-skimage's samples), and made trainable;
# pulls the model on first use.
skiff_add_test(skiff_detection_models_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/detector_test.cpp ${CMAKE_CURRENT_LIST_DIR}/pretrained_gfl_test.cpp
  DEPS skiff_suite_detection
  LABELS network)
