# skiff_text: tokenizers (framework/text/): byte-level BPE from tokenizer.json or
# GPT-2's encoder.json + vocab.bpe. ICU gives the character classes, normalization
# and the regex engine for split patterns without a hand-written matcher.
find_package(ICU REQUIRED COMPONENTS uc i18n)
skiff_add_module(text
  SOURCES text/unicode.cpp text/split_regex.cpp text/normalizer.cpp text/bpe_model.cpp text/bpe_tokenizer.cpp
          text/tokenizer_files.cpp
  DEPS skiff_core
  PRIVATE_DEPS skiff_io ICU::uc ICU::i18n nlohmann_json::nlohmann_json OpenMP::OpenMP_CXX)
target_link_libraries(skiff_framework INTERFACE skiff_text)
