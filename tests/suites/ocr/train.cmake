# Training recipes: data, metric, validation of configs/ocr, short CRNN and fine-tune runs.
list(APPEND SKIFF_OCR_TEST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/train_test.cpp)
# The DB detector recipe: det labels, DB targets, metric, loss, a short run and its export.
list(APPEND SKIFF_OCR_TEST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/det_train_test.cpp)
