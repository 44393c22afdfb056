// The Jinja renderer against Python's jinja2 set up as Hugging Face sets it up
// (tests/data/chat_templates/goldens.json, written by tests/tools/chat_template/make_goldens.py):
// one feature per case, output identical, and failing where jinja2 fails. Plus the errors'
// wording and ChatTemplate's reading of tokenizer_config.json.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/text/chat_template.h"
#include "framework/text/jinja.h"

namespace skiff::text {
namespace {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

const fs::path kSource = SKIFF_SOURCE_DIR;

ojson goldens() {
  std::ifstream f(kSource / "tests/data/chat_templates/goldens.json");
  EXPECT_TRUE(f.good());
  return ojson::parse(f);
}

std::string render(const std::string& source, const ojson& context = ojson::object()) {
  return JinjaTemplate(source, "test").render(context);
}

std::string error_of(const std::string& source, const ojson& context = ojson::object()) {
  try {
    render(source, context);
  } catch (const ValueError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Jinja, RendersEveryFeatureAsPythonJinja2Does) {
  const ojson g = goldens();
  ASSERT_GE(g["features"].size(), 30u);
  for (const ojson& c : g["features"]) {
    const std::string name = c["name"];
    if (c.contains("output")) {
      std::string got;
      ASSERT_NO_THROW(got = render(c["template"], c["context"])) << name;
      EXPECT_EQ(got, c["output"].get<std::string>()) << name;
    } else {
      EXPECT_THROW(render(c["template"], c["context"]), ValueError) << name << " (jinja2: " << c["error"] << ")";
    }
  }
}

TEST(Jinja, ErrorsNameTheTemplateAndLine) {
  EXPECT_EQ(error_of("a\n{% if x %}\nnever closed", {{"x", 1}}), "template test line 2: '{% if %}' is never closed with '{% endif %}'");
  EXPECT_EQ(error_of("{% macro m() %}\n{% for x in y %}"), "template test line 2: '{% for %}' is never closed with '{% endfor %}'");
  EXPECT_EQ(error_of("{% macro m() %}x"), "template test line 1: '{% macro %}' is never closed with '{% endmacro %}'");
  EXPECT_EQ(error_of("line one\n{{ 1 + }}"), "template test line 2: expected an expression, got '}}'");
  EXPECT_EQ(error_of("\n\n{{ 'a'|nosuch }}"), "template test line 3: no filter named 'nosuch'");
  EXPECT_EQ(error_of("{{ raise_exception('roles must alternate') }}"),
            "template test line 1: the template raised an error: roles must alternate");
  EXPECT_EQ(error_of("{{ nothing.attr }}"), "template test line 1: 'nothing' is undefined, so it has no attribute 'attr'");
  EXPECT_EQ(error_of("{{ 'a' + 1 }}"), "template test line 1: unsupported operand types for +: 'str' and 'int'");
  EXPECT_EQ(error_of("{% frobnicate %}"), "template test line 1: unknown tag 'frobnicate'");
  EXPECT_EQ(error_of("{{ 'unclosed }}"), "template test line 1: a string literal is never closed");
}

// Templates come with downloaded models: hostile ones end in an error, not a crash or an
// exhausted machine.
TEST(Jinja, HostileTemplatesFailCleanly) {
  EXPECT_EQ(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
            "template test line 1: macro 'f': calls nested deeper than 64");
  EXPECT_NE(error_of("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").find("nested deeper than 200"),
            std::string::npos);
  EXPECT_NE(error_of("{{ 'ab' * 100000000000 }}").find("too large"), std::string::npos);
  EXPECT_NE(error_of("{% for i in range(1000000000000) %}{% endfor %}").find("too large"), std::string::npos);
  // Found by tests/fuzz/chat_template: 7 million items took 20 s to print; the limit is 2^20.
  EXPECT_NE(error_of("{{ 0.5 ~ range(7026078) }}").find("the limit is 1048576"), std::string::npos);
  EXPECT_NE(error_of("{{ 9223372036854775807 + 1 }}").find("overflows a 64-bit integer"), std::string::npos);
  // Ranges at the end of the integers stop at their bound instead of wrapping past it.
  EXPECT_EQ(render("{% for i in range(9223372036854775806, 9223372036854775807, 10) %}{{ i }};{% endfor %}"),
            "9223372036854775806;");
  EXPECT_EQ(render("{% for i in range(3, -3, -2) %}{{ i }};{% endfor %}"), "3;1;-1;");
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "{% if true %}";
  EXPECT_NE(error_of(deep).find("nested deeper than 200"), std::string::npos);
}

TEST(Jinja, RefusesInvalidUtf8InTemplateAndInput) {
  EXPECT_THROW(JinjaTemplate("\xff{{ x }}", "bad"), ValueError);
  EXPECT_THROW(render("{{ x }}", {{"x", std::string("a\xc3")}}), ValueError);
}

class ChatTemplateFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("skiff_chat_template_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  fs::path dir_;
};

const ojson kTwoTurns = ojson::parse(R"([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])");

TEST_F(ChatTemplateFiles, ReadsTheTemplateAndSpecialTokensOfTokenizerConfig) {
  write("tokenizer_config.json", R"({"bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>",
    "chat_template": "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}"})");
  const ChatTemplate t = ChatTemplate::from_model_dir(dir_);
  EXPECT_EQ(t.render(kTwoTurns), "<s>[user]hi</s>[assistant]yo</s>[assistant]");
  EXPECT_EQ(t.render(kTwoTurns, {.add_generation_prompt = false}), "<s>[user]hi</s>[assistant]yo</s>");
  EXPECT_TRUE(ChatTemplate::find_in_model_dir(dir_).has_value());
}

TEST_F(ChatTemplateFiles, PicksANamedTemplateAndPrefersChatTemplateJinja) {
  write("tokenizer_config.json", R"({"chat_template": [{"name": "default", "template": "D{{ messages|length }}"},
                                                        {"name": "tool_use", "template": "T{{ tools|length }}"}]})");
  EXPECT_EQ(ChatTemplate::from_model_dir(dir_).render(kTwoTurns), "D2");
  EXPECT_EQ(ChatTemplate::from_model_dir(dir_, "tool_use").render(kTwoTurns, {.tools = ojson::parse("[1, 2, 3]")}), "T3");
  try {
    ChatTemplate::from_model_dir(dir_, "rag");
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("no chat_template named 'rag' (it has default, tool_use)"), std::string::npos) << e.what();
  }
  write("chat_template.jinja", "J{{ messages[0].content }}{% if enable_thinking is false %}!{% endif %}\n");
  EXPECT_EQ(ChatTemplate::from_model_dir(dir_).render(kTwoTurns, {.extra = {{"enable_thinking", false}}}), "Jhi!");
}

TEST_F(ChatTemplateFiles, ExplainsAMissingTemplateAndBadMessages) {
  write("tokenizer_config.json", R"({"eos_token": "</s>"})");
  EXPECT_FALSE(ChatTemplate::find_in_model_dir(dir_).has_value());
  try {
    ChatTemplate::from_model_dir(dir_);
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("has no chat_template"), std::string::npos) << e.what();
  }
  write("chat_template.jinja", "{{ messages[0].content }}");
  const ChatTemplate t = ChatTemplate::from_model_dir(dir_);
  EXPECT_THROW(t.render(ojson::parse(R"({"role": "user"})")), ValueError);
  EXPECT_THROW(t.render(ojson::parse(R"([{"content": "no role"}])")), ValueError);
}

}  // namespace
}  // namespace skiff::text
