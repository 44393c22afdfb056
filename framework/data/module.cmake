# skiff_data: datasets, DataLoader, OpenCV image transforms, the digits set (framework/data/).
# OpenCV stays private: public headers only use skiff tensors.
find_package(OpenCV REQUIRED COMPONENTS core imgproc imgcodecs)
find_package(ZLIB REQUIRED)
skiff_add_module(data
  SOURCES data/dataset.cpp data/dataloader.cpp data/vision.cpp data/digits.cpp
  DEPS skiff_ops skiff_io
  PRIVATE_DEPS opencv_core opencv_imgproc opencv_imgcodecs ZLIB::ZLIB)
target_include_directories(skiff_data SYSTEM PRIVATE ${OpenCV_INCLUDE_DIRS})
target_link_libraries(skiff_framework INTERFACE skiff_data)
