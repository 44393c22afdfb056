# Tests of skiff_train: the Trainer and its records.
skiff_add_test(skiff_trainer_test
  SOURCES framework/train/trainer_test.cpp
  DEPS skiff_framework nlohmann_json::nlohmann_json)
