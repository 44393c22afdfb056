# BERT-style encoders (suites/nlp/encoder/): masked-LM pre-training and sequence
# classification on the SpamAssassin mails, as `task: masked_lm` and
# `task: text_classification` recipes (register.cpp), and `skiff nlp classify`.
list(APPEND SKIFF_NLP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/encoder/encoder_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encoder/encoder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encoder/heads.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encoder/mlm_masking.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encoder/mail_corpus.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encoder/token_rows.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encoder/recipe_common.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encoder/mlm_recipe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encoder/classifier_recipe.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encoder/text_classifier.cpp
  ${CMAKE_CURRENT_LIST_DIR}/register.cpp)
list(APPEND SKIFF_NLP_CLI_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cli/classify_command.cpp)
