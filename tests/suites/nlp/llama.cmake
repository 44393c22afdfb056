# The LLaMA decoder (suites/nlp/llama.cmake): parity with PyTorch on tests/data/llama/
# (written by tests/tools/llama/make_fixture.py), KV cache, GQA, loading errors, sampling
# and streaming.
list(APPEND SKIFF_NLP_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/llama_model_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/llama_loader_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/generation_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gguf_test.cpp)
# The decoder recipes' parts (suites/nlp/decoder/): documents, config.json, streaming.
list(APPEND SKIFF_NLP_TEST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/decoder_test.cpp)
