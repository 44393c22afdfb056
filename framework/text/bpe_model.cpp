#include "framework/text/bpe_model.h"

#include <algorithm>
#include <climits>
#include <queue>

#include "framework/core/error.h"
#include "framework/text/unicode.h"

namespace skiff::text {

namespace {

struct ByteTables {
  char32_t to_char[256];
  int16_t to_byte[324];  // code points < 324 cover the whole alphabet
  ByteTables() {
    std::fill(std::begin(to_byte), std::end(to_byte), int16_t(-1));
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      to_char[b] = printable ? char32_t(b) : next++;
      to_byte[to_char[b]] = int16_t(b);
    }
  }
};

const ByteTables& byte_tables() {
  static const ByteTables tables;
  return tables;
}

constexpr size_t kScanMaxSymbols = 64;

}  // namespace

char32_t byte_to_char(uint8_t b) { return byte_tables().to_char[b]; }

int char_to_byte(char32_t cp) { return cp < 324 ? byte_tables().to_byte[cp] : -1; }

BpeModel::BpeModel(Vocab vocab, const std::vector<MergeRule>& merges, const std::function<std::string(size_t)>& where,
                   const std::string& source, bool ignore_merges)
    : BpeModel(std::move(vocab), merges, where, source, BpeOptions{.ignore_merges = ignore_merges}) {}

BpeModel::BpeModel(Vocab vocab, const std::vector<MergeRule>& merges, const std::function<std::string(size_t)>& where,
                   const std::string& source, const BpeOptions& options)
    : vocab_(std::move(vocab)), options_(options) {
  const bool bytes = options_.alphabet == BpeAlphabet::Bytes;
  int32_t max_id = -1;
  for (const auto& [token, id] : vocab_) {
    if (id < 0) SKIFF_THROW(ValueError, "{}: token '{}' has a negative id {}", source, token, id);
    max_id = std::max(max_id, id);
  }
  if (max_id > max_token_id(vocab_.size()))
    SKIFF_THROW(ValueError, "{}: token id {} is far beyond the vocabulary's {} tokens (at most {})", source, max_id,
                vocab_.size(), max_token_id(vocab_.size()));
  id_to_token_.resize(size_t(max_id) + 1);
  for (const auto& [token, id] : vocab_) {
    if (!id_to_token_[id].empty())
      SKIFF_THROW(ValueError, "{}: tokens '{}' and '{}' share the id {}", source, id_to_token_[id], token, id);
    id_to_token_[id] = token;
  }
  if (bytes) {
    for (int b = 0; b < 256; ++b) {
      std::string s;
      append_utf8(s, byte_to_char(uint8_t(b)));
      int32_t id = token_to_id(s);
      if (id < 0)
        SKIFF_THROW(ValueError,
                    "{}: the vocabulary has no token for byte 0x{:02X} ('{}'); a byte-level BPE needs all 256",
                    source, b, s);
      byte_ids_[b] = id;
    }
  } else {
    for (int b = 0; b < 256; ++b) byte_ids_[b] = options_.byte_fallback ? token_to_id(fmt::format("<0x{:02X}>", b)) : -1;
    bmp_char_ids_.assign(0x10000, -1);
    for (const auto& [token, id] : vocab_) {
      check_utf8(token, fmt::format("{}: token {}", source, id));
      size_t pos = 0;
      char32_t cp = next_code_point(token, pos);
      if (pos != token.size()) continue;  // not a single code point
      if (cp < 0x10000) bmp_char_ids_[cp] = id;
      else astral_char_ids_[cp] = id;
    }
    if (!options_.unk_token.empty()) {
      unk_id_ = token_to_id(options_.unk_token);
      if (unk_id_ < 0)
        SKIFF_THROW(ValueError, "{}: the unknown token '{}' is not in the vocabulary", source, options_.unk_token);
    }
  }
  byte_length_.resize(id_to_token_.size());
  std::string text;
  for (size_t id = 0; id < id_to_token_.size(); ++id) {
    if (id_to_token_[id].empty()) continue;
    text.clear();
    append_token_bytes(int32_t(id), text);
    byte_length_[id] = int32_t(text.size());
  }
  merges_.reserve(merges.size());
  std::string joined;
  for (size_t i = 0; i < merges.size(); ++i) {
    const MergeRule& m = merges[i];
    int32_t left = token_to_id(m.left), right = token_to_id(m.right);
    if (left < 0)
      SKIFF_THROW(ValueError, "{}: merge '{} {}': '{}' is not in the vocabulary", where(i), m.left, m.right, m.left);
    if (right < 0)
      SKIFF_THROW(ValueError, "{}: merge '{} {}': '{}' is not in the vocabulary", where(i), m.left, m.right, m.right);
    joined.assign(m.left).append(m.right);
    int32_t id = token_to_id(joined);
    if (id < 0)
      SKIFF_THROW(ValueError, "{}: merge '{} {}': the result '{}' is not in the vocabulary", where(i), m.left, m.right,
                  joined);
    // A repeated rule keeps its first (best) rank, as in the references.
    merges_.try_emplace((uint64_t(uint32_t(left)) << 32) | uint32_t(right), Merge{int32_t(i), id});
  }
}

