# LLaMA-style decoders in the Hugging Face layout (suites/nlp/llama/): config.json,
# safetensors weights (single or sharded), KV-cache generation, `skiff nlp generate` and `skiff nlp chat`,
# GGUF export for llama.cpp (`skiff nlp export`).
list(APPEND SKIFF_NLP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/llama/config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/llama/model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/llama/loader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/llama/generation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/llama/streamer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/llama/gguf.cpp
  ${CMAKE_CURRENT_LIST_DIR}/llama/tokenizer_bos.cpp
  ${CMAKE_CURRENT_LIST_DIR}/llama/model_dir.cpp
  ${CMAKE_CURRENT_LIST_DIR}/decoder/text_documents.cpp
  ${CMAKE_CURRENT_LIST_DIR}/decoder/causal_lm_recipe.cpp)
list(APPEND SKIFF_NLP_CLI_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cli/generate_command.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cli/chat_command.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cli/sampling_options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cli/export_command.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cli/generate_endpoint.cpp)  # skiff serve nlp/generate
