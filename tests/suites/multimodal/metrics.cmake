# Tests of the captioning and retrieval metrics (suites/multimodal/metrics.cmake).
list(APPEND SKIFF_MULTIMODAL_TEST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/caption_metrics_test.cpp)
