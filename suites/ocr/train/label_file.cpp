#include "suites/ocr/train/label_file.h"

#include <filesystem>
#include <fstream>

#include "framework/core/error.h"

namespace skiff::ocr {

void read_label_lines(const std::vector<std::string>& files, const std::string& data_dir, const std::string& expected,
                      const std::function<void(const LabelLine&)>& each) {
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) throw IoError(fmt::format("{}: cannot open the label file", file));
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      size_t tab = line.find('\t');
      if (tab == std::string::npos || tab == 0)
        throw ValueError(fmt::format("{}:{}: expected '{}', got '{}'", file, n, expected, line.substr(0, 80)));
      each(LabelLine{file, n, (std::filesystem::path(data_dir) / line.substr(0, tab)).string(), line.substr(tab + 1)});
    }
  }
}

}  // namespace skiff::ocr
