#pragma once
/// \file schema.h
/// What a recipe may say: the keys of each section, their types and ranges, and
/// a registry of named components (architectures, backbones, losses, optimizers,
/// datasets, transforms, metrics, ...) each with the keys it accepts.
///
/// A recipe is validated against its schema before any work starts, so a typo
/// or a bad value stops the run at once with the file, the line, the key path
/// and, for unknown keys and names, the closest valid one:
///
///   rec.yml:14: Optimizer.lr.learning_rat: unknown key; did you mean 'learning_rate'?
///   rec.yml:20: Loss.name: unknown loss 'CTCLos'; did you mean 'CTCLoss'?
///   rec.yml:31: Train.loader.batch_size: must be >= 1, got 0
///   rec.yml:27: Train.dataset.label_file_list: file 'data/train.txt' does not exist
///
/// A component is written as a map with `name:` and the component's own keys
/// (`Loss: {name: CTCLoss, blank: 0}`); a list of components as PaddleOCR writes
/// transforms, one single-key map per entry (`- RecResizeImg: {image_shape: [3, 48, 320]}`,
/// or `- CTCLabelEncode:` without settings).
///
/// Suites register their components with a Factory, which adds the schema to
/// the process-wide Components table and keeps the constructor beside it, so a
/// name cannot be valid for validation and unknown to the builder.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "framework/config/section.h"
#include "framework/core/error.h"
#include "framework/core/registry.h"

namespace skiff::config {

struct Schema;

enum class Type {
  Any,         ///< not checked (free-form settings)
  Number,      ///< finite number, optional [min, max]
  Integer,     ///< integer, optional [min, max]
  Boolean,     ///< true / false
  String,      ///< optional `choices`
  Path,        ///< a string naming a file or directory that must exist (when files are checked)
  Numbers,     ///< list of numbers, each within [min, max]
  Integers,    ///< list of integers, each within [min, max]
  Strings,     ///< list of strings (a single string counts as a one-entry list)
  Paths,       ///< list of existing paths (a single path counts as a one-entry list)
  Map,         ///< a nested section checked against `schema`
  Component,   ///< a map with `name:` naming a registered component of `kind`
  Components,  ///< a list of single-key maps, each naming a component of `kind`
};

/// One key of a section.
// Every member has an initializer, so designated initializers may leave any out
// (without one GCC's -Wextra warns for each omitted member).
struct Key {
  std::string name{};
  Type type = Type::Any;
  std::string help{};                    ///< one line of help
  bool required = false;
  std::optional<double> min{}, max{};    ///< numbers and integers (and their list entries)
  std::vector<std::string> choices{};    ///< String: the values allowed
  std::string kind{};                    ///< Component(s): the registry kind ("loss", "transform", ...)
  std::shared_ptr<const Schema> schema{};  ///< Map: the nested section's keys
};

/// The keys of one section. `open` sections accept keys not listed (unchecked).
struct Schema {
  std::vector<Key> keys{};
  bool open = false;
  const Key* find(const std::string& name) const;
  std::vector<std::string> names() const;
};

/// The schema of a nested section, for Key::schema:
///   Key{.name = "Data", .type = Type::Map, .schema = config::keys({Key{...}, ...})}
inline std::shared_ptr<const Schema> keys(std::vector<Key> k) {
  return std::make_shared<const Schema>(Schema{std::move(k)});
}

class FactoryBase;

/// A registered component: its kind, name, a line of help, its keys (besides
/// `name`) and the factory that builds it.
struct ComponentInfo {
  std::string kind;
  std::string name;
  std::string help;
  Schema schema;
  const FactoryBase* factory = nullptr;
};

/// Every registered component, by kind then name. Process-wide; suites fill it
/// when they register (Factory::add), normally once behind a std::call_once.
/// Only a Factory adds entries, so every name that validates has a constructor.
class Components {
 public:
  static Components& global();
  /// nullptr when absent.
  const ComponentInfo* find(const std::string& kind, const std::string& name) const;
  /// Names of one kind, sorted.
  std::vector<std::string> names(const std::string& kind) const;
  /// Every kind that has a component, sorted.
  std::vector<std::string> kinds() const;

 private:
  friend class FactoryBase;
  /// \throws ValueError if (kind, name) is registered twice.
  void add(ComponentInfo info);
  std::map<std::string, std::map<std::string, ComponentInfo>> by_kind_;
};

struct ValidateOptions {
  /// Check that Path keys name existing files (off when validating a recipe
  /// whose data does not exist yet, e.g. in tests of the shipped configs).
  bool check_files = true;
};

/// Checks `section` against `schema` (recursively through maps and
/// components). \throws ValueError with file, line and key path.
void validate(const Section& section, const Schema& schema, const ValidateOptions& options = {});

/// The component a Component-typed section names: its `name:` checked against
/// the registry of `kind`. \throws ValueError with the closest registered name.
const ComponentInfo& component_of(const Section& section, const std::string& kind);

/// The entries of a Components-typed list: (component name, its settings).
struct ComponentEntry {
  std::string name;
  Section settings;
  std::string where;  ///< "file:line: path[i]" of the entry, for messages
};
/// \throws ValueError for entries that are not a name or a single-key map.
std::vector<ComponentEntry> component_list(const Section& parent, const std::string& key);

/// What every Factory shares: its kind and the names it can build.
class FactoryBase {
 public:
  explicit FactoryBase(std::string kind) : kind_(std::move(kind)) {}
  virtual ~FactoryBase() = default;
  FactoryBase(const FactoryBase&) = delete;
  FactoryBase& operator=(const FactoryBase&) = delete;
  const std::string& kind() const { return kind_; }
  /// True when `name` has a constructor here.
  virtual bool can_make(const std::string& name) const = 0;

 protected:
  void add_info(std::string name, std::string help, Schema schema) {
    Components::global().add({kind_, std::move(name), std::move(help), std::move(schema), this});
  }

 private:
  std::string kind_;
};

/// A table of constructors for one kind of component, scoped by its kind (a
/// suite names its kinds: "det loss", "transform", ...). add() registers the
/// schema in Components::global() too. `Product` is what the constructor
/// returns (a module, a loss's settings, a dataset...), `Args` what the caller
/// passes besides the section (shared context such as the character set).
template <class Product, class... Args>
class Factory final : public FactoryBase {
 public:
  using Make = std::function<Product(const Section&, Args...)>;
  explicit Factory(std::string kind) : FactoryBase(kind), makers_(kind) {}

  void add(std::string name, std::string help, Schema schema, Make make) {
    add_info(name, std::move(help), std::move(schema));
    makers_.add(name, std::move(make));
  }
  bool can_make(const std::string& name) const override { return makers_.contains(name); }
  /// Builds the component `section` names (validating its name first).
  Product make(const Section& section, Args... args) const {
    const ComponentInfo& info = component_of(section, kind());
    return makers_.get(info.name)(section, args...);
  }
  /// Builds component `name` with the settings of a list entry.
  Product make(const ComponentEntry& entry, Args... args) const {
    SKIFF_CHECK(makers_.contains(entry.name), "{}: no {} named '{}'", entry.where, kind(), entry.name);
    return makers_.get(entry.name)(entry.settings, args...);
  }

 private:
  Registry<Make> makers_;
};

}  // namespace skiff::config
