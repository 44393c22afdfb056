#include "suites/nlp/llama/model_dir.h"

#include <chrono>
#include <set>

#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/zoo/zoo.h"
#include "suites/nlp/llama/config.h"
#include "suites/nlp/llama/loader.h"
#include "suites/nlp/llama/tokenizer_bos.h"

namespace skiff::nlp {
namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path model_dir_argument(const std::string& arg, const std::string& command) {
  std::error_code ec;
  // A path (it exists, or has a '/') is checked by the caller, whose error names it.
  if (fs::exists(arg, ec) || arg.find('/') != std::string::npos) return arg;
  try {
    return zoo::resolve_model_dir(arg);
  } catch (Error& e) {
    e.add_context(fmt::format("{}: --model {}", command, arg));
    throw;
  }
}

ModelDir open_model_dir(const std::string& arg, const std::string& command) {
  const fs::path dir = model_dir_argument(arg, command);
  std::error_code ec;
  SKIFF_CHECK(fs::is_directory(dir, ec), "{}: model directory '{}' does not exist", command, dir.string());
  const fs::path tok_json = dir / "tokenizer.json", tok_model = dir / "tokenizer.model";
  const bool has_json = fs::exists(tok_json, ec);
  SKIFF_CHECK(has_json || fs::exists(tok_model, ec),
              "{}: {} has no tokenizer.json or tokenizer.model: the model directory needs its tokenizer "
              "to encode the prompt",
              command, dir.string());
  ModelDir m;
  m.dir = dir;
  m.tokenizer = text::load_tokenizer(has_json ? tok_json : tok_model);
  const auto t0 = std::chrono::steady_clock::now();
  m.model = load_llama(dir);
  m.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const LlamaConfig& cfg = m.model->config();

  std::set<int64_t> eos(cfg.eos_token_ids.begin(), cfg.eos_token_ids.end());
  if (fs::path gc = dir / "generation_config.json"; fs::exists(gc, ec)) {
    json j = json::parse(io::read_file(gc), nullptr, false);
    SKIFF_CHECK(!j.is_discarded() && j.is_object(), "{}: {} is not a JSON object", command, gc.string());
    if (j.contains("eos_token_id"))
      for (int64_t id : token_ids_from_json(j["eos_token_id"], gc.string(), "eos_token_id")) eos.insert(id);
    if (j.contains("pad_token_id") && j["pad_token_id"].is_number_integer()) m.defaults.pad_token_id = j["pad_token_id"];
  }
  m.defaults.eos_token_ids.assign(eos.begin(), eos.end());

  // tokenizer.json says itself whether it adds a BOS token; a SentencePiece tokenizer.model
  // does not, and LLaMA's tokenizers then add config.json's bos_token_id (HF's add_bos_token).
  if (has_json) m.bos_token_id = tokenizer_bos_id(tok_json);
  else if (!cfg.bos_token_ids.empty()) m.bos_token_id = cfg.bos_token_ids[0];
  return m;
}

std::vector<int64_t> encode_prompt(const ModelDir& m, const std::string& text, bool add_bos, const std::string& command) {
  std::vector<int64_t> ids;
  if (add_bos && m.bos_token_id >= 0) ids.push_back(m.bos_token_id);
  for (int32_t id : m.tokenizer->encode_ids(text)) ids.push_back(id);
  SKIFF_CHECK(!ids.empty(), "{}: the prompt is empty and the tokenizer adds no BOS token", command);
  const int64_t vocab = m.model->config().vocab_size;
  for (int64_t id : ids)
    SKIFF_CHECK_INDEX(id < vocab, "{}: prompt token {} is outside the model's vocabulary ({})", command, id, vocab);
  return ids;
}

int64_t special_token_id(const ModelDir& m, const std::string& token) {
  if (token.empty()) return -1;
  const int32_t id = m.tokenizer->token_to_id(token);
  return id < 0 ? -1 : id;
}

}  // namespace skiff::nlp
