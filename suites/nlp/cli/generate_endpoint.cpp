// `skiff serve nlp/generate --set nlp/generate.model=DIR`: POST /nlp/generate, text
// generation with a LLaMA-style model, whole or streamed as server-sent events.
//
//   {"prompt": "Once upon a time", "maxNewTokens": 32, "temperature": 0.8, "topK": 40,
//    "topP": 0.95, "repetitionPenalty": 1.1, "seed": 3, "stop": ["\n"], "stream": true}
//   -> events {"text": "<piece>"} ..., then the envelope whose result is
//      {"text", "promptTokens", "newTokens", "stopReason"}
//
// One generation runs at a time (the model is shared; each runs with the worker's
// threads); requests are not batched.
#include <mutex>

#include "framework/serve/endpoint.h"
#include "framework/serve/request_fields.h"
#include "framework/serve/settings.h"
#include "suites/nlp/llama/generation.h"
#include "suites/nlp/llama/model_dir.h"
#include "suites/nlp/llama/streamer.h"

namespace skiff::nlp {
namespace {

using nlohmann::json;

struct GenerateRequest {
  std::vector<int64_t> prompt;
  GenerationConfig config;
  std::vector<std::string> stops;
};

class GenerateEndpoint final : public serve::Endpoint {
 public:
  GenerateEndpoint(std::string source, ModelDir model, bool add_bos)
      : source_(std::move(source)), m_(std::move(model)), add_bos_(add_bos) {}

  std::string prepare(serve::Call& call, const serve::RequestLimits&) const override {
    const json& body = call.request;
    serve::check_fields(body, {"prompt", "maxNewTokens", "temperature", "topK", "topP", "repetitionPenalty", "seed",
                               "stop", "stream"});
    GenerateRequest r;
    const std::string prompt = serve::required_string(body, "prompt");
    SKIFF_CHECK(!prompt.empty(), "prompt: empty");
    r.prompt = encode_prompt(m_, prompt, add_bos_, "prompt");
    GenerationConfig& g = r.config;
    g = m_.defaults;
    g.max_new_tokens = serve::optional_integer(body, "maxNewTokens", 1, 4096).value_or(32);
    const double temperature = serve::optional_number(body, "temperature", 0, 100).value_or(0);
    g.do_sample = temperature > 0;
    g.temperature = temperature > 0 ? temperature : 1.0;
    g.top_k = serve::optional_integer(body, "topK", 0, 1 << 30).value_or(0);
    g.top_p = serve::optional_number(body, "topP", 1e-6, 1).value_or(1.0);
    g.repetition_penalty = serve::optional_number(body, "repetitionPenalty", 1e-3, 100).value_or(1.0);
    g.seed = uint64_t(serve::optional_integer(body, "seed", 0, INT64_MAX).value_or(0));
    validate(g);
    if (body.contains("stop") && !body["stop"].is_null()) {
      const json& stops = body["stop"];
      SKIFF_CHECK(stops.is_array() && stops.size() <= 16, "stop: expected a list of at most 16 strings");
      for (size_t i = 0; i < stops.size(); ++i) {
        SKIFF_CHECK(stops[i].is_string() && !stops[i].get_ref<const std::string&>().empty(),
                    "stop[{}]: expected a non-empty string", i);
        r.stops.push_back(stops[i].get<std::string>());
      }
    }
    serve::optional_bool(body, "stream");  // checked here; streams() reads it
    call.input = std::move(r);
    return {};
  }

  bool streams(const serve::Call& call) const override { return call.request.value("stream", false); }

  void run(std::span<serve::Call* const> calls) const override {
    for (serve::Call* call : calls) {
      const auto& r = std::any_cast<const GenerateRequest&>(call->input);
      const std::vector<int32_t> prompt(r.prompt.begin(), r.prompt.end());
      std::vector<int32_t> generated;
      TextStreamer streamer(*m_.tokenizer, prompt);
      auto on_token = [&](size_t, int64_t id) {
        generated.push_back(int32_t(id));
        if (call->emit) {
          const std::string piece = streamer.push(int32_t(id));
          if (!piece.empty() && !call->emit({{"text", piece}})) return true;  // the client has gone: stop
        }
        if (r.stops.empty()) return false;
        const std::string text = continuation_text(*m_.tokenizer, prompt, generated);
        for (const auto& s : r.stops)
          if (text.find(s) != std::string::npos) return true;
        return false;
      };
      GenerationOutput out;
      {
        std::lock_guard<std::mutex> lock(mu_);  // the model is shared by the workers
        out = generate(*m_.model, {r.prompt}, r.config, on_token);
      }
      if (call->emit) {
        const std::string rest = streamer.flush();
        if (!rest.empty()) call->emit({{"text", rest}});
      }
      call->result = {{"text", continuation_text(*m_.tokenizer, prompt, generated)},
                      {"promptTokens", r.prompt.size()},
                      {"newTokens", generated.size()},
                      {"stopReason", stop_reason_name(out.reasons[0])}};
    }
  }

  json describe() const override {
    return {{"route", "/nlp/generate"}, {"model", source_}, {"streams", true}};
  }

 private:
  std::string source_;
  ModelDir m_;
  bool add_bos_;
  mutable std::mutex mu_;
};

std::unique_ptr<serve::Endpoint> make_generate_endpoint(const serve::EndpointSettings& settings) {
  serve::SettingsReader s("nlp/generate", settings);
  const std::string model = s.text("model", "");
  const bool add_bos = s.flag("add_bos", true);
  s.finish();
  SKIFF_CHECK(!model.empty(),
              "--set nlp/generate.model=DIR is required (a Hugging Face-layout model directory or a zoo name)");
  return std::make_unique<GenerateEndpoint>(model, open_model_dir(model, "serve nlp/generate"), add_bos);
}

}  // namespace
}  // namespace skiff::nlp

SKIFF_REGISTER_ENDPOINT("nlp/generate", skiff::nlp::make_generate_endpoint);
