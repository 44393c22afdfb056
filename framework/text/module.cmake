# skiff_text: tokenizers (framework/text/): byte-level BPE from tokenizer.json or
# GPT-2's encoder.json + vocab.bpe, SentencePiece-style BPE and WordPiece from
# tokenizer.json (or BERT's vocab.txt), and SentencePiece .model files. ICU gives the
# character classes, normalization and the regex engine for split patterns without a
# hand-written matcher; libsentencepiece (Debian libsentencepiece-dev, found with
# pkg-config: it ships no CMake config) loads, runs and trains .model files from a module
# of its own, libskiff_sentencepiece.so, that skiff_text loads with dlopen: the library
# bundles a protobuf that must not meet the system one skiff links for ONNX
# (sentencepiece_shim.h says more).
find_package(ICU REQUIRED COMPONENTS uc i18n)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
skiff_add_module(text
  SOURCES text/unicode.cpp text/split_regex.cpp text/normalizer.cpp text/bpe_model.cpp text/bpe_tokenizer.cpp
          text/tokenizer_json.cpp text/tokenizer_files.cpp text/added_tokens.cpp text/tokenizer.cpp
          text/normalizer_steps.cpp text/pre_tokenizer_steps.cpp text/decoder_steps.cpp text/wordpiece_model.cpp
          text/subword_tokenizer.cpp text/subword_tokenizer_files.cpp text/sentencepiece_tokenizer.cpp
          text/jinja_value.cpp text/jinja_lexer.cpp text/jinja_parser.cpp text/jinja_builtins.cpp text/jinja_render.cpp
          text/chat_template.cpp
  DEPS skiff_core
  PRIVATE_DEPS skiff_io ICU::uc ICU::i18n nlohmann_json::nlohmann_json OpenMP::OpenMP_CXX ${CMAKE_DL_LIBS})
target_link_libraries(skiff_framework INTERFACE skiff_text)
add_library(skiff_sentencepiece MODULE text/sentencepiece_shim.cpp)
target_include_directories(skiff_sentencepiece PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(skiff_sentencepiece PRIVATE PkgConfig::SENTENCEPIECE)
# Built whenever skiff_text is, since skiff_text loads it at run time.
add_dependencies(skiff_text skiff_sentencepiece)
