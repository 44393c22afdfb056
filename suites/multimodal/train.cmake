# Training: caption files, the `task: clip` recipe runner.
list(APPEND SKIFF_MULTIMODAL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/caption_dataset.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/recipe_common.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/clip_recipe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train/caption_recipe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/register.cpp)
