# Synthetic COCO-format detection data (`skiff det synth`) and PaddleDetection's
# reader transforms, the COCO training dataset and batch collation for training.
list(APPEND SKIFF_DETECTION_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/synth.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transforms.cpp
  ${CMAKE_CURRENT_LIST_DIR}/det_dataset.cpp)
list(APPEND SKIFF_DETECTION_CLI_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cli/det_synth_command.cpp)
