// The HTTP server end to end on 127.0.0.1: a real model behind /v1/models, the
// envelope on every answer, the status codes of each failure, batching, metrics,
// streaming and a graceful stop.
#include "framework/serve/server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <future>
#include <thread>

#include "framework/engine/predictor.h"
#include "framework/serve/model_endpoint.h"
#include "tests/framework/serve/affine_graph.h"
#include "tests/framework/serve/gate_endpoint.h"

namespace skiff::serve {
namespace {

using nlohmann::json;
using testing::GateEndpoint;

std::shared_ptr<const engine::Predictor> affine_model(bool dynamic_batch = true) {
  return std::make_shared<const engine::Predictor>(testing::affine_graph(dynamic_batch));
}

/// A server on a free port, serving on its own thread for the test's lifetime.
class RunningServer {
 public:
  explicit RunningServer(ServerOptions options, std::function<void(Server&)> setup) {
    options.port = 0;
    options.access_log = false;
    server_ = std::make_unique<Server>(options);
    setup(*server_);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->serve(); });
    for (int i = 0; i < 500 && !server_->running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~RunningServer() {
    server_->stop();
    thread_.join();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(30, 0);
    return c;
  }
  Server& server() { return *server_; }
  void join() { thread_.join(); }

 private:
  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::thread thread_;
};

json post(const httplib::Client& c_, const std::string& path, const std::string& body, int* status = nullptr) {
  auto& c = const_cast<httplib::Client&>(c_);
  auto res = c.Post(path.c_str(), body, "application/json");
  EXPECT_TRUE(res) << "no response to " << path;
  if (!res) return json();
  if (status) *status = res->status;
  return json::parse(res->body);
}

json predict_body(std::vector<float> rows) {
  return {{"inputs", {{"x", {{"shape", {int64_t(rows.size() / 3), 3}}, {"data", rows}}}}}};
}

TEST(Server, PredictAnswersInTheEnvelope) {
  RunningServer s({}, [](Server& srv) { srv.add_model("affine", make_model_endpoint(affine_model(), "affine")); });
  int status = 0;
  json r = post(s.client(), "/v1/models/affine:predict", predict_body({1, 2, 3, 0, 0, 0}).dump(), &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(r["errorCode"], 0);
  EXPECT_EQ(r["errorMsg"], "Success");
  EXPECT_EQ(r["logId"].get<std::string>().size(), 24u);
  EXPECT_EQ(r["result"]["outputs"]["y"]["shape"], json({2, 2}));
  EXPECT_EQ(r["result"]["outputs"]["y"]["data"], json({14.0, 25.0, 10.0, 20.0}));
  // Raw bytes on request.
  json body = predict_body({1, 2, 3});
  body["binary"] = true;
  r = post(s.client(), "/v1/models/affine:predict", body.dump());
  EXPECT_TRUE(r["result"]["outputs"]["y"].contains("b64"));
  // What is served.
  auto res = s.client().Get("/v1/endpoints");
  ASSERT_TRUE(res);
  json e = json::parse(res->body)["result"];
  EXPECT_EQ(e["models"]["affine"]["inputs"][0]["name"], "x");
  EXPECT_EQ(e["models"]["affine"]["batching"], true);
}

TEST(Server, BadRequestsAre400AndNameTheField) {
  RunningServer s({}, [](Server& srv) { srv.add_model("affine", make_model_endpoint(affine_model(), "affine")); });
  auto expect_400 = [&](const std::string& body, const std::string& part) {
    int status = 0;
    json r = post(s.client(), "/v1/models/affine:predict", body, &status);
    EXPECT_EQ(status, 400) << body;
    EXPECT_EQ(r["errorCode"], 400);
    EXPECT_NE(r["errorMsg"].get<std::string>().find(part), std::string::npos) << r["errorMsg"];
    EXPECT_TRUE(r["result"].is_null());
  };
  expect_400("{not json", "the request body is not JSON");
  expect_400("{}", "inputs: required");
  expect_400(R"({"inputs": {"z": {"shape": [1], "data": [1]}}})", "inputs.z: the model has no such input");
  expect_400(R"({"inputs": {"x": {"shape": [1, 3], "data": [1, 2]}}})", "inputs.x.data: 2 values");
  expect_400(R"({"inputs": {"x": {"shape": [1, 4], "data": [1, 2, 3, 4]}}})", "'x'");  // the Predictor's shape check
  expect_400(R"({"inputs": {}, "extra": 1})", "unknown field 'extra'");
}

TEST(Server, UnknownRoutesAndModelsAre404WithTheEnvelope) {
  RunningServer s({}, [](Server& srv) { srv.add_model("affine", make_model_endpoint(affine_model(), "affine")); });
  int status = 0;
  json r = post(s.client(), "/v1/models/afine:predict", "{}", &status);
  EXPECT_EQ(status, 404);
  EXPECT_NE(r["errorMsg"].get<std::string>().find("did you mean 'affine'?"), std::string::npos);
  auto res = s.client().Get("/nothing/here");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(json::parse(res->body)["errorCode"], 404);
}

TEST(Server, OversizedBodiesAre413) {
  ServerOptions o;
  o.max_body_bytes = 1024;
  RunningServer s(o, [](Server& srv) { srv.add_model("affine", make_model_endpoint(affine_model(), "affine")); });
  int status = 0;
  json r = post(s.client(), "/v1/models/affine:predict", std::string(4096, ' '), &status);
  EXPECT_EQ(status, 413);
  EXPECT_EQ(r["errorCode"], 413);
  // A JSON body of several KiB under the limit is fine, whatever content type the client names.
  ServerOptions big;
  RunningServer t(big, [](Server& srv) { srv.add_model("affine", make_model_endpoint(affine_model(), "affine")); });
  std::vector<float> rows(3 * 1000, 1.0f);
  auto res = t.client().Post("/v1/models/affine:predict", predict_body(rows).dump(), "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body.substr(0, 200);
}

TEST(Server, AFullQueueIs503AndASlowAnswer504) {
  ServerOptions o;
  o.workers = 1;
  o.queue_capacity = 1;
  o.timeout_s = 0.3;
  GateEndpoint* gate = nullptr;
  RunningServer s(o, [&](Server& srv) {
    auto g = std::make_unique<GateEndpoint>(/*open=*/false);
    gate = g.get();
    srv.add_endpoint("gate", std::move(g));
  });
  auto first = std::async(std::launch::async, [&] { int st = 0; post(s.client(), "/gate", R"({"value": 1})", &st); return st; });
  gate->wait_running(1);
  auto second = std::async(std::launch::async, [&] { int st = 0; post(s.client(), "/gate", R"({"value": 2})", &st); return st; });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the second waits in the queue
  int status = 0;
  json r = post(s.client(), "/gate", R"({"value": 3})", &status);
  EXPECT_EQ(status, 503);
  EXPECT_NE(r["errorMsg"].get<std::string>().find("busy"), std::string::npos);
  EXPECT_EQ(first.get(), 504);
  EXPECT_EQ(second.get(), 504);
  gate->open();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the worker drops the expired second
  // The server goes on serving once the work is done.
  EXPECT_EQ(post(s.client(), "/gate", R"({"value": 4, "fail": true})", &status)["errorCode"], 400);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto res = s.client().Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("skiff_requests_total{route=\"gate\",code=\"503\"} 1"), std::string::npos) << res->body;
  EXPECT_NE(res->body.find("skiff_requests_total{route=\"gate\",code=\"504\"} 2"), std::string::npos) << res->body;
  EXPECT_NE(res->body.find("skiff_request_duration_seconds_count{route=\"gate\"} 4"), std::string::npos) << res->body;
}

TEST(Server, ConcurrentPredictionsAreBatchedAndEachGetsItsOwnRows) {
  ServerOptions o;
  o.workers = 1;
  o.max_batch = 8;
  o.max_wait_ms = 200;
  RunningServer s(o, [](Server& srv) { srv.add_model("affine", make_model_endpoint(affine_model(), "affine")); });
  std::vector<std::future<json>> answers;
  for (int i = 0; i < 6; ++i)
    answers.push_back(std::async(std::launch::async, [&, i] {
      return post(s.client(), "/v1/models/affine:predict", predict_body({float(i), 0, 0}).dump());
    }));
  for (int i = 0; i < 6; ++i) {
    json r = answers[i].get();
    EXPECT_EQ(r["result"]["outputs"]["y"]["data"], json({10.0 + i, 20.0})) << i;
  }
  auto res = s.client().Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("skiff_batched_calls_total 6"), std::string::npos) << res->body;
  EXPECT_EQ(res->body.find("skiff_batches_total 6"), std::string::npos) << "nothing was batched:\n" << res->body;
}

TEST(Server, AFixedBatchModelRunsRequestsOneByOne) {
  RunningServer s({}, [](Server& srv) { srv.add_model("one", make_model_endpoint(affine_model(false), "one")); });
  json r = post(s.client(), "/v1/models/one:predict", predict_body({1, 1, 1}).dump());
  EXPECT_EQ(r["result"]["outputs"]["y"]["data"], json({12.0, 22.0}));
  auto res = s.client().Get("/v1/endpoints");
  EXPECT_EQ(json::parse(res->body)["result"]["models"]["one"]["batching"], false);
}

TEST(Server, StreamsEventsThenTheEnvelope) {
  RunningServer s({}, [](Server& srv) { srv.add_endpoint("gate", std::make_unique<GateEndpoint>()); });
  auto res = s.client().Post("/gate", R"({"value": 7, "stream": true})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  std::vector<json> events;
  for (size_t at = 0; (at = res->body.find("data: ", at)) != std::string::npos;) {
    const size_t end = res->body.find("\n\n", at);
    events.push_back(json::parse(res->body.substr(at + 6, end - at - 6)));
    at = end;
  }
  ASSERT_EQ(events.size(), 4u) << res->body;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(events[i]["token"], i);
  EXPECT_EQ(events[3]["errorCode"], 0);
  EXPECT_EQ(events[3]["result"]["echo"], 7);
}

TEST(Server, DemoPagesComeFromMemoryAndNothingElse) {
  RunningServer s({}, [](Server& srv) { srv.add_endpoint("gate", std::make_unique<GateEndpoint>()); });
  auto page = s.client().Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  for (const char* asset : {"/static/app.js", "/static/style.css"}) {
    EXPECT_NE(page->body.find(asset), std::string::npos) << asset;
    auto res = s.client().Get(asset);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << asset;
    EXPECT_GT(res->body.size(), 500u) << asset;
  }
  EXPECT_EQ(s.client().Get("/static/app.js")->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  // Only embedded names: no traversal, no other files.
  for (const char* path : {"/static/nope.js", "/static/..%2f..%2fetc%2fpasswd", "/static/../../etc/passwd", "/etc/passwd"}) {
    auto res = s.client().Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_EQ(res->body.find("root:"), std::string::npos) << path;
  }
  ServerOptions api_only;
  api_only.web_ui = false;
  RunningServer t(api_only, [](Server& srv) { srv.add_endpoint("gate", std::make_unique<GateEndpoint>()); });
  EXPECT_EQ(t.client().Get("/")->status, 404);
}

TEST(Server, StopFinishesTheRequestsInFlight) {
  GateEndpoint* gate = nullptr;
  auto srv = std::make_unique<RunningServer>(ServerOptions{}, [&](Server& server) {
    auto g = std::make_unique<GateEndpoint>(/*open=*/false);
    gate = g.get();
    server.add_endpoint("gate", std::move(g));
  });
  auto answer = std::async(std::launch::async, [&] { int st = 0; json r = post(srv->client(), "/gate", R"({"value": 5})", &st); return std::make_pair(st, r); });
  gate->wait_running(1);
  std::thread stopper([&] { srv->server().stop(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  gate->open();
  auto [status, r] = answer.get();
  stopper.join();
  EXPECT_EQ(status, 200);
  EXPECT_EQ(r["result"]["echo"], 5);
  // New connections are refused once it has stopped.
  auto res = srv->client().Get("/health");
  EXPECT_FALSE(res);
}

}  // namespace
}  // namespace skiff::serve
