# The BERT-style encoder (suites/nlp/encoder.cmake): padding mask, MLM masking, heads,
# a short training run, the mail reader and split, recipe errors.
list(APPEND SKIFF_NLP_TEST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/encoder_test.cpp)
