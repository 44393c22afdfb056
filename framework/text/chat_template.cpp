#include "framework/text/chat_template.h"

#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::text {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

constexpr const char* kConfigName = "tokenizer_config.json";
constexpr const char* kTemplateFileName = "chat_template.jinja";

ojson read_json(const fs::path& path) {
  const std::string text = io::read_file(path);
  try {
    return ojson::parse(text);
  } catch (const ojson::exception& e) {  // parse_error, and out_of_range for a number past double
    throw ValueError(fmt::format("{}: not valid JSON: {}", path.string(), e.what()));
  }
}

// The special tokens Hugging Face passes to the template (its SPECIAL_TOKEN_ATTRIBUTES),
// as strings: tokenizer_config.json writes each as a string or as an AddedToken object
// {"content": ...}; unset ones are left out, so `bos_token is defined` is false.
ojson special_tokens_of(const ojson& config) {
  ojson out = ojson::object();
  auto text_of = [](const ojson& v) -> std::optional<std::string> {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
    return std::nullopt;
  };
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    if (!config.contains(key)) continue;
    if (auto t = text_of(config[key])) out[key] = *t;
  }
  if (config.contains("additional_special_tokens") && config["additional_special_tokens"].is_array()) {
    ojson list = ojson::array();
    for (const auto& v : config["additional_special_tokens"])
      if (auto t = text_of(v)) list.push_back(*t);
    out["additional_special_tokens"] = list;
  }
  return out;
}

// tokenizer_config.json's chat_template: a string, or [{"name": ..., "template": ...}].
std::string template_in_config(const ojson& config, const fs::path& path, const std::string& name) {
  if (!config.contains("chat_template") || config["chat_template"].is_null())
    throw ValueError(fmt::format("{} has no chat_template: this model was not given a chat format "
                                 "(pass a template file of your own)", path.string()));
  const ojson& t = config["chat_template"];
  if (t.is_string()) {
    if (!name.empty() && name != "default")
      throw ValueError(fmt::format("{}: has one chat_template, not one named '{}'", path.string(), name));
    return t.get<std::string>();
  }
  if (t.is_array()) {
    const std::string wanted = name.empty() ? "default" : name;
    std::vector<std::string> names;
    for (const auto& entry : t) {
      if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() || !entry.contains("template") ||
          !entry["template"].is_string())
        throw ValueError(fmt::format("{}: chat_template entries must be {{\"name\": ..., \"template\": ...}}", path.string()));
      names.push_back(entry["name"].get<std::string>());
      if (names.back() == wanted) return entry["template"].get<std::string>();
    }
    throw ValueError(fmt::format("{}: no chat_template named '{}' (it has {})", path.string(), wanted, fmt::join(names, ", ")));
  }
  throw ValueError(fmt::format("{}: chat_template must be a string or a list, got {}", path.string(), t.type_name()));
}

}  // namespace

ChatTemplate::ChatTemplate(std::string source, std::string name, ojson special_tokens)
    : source_(source), template_(std::move(source), std::move(name)), special_tokens_(std::move(special_tokens)) {}

std::optional<ChatTemplate> ChatTemplate::find_in_model_dir(const fs::path& dir) {
  const fs::path config_path = dir / kConfigName;
  const ojson config = fs::exists(config_path) ? read_json(config_path) : ojson::object();
  const fs::path file = dir / kTemplateFileName;
  if (fs::exists(file)) return ChatTemplate(io::read_file(file), file.string(), special_tokens_of(config));
  if (!config.contains("chat_template") || config["chat_template"].is_null()) return std::nullopt;
  // Lines in errors count from the template's own first line, so name it as the key.
  return ChatTemplate(template_in_config(config, config_path, ""), config_path.string() + " chat_template",
                      special_tokens_of(config));
}

ChatTemplate ChatTemplate::from_model_dir(const fs::path& dir, const std::string& name) {
  if (name.empty())
    if (std::optional<ChatTemplate> t = find_in_model_dir(dir)) return std::move(*t);
  const fs::path config_path = dir / kConfigName;
  if (!fs::exists(config_path))
    throw IoError(fmt::format("{} has neither {} nor {}: no chat template to format messages with", dir.string(),
                              kTemplateFileName, kConfigName));
  const ojson config = read_json(config_path);
  return ChatTemplate(template_in_config(config, config_path, name), config_path.string() + " chat_template",
                      special_tokens_of(config));
}

ChatTemplate ChatTemplate::from_file(const fs::path& jinja_file, const std::optional<fs::path>& tokenizer_config) {
  ojson specials = tokenizer_config && fs::exists(*tokenizer_config) ? special_tokens_of(read_json(*tokenizer_config))
                                                                     : ojson::object();
  return ChatTemplate(io::read_file(jinja_file), jinja_file.string(), std::move(specials));
}

std::string ChatTemplate::special_token(const std::string& key) const {
  const auto it = special_tokens_.find(key);
  return it != special_tokens_.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string ChatTemplate::render(const ojson& messages, const ChatOptions& options) const {
  if (!messages.is_array())
    throw ValueError(fmt::format("chat template {}: messages must be a JSON array, got {}", template_.name(), messages.type_name()));
  for (const auto& m : messages)
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      throw ValueError(fmt::format("chat template {}: each message needs a string \"role\", got {}", template_.name(), m.dump()));
  // The variables apply_chat_template passes, in its order: messages, tools, documents,
  // add_generation_prompt, the special tokens, then the caller's own.
  ojson context = ojson::object();
  context["messages"] = messages;
  context["tools"] = options.tools;
  context["documents"] = nullptr;
  context["add_generation_prompt"] = options.add_generation_prompt;
  for (const auto& [k, v] : special_tokens_.items()) context[k] = v;
  if (!options.extra.is_object()) throw ValueError("chat template: extra variables must be a JSON object");
  for (const auto& [k, v] : options.extra.items()) context[k] = v;
  return template_.render(context);
}

}  // namespace skiff::text
