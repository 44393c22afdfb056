# Training: recognition data, CRNN / imported-graph recognizers, the metric and
# the recipe runner behind skiff train / eval / predict / export.
list(APPEND SKIFF_OCR_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/train/rec_data.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/rec_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/rec_metric.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/rec_recipe.cpp)
list(APPEND SKIFF_OCR_DEPS yaml-cpp)
