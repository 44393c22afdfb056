#include "framework/distributed/store.h"

#include <httplib.h>

#include <map>
#include <mutex>
#include <thread>

#include "framework/core/error.h"

namespace skiff::distributed {
namespace {

// Keys go into the URL as hex: Gloo's keys contain '/' (PrefixStore) and could contain
// anything else.
std::string hex_key(const std::string& key) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(key.size() * 2);
  for (unsigned char c : key) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

}  // namespace

struct StoreServer::Impl {
  httplib::Server server;
  std::mutex mu;
  std::map<std::string, std::string> values;
  std::thread thread;
  int port = 0;
};

StoreServer::StoreServer(const std::string& host, int port) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.server.Put(R"(/v1/store/([0-9a-f]+))", [&s](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(s.mu);
    s.values[req.matches[1]] = req.body;
    res.status = 204;
  });
  s.server.Get(R"(/v1/store/([0-9a-f]+))", [&s](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.values.find(req.matches[1]);
    if (it == s.values.end()) {
      res.status = 404;
      return;
    }
    res.set_content(it->second, "application/octet-stream");
  });
  if (port == 0) {
    s.port = s.server.bind_to_any_port(host);
  } else {
    s.port = s.server.bind_to_port(host, port) ? port : -1;
  }
  if (s.port <= 0)
    SKIFF_THROW(IoError, "distributed: rank 0 cannot listen on {}:{} for the rendezvous store (is the port in use? "
                "choose another with --master or SKIFF_MASTER_PORT)", host, port);
  s.thread = std::thread([&s] { s.server.listen_after_bind(); });
}

StoreServer::~StoreServer() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int StoreServer::port() const { return impl_->port; }

struct HttpStore::Impl {
  std::string host;
  int port;
  std::chrono::milliseconds timeout;
  httplib::Client client;
  Impl(std::string h, int p, std::chrono::milliseconds t) : host(std::move(h)), port(p), timeout(t), client(host, port) {
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(10, 0);
    client.set_keep_alive(true);
  }
  std::string where() const { return host + ":" + std::to_string(port); }
};

HttpStore::HttpStore(std::string host, int port, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>(std::move(host), port, timeout)) {}

HttpStore::~HttpStore() = default;

void HttpStore::set(const std::string& key, const std::vector<char>& data) {
  const auto deadline = std::chrono::steady_clock::now() + impl_->timeout;
  const std::string path = "/v1/store/" + hex_key(key);
  while (true) {
    auto res = impl_->client.Put(path, std::string(data.begin(), data.end()), "application/octet-stream");
    if (res && res->status == 204) return;
    // Rank 0's store may not be listening yet: retry until the timeout.
    if (std::chrono::steady_clock::now() > deadline)
      SKIFF_THROW(DistributedError, "distributed: cannot reach the rendezvous store at {} (is rank 0 running, and are "
                  "SKIFF_MASTER_ADDR/SKIFF_MASTER_PORT right?)", impl_->where());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<char> HttpStore::get(const std::string& key) {
  wait({key});
  auto res = impl_->client.Get("/v1/store/" + hex_key(key));
  if (!res || res->status != 200)
    SKIFF_THROW(DistributedError, "distributed: the rendezvous store at {} lost key '{}'", impl_->where(), key);
  return std::vector<char>(res->body.begin(), res->body.end());
}

void HttpStore::wait(const std::vector<std::string>& keys) { wait(keys, impl_->timeout); }

void HttpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto sleep = std::chrono::milliseconds(5);
  for (const auto& key : keys) {
    const std::string path = "/v1/store/" + hex_key(key);
    while (true) {
      auto res = impl_->client.Get(path);
      if (res && res->status == 200) break;
      if (std::chrono::steady_clock::now() > deadline)
        SKIFF_THROW(DistributedError, "distributed: timed out after {} s waiting for '{}' in the rendezvous store at {}: a "
                    "rank did not start or did not reach this point (see its log)",
                    std::chrono::duration_cast<std::chrono::seconds>(timeout).count(), key, impl_->where());
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::milliseconds(200));
    }
  }
}

}  // namespace skiff::distributed
