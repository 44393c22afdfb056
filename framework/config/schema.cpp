#include "framework/config/schema.h"

#include <filesystem>

#include "framework/config/config.h"
#include "framework/core/registry.h"

namespace skiff::config {

const Key* Schema::find(const std::string& name) const {
  for (const auto& k : keys)
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<std::string> Schema::names() const {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(k.name);
  return out;
}

Components& Components::global() {
  static Components table;
  return table;
}

void Components::add(ComponentInfo info) {
  auto& kind = by_kind_[info.kind];
  SKIFF_CHECK(!kind.count(info.name), "{} '{}' is registered twice", info.kind, info.name);
  std::string name = info.name;
  kind.emplace(std::move(name), std::move(info));
}

const ComponentInfo* Components::find(const std::string& kind, const std::string& name) const {
  auto k = by_kind_.find(kind);
  if (k == by_kind_.end()) return nullptr;
  auto it = k->second.find(name);
  return it == k->second.end() ? nullptr : &it->second;
}

std::vector<std::string> Components::names(const std::string& kind) const {
  std::vector<std::string> out;
  if (auto k = by_kind_.find(kind); k != by_kind_.end())
    for (const auto& [name, info] : k->second) out.push_back(name);
  return out;
}

std::vector<std::string> Components::kinds() const {
  std::vector<std::string> out;
  for (const auto& [kind, entries] : by_kind_) out.push_back(kind);
  return out;
}

namespace {

void check_range(const Section& s, const Key& key, double v) {
  if (key.min && v < *key.min) throw ValueError(fmt::format("{}: must be >= {}, got {}", s.where(key.name), *key.min, v));
  if (key.max && v > *key.max) throw ValueError(fmt::format("{}: must be <= {}, got {}", s.where(key.name), *key.max, v));
}

void check_path(const Section& s, const Key& key, const std::string& path, const ValidateOptions& options) {
  if (path.empty()) throw ValueError(fmt::format("{}: expected a path, got an empty string", s.where(key.name)));
  if (options.check_files && !std::filesystem::exists(path))
    throw ValueError(fmt::format("{}: file '{}' does not exist", s.where(key.name), path));
}

void validate_component(const Section& s, const ComponentInfo& info, const ValidateOptions& options,
                        bool has_name_key) {
  Schema schema = info.schema;
  if (has_name_key) schema.keys.insert(schema.keys.begin(), Key{.name = "name", .type = Type::String});
  validate(s, schema, options);
}

void validate_key(const Section& s, const Key& key, const ValidateOptions& options) {
  switch (key.type) {
    case Type::Any:
      return;
    case Type::Number:
      check_range(s, key, s.number(key.name));
      return;
    case Type::Integer:
      check_range(s, key, double(s.integer(key.name, std::nullopt, INT64_MIN)));
      return;
    case Type::Boolean:
      s.boolean(key.name);
      return;
    case Type::String: {
      std::string v = s.text(key.name);
      if (!key.choices.empty() && std::find(key.choices.begin(), key.choices.end(), v) == key.choices.end()) {
        std::string near = closest_match(v, key.choices);
        throw ValueError(fmt::format("{}: '{}' is not one of {}{}", s.where(key.name), v, fmt::join(key.choices, ", "),
                                     near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
      }
      return;
    }
    case Type::Path:
      check_path(s, key, s.text(key.name), options);
      return;
    case Type::Numbers:
      for (double v : s.numbers(key.name)) check_range(s, key, v);
      return;
    case Type::Integers:
      for (int64_t v : s.integers(key.name, std::nullopt, INT64_MIN)) check_range(s, key, double(v));
      return;
    case Type::Strings:
      s.texts(key.name);
      return;
    case Type::Paths:
      for (const auto& p : s.texts(key.name)) check_path(s, key, p, options);
      return;
    case Type::Map:
      validate(s.section(key.name), key.schema ? *key.schema : Schema{.open = true}, options);
      return;
    case Type::Component: {
      Section sub = s.section(key.name);
      validate_component(sub, component_of(sub, key.kind), options, true);
      return;
    }
    case Type::Components:
      for (const auto& entry : component_list(s, key.name)) {
        const ComponentInfo* info = Components::global().find(key.kind, entry.name);
        if (!info) {
          std::string near = closest_match(entry.name, Components::global().names(key.kind));
          throw ValueError(fmt::format("{}: unknown {} '{}'{}", entry.where, key.kind, entry.name,
                                       near.empty() ? fmt::format("; known: {}",
                                                                  fmt::join(Components::global().names(key.kind), ", "))
                                                    : fmt::format("; did you mean '{}'?", near)));
        }
        validate_component(entry.settings, *info, options, false);
      }
      return;
  }
}

}  // namespace

void validate(const Section& section, const Schema& schema, const ValidateOptions& options) {
  if (!schema.open) section.allow_only(schema.names());
  for (const auto& key : schema.keys) {
    if (!section.has(key.name)) {
      if (key.required)
        throw ValueError(fmt::format("{}: missing{}", section.where(key.name),
                                     key.help.empty() ? "" : fmt::format(" ({})", key.help)));
      continue;
    }
    validate_key(section, key, options);
  }
}

const ComponentInfo& component_of(const Section& section, const std::string& kind) {
  std::string name = section.text("name");
  const ComponentInfo* info = Components::global().find(kind, name);
  if (info) return *info;
  auto known = Components::global().names(kind);
  std::string near = closest_match(name, known);
  throw ValueError(fmt::format("{}: unknown {} '{}'{}", section.where("name"), kind, name,
                               near.empty() ? fmt::format("; known: {}", fmt::join(known, ", "))
                                            : fmt::format("; did you mean '{}'?", near)));
}

std::vector<ComponentEntry> component_list(const Section& parent, const std::string& key) {
  std::vector<ComponentEntry> out;
  YAML::Node list = parent.get(key);
  if (!list.IsDefined() || list.IsNull()) return out;
  std::string path = parent.path().empty() ? key : parent.path() + "." + key;
  if (!list.IsSequence())
    throw ValueError(fmt::format("{}: expected a list of components (one '- Name: {{settings}}' per entry)",
                                 parent.where(key)));
  for (size_t i = 0; i < list.size(); ++i) {
    YAML::Node e = list[i];
    std::string at = fmt::format("{}[{}]", path, i);
    std::string where = fmt::format("{}:{}: {}", parent.file(), e.Mark().line + 1, at);
    if (e.IsScalar()) {
      out.push_back({e.Scalar(), Section(YAML::Node(), at + "." + e.Scalar(), parent.file()), where});
      continue;
    }
    if (!e.IsMap() || e.size() != 1)
      throw ValueError(fmt::format("{}: expected one 'Name: {{settings}}' map per entry", where));
    auto kv = *e.begin();
    std::string name = key_text(kv.first, parent.file());
    YAML::Node settings = kv.second;
    // A bare "- Name:" has a null value: read it as empty settings, at the entry's line.
    if (!settings.IsDefined() || settings.IsNull()) settings = YAML::Node();
    out.push_back({name, Section(settings, at + "." + name, parent.file()), where});
  }
  return out;
}

}  // namespace skiff::config
