# COCO ground-truth and results files, and COCO bbox evaluation as pycocotools' COCOeval.
list(APPEND SKIFF_DETECTION_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/coco_dataset.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coco_eval.cpp)
