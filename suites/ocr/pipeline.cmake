# ocr::Pipeline: the three PP-OCR models through the Predictor (owner: OCR pipeline).
list(APPEND SKIFF_OCR_SOURCES ${CMAKE_CURRENT_LIST_DIR}/pipeline.cpp)
