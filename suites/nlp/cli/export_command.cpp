// `skiff nlp export`: writes a LLaMA-style model directory (Hugging Face layout) as a
// GGUF file that llama.cpp loads (suites/nlp/llama/gguf.h).
//   skiff nlp export --gguf OUT.gguf --model DIR [--dtype f32|f16]
#include <fmt/format.h>

#include <filesystem>

#include "framework/cli/command_registry.h"
#include "framework/core/error.h"
#include "suites/nlp/llama/gguf.h"
#include "suites/nlp/llama/model_dir.h"

namespace skiff::nlp {
namespace {
namespace fs = std::filesystem;

struct Options {
  std::string model, gguf, dtype = "f32", name;
};

void run_export(const Options& o) {
  std::error_code ec;
  const fs::path model = model_dir_argument(o.model, "nlp export");
  SKIFF_CHECK(fs::is_directory(model, ec), "nlp export: model directory '{}' does not exist", o.model);
  GgufExportOptions opt;
  try {
    opt.dtype = parse_gguf_tensor_type(o.dtype);
  } catch (Error& e) {
    e.add_context("nlp export: --dtype");
    throw;
  }
  opt.name = o.name;
  fs::path parent = fs::path(o.gguf).parent_path();
  if (parent.empty()) parent = ".";
  SKIFF_CHECK_T(IoError, fs::is_directory(parent, ec), "nlp export: cannot write '{}': directory '{}' does not exist",
                o.gguf, parent.string());
  GgufExportSummary s;
  try {
    s = export_llama_gguf(model, o.gguf, opt);
  } catch (Error& e) {
    e.add_context(fmt::format("while exporting {} to {}", o.model, o.gguf));
    throw;
  }
  fmt::print("wrote {}: {} tensors ({}), {} metadata keys, {} bytes\n", o.gguf, s.tensors,
             gguf_tensor_type_name(opt.dtype), s.metadata, s.bytes);
}

void add_export_command(CLI::App& nlp) {
  auto o = std::make_shared<Options>();
  auto* ex = nlp.add_subcommand("export", "Export a LLaMA-style model directory to GGUF (llama.cpp)");
  ex->footer(
      "Reads the model directory as `skiff nlp generate` does (config.json with model_type \"llama\",\n"
      "safetensors, tokenizer.json with a byte-level BPE) and writes one GGUF v3 file for llama.cpp's\n"
      "\"llama\" architecture: hyper-parameters as llama.* keys, the tokenizer as tokenizer.ggml.*\n"
      "(model \"gpt2\", tokens, token types, merges, bos/eos ids) and the weights under llama.cpp's\n"
      "names (token_embd, blk.N.attn_q, ..., output). q/k projection rows are reordered from Hugging\n"
      "Face's rotate_half rotary layout to GGML's interleaved one, as llama.cpp's converter does.\n"
      "--dtype f16 stores matrices as float16 (norms stay float32). Rope scaling: none or linear.\n"
      "The file is written atomically: an error leaves no partial OUT.gguf.\n"
      "Example:\n"
      "  skiff nlp export --model tests/data/llama/tiny --gguf tiny.gguf --dtype f16");
  ex->add_option("--model,-m", o->model, "Model directory (config.json, safetensors, tokenizer.json) or zoo name")->required();
  ex->add_option("--gguf,-o", o->gguf, "The GGUF file to write")->required();
  ex->add_option("--dtype", o->dtype, "Type of the weight matrices: f32 (default) or f16");
  ex->add_option("--name", o->name, "general.name (default: the model directory's name)");
  ex->callback([o] { run_export(*o); });
}

}  // namespace
}  // namespace skiff::nlp

SKIFF_REGISTER_COMMAND("nlp export", skiff::nlp::add_export_command);
