# Tests of the models (suites/multimodal/models.cmake).
list(APPEND SKIFF_MULTIMODAL_TEST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/clip_model_test.cpp ${CMAKE_CURRENT_LIST_DIR}/zero_shot_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/beam_search_test.cpp ${CMAKE_CURRENT_LIST_DIR}/captioner_test.cpp)
