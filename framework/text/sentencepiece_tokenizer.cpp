#include "framework/text/sentencepiece_tokenizer.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/text/sentencepiece_shim.h"
#include "framework/text/unicode.h"

namespace skiff::text {

namespace fs = std::filesystem;

namespace {

// libskiff_sentencepiece.so: $SKIFF_SENTENCEPIECE_MODULE, else beside the library that
// holds this code (build/lib, or wherever skiff's libraries are installed).
fs::path module_path() {
  if (const char* env = std::getenv("SKIFF_SENTENCEPIECE_MODULE"); env && *env) return env;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_path), &info) && info.dli_fname)
    return fs::path(info.dli_fname).parent_path() / "libskiff_sentencepiece.so";
  return "libskiff_sentencepiece.so";
}

#if defined(__SANITIZE_ADDRESS__)
#define SKIFF_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SKIFF_UNDER_ASAN 1
#endif
#endif

const detail::SentencePieceApi& api() {
  static const detail::SentencePieceApi* table = nullptr;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    const fs::path path = module_path();
    // RTLD_DEEPBIND: libsentencepiece binds to its own protobuf (sentencepiece_shim.h).
    // AddressSanitizer refuses RTLD_DEEPBIND; its builds load the module without it, which is
    // right as long as the process has not also loaded the system protobuf (ONNX). The
    // sanitizer runs keep the two apart (tests/fuzz: the tokenizer fuzzer links no ONNX).
#if defined(SKIFF_UNDER_ASAN)
    // Without DEEPBIND the two protobufs would meet and libprotobuf would abort the process.
    if (dlopen("libprotobuf.so.32", RTLD_NOW | RTLD_NOLOAD)) {
      failure = "this AddressSanitizer build cannot load SentencePiece models in a process that also uses "
                "ONNX (two protobuf versions, and ASan forbids RTLD_DEEPBIND, which keeps them apart)";
      return;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
#else
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
#endif
    if (!handle) {
      failure = fmt::format("cannot load {}: {}", path.string(), dlerror());
      return;
    }
    auto get = reinterpret_cast<const detail::SentencePieceApi* (*)()>(dlsym(handle, "skiff_sentencepiece_api"));
    if (!get || get()->version != detail::kSentencePieceApiVersion) {
      failure = fmt::format("{} is not skiff's SentencePiece module of this build", path.string());
      return;
    }
    table = get();
  });
  if (!table) SKIFF_THROW(NotImplementedError, "SentencePiece: {}", failure);
  return *table;
}

}  // namespace

struct SentencePieceTokenizer::Impl {
  void* processor = nullptr;
  ~Impl() {
    if (processor) api().release(processor);
  }
};

