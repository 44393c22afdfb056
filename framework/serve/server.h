#pragma once
/// \file server.h
/// `skiff serve`: HTTP over cpp-httplib in front of the work queue.
///
///   POST /<endpoint>                  a registered endpoint (/ocr, /det, ...), PaddleX
///                                     serving's layout: {"file": ..., "fileType": 1} ->
///                                     {"logId", "errorCode", "errorMsg", "result"}
///   POST /v1/models/<name>:predict    one model's raw tensors (model_endpoint.h)
///   GET  /v1/endpoints                what is served, with each model's inputs and outputs
///   GET  /health                      200 while serving
///   GET  /metrics                     Prometheus text (metrics.h)
///   GET  /                            the demo pages: try each endpoint in a browser
///
/// Every answer, errors included, has the envelope; errorCode is the HTTP status
/// (0 on success): 400 malformed request (the message names the field), 404 no such
/// endpoint or model, 413 body over the limit, 503 queue full, 504 no answer in time,
/// 500 a failure in skiff. Streaming endpoints answer with server-sent events whose
/// last event is the envelope. stop() stops accepting connections, lets the requests
/// already received finish, and serve() returns.

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "framework/serve/endpoint.h"
#include "framework/serve/metrics.h"
#include "framework/serve/work_queue.h"

namespace httplib {
class Server;
struct Request;
struct Response;
class ContentReader;
}  // namespace httplib

namespace skiff::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  ///< 0: any free port (bind() returns it)
  int workers = 1;
  int threads = 0;  ///< OpenMP threads shared by the workers; 0: num_threads()
  size_t queue_capacity = 64;
  size_t max_batch = 8;
  double max_wait_ms = 2;
  size_t max_body_bytes = size_t(48) << 20;
  double timeout_s = 60;       ///< from arrival to answer; 504 after
  double read_timeout_s = 10;  ///< a connection silent this long while sending is closed
  int http_threads = 0;        ///< connections handled at once; 0: queue capacity + workers + 8
  bool access_log = true;      ///< one line per request on stderr
  bool web_ui = true;          ///< the demo pages at / (framework/serve/web/)
  RequestLimits limits;
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Serves `endpoint` at POST /<name>. Call before bind().
  void add_endpoint(const std::string& name, std::unique_ptr<Endpoint> endpoint);
  /// Serves a model endpoint at POST /v1/models/<name>:predict. Call before bind().
  void add_model(const std::string& name, std::unique_ptr<Endpoint> model);

  /// Binds the listening socket. Returns the port. \throws IoError when the address is taken.
  int bind();
  /// Serves until stop(); then finishes the requests in flight and returns.
  void serve();
  /// Stops serving (from any thread, e.g. one that caught SIGTERM).
  void stop();
  bool running() const;

  const Metrics& metrics() const { return metrics_; }
  const ServerOptions& options() const { return options_; }

 private:
  void add_routes();
  void handle(const std::string& route, const Endpoint& endpoint, const httplib::Request& req,
              httplib::Response& res, const httplib::ContentReader& content);
  void stream(const std::string& route, std::shared_ptr<Job> job, Clock::time_point start, std::string log_id,
              std::string client, std::string what, httplib::Response& res);
  /// Records a request in the metrics and, with access_log, prints
  /// "CLIENT WHAT STATUS TIME logId" (WHAT: "POST /ocr").
  void finish(const std::string& route, Clock::time_point start, int status, const std::string& log_id,
              const std::string& client, const std::string& what);
  std::string new_log_id();

  ServerOptions options_;
  Metrics metrics_;
  std::map<std::string, std::unique_ptr<Endpoint>> endpoints_, models_;
  std::unique_ptr<WorkQueue> queue_;
  std::unique_ptr<httplib::Server> http_;
  std::atomic<uint64_t> requests_{0};
  uint64_t log_id_seed_;
  bool bound_ = false;
};

/// The response envelope: {"logId", "errorCode", "errorMsg", "result"}.
nlohmann::json envelope(const std::string& log_id, int error_code, const std::string& message,
                        nlohmann::json result = nullptr);

}  // namespace skiff::serve