BpeModel::~BpeModel() = default;

int32_t BpeModel::token_to_id(std::string_view token) const {
  auto it = vocab_.find(token);
  return it == vocab_.end() ? -1 : it->second;
}

const std::string& BpeModel::id_to_token(int32_t id) const {
  SKIFF_CHECK_INDEX(id >= 0 && size_t(id) < id_to_token_.size() && !id_to_token_[id].empty(),
                    "BPE: expected a token id in [0, {}), got {}", id_to_token_.size(), id);
  return id_to_token_[id];
}

void BpeModel::append_token_bytes(int32_t id, std::string& out) const {
  const std::string& token = id_to_token(id);
  if (options_.alphabet == BpeAlphabet::Characters) {
    int byte = byte_fallback_value(token);
    if (byte >= 0) out.push_back(char(byte));
    else out.append(token);
    return;
  }
  for (size_t pos = 0; pos < token.size();) {
    size_t start = pos;
    int b = char_to_byte(next_code_point(token, pos));
    if (b >= 0) out.push_back(char(b));
    else out.append(token, start, pos - start);  // not from the byte alphabet: as written
  }
}

void BpeModel::clear_cache() const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  cache_.clear();
}

void BpeModel::merge(std::vector<int32_t>& symbols, bool use_heap) const {
  if (use_heap) merge_heap(symbols);
  else merge_scan(symbols);
}

void BpeModel::merge_scan(std::vector<int32_t>& s) const {
  if (s.size() < 2) return;
  // The merge of each adjacent pair, looked up once and again only for the two pairs a
  // merge changes: O(n) hash lookups per word instead of O(n) per merge.
  constexpr Merge kNone{INT32_MAX, -1};
  std::vector<Merge> pairs(s.size() - 1);
  auto lookup = [&](size_t i) {
    const Merge* m = find_merge(s[i], s[i + 1]);
    return m ? *m : kNone;
  };
  for (size_t i = 0; i + 1 < s.size(); ++i) pairs[i] = lookup(i);
  while (!pairs.empty()) {
    size_t best = 0;
    for (size_t i = 1; i < pairs.size(); ++i)
      if (pairs[i].rank < pairs[best].rank) best = i;
    if (pairs[best].id < 0) break;
    s[best] = pairs[best].id;
    s.erase(s.begin() + std::ptrdiff_t(best) + 1);
    pairs.erase(pairs.begin() + std::ptrdiff_t(best));
    if (best > 0) pairs[best - 1] = lookup(best - 1);
    if (best < pairs.size()) pairs[best] = lookup(best);
  }
}

void BpeModel::merge_heap(std::vector<int32_t>& s) const {
  const int32_t n = int32_t(s.size());
  if (n < 2) return;
  std::vector<int32_t> prev(n), next(n);
  for (int32_t i = 0; i < n; ++i) prev[i] = i - 1, next[i] = i + 1 < n ? i + 1 : -1;
  // (rank, position of the left symbol): the lowest rank, then the leftmost.
  struct Candidate {
    int32_t rank, pos, left, right, id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto consider = [&](int32_t p) {
    if (p < 0 || next[p] < 0) return;
    if (const Merge* m = find_merge(s[p], s[next[p]])) heap.push({m->rank, p, s[p], s[next[p]], m->id});
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i);
  std::vector<bool> alive(n, true);
  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    // Stale entries: a symbol only ever grows, so an entry whose two symbols are
    // still in place describes a pair that exists now.
    if (!alive[c.pos] || s[c.pos] != c.left || next[c.pos] < 0 || s[next[c.pos]] != c.right) continue;
    int32_t q = next[c.pos];
    s[c.pos] = c.id;
    alive[q] = false;
    next[c.pos] = next[q];
    if (next[q] >= 0) prev[next[q]] = c.pos;
    consider(prev[c.pos]);
    consider(c.pos);
  }
  std::vector<int32_t> out;
  for (int32_t i = 0; i >= 0; i = next[i]) out.push_back(s[i]);
  s.swap(out);
}

