#include "suites/nlp/llama/tokenizer_bos.h"

#include <string>
#include <vector>

#include "framework/io/file.h"

namespace skiff::nlp {

using json = nlohmann::json;

int64_t tokenizer_bos_id(const json& j) {
  if (!j.is_object() || !j.contains("post_processor") || !j["post_processor"].is_object()) return -1;
  std::vector<const json*> procs{&j["post_processor"]};
  if (j["post_processor"].contains("processors"))
    for (const json& p : j["post_processor"]["processors"]) procs.push_back(&p);
  for (const json* p : procs) {
    if (!p->is_object() || p->value("type", "") != "TemplateProcessing") continue;
    const json& single = (*p)["single"];
    if (!single.is_array() || single.empty() || !single[0].contains("SpecialToken")) return -1;
    const std::string name = single[0]["SpecialToken"].value("id", "");
    const json& ids = (*p)["special_tokens"][name]["ids"];
    if (ids.is_array() && !ids.empty() && ids[0].is_number_integer()) return ids[0].get<int64_t>();
  }
  return -1;
}

int64_t tokenizer_bos_id(const std::filesystem::path& tokenizer_json) {
  json j = json::parse(io::read_file(tokenizer_json), nullptr, false);
  return j.is_discarded() ? -1 : tokenizer_bos_id(j);
}

}  // namespace skiff::nlp
