// The work queue: bounded, batches requests of one kind, drops what expired,
// and drains on shutdown.
#include "framework/serve/work_queue.h"

#include <gtest/gtest.h>

#include "tests/framework/serve/gate_endpoint.h"

namespace skiff::serve {
namespace {

using testing::GateEndpoint;

std::shared_ptr<Job> make_job(const Endpoint& ep, int value, std::string key = "", Clock::time_point deadline = Clock::time_point::max()) {
  auto job = std::make_shared<Job>();
  job->endpoint = &ep;
  job->call.request = {{"value", value}};
  job->batch_key = std::move(key);
  job->deadline = deadline;
  return job;
}

TEST(WorkQueue, RefusesPastItsCapacity) {
  GateEndpoint gate(/*open=*/false);
  WorkQueue queue({.workers = 1, .capacity = 2, .max_batch = 1}, nullptr);
  auto running = make_job(gate, 0);
  ASSERT_TRUE(queue.push(running));
  gate.wait_running(1);  // the worker holds it; the queue is empty again
  EXPECT_TRUE(queue.push(make_job(gate, 1)));
  EXPECT_TRUE(queue.push(make_job(gate, 2)));
  EXPECT_FALSE(queue.push(make_job(gate, 3)));
  EXPECT_EQ(queue.depth(), 2u);
  gate.open();
  queue.shutdown();
  EXPECT_EQ(running->call.result["echo"], 0);
}

TEST(WorkQueue, BatchesJobsOfOneKindUpToTheLimit) {
  GateEndpoint gate(/*open=*/false);
  Metrics metrics;
  WorkQueue queue({.workers = 1, .capacity = 64, .max_batch = 3, .max_wait = std::chrono::microseconds(0)}, &metrics);
  ASSERT_TRUE(queue.push(make_job(gate, -1)));  // holds the worker while the others queue up
  gate.wait_running(1);
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(make_job(gate, i, "a"));
  jobs.push_back(make_job(gate, 5, "b"));
  jobs.push_back(make_job(gate, 6, ""));  // unbatchable: runs alone
  for (auto& j : jobs) ASSERT_TRUE(queue.push(j));
  gate.open();
  queue.shutdown();
  // -1 alone; then "a" x3, "a" x2, "b", and the keyless one.
  std::vector<size_t> sizes = gate.batch_sizes();
  std::sort(sizes.begin() + 1, sizes.end());
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 1, 1, 2, 3}));
  for (int i = 0; i < 7; ++i) EXPECT_EQ(jobs[i]->call.result["echo"], i);
  EXPECT_NE(metrics.prometheus_text(64, 1).find("skiff_batched_calls_total 8"), std::string::npos);
}

TEST(WorkQueue, WaitsBrieflyToFillABatch) {
  GateEndpoint gate;
  WorkQueue queue({.workers = 1, .capacity = 64, .max_batch = 4, .max_wait = std::chrono::milliseconds(500)}, nullptr);
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 4; ++i) {
    jobs.push_back(make_job(gate, i, "k"));
    ASSERT_TRUE(queue.push(jobs.back()));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // arrive one by one
  }
  for (auto& j : jobs) ASSERT_TRUE(j->wait_until(Clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(gate.batch_sizes(), (std::vector<size_t>{4}));
}

TEST(WorkQueue, DropsJobsWhoseDeadlinePassedUnrun) {
  GateEndpoint gate(/*open=*/false);
  WorkQueue queue({.workers = 1, .capacity = 8, .max_batch = 1}, nullptr);
  ASSERT_TRUE(queue.push(make_job(gate, 0)));
  gate.wait_running(1);
  auto late = make_job(gate, 1, "", Clock::now() + std::chrono::milliseconds(1));
  ASSERT_TRUE(queue.push(late));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  gate.open();
  ASSERT_TRUE(late->wait_until(Clock::now() + std::chrono::seconds(10)));
  EXPECT_TRUE(late->expired());
  EXPECT_TRUE(late->call.result.is_null());
  queue.shutdown();
  EXPECT_EQ(gate.batch_sizes().size(), 1u);  // only the first ran
}

TEST(WorkQueue, AFailureFailsItsBatchOnly) {
  GateEndpoint gate;
  WorkQueue queue({.workers = 1, .capacity = 8, .max_batch = 1}, nullptr);
  auto bad = make_job(gate, 0);
  bad->call.request["fail"] = true;
  auto good = make_job(gate, 1);
  ASSERT_TRUE(queue.push(bad));
  ASSERT_TRUE(queue.push(good));
  queue.shutdown();
  ASSERT_TRUE(bad->error());
  EXPECT_THROW(std::rethrow_exception(bad->error()), ValueError);
  EXPECT_FALSE(good->error());
  EXPECT_EQ(good->call.result["echo"], 1);
}

TEST(WorkQueue, ShutdownRunsWhatIsQueuedThenRefuses) {
  GateEndpoint gate;
  WorkQueue queue({.workers = 2, .capacity = 64, .max_batch = 1}, nullptr);
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 20; ++i) {
    jobs.push_back(make_job(gate, i));
    ASSERT_TRUE(queue.push(jobs.back()));
  }
  queue.shutdown();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(jobs[i]->call.result["echo"], i);
  EXPECT_FALSE(queue.push(make_job(gate, 99)));
}

}  // namespace
}  // namespace skiff::serve
