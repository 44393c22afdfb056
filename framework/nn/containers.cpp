#include "framework/nn/containers.h"

namespace skiff::nn {

namespace {
ModulePtr index_into(const std::vector<ModulePtr>& v, int64_t i, const char* who) {
  int64_t n = int64_t(v.size());
  SKIFF_CHECK_INDEX(i >= -n && i < n, "{}: index {} is out of range for {} modules", who, i, n);
  return v[i < 0 ? i + n : i];
}
}  // namespace

Sequential::Sequential(std::initializer_list<ModulePtr> modules) {
  for (const auto& m : modules) push_back(m);
}
Sequential::Sequential(const std::vector<ModulePtr>& modules) {
  for (const auto& m : modules) push_back(m);
}

void Sequential::push_back(ModulePtr m) {
  register_module(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
}

ModulePtr Sequential::operator[](int64_t i) const { return index_into(modules_, i, "Sequential"); }

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (size_t i = 0; i < modules_.size(); ++i) {
    try {
      y = (*modules_[i])(y);
    } catch (Error& e) {
      e.add_context(fmt::format("in Sequential entry ({})", i));
      throw;
    }
  }
  return y;
}

ModuleList::ModuleList(std::initializer_list<ModulePtr> modules) {
  for (const auto& m : modules) push_back(m);
}
ModuleList::ModuleList(const std::vector<ModulePtr>& modules) {
  for (const auto& m : modules) push_back(m);
}

void ModuleList::push_back(ModulePtr m) {
  register_module(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
}

ModulePtr ModuleList::operator[](int64_t i) const { return index_into(modules_, i, "ModuleList"); }

ModuleDict::ModuleDict(std::initializer_list<std::pair<std::string, ModulePtr>> items) {
  for (const auto& [k, m] : items) insert(k, m);
}

void ModuleDict::insert(const std::string& key, ModulePtr m) { register_module(key, std::move(m)); }

bool ModuleDict::contains(const std::string& key) const {
  for (const auto& c : named_children())
    if (c.first == key) return true;
  return false;
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& c : named_children()) out.push_back(c.first);
  return out;
}

}  // namespace skiff::nn