SentencePieceTokenizer::SentencePieceTokenizer(const fs::path& model_file)
    : Tokenizer(model_file.string()), impl_(std::make_unique<Impl>()) {
  std::error_code ec;
  SKIFF_CHECK(fs::is_regular_file(model_file, ec), "tokenizer: '{}' does not exist or is not a file",
              model_file.string());
  std::string error;
  impl_->processor = api().load(model_file.string(), error);
  if (!impl_->processor) SKIFF_THROW(IoError, "{}: not a SentencePiece model: {}", model_file.string(), error);
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;
SentencePieceTokenizer::SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept = default;

Encoding SentencePieceTokenizer::encode(std::string_view text) const {
  if (find_invalid_utf8(text) != std::string_view::npos) check_utf8(text, fmt::format("tokenizer ({})", source()));
  std::vector<int> ids;
  Encoding e;
  std::string error;
  if (!api().encode(impl_->processor, text, ids, &e.offsets, error))
    SKIFF_THROW(ValueError, "{}: encoding failed: {}", source(), error);
  e.ids.assign(ids.begin(), ids.end());
  return e;
}

std::vector<int32_t> SentencePieceTokenizer::encode_ids(std::string_view text) const {
  if (find_invalid_utf8(text) != std::string_view::npos) check_utf8(text, fmt::format("tokenizer ({})", source()));
  std::vector<int> ids;
  std::string error;
  if (!api().encode(impl_->processor, text, ids, nullptr, error))
    SKIFF_THROW(ValueError, "{}: encoding failed: {}", source(), error);
  return {ids.begin(), ids.end()};
}

std::string SentencePieceTokenizer::decode(std::span<const int32_t> ids, bool /*skip_special_tokens*/) const {
  std::vector<int> keep;
  keep.reserve(ids.size());
  for (int32_t id : ids) {
    SKIFF_CHECK_INDEX(id >= 0 && id < vocab_size(), "{}: expected a token id in [0, {}), got {}", source(),
                      vocab_size(), id);
    keep.push_back(id);
  }
  std::string text, error;
  if (!api().decode(impl_->processor, keep, text, error))
    SKIFF_THROW(ValueError, "{}: decoding failed: {}", source(), error);
  return text;
}

std::string SentencePieceTokenizer::id_to_token(int32_t id) const {
  SKIFF_CHECK_INDEX(id >= 0 && id < vocab_size(), "{}: expected a token id in [0, {}), got {}", source(), vocab_size(),
                    id);
  return api().id_to_piece(impl_->processor, id);
}

int32_t SentencePieceTokenizer::token_to_id(std::string_view token) const {
  // The library answers the unknown piece's id for anything it lacks.
  const int id = api().piece_to_id(impl_->processor, token);
  return id == api().unk_id(impl_->processor) && api().id_to_piece(impl_->processor, id) != token ? -1 : id;
}

int32_t SentencePieceTokenizer::vocab_size() const { return int32_t(api().piece_size(impl_->processor)); }

std::string SentencePieceTokenizer::kind() const { return "SentencePiece"; }

float SentencePieceTokenizer::piece_score(int32_t id) const {
  SKIFF_CHECK_INDEX(id >= 0 && id < vocab_size(), "{}: expected a token id in [0, {}), got {}", source(), vocab_size(),
                    id);
  return api().score(impl_->processor, id);
}

SentencePieceTokenizer::PieceType SentencePieceTokenizer::piece_type(int32_t id) const {
  SKIFF_CHECK_INDEX(id >= 0 && id < vocab_size(), "{}: expected a token id in [0, {}), got {}", source(), vocab_size(),
                    id);
  return PieceType(api().piece_type(impl_->processor, id));
}

bool SentencePieceTokenizer::adds_dummy_prefix() const {
  // The library does not expose its normalizer settings without the model's protobuf
  // headers (not installed), so ask it: the first piece of "a" starts with U+2581 exactly
  // when a dummy prefix is added.
  const std::vector<int32_t> ids = encode_ids("a");
  return !ids.empty() && id_to_token(ids[0]).starts_with("\xE2\x96\x81");
}

void train_sentencepiece(const SentencePieceTrainOptions& o) {
  SKIFF_CHECK(!o.inputs.empty(), "train-tokenizer: no input files");
  SKIFF_CHECK(!o.output.empty() && o.output.extension() == ".model",
              "train-tokenizer: the output must be a .model file, got '{}'", o.output.string());
  SKIFF_CHECK(o.vocab_size > 0, "train-tokenizer: vocab_size must be positive, got {}", o.vocab_size);
  const std::vector<std::string> types{"unigram", "bpe", "char", "word"};
  SKIFF_CHECK(std::find(types.begin(), types.end(), o.model_type) != types.end(),
              "train-tokenizer: model type '{}' is not one of unigram, bpe, char, word", o.model_type);
  std::string inputs;
  for (const fs::path& p : o.inputs) {
    // The library skips invalid UTF-8 silently; say where it is instead.
    check_utf8(io::read_file(p), p.string());
    if (!inputs.empty()) inputs += ',';
    inputs += p.string();
  }
  const fs::path dir = o.output.parent_path().empty() ? fs::path(".") : o.output.parent_path();
  const fs::path temp = dir / fmt::format(".{}.tmp{}", o.output.stem().string(), ::getpid());
  std::unordered_map<std::string, std::string> args{
      {"input", inputs},
      {"model_prefix", temp.string()},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"model_type", o.model_type},
      {"character_coverage", fmt::format("{}", o.character_coverage)},
      {"num_threads", std::to_string(std::max(1, o.threads))},
      {"byte_fallback", o.byte_fallback ? "true" : "false"},
      {"normalization_rule_name", o.normalization},
      {"remove_extra_whitespaces", o.remove_extra_whitespaces ? "true" : "false"},
      {"input_sentence_size", "0"},  // every line: no random sampling
      {"shuffle_input_sentence", "false"},
      {"minloglevel", "2"},
  };
  std::string error;
  const bool ok = api().train(args, error);
  const fs::path model = temp.string() + ".model", vocab = temp.string() + ".vocab";
  if (!ok) {
    std::error_code ec;
    fs::remove(model, ec);
    fs::remove(vocab, ec);
    SKIFF_THROW(ValueError, "train-tokenizer ({}): {}", inputs, error);
  }
  fs::path vocab_out = o.output;
  vocab_out.replace_extension(".vocab");
  fs::rename(vocab, vocab_out);
  fs::rename(model, o.output);  // last: a .model that exists is complete
}

}  // namespace skiff::text
