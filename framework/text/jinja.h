#pragma once
/// \file jinja.h
/// Jinja templates as Hugging Face renders chat templates: Python jinja2's language and
/// results (trim_blocks and lstrip_blocks on, loop controls, `raise_exception`,
/// `strftime_now`, a `tojson` that keeps key order and non-ASCII text), for the part of
/// the language chat templates use (jinja_syntax.h lists it). Written for
/// `tokenizer_config.json`'s `chat_template`; chat_template.h builds on it.

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace skiff::text {

namespace jinja {
struct Node;
}

class JinjaTemplate {
 public:
  /// Parses `source`. `name` names the template in errors ("tokenizer_config.json").
  /// \throws ValueError naming `name` and the line on a syntax error or invalid UTF-8.
  JinjaTemplate(std::string source, std::string name);
  ~JinjaTemplate();
  JinjaTemplate(JinjaTemplate&&) noexcept;
  JinjaTemplate& operator=(JinjaTemplate&&) noexcept;

  /// Renders with the keys of `context` (a JSON object) as variables.
  /// \throws ValueError naming the template and line when rendering fails (a type error,
  ///   an unknown filter, or the template's own `raise_exception`).
  std::string render(const nlohmann::ordered_json& context) const;

  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::unique_ptr<std::vector<jinja::Node>> body_;
};

}  // namespace skiff::text
