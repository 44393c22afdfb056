# The compositional image-caption set and `skiff mm synth`.
find_package(OpenCV REQUIRED COMPONENTS core imgproc)
find_package(nlohmann_json REQUIRED)
list(APPEND SKIFF_MULTIMODAL_SOURCES ${CMAKE_CURRENT_LIST_DIR}/synth.cpp)
list(APPEND SKIFF_MULTIMODAL_CLI_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cli/mm_command.cpp)
list(APPEND SKIFF_MULTIMODAL_DEPS nlohmann_json::nlohmann_json opencv_core opencv_imgproc)
