# Captioning metrics (BLEU, CIDEr-D) and retrieval recall.
list(APPEND SKIFF_MULTIMODAL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/caption_metrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/retrieval_metrics.cpp)
