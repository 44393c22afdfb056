# Synthetic text rendering, the bundled sample image and result drawing (skiff::ocr).
list(APPEND SKIFF_OCR_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/font.cpp
  ${CMAKE_CURRENT_LIST_DIR}/synth.cpp
  ${CMAKE_CURRENT_LIST_DIR}/draw_result.cpp)
# write_synth_dataset() writes PaddleOCR JSON labels.
list(APPEND SKIFF_OCR_DEPS nlohmann_json::nlohmann_json)