void BpeModel::char_symbols(std::string_view word, std::vector<int32_t>& symbols) const {
  for (size_t pos = 0; pos < word.size();) {
    const size_t start = pos;
    char32_t cp = next_code_point(word, pos);
    int32_t id = -1;
    if (cp < 0x10000) {
      id = bmp_char_ids_[cp];
    } else if (auto it = astral_char_ids_.find(cp); it != astral_char_ids_.end()) {
      id = it->second;
    }
    symbols.push_back(id >= 0 ? id : -1 - int32_t(start));
  }
}

void BpeModel::resolve_symbols(std::string_view word, const std::vector<int32_t>& symbols, std::vector<int32_t>& ids,
                               std::vector<uint32_t>* lengths) const {
  for (int32_t s : symbols) {
    if (s >= 0) {
      ids.push_back(s);
      if (lengths) lengths->push_back(uint32_t(byte_length_[size_t(s)]));
      continue;
    }
    // A code point without a token: its bytes as <0xNN> tokens when all exist (as the
    // references check), else the unknown token.
    const size_t start = size_t(-1 - s);
    size_t end = start;
    next_code_point(word, end);
    bool all = options_.byte_fallback;
    for (size_t b = start; all && b < end; ++b) all = byte_ids_[uint8_t(word[b])] >= 0;
    if (all) {
      for (size_t b = start; b < end; ++b) {
        ids.push_back(byte_ids_[uint8_t(word[b])]);
        if (lengths) lengths->push_back(1);
      }
      continue;
    }
    if (unk_id_ < 0)
      SKIFF_THROW(ValueError, "BPE: '{}' has no token, no byte tokens and the model has no unknown token",
                  word.substr(start, end - start));
    ids.push_back(unk_id_);
    if (lengths) lengths->push_back(uint32_t(end - start));
  }
}

void BpeModel::encode_word(std::string_view bytes, std::vector<int32_t>& ids, std::vector<uint32_t>* lengths) const {
  if (bytes.empty()) return;
  // Lengths are wanted for offsets only (not the hot path): computed afresh, not cached.
  const bool cacheable = bytes.size() < kMaxCachedWord && lengths == nullptr;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(bytes);
    if (it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const bool chars = options_.alphabet == BpeAlphabet::Characters;
  std::vector<int32_t> symbols;
  if (options_.ignore_merges) {
    if (chars) {
      if (int32_t id = token_to_id(bytes); id >= 0) symbols.push_back(id);
    } else {
      std::string token;
      for (char c : bytes) append_utf8(token, byte_to_char(uint8_t(c)));
      if (int32_t id = token_to_id(token); id >= 0) symbols.push_back(id);
    }
  }
  if (symbols.empty()) {
    symbols.reserve(bytes.size());
    if (chars) char_symbols(bytes, symbols);
    else for (char c : bytes) symbols.push_back(byte_ids_[uint8_t(c)]);
    merge(symbols, symbols.size() > kScanMaxSymbols);
  }
  if (chars) {
    std::vector<int32_t> resolved;
    resolve_symbols(bytes, symbols, resolved, lengths);
    symbols.swap(resolved);
  } else if (lengths) {
    for (int32_t id : symbols) lengths->push_back(uint32_t(byte_length_[size_t(id)]));
  }
  ids.insert(ids.end(), symbols.begin(), symbols.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.size() >= kCacheCapacity) cache_.clear();
    cache_.emplace(std::string(bytes), std::move(symbols));
  }
}

int byte_fallback_value(std::string_view token) {
  if (token.size() != 6 || !token.starts_with("<0x") || token[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  int hi = hex(token[3]), lo = hex(token[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

}  // namespace skiff::text
