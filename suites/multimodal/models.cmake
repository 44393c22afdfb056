# Models: the CLIP-style dual encoder, its contrastive loss, caption tokens and zero-shot classes.
list(APPEND SKIFF_MULTIMODAL_SOURCES ${CMAKE_CURRENT_LIST_DIR}/clip_model.cpp ${CMAKE_CURRENT_LIST_DIR}/zero_shot.cpp
  ${CMAKE_CURRENT_LIST_DIR}/clip_files.cpp
  ${CMAKE_CURRENT_LIST_DIR}/beam_search.cpp
  ${CMAKE_CURRENT_LIST_DIR}/captioner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pretrained_tower.cpp)
