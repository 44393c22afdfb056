#pragma once
/// \file label_file.h
/// PaddleOCR label files: one sample per line, `image_path<TAB>label`, the path
/// relative to the dataset's data_dir. Recognition labels are text, detection
/// labels a JSON list of regions; both are read line by line here.
#include <functional>
#include <string>
#include <vector>

namespace skiff::ocr {

/// One line of a label file.
struct LabelLine {
  const std::string& file;  ///< the label file, for messages
  int line = 0;             ///< 1-based
  std::string image;        ///< data_dir joined with the path before the tab
  std::string label;        ///< everything after the first tab
};

/// Calls `each` for every non-empty line of every file (a trailing '\r' is dropped).
/// \throws IoError naming a file that cannot be opened; ValueError "file:line:
/// expected '<expected>'" for a line without a tab or with an empty path.
void read_label_lines(const std::vector<std::string>& files, const std::string& data_dir, const std::string& expected,
                      const std::function<void(const LabelLine&)>& each);

}  // namespace skiff::ocr
