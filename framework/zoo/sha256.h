#pragma once
/// \file sha256.h
/// Streaming SHA-256 (OpenSSL EVP underneath), used to verify every zoo file.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace skiff::zoo {

/// Incremental SHA-256: update() any number of times, then hex_digest() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t n);
  /// Finishes the hash and returns 64 lowercase hex digits. The object is spent afterwards.
  std::string hex_digest();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// SHA-256 of a whole file as lowercase hex.
/// \throws IoError when the file cannot be read.
std::string sha256_file(const std::filesystem::path& path);

/// SHA-256 of a byte string as lowercase hex.
std::string sha256_bytes(const std::string& bytes);

}  // namespace skiff::zoo
