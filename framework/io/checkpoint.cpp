#include "framework/io/checkpoint.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::io {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
constexpr std::string_view kFormat = "skiff.checkpoint.v1";
const std::pair<std::string_view, TensorMap Checkpoint::*> kGroups[] = {
    {"model/", &Checkpoint::model}, {"optimizer/", &Checkpoint::optimizer}, {"extra/", &Checkpoint::extra}};

// Parses a JSON object of the given value kind from checkpoint metadata.
json parse_meta_json(const Metadata& md, const std::string& key, const fs::path& path) {
  auto it = md.find(key);
  if (it == md.end()) return json::object();
  json j = json::parse(it->second, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    SKIFF_THROW(IoError, "checkpoint '{}': metadata '{}' is not a JSON object", path.string(), key);
  return j;
}
}  // namespace

void save_checkpoint(const fs::path& path, const Checkpoint& ckpt) {
  TensorMap all;
  for (const auto& [prefix, member] : kGroups)
    for (const auto& [name, t] : ckpt.*member) all.emplace(std::string(prefix) + name, t);
  Metadata md;
  md["skiff.format"] = std::string(kFormat);
  md["skiff.step"] = std::to_string(ckpt.step);
  md["skiff.optimizer"] = ckpt.optimizer_state;
  md["skiff.scheduler"] = ckpt.scheduler_state;
  md["skiff.rng"] = json(ckpt.rng).dump();
  md["skiff.data"] = json(ckpt.data).dump();
  json metrics = json::object();
  for (const auto& [k, v] : ckpt.metrics) metrics[k] = v;
  md["skiff.metrics"] = metrics.dump();
  md["skiff.metadata"] = json(ckpt.metadata).dump();
  save_safetensors(path, all, md);
}

Checkpoint load_checkpoint(const fs::path& path, const LoadOptions& options) {
  SafetensorsFile f = load_safetensors(path, options);
  const Metadata& md = f.metadata;
  auto fmt_it = md.find("skiff.format");
  if (fmt_it == md.end() || fmt_it->second != kFormat)
    SKIFF_THROW(IoError, "'{}' is not a skiff checkpoint (no skiff.format = {} in its metadata)", path.string(),
                kFormat);
  Checkpoint c;
  auto step_it = md.find("skiff.step");
  const std::string step_s = step_it == md.end() ? "" : step_it->second;
  auto [ptr, ec] = std::from_chars(step_s.data(), step_s.data() + step_s.size(), c.step);
  if (ec != std::errc() || ptr != step_s.data() + step_s.size())
    SKIFF_THROW(IoError, "checkpoint '{}': bad skiff.step '{}'", path.string(), step_s);
  if (auto it = md.find("skiff.optimizer"); it != md.end()) c.optimizer_state = it->second;
  if (auto it = md.find("skiff.scheduler"); it != md.end()) c.scheduler_state = it->second;
  const json rng = parse_meta_json(md, "skiff.rng", path);
  for (auto it = rng.begin(); it != rng.end(); ++it) {
    if (!it->is_string())
      SKIFF_THROW(IoError, "checkpoint '{}': rng state '{}' is not a string", path.string(), it.key());
    c.rng[it.key()] = it->get<std::string>();
  }
  const json data = parse_meta_json(md, "skiff.data", path);
  for (auto it = data.begin(); it != data.end(); ++it) {
    if (!it->is_string())
      SKIFF_THROW(IoError, "checkpoint '{}': data-loader state '{}' is not a string", path.string(), it.key());
    c.data[it.key()] = it->get<std::string>();
  }
  const json metrics = parse_meta_json(md, "skiff.metrics", path);
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    if (!it->is_number())
      SKIFF_THROW(IoError, "checkpoint '{}': metric '{}' is not a number", path.string(), it.key());
    c.metrics[it.key()] = it->get<double>();
  }
  const json user = parse_meta_json(md, "skiff.metadata", path);
  for (auto it = user.begin(); it != user.end(); ++it) {
    if (!it->is_string())
      SKIFF_THROW(IoError, "checkpoint '{}': metadata '{}' is not a string", path.string(), it.key());
    c.metadata[it.key()] = it->get<std::string>();
  }
  for (auto& [name, t] : f.tensors) {
    bool placed = false;
    for (const auto& [prefix, member] : kGroups) {
      if (name.starts_with(prefix)) {
        (c.*member).emplace(name.substr(prefix.size()), t);
        placed = true;
        break;
      }
    }
    if (!placed)
      SKIFF_THROW(IoError, "checkpoint '{}': tensor '{}' is not under model/, optimizer/ or extra/", path.string(),
                  name);
  }
  return c;
}

// ---- CheckpointManager -------------------------------------------------------------

