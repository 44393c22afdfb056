// `skiff bench tokenize`: encoding throughput of a tokenizer over text files, one
// thread; tests/tools/tokenizers/bench.mjs measures the JavaScript references the
// same way and bench/compare_tokenizers.sh prints the ratios.
// Timing: each file is encoded as one text; a pass encodes every file; one warm-up
// pass, then the median of at least 5 passes and 1 s ("warm": the word cache is
// filled, as it is in a long-running process). "cold" clears the cache before each
// pass. With --lines each line (with its newline) is one text, as for
// `bench.mjs --lines`; the rows are then "lines" and "lines-cold".
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "framework/cli/bench_timing.h"
#include "framework/cli/command_registry.h"
#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/text/tokenizer.h"

namespace skiff::nlp {
namespace {

struct BenchOptions {
  std::string tokenizer, name;
  std::vector<std::string> files;
  bool json = false, lines = false;
};

void run_bench(const BenchOptions& o) {
  std::error_code ec;
  SKIFF_CHECK(std::filesystem::exists(o.tokenizer, ec), "bench tokenize: tokenizer '{}' does not exist", o.tokenizer);
  std::unique_ptr<text::Tokenizer> loaded = text::load_tokenizer(o.tokenizer);
  const text::Tokenizer& tokenizer = *loaded;
  std::vector<std::string> texts;
  size_t bytes = 0;
  for (const auto& f : o.files) {
    std::string t = io::read_file(f);
    bytes += t.size();
    if (!o.lines) {
      texts.push_back(std::move(t));
      continue;
    }
    for (size_t pos = 0; pos < t.size();) {
      size_t eol = t.find('\n', pos);
      size_t end = eol == std::string::npos ? t.size() : eol + 1;
      texts.push_back(t.substr(pos, end - pos));
      pos = end;
    }
  }
  size_t tokens = 0;
  auto pass = [&] {
    size_t n = 0;
    for (const auto& t : texts) n += tokenizer.encode_ids(t).size();
    tokens = n;
  };
  double warm = cli::median_seconds(pass, 1.0, 5, 1);
  double cold = cli::median_seconds([&] {
    tokenizer.clear_cache();
    pass();
  }, 1.0, 5, 0);
  const std::string name = o.name.empty() ? std::string("tokenize") : o.name;
  const char* warm_name = o.lines ? "lines" : "warm";
  const char* cold_name = o.lines ? "lines-cold" : "cold";
  for (auto [mode, s] : {std::pair{warm_name, warm}, std::pair{cold_name, cold}}) {
    if (o.json)
      fmt::print("{}\n", nlohmann::json{{"bench", name}, {"mode", mode}, {"tokens", tokens}, {"bytes", bytes},
                                        {"seconds", s}, {"tokens_per_second", double(tokens) / s}}
                             .dump());
    else
      fmt::print("{:<16} {:<10} {:>9} tokens {:>9} bytes {:9.2f} ms {:12.0f} tokens/s {:8.2f} MB/s\n", name, mode,
                 tokens, bytes, s * 1e3, double(tokens) / s, double(bytes) / s / 1e6);
  }
}

void add_bench_tokenize_command(CLI::App& bench) {
  auto o = std::make_shared<BenchOptions>();
  auto* cmd = bench.add_subcommand(
      "tokenize", "Tokenizer encoding throughput (one thread) over text files: warm (word cache filled) and cold");
  cmd->add_option("--tokenizer,-t", o->tokenizer, "A tokenizer file or directory, as for `skiff nlp tokenize`")
      ->required();
  cmd->add_option("files", o->files, "Text files, each encoded as one text")->required()->check(CLI::ExistingFile);
  cmd->add_option("--name", o->name, "Name of the row (default: tokenize)");
  cmd->add_flag("--lines", o->lines, "Encode each line (with its newline) as one text instead of each file");
  cmd->add_flag("--json", o->json, "One JSON object per line");
  cmd->callback([o] { run_bench(*o); });
}

}  // namespace
}  // namespace skiff::nlp

SKIFF_REGISTER_COMMAND("bench tokenize", skiff::nlp::add_bench_tokenize_command);
