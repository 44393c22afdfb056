# Tests of skiff_data. The vision test writes PNGs with OpenCV directly; the
# image_io test uses OpenCV's imgcodecs as its oracle and libpng/libjpeg to
# make samples OpenCV cannot write. (Only test binaries link imgcodecs.)
find_package(OpenCV REQUIRED COMPONENTS core imgproc imgcodecs)
find_package(PNG REQUIRED)
find_package(JPEG REQUIRED)
skiff_add_test(skiff_data_test
  SOURCES framework/data/dataloader_test.cpp framework/data/vision_test.cpp framework/data/digits_test.cpp
          framework/data/dataloader_stream_test.cpp framework/data/image_io_test.cpp
  DEPS skiff_framework skiff_data opencv_core opencv_imgproc opencv_imgcodecs PNG::PNG JPEG::JPEG)
target_include_directories(skiff_data_test SYSTEM PRIVATE ${OpenCV_INCLUDE_DIRS})
