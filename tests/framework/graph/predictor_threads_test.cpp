// engine::Predictor is documented thread-safe with per-shape state built on first use
// (oneDNN plans, reordered weights, blocked layouts). Here many threads make the very
// first call of a new input shape at the same moment, with no warm-up, and every
// result must equal the single-threaded result bit for bit (same thread count), which
// itself matches the unoptimised graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "framework/core/rng.h"
#include "framework/engine/predictor.h"
#include "framework/ops/ops.h"
#include "tests/framework/graph/concurrent_runs.h"
#include "tests/framework/graph/graph_builder.h"

namespace skiff::graph {
namespace {

using testing::GraphBuilder;

// conv 3x3 + relu -> depthwise conv 3x3 + hardswish -> conv 1x1 + residual add -> max pool:
// fused convolutions (with a sum post-op), a channel-blocked chain and reordered weights.
Graph block_graph() {
  Generator gen(30);
  GraphBuilder b(13);
  b.input("x", {-1, 8, -1, -1});
  b.init("w1", mul(randn({16, 8, 3, 3}, DType::Float32, &gen), 0.2)).init("b1", randn({16}, DType::Float32, &gen));
  b.init("w2", mul(randn({16, 1, 3, 3}, DType::Float32, &gen), 0.3)).init("b2", randn({16}, DType::Float32, &gen));
  b.init("w3", mul(randn({8, 16, 1, 1}, DType::Float32, &gen), 0.2)).init("b3", randn({8}, DType::Float32, &gen));
  const std::vector<int64_t> pad1{1, 1, 1, 1};
  b.node("Conv", {"x", "w1", "b1"}, {"c1"}, {{"pads", pad1}});
  b.node("Relu", {"c1"}, {"r1"});
  b.node("Conv", {"r1", "w2", "b2"}, {"c2"}, {{"pads", pad1}, {"group", int64_t(16)}});
  b.node("HardSwish", {"c2"}, {"h2"});
  b.node("Conv", {"h2", "w3", "b3"}, {"c3"});
  b.node("Add", {"c3", "x"}, {"s"});
  b.node("MaxPool", {"s"}, {"y"}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  return b.output("y").build();
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  return amax(abs(sub(a, b))).item<double>();
}

TEST(PredictorThreads, ConcurrentFirstCallsOfANewShapeEqualTheSingleThreadedResult) {
  const engine::Predictor p(block_graph());
  const engine::Predictor unoptimised(block_graph(), {0});
  constexpr int kThreads = 8;
  uint64_t seed = 100;
  // Shapes used nowhere else in this process: each round is the first call of its shape.
  for (const Shape& shape : {Shape{1, 8, 19, 23}, Shape{2, 8, 14, 31}, Shape{3, 8, 26, 10}}) {
    SCOPED_TRACE(shape.str());
    Generator gen(seed++);
    const Tensor x = randn(shape, DType::Float32, &gen);
    auto runs = testing::run_concurrently(p, x, kThreads);
    const Tensor& serial = runs.serial;
    for (int i = 0; i < kThreads; ++i) {
      ASSERT_TRUE(runs.errors[size_t(i)].empty()) << "thread " << i << ": " << runs.errors[size_t(i)];
      EXPECT_EQ(max_abs_diff(runs.outputs[size_t(i)], serial), 0.0) << "thread " << i;
    }
    Tensor ref = unoptimised.run(std::vector<Tensor>{x})[0];
    EXPECT_LT(max_abs_diff(serial, ref), 1e-4 * std::max(1.0, amax(abs(ref)).item<double>()));
  }
}

}  // namespace
}  // namespace skiff::graph
