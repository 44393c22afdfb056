# skiff_data: datasets, DataLoader, OpenCV image transforms, the digits set (framework/data/).
# OpenCV stays private: public headers only use skiff tensors (image_io.h, for
# OpenCV users, is the exception). Images are decoded with libpng/libjpeg
# directly: Debian's opencv_imgcodecs loads ~140 shared libraries at start-up.
find_package(OpenCV REQUIRED COMPONENTS core imgproc)
find_package(ZLIB REQUIRED)
find_package(PNG REQUIRED)
find_package(JPEG REQUIRED)
skiff_add_module(data
  SOURCES data/dataset.cpp data/dataloader.cpp data/vision.cpp data/image_io.cpp data/digits.cpp
  DEPS skiff_ops skiff_io
  PRIVATE_DEPS opencv_core opencv_imgproc PNG::PNG JPEG::JPEG ZLIB::ZLIB)
target_include_directories(skiff_data SYSTEM PRIVATE ${OpenCV_INCLUDE_DIRS})
target_link_libraries(skiff_framework INTERFACE skiff_data)
