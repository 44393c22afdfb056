#pragma once
/// \file section.h
/// Checked reads from one map of a YAML recipe or config.
///
/// Every error names the file, the line and the dotted key path
/// ("plate.yml:7: problem.plate.thicknes: unknown key; did you mean 'thickness'?"),
/// so a typo in a recipe stops the run before any work starts.
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace skiff::config {

class Section {
 public:
  /// `node` must be a map (or null/undefined, read as empty).
  /// \throws ValueError naming file, line and path otherwise.
  Section(YAML::Node node, std::string path, std::string file);

  bool has(const std::string& key) const;
  double number(const std::string& key, std::optional<double> fallback = std::nullopt) const;
  /// A number > 0.
  double positive(const std::string& key, std::optional<double> fallback = std::nullopt) const;
  int64_t integer(const std::string& key, std::optional<int64_t> fallback = std::nullopt, int64_t min = 0) const;
  std::string text(const std::string& key, std::optional<std::string> fallback = std::nullopt) const;
  /// true/false (YAML's spellings).
  bool boolean(const std::string& key, std::optional<bool> fallback = std::nullopt) const;
  /// A list of strings (a single string reads as a one-entry list).
  std::vector<std::string> texts(const std::string& key,
                                 std::optional<std::vector<std::string>> fallback = std::nullopt) const;
  std::vector<double> numbers(const std::string& key, std::optional<std::vector<double>> fallback = std::nullopt) const;
  std::vector<int64_t> integers(const std::string& key, std::optional<std::vector<int64_t>> fallback = std::nullopt,
                                int64_t min = 0) const;
  /// A nested map (empty when absent).
  Section section(const std::string& key) const;
  /// \throws ValueError for a key not in `allowed`, with the closest allowed key.
  void allow_only(const std::vector<std::string>& allowed) const;

  /// The raw value of `key` (undefined when absent).
  YAML::Node get(const std::string& key) const;
  /// Keys in file order.
  std::vector<std::string> keys() const;
  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  /// "file:line: path.key" for messages about `key` (the map's line when absent).
  std::string where(const std::string& key) const;

 private:
  YAML::Node node_;
  std::string path_, file_;
};

}  // namespace skiff::config
