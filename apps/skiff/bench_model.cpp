// `skiff bench model MODEL --input name:1x3x640x640 --threads N`: latency of one
// model through the Predictor (median, p90) and the process's peak memory.
// bench/compare_models.sh runs the same cases in ONNX Runtime and prints ratios.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "apps/skiff/commands.h"
#include "framework/core/rng.h"
#include "framework/core/threading.h"
#include "framework/engine/predictor.h"
#include "framework/zoo/zoo.h"

namespace skiff::app {
namespace {

struct ModelBenchOptions {
  std::string model;
  std::vector<std::string> inputs;
  int threads = 0;
  int warmup = 3;
  int iters = 20;
  bool json = false;
  bool profile = false;
  int top = 10;
};

/// "x:1x3x640x640" -> {"x", [1, 3, 640, 640]}.
std::pair<std::string, Shape> parse_input_spec(const std::string& spec) {
  auto colon = spec.rfind(':');
  SKIFF_CHECK(colon != std::string::npos && colon > 0, "--input '{}': expected NAME:DIMS such as x:1x3x640x640", spec);
  std::vector<int64_t> dims;
  std::string rest = spec.substr(colon + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t next = rest.find('x', pos);
    std::string tok = rest.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    try {
      size_t used = 0;
      long long v = std::stoll(tok, &used);
      SKIFF_CHECK(used == tok.size() && v > 0, "bad dim");
      dims.push_back(v);
    } catch (const std::exception&) {
      SKIFF_THROW(ValueError, "--input '{}': '{}' is not a positive dimension", spec, tok);
    }
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return {spec.substr(0, colon), Shape(dims)};
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

/// `iters` more runs with per-step timing: each node's median time over them (one run alone is
/// noisy at these sizes), summed by op type, then the `top` slowest nodes.
void print_profile(const engine::Predictor& predictor, const std::unordered_map<std::string, Tensor>& feeds,
                   int iters, int top) {
  std::vector<Tensor> ordered;
  for (const auto& in : predictor.inputs()) ordered.push_back(feeds.at(in.name));
  std::vector<engine::RunProfile> runs(static_cast<size_t>(std::max(iters, 1)));
  for (auto& r : runs) predictor.run(ordered, &r);
  struct NodeTime {
    double ms;
    std::string what, op;
  };
  std::vector<NodeTime> nodes;
  std::map<std::string, std::pair<double, int>> by_op;  // op type -> (ms, calls)
  // Steps run in the same order every time, so entry i of each run is the same node.
  for (size_t i = 0; i < runs[0].nodes.size(); ++i) {
    std::vector<double> t;
    for (const auto& r : runs) t.push_back(r.nodes[i].ms);
    std::nth_element(t.begin(), t.begin() + std::ptrdiff_t(t.size() / 2), t.end());
    const auto& n = runs[0].nodes[i];
    nodes.push_back({t[t.size() / 2], n.what, n.op_type});
    by_op[n.op_type].first += t[t.size() / 2];
    ++by_op[n.op_type].second;
  }
  double total = 0;
  for (const auto& [op, e] : by_op) total += e.first;
  std::vector<std::pair<std::string, std::pair<double, int>>> ops(by_op.begin(), by_op.end());
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  fmt::print(stderr, "median over {} profiled runs\n{:<24}{:>8}{:>12}{:>8}\n", runs.size(), "op", "calls", "ms", "%");
  for (const auto& [op, e] : ops)
    fmt::print(stderr, "{:<24}{:>8}{:>12.3f}{:>7.1f}%\n", op, e.second, e.first, total > 0 ? 100 * e.first / total : 0);
  std::sort(nodes.begin(), nodes.end(), [](const NodeTime& a, const NodeTime& b) { return a.ms > b.ms; });
  fmt::print(stderr, "slowest nodes\n");
  for (size_t i = 0; i < std::min(size_t(std::max(top, 0)), nodes.size()); ++i)
    fmt::print(stderr, "  {:9.3f} ms  {}\n", nodes[i].ms, nodes[i].what);
}

void run_model_bench(const ModelBenchOptions& o) {
  if (o.threads > 0) set_num_threads(o.threads);
  std::string path = zoo::resolve_model_path(o.model).string();
  engine::Predictor predictor(path);
  std::unordered_map<std::string, Tensor> feeds;
  Generator gen(0);
  for (const auto& spec : o.inputs) {
    auto [name, shape] = parse_input_spec(spec);
    feeds[name] = rand(shape, DType::Float32, &gen);
  }
  for (const auto& in : predictor.inputs())
    SKIFF_CHECK(feeds.count(in.name), "model input '{}' has no --input (give --input {}:DIMS)", in.name, in.name);
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < o.warmup; ++i) predictor.run(feeds);
  std::vector<double> ms;
  for (int i = 0; i < o.iters; ++i) {
    auto t0 = clock::now();
    predictor.run(feeds);
    ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  if (o.profile) print_profile(predictor, feeds, o.iters, o.top);
  double median = ms[ms.size() / 2];
  double p90 = ms[std::min(ms.size() - 1, size_t(double(ms.size()) * 0.9))];
  if (o.json) {
    nlohmann::json j{{"model", path},       {"inputs", o.inputs}, {"threads", num_threads()},
                     {"median_ms", median}, {"p90_ms", p90},      {"peak_rss_mb", peak_rss_mb()}};
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("model     {}\ninputs    {}\nthreads   {}\nmedian    {:.3f} ms\np90       {:.3f} ms\npeak RSS  {:.1f} MB\n",
               path, fmt::join(o.inputs, " "), num_threads(), median, p90, peak_rss_mb());
  }
}

}  // namespace

void add_bench_model_command(CLI::App& bench) {
  auto opts = std::make_shared<ModelBenchOptions>();
  auto* model = bench.add_subcommand("model", "Latency (median, p90) and peak memory of a model run by the Predictor");
  model->add_option("model", opts->model, "An .onnx file, a TF.js model.json or a zoo model name")->required();
  model->add_option("--input", opts->inputs, "NAME:DIMS of an input, e.g. x:1x3x640x640 (repeat per input)")->required();
  model->add_option("--threads", opts->threads, "CPU threads (default: SKIFF_NUM_THREADS or all cores)");
  model->add_option("--warmup", opts->warmup, "Untimed runs first")->capture_default_str();
  model->add_option("--iters", opts->iters, "Timed runs")->capture_default_str()->check(CLI::PositiveNumber);
  model->add_flag("--profile", opts->profile,
                  "Also print time per op type and the slowest nodes with their shapes (stderr), medians over "
                  "--iters more runs");
  model->add_option("--top", opts->top, "How many of the slowest nodes --profile lists")->capture_default_str();
  model->add_flag("--json", opts->json, "One JSON object (for bench/compare_models.sh)");
  model->callback([opts] { run_model_bench(*opts); });
}

}  // namespace skiff::app
