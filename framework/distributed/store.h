#pragma once
/// \file store.h
/// The key-value store that ranks meet in before Gloo connects them (rendezvous).
/// Gloo ships a file store (needs a shared file system) and a Redis store (needs a
/// Redis server); training on one or several machines wants neither, so rank 0 hosts a
/// small HTTP store (cpp-httplib, which skiff serve already uses) at the master
/// address and every rank, rank 0 included, talks to it as a client. Only the
/// rendezvous goes through it: tensors travel on Gloo's own TCP pairs.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

namespace skiff::distributed {

/// An in-memory store served over HTTP: PUT /v1/store/KEY sets, GET returns the value
/// or 404. Stops when destroyed.
class StoreServer {
 public:
  /// Listens on host:port (port 0: a free port, see port()).
  /// \throws IoError naming the address when it cannot listen.
  StoreServer(const std::string& host, int port);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A client of StoreServer, as a Gloo store. wait() and get() poll until the keys
/// exist or `timeout` passes (then DistributedError naming the missing key and the address:
/// a rank that never arrived). A server that is not up yet is retried until then.
class HttpStore : public gloo::rendezvous::Store {
 public:
  HttpStore(std::string host, int port, std::chrono::milliseconds timeout);
  ~HttpStore() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skiff::distributed
