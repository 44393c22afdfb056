# Tests of the COCO data files and evaluation (suites/detection/coco.cmake).
list(APPEND SKIFF_DETECTION_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/coco_dataset_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coco_eval_test.cpp)
