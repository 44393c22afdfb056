// `skiff graph show MODEL`: inputs, outputs, op histogram and parameter count of
// an ONNX or TF.js model (a local file or a zoo name).
#include <fmt/format.h>

#include "apps/skiff/commands.h"
#include "framework/graph/model_import.h"
#include "framework/graph/onnx_export.h"
#include "framework/graph/passes.h"
#include "framework/graph/printer.h"
#include "framework/zoo/zoo.h"

namespace skiff::app {

void add_graph_command(CLI::App& app) {
  auto* graph = app.add_subcommand("graph", "Inspect model graphs (ONNX, TF.js graph models)");
  graph->require_subcommand(1);
  struct Options {
    std::string model;
    bool json = false;
    bool optimized = false;
    bool nodes = false;
  };
  auto opts = std::make_shared<Options>();
  auto* show = graph->add_subcommand("show", "Print a model's inputs, outputs, op histogram and parameter count");
  show->add_option("model", opts->model, "An .onnx file, a TF.js model.json or a zoo model name (e.g. ppocr-v4-det)")->required();
  show->add_flag("--json", opts->json, "Print one JSON object");
  show->add_flag("--optimized", opts->optimized, "Show the graph after the Predictor's optimisation passes");
  show->add_flag("--nodes", opts->nodes, "Also list every node: op, name, inputs -> outputs and attributes");
  show->callback([opts] {
    std::string path = zoo::resolve_model_path(opts->model).string();
    graph::ImportOptions import_options;
    // Showing a model must work even when skiff cannot run some of its ops.
    import_options.require_supported_ops = opts->optimized;
    graph::Graph g = graph::import_model(path, import_options);
    if (opts->optimized) graph::optimize(g);
    auto summary = graph::summarize(g);
    if (opts->json) {
      auto j = graph::summary_json(summary);
      j["file"] = path;
      if (opts->nodes) j["node_list"] = graph::nodes_json(g);
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print("file      {}\n{}", path, graph::format_summary(summary));
      if (opts->nodes) fmt::print("nodes\n{}", graph::format_nodes(g));
    }
  });

  struct ConvertOptions {
    std::string model, output;
    int level = 1;
  };
  auto copts = std::make_shared<ConvertOptions>();
  auto* convert = graph->add_subcommand(
      "convert", "Write a model (ONNX or TF.js graph model) as an ONNX file, after the exact clean-up passes");
  convert->add_option("model", copts->model, "An .onnx file, a TF.js model.json or a zoo model name")->required();
  convert->add_option("output", copts->output, "The .onnx file to write (atomically)")->required();
  convert->add_option("--level", copts->level,
                      "0: as imported; 1: constants folded, layout transposes and pads removed (default)")
      ->check(CLI::Range(0, 1));
  convert->callback([copts] {
    std::string path = zoo::resolve_model_path(copts->model).string();
    graph::Graph g = graph::import_model(path);
    graph::optimize(g, graph::OptimizeOptions{copts->level});
    graph::export_onnx(g, copts->output);
    fmt::print("wrote {} ({} nodes, {} parameters)\n", copts->output, g.nodes.size(), g.parameter_count());
  });
}

}  // namespace skiff::app
