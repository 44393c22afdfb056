# Tests of skiff_data. The vision test writes PNGs with OpenCV directly.
find_package(OpenCV REQUIRED COMPONENTS core imgcodecs)
skiff_add_test(skiff_data_test
  SOURCES framework/data/dataloader_test.cpp framework/data/vision_test.cpp framework/data/digits_test.cpp
          framework/data/dataloader_stream_test.cpp
  DEPS skiff_framework skiff_data opencv_core opencv_imgcodecs)
target_include_directories(skiff_data_test SYSTEM PRIVATE ${OpenCV_INCLUDE_DIRS})