CheckpointManager::CheckpointManager(fs::path dir, CheckpointManagerOptions options)
    : dir_(std::move(dir)), opt_(std::move(options)) {
  SKIFF_CHECK(opt_.keep_best <= 0 || !opt_.metric.empty(),
              "CheckpointManager: keep_best = {} needs a metric name", opt_.keep_best);
  SKIFF_CHECK(!opt_.prefix.empty() && opt_.prefix.find('/') == std::string::npos,
              "CheckpointManager: bad prefix '{}'", opt_.prefix);
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) SKIFF_THROW(IoError, "CheckpointManager: cannot create '{}': {}", dir_.string(), ec.message());
  // Temporary files left by a writer that was killed: never visible under a
  // final name, but they take space.
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    std::string n = e.path().filename().string();
    if (is_atomic_temp_name(n) && n.starts_with("." + opt_.prefix + "-")) fs::remove(e.path(), ec);
  }
}

int64_t CheckpointManager::step_of(const fs::path& file) const {
  const std::string n = file.filename().string();
  const std::string head = opt_.prefix + "-", tail = ".safetensors";
  if (!n.starts_with(head) || !n.ends_with(tail) || n.size() <= head.size() + tail.size()) return -1;
  std::string_view digits(n.data() + head.size(), n.size() - head.size() - tail.size());
  int64_t step = -1;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (ec != std::errc() || p != digits.data() + digits.size() || step < 0) return -1;
  return step;
}

std::vector<fs::path> CheckpointManager::list() const {
  std::vector<std::pair<int64_t, fs::path>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    int64_t s = step_of(e.path());
    if (s >= 0 && e.is_regular_file()) found.emplace_back(s, e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [s, p] : found) out.push_back(std::move(p));
  return out;
}

std::optional<fs::path> CheckpointManager::latest() const {
  auto files = list();
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    try {
      read_safetensors_header(*it);
      return *it;
    } catch (const Error&) {
      // A damaged file (disk error, hand-edited) is skipped: resume from the previous one.
    }
  }
  return std::nullopt;
}

std::optional<double> CheckpointManager::metric_of(const fs::path& file) const {
  if (opt_.metric.empty()) return std::nullopt;
  try {
    SafetensorsHeader h = read_safetensors_header(file);
    auto it = h.metadata.find("skiff.metrics");
    if (it == h.metadata.end()) return std::nullopt;
    json j = json::parse(it->second, nullptr, false);
    if (!j.is_object() || !j.contains(opt_.metric) || !j[opt_.metric].is_number()) return std::nullopt;
    return j[opt_.metric].get<double>();
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<fs::path> CheckpointManager::best() const {
  std::optional<fs::path> best;
  double best_v = 0;
  for (const auto& f : list()) {
    auto v = metric_of(f);
    if (!v) continue;
    bool better = !best || (opt_.higher_is_better ? *v > best_v : *v < best_v);
    if (better) best = f, best_v = *v;
  }
  return best;
}

fs::path CheckpointManager::save(const Checkpoint& ckpt) {
  SKIFF_CHECK(ckpt.step >= 0, "CheckpointManager: negative step {}", ckpt.step);
  if (opt_.keep_best > 0)
    SKIFF_CHECK(ckpt.metrics.count(opt_.metric), "CheckpointManager: checkpoint of step {} lacks metric '{}'",
                ckpt.step, opt_.metric);
  fs::path file = dir_ / fmt::format("{}-{:010d}.safetensors", opt_.prefix, ckpt.step);
  save_checkpoint(file, ckpt);
  apply_retention();
  return file;
}

void CheckpointManager::apply_retention() {
  auto files = list();
  std::set<fs::path> keep;
  if (opt_.keep_last <= 0) return;
  for (size_t i = files.size() > size_t(opt_.keep_last) ? files.size() - opt_.keep_last : 0; i < files.size(); ++i)
    keep.insert(files[i]);
  if (opt_.keep_best > 0) {
    std::vector<std::pair<double, fs::path>> scored;
    for (const auto& f : files)
      if (auto v = metric_of(f)) scored.emplace_back(opt_.higher_is_better ? -*v : *v, f);
    // Ties go to the earlier step (stable on the step-sorted list).
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < scored.size() && i < size_t(opt_.keep_best); ++i) keep.insert(scored[i].second);
  }
  bool removed = false;
  for (const auto& f : files) {
    if (keep.count(f)) continue;
    std::error_code ec;
    fs::remove(f, ec);
    if (ec) SKIFF_THROW(IoError, "CheckpointManager: cannot remove '{}': {}", f.string(), ec.message());
    removed = true;
  }
  if (removed) fsync_path(dir_, true);
}

}  // namespace skiff::io
