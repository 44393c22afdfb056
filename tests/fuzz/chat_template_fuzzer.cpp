// Chat templates (the Jinja subset Hugging Face models ship) as `skiff nlp chat` renders
// them: the template and a tokenizer_config.json (two parts, fuzz_support.h), rendered
// over a short conversation. Templates are programs, so the renderer's own limits
// (loop and recursion bounds, output size) are what keeps a hostile one finite.
#include <nlohmann/json.hpp>

#include "framework/text/chat_template.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parts = skiff::fuzz::split_parts(skiff::fuzz::as_text(data, size), 2);
  auto jinja = skiff::fuzz::write_scratch_file("chat/template.jinja", parts[0]);
  auto config = skiff::fuzz::write_scratch_file("chat/tokenizer_config.json", parts[1]);
  static const nlohmann::ordered_json messages = nlohmann::ordered_json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi there"},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "What is 2+2?"}])");
  skiff::fuzz::expect_clean_errors("chat_template", [&] {
    auto chat = skiff::text::ChatTemplate::from_file(jinja, parts[1].empty() ? std::nullopt : std::optional(config));
    (void)chat.render(messages);
  });
  return 0;
}
