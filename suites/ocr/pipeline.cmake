# ocr::Pipeline: the three PP-OCR models through the Predictor (owner: OCR pipeline).
list(APPEND SKIFF_OCR_SOURCES ${CMAKE_CURRENT_LIST_DIR}/pipeline.cpp ${CMAKE_CURRENT_LIST_DIR}/result_output.cpp)
# inference.yml beside exported recognizers (read by the pipeline, written by skiff export).
list(APPEND SKIFF_OCR_SOURCES ${CMAKE_CURRENT_LIST_DIR}/rec_inference_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/det_inference_config.cpp)
