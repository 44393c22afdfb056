# skiff_train: the Trainer (loop, evaluation, checkpoints and resume, EMA,
# clipping, progress, train.log / metrics.jsonl / TensorBoard events / curves.png)
# and the line plots it and the science suite draw (framework/train/).
find_package(OpenCV REQUIRED COMPONENTS core imgproc)
skiff_add_module(train
  SOURCES train/trainer.cpp train/event_file.cpp train/plot.cpp train/recipe.cpp train/recipe_runner.cpp
  DEPS skiff_nn skiff_optim skiff_data skiff_io skiff_config opencv_core
  PRIVATE_DEPS skiff_distributed opencv_imgproc nlohmann_json::nlohmann_json)
target_include_directories(skiff_train SYSTEM PUBLIC ${OpenCV_INCLUDE_DIRS})
target_link_libraries(skiff_framework INTERFACE skiff_train)
