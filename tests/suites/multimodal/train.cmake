# Tests of the caption files and the clip recipe (suites/multimodal/train.cmake).
list(APPEND SKIFF_MULTIMODAL_TEST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/caption_dataset_test.cpp)
