# Inference: GFL decoding and NMS, the Detector over the Predictor, drawing, COCO class names.
list(APPEND SKIFF_DETECTION_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/boxes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coco_classes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/deploy_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/detector.cpp
  ${CMAKE_CURRENT_LIST_DIR}/draw.cpp)
list(APPEND SKIFF_DETECTION_CLI_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cli/det_command.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cli/det_endpoint.cpp)  # skiff serve det
