# Training: recognition and detection data, models, losses and metrics, and the
# recipe runners behind skiff train / eval / predict / export (registered in register.cpp).
list(APPEND SKIFF_OCR_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/register.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/recipe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/label_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/transforms.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/imported_graph.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/rec_data.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/rec_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/rec_metric.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/rec_recipe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/det_data.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/det_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/det_loss.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/det_metric.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/det_recipe.cpp)
list(APPEND SKIFF_OCR_DEPS yaml-cpp nlohmann_json::nlohmann_json)
