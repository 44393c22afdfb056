#pragma once
/// \file settings.h
/// An endpoint's `--set NAME.key=value` settings, read with errors that name the
/// setting, and a refusal of any the endpoint does not know (a typo would otherwise
/// be ignored silently).

#include <set>
#include <string>

#include "framework/serve/endpoint.h"

namespace skiff::serve {

class SettingsReader {
 public:
  SettingsReader(std::string endpoint, EndpointSettings settings)
      : endpoint_(std::move(endpoint)), settings_(std::move(settings)) {}

  std::string text(const std::string& key, std::string fallback);
  /// \throws ValueError unless the value is a number in [lo, hi].
  double number(const std::string& key, double fallback, double lo, double hi);
  /// true/false, 1/0, yes/no, on/off. \throws ValueError otherwise.
  bool flag(const std::string& key, bool fallback);
  /// \throws ValueError naming a given setting nothing asked for, with the known ones.
  void finish() const;

 private:
  const std::string* find(const std::string& key);

  std::string endpoint_;
  EndpointSettings settings_;
  std::set<std::string> known_;
};

}  // namespace skiff::serve
