#include "suites/nlp/encoder/mail_corpus.h"

#include <algorithm>
#include <random>

#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/text/unicode.h"

namespace skiff::nlp {

namespace fs = std::filesystem;

namespace {

const char* const kGroups[] = {"easy-ham-1", "easy-ham-2", "hard-ham-1", "spam-1", "spam-2"};

bool starts_with_ci(std::string_view line, std::string_view prefix) {
  if (line.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

// The directory that holds the group directories, found from any of the accepted roots.
fs::path find_data_dir(const fs::path& root) {
  for (const fs::path& candidate : {root, root / "data", root / "package" / "data"})
    if (fs::is_directory(candidate / kGroups[0])) return candidate;
  SKIFF_THROW(IoError, "{}: no SpamAssassin data here (expected {}/ and the other group directories, or data/ or "
              "package/data/ holding them)", root.string(), kGroups[0]);
}

// Fisher-Yates with the raw 64-bit draws: std::shuffle's use of the engine is
// implementation-defined, and the split must not change with the standard library.
void shuffle(std::vector<Mail>& v, uint64_t seed) {
  std::mt19937_64 gen(seed);
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[size_t(gen() % i)]);
}

}  // namespace

std::string mail_text(const std::string& raw, size_t max_bytes) {
  std::string subject, body;
  size_t pos = 0;
  bool in_subject = false, headers_ended = false;
  while (pos < raw.size()) {
    size_t end = raw.find('\n', pos);
    if (end == std::string::npos) end = raw.size();
    std::string_view line(raw.data() + pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    if (line.empty()) {
      headers_ended = true;
      break;
    }
    if (in_subject && (line[0] == ' ' || line[0] == '\t')) {  // a folded continuation line
      const size_t first = line.find_first_not_of(" \t");
      if (first != std::string_view::npos) (subject += ' ') += line.substr(first);
      continue;
    }
    in_subject = starts_with_ci(line, "subject:");
    if (in_subject) {
      const size_t first = line.find_first_not_of(" \t", 8);
      subject = first == std::string_view::npos ? "" : std::string(line.substr(first));
    }
  }
  std::string out = subject;
  if (headers_ended && pos < raw.size()) {
    out += '\n';
    out.append(raw, pos, std::string::npos);
  }
  if (out.size() > max_bytes) {
    size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    out.resize(cut);
  }
  return text::to_valid_utf8(out);
}

bool looks_like_mail(std::string_view raw) {
  if (raw.starts_with("From ")) return true;
  // Two header lines in a row ("Name: value"; a folded line counts), as no prose starts.
  auto is_header = [](std::string_view line) {
    if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) return true;
    const size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos || colon > 64) return false;
    for (size_t i = 0; i < colon; ++i)
      if (!(std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '-')) return false;
    return true;
  };
  const size_t end1 = raw.find('\n');
  if (end1 == std::string_view::npos) return false;
  const size_t end2 = raw.find('\n', end1 + 1);
  std::string_view first = raw.substr(0, end1);
  std::string_view second = raw.substr(end1 + 1, end2 == std::string_view::npos ? std::string_view::npos : end2 - end1 - 1);
  return !first.starts_with(' ') && is_header(first) && !second.empty() && is_header(second);
}

std::vector<Mail> read_spam_assassin(const fs::path& root, size_t max_bytes) {
  const fs::path dir = find_data_dir(root);
  std::vector<Mail> mails;
  for (const char* group : kGroups) {
    SKIFF_CHECK_T(IoError, fs::is_directory(dir / group), "{}: missing the group directory {}/", dir.string(), group);
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir / group))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    const int label = std::string_view(group).starts_with("spam") ? 1 : 0;
    for (const fs::path& f : files) {
      auto j = nlohmann::json::parse(io::read_file(f), nullptr, false);
      SKIFF_CHECK(!j.is_discarded() && j.is_object() && j.contains("text") && j["text"].is_string(),
                  "{}: expected a JSON object with a string field 'text'", f.string());
      mails.push_back(Mail{std::string(group) + "/" + f.filename().string(),
                           mail_text(j["text"].get<std::string>(), max_bytes), label});
    }
  }
  return mails;
}

CorpusSplit split_corpus(std::vector<Mail> mails, double eval_share, uint64_t seed) {
  SKIFF_CHECK(eval_share > 0 && eval_share < 1, "split_corpus: eval_share must be in (0, 1), got {}", eval_share);
  CorpusSplit s;
  for (int label : {0, 1}) {
    std::vector<Mail> one;
    for (Mail& m : mails)
      if (m.label == label) one.push_back(std::move(m));
    shuffle(one, seed + uint64_t(label));
    const size_t held = size_t(double(one.size()) * eval_share + 0.5);
    for (size_t i = 0; i < one.size(); ++i) (i < held ? s.eval : s.train).push_back(std::move(one[i]));
  }
  // Labels interleaved by a seeded shuffle, so batches drawn in order are mixed.
  shuffle(s.train, seed ^ 0x9e3779b97f4a7c15ULL);
  return s;
}

}  // namespace skiff::nlp
