# Training: the PicoDet-class model, the task-aligned assigner and the GFL losses.
list(APPEND SKIFF_DETECTION_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/train/assigner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/dense_detector.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/gfl_loss.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/picodet.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/pretrained_gfl.cpp)
list(APPEND SKIFF_DETECTION_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/train/det_recipe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/register.cpp)
