#include <gtest/gtest.h>

#include <cstdlib>

#include "framework/autograd/engine.h"
#include "framework/core/threading.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

// NumPy matmul by definition, with plain loops in double: promotes 1-D operands, broadcasts
// the batch dims, and multiplies every matrix pair.
Tensor naive_matmul(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape(), sb = b.shape();
  const bool drop_rows = sa.size() == 1, drop_cols = sb.size() == 1;
  if (drop_rows) sa.insert(0, 1);
  if (drop_cols) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa[sa.size() - 1], n = sb[sb.size() - 1];
  const int64_t nb = std::max(sa.size(), sb.size()) - 2;
  Shape batch;
  for (int64_t d = 0; d < nb; ++d) {
    const int64_t da = d - (nb - (sa.size() - 2)), db = d - (nb - (sb.size() - 2));
    const int64_t xa = da >= 0 ? sa[da] : 1, xb = db >= 0 ? sb[db] : 1;
    batch.push_back(std::max(xa, xb));
  }
  std::vector<double> va = contiguous(to(a, DType::Float64)).to_vector<double>();
  std::vector<double> vb = contiguous(to(b, DType::Float64)).to_vector<double>();
  std::vector<double> out(size_t(batch.numel() * m * n), 0.0);
  for (int64_t bi = 0; bi < batch.numel(); ++bi) {
    int64_t rem = bi, ia = 0, ib = 0, mul_a = 1, mul_b = 1;
    for (int64_t d = nb - 1; d >= 0; --d) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      const int64_t da = d - (nb - (sa.size() - 2)), db = d - (nb - (sb.size() - 2));
      if (da >= 0) { ia += (sa[da] == 1 ? 0 : idx) * mul_a; mul_a *= sa[da]; }
      if (db >= 0) { ib += (sb[db] == 1 ? 0 : idx) * mul_b; mul_b *= sb[db]; }
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < k; ++kk) s += va[size_t(ia * m * k + i * k + kk)] * vb[size_t(ib * k * n + kk * n + j)];
        out[size_t(bi * m * n + i * n + j)] = s;
      }
  }
  Shape os = batch;
  if (!drop_rows) os.push_back(m);
  if (!drop_cols) os.push_back(n);
  return from_vector(out, os);
}

Tensor random(const Shape& s, DType dtype, uint64_t seed) {
  Generator g(seed);
  return rand(s, dtype, &g, -1.0, 1.0);
}

struct ShapePair {
  Shape a, b, out;
};
const std::vector<ShapePair> kRankCases = {
    {{4}, {4}, {}},
    {{3, 4}, {4}, {3}},
    {{4}, {4, 5}, {5}},
    {{3, 4}, {4, 5}, {3, 5}},
    {{2, 3, 4}, {4, 5}, {2, 3, 5}},
    {{3, 4}, {2, 4, 5}, {2, 3, 5}},
    {{2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}},
    {{4}, {2, 4, 5}, {2, 5}},
    {{2, 3, 4}, {4}, {2, 3}},
    {{1, 3, 4}, {2, 4, 5}, {2, 3, 5}},
    {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}},
};

TEST(MatmulTest, MatchesNaiveLoopsForEveryRankCombination) {
  uint64_t seed = 1;
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const auto& c : kRankCases) {
      Tensor a = random(c.a, dtype, seed++), b = random(c.b, dtype, seed++);
      Tensor out = matmul(a, b);
      SCOPED_TRACE(fmt::format("{} x {} ({})", c.a, c.b, dtype_name(dtype)));
      EXPECT_EQ(out.shape(), c.out);
      EXPECT_EQ(out.dtype(), dtype);
      expect_allclose(out, naive_matmul(a, b), dtype == DType::Float32 ? 1e-5 : 1e-12, 1e-5);
    }
  }
}

TEST(MatmulTest, HandValues) {
  Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = from_vector<float>({7, 8, 9, 10, 11, 12}, {3, 2});
  EXPECT_EQ(matmul(a, b).to_vector<float>(), (std::vector<float>{58, 64, 139, 154}));
  EXPECT_EQ(dot(from_vector<float>({1, 2, 3}), from_vector<float>({4, 5, 6})).item<float>(), 32.f);
  Tensor o = outer(from_vector<double>({1, 2}), from_vector<double>({3, 4, 5}));
  EXPECT_EQ(o.shape(), (Shape{2, 3}));
  EXPECT_EQ(o.to_vector<double>(), (std::vector<double>{3, 4, 5, 6, 8, 10}));
}

TEST(MatmulTest, ReadsTransposedStridedAndBroadcastInputs) {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Tensor x = random({6, 5}, dtype, 11), y = random({7, 6}, dtype, 12);
    expect_allclose(matmul(t(x), t(y)), naive_matmul(contiguous(t(x)), contiguous(t(y))), 1e-5, 1e-5);
    // Every-other-row slices have no BLAS layout: the kernels must copy them.
    Tensor s = slice(random({10, 5}, dtype, 13), 0, 0, 10, 2);
    Tensor u = slice(random({5, 8}, dtype, 14), 1, 0, 8, 2);
    expect_allclose(matmul(s, u), naive_matmul(contiguous(s), contiguous(u)), 1e-5, 1e-5);
    // Batch of transposed matrices, and a stride-0 (expanded) batch operand.
    Tensor q = random({3, 4, 2}, dtype, 15), k = random({3, 5, 2}, dtype, 16);
    Tensor scores = matmul(q, transpose(k, 1, 2));
    expect_allclose(scores, naive_matmul(q, contiguous(transpose(k, 1, 2))), 1e-5, 1e-5);
    Tensor w = expand(random({1, 2, 6}, dtype, 17), {3, 2, 6});
    expect_allclose(matmul(q, w), naive_matmul(q, contiguous(w)), 1e-5, 1e-5);
    // Permuted batch dims: [B, H, M, K] read from a [B, M, H, K] tensor.
    Tensor p = permute(random({2, 3, 4, 5}, dtype, 18), {0, 2, 1, 3});
    Tensor r = random({5, 3}, dtype, 19);
    expect_allclose(matmul(p, r), naive_matmul(contiguous(p), r), 1e-5, 1e-5);
  }
}

TEST(MatmulTest, IntegerMatmulIsExactAndWraps) {
  for (DType dtype : {DType::Int32, DType::Int64, DType::Int8, DType::UInt8}) {
    Generator g(3);
    Tensor a = randint(0, 5, {2, 3, 4}, dtype, &g), b = randint(0, 5, {4, 6}, dtype, &g);
    Tensor out = matmul(a, t(contiguous(t(b))));
    EXPECT_EQ(out.dtype(), dtype);
    expect_allclose(out, naive_matmul(a, b), 0.0, 0.0);
  }
  // int8: 100 * 2 + 100 * 2 = 400 wraps to 400 - 512 = -112, as in NumPy.
  Tensor a = from_vector<int8_t>({100, 100}, {1, 2}), b = from_vector<int8_t>({2, 2}, {2, 1});
  EXPECT_EQ(matmul(a, b).item<int64_t>(), -112);
  // Mixed int64 x float32 promotes to float32.
  EXPECT_EQ(matmul(arange(3), from_vector<float>({1, 1, 1})).dtype(), DType::Float32);
}

TEST(MatmulTest, HalfTypesAccumulateInFloat) {
  for (DType dtype : {DType::Float16, DType::BFloat16}) {
    Tensor a = random({3, 64}, dtype, 21), b = random({64, 2}, dtype, 22);
    Tensor out = matmul(a, b);
    EXPECT_EQ(out.dtype(), dtype);
    // One rounding of the exact sum: within the 16-bit type's half ulp of values up to ~8.
    expect_allclose(out, naive_matmul(a, b), 0.05, 0.01);
  }
}

TEST(MatmulTest, EmptyAndZeroInnerDim) {
  Tensor z = matmul(zeros({3, 0}), zeros({0, 4}));
  EXPECT_EQ(z.shape(), (Shape{3, 4}));
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(12, 0.f));
  EXPECT_EQ(matmul(zeros({0, 3}), ones({3, 4})).shape(), (Shape{0, 4}));
  EXPECT_EQ(matmul(zeros({2, 0, 3}), ones({3, 4})).shape(), (Shape{2, 0, 4}));
  EXPECT_EQ(matmul(zeros({0}, DType::Float64), zeros({0}, DType::Float64)).item<double>(), 0.0);
  EXPECT_EQ(matmul(zeros({2, 3, 0}, DType::Int64), zeros({0, 2}, DType::Int64)).to_vector<int64_t>(),
            std::vector<int64_t>(12, 0));
}

TEST(MatmulTest, RejectsBadShapesAndDtypes) {
  EXPECT_THROW(matmul(zeros({2, 3}), zeros({4, 5})), ShapeError);
  EXPECT_THROW(matmul(zeros({3}), zeros({4})), ShapeError);
  EXPECT_THROW(matmul(zeros({2, 2, 3}), zeros({3, 3, 4})), ShapeError);
  EXPECT_THROW(matmul(scalar_tensor(1.0), zeros({3})), ShapeError);
  EXPECT_THROW(matmul(zeros({2, 2}, DType::Bool), zeros({2, 2}, DType::Bool)), NotImplementedError);
  try {
    matmul(zeros({2, 3}), zeros({4, 5}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("matmul"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4, 5]"), std::string::npos) << msg;
  }
  EXPECT_THROW(bmm(zeros({2, 3, 4}), zeros({3, 4, 5})), ShapeError);
  EXPECT_THROW(bmm(zeros({3, 4}), zeros({4, 5})), ShapeError);
  EXPECT_THROW(dot(zeros({3}), zeros({4})), ShapeError);
  EXPECT_THROW(dot(zeros({3, 1}), zeros({3})), ShapeError);
  EXPECT_THROW(outer(zeros({3, 1}), zeros({3})), ShapeError);
  EXPECT_THROW(linear(zeros({2, 3}), zeros({4, 5})), ShapeError);
  EXPECT_THROW(linear(zeros({2, 3}), zeros({4, 3}), zeros({3})), ShapeError);
  EXPECT_THROW(linear(zeros({2, 3}), zeros({3})), ShapeError);
}

TEST(BmmTest, MatchesNaiveLoops) {
  Tensor a = random({4, 3, 5}, DType::Float64, 31), b = random({4, 5, 2}, DType::Float64, 32);
  Tensor out = bmm(a, b);
  EXPECT_EQ(out.shape(), (Shape{4, 3, 2}));
  expect_allclose(out, naive_matmul(a, b), 1e-12, 1e-12);
}

TEST(LinearTest, MatchesMatmulPlusBias) {
  Tensor x = random({2, 3, 4}, DType::Float64, 41), w = random({5, 4}, DType::Float64, 42);
  Tensor b = random({5}, DType::Float64, 43);
  Tensor out = linear(x, w, b);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 5}));
  Tensor ref = naive_matmul(x, contiguous(t(w)));
  expect_allclose(out, add(ref, b), 1e-12, 1e-12);
  expect_allclose(linear(x, w), ref, 1e-12, 1e-12);
  EXPECT_EQ(linear(random({4}, DType::Float64, 44), w, b).shape(), (Shape{5}));
}

TEST(MatmulTest, GradcheckEveryRankCombination) {
  uint64_t seed = 100;
  for (const auto& c : kRankCases) {
    SCOPED_TRACE(fmt::format("{} x {}", c.a, c.b));
    Tensor a = rand_leaf(c.a, seed++), b = rand_leaf(c.b, seed++);
    expect_gradcheck([](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }, {a, b});
  }
}

TEST(MatmulTest, GradgradcheckBroadcastAndTransposed) {
  Tensor a = rand_leaf({2, 1, 3, 4}, 201), b = rand_leaf({2, 4, 3}, 202);
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }, {a, b});
  Tensor v = rand_leaf({4}, 203), m = rand_leaf({3, 4}, 204);
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return matmul(in[1], in[0]); }, {v, m});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return matmul(t(in[1]), t(in[1])); }, {v, rand_leaf({3, 3}, 205)});
}

TEST(LinearTest, GradcheckAndGradgradcheck) {
  Tensor x = rand_leaf({2, 3, 4}, 301), w = rand_leaf({5, 4}, 302), b = rand_leaf({5}, 303);
  auto fn = [](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); };
  expect_gradcheck(fn, {x, w, b});
  expect_gradgradcheck(fn, {x, w, b});
  Tensor bx = rand_leaf({3, 4, 2}, 304), by = rand_leaf({3, 2, 5}, 305);
  expect_gradcheck([](const std::vector<Tensor>& in) { return bmm(in[0], in[1]); }, {bx, by});
  Tensor u = rand_leaf({3}, 306), v = rand_leaf({4}, 307);
  expect_gradcheck([](const std::vector<Tensor>& in) { return outer(in[0], in[1]); }, {u, v});
  expect_gradcheck([](const std::vector<Tensor>& in) { return dot(in[0], in[1]); }, {u, rand_leaf({3}, 308)});
}

// The weight's gradient has the weight's layout (contiguous), for 2-D and batched inputs:
// a transposed view would cost every optimizer step a strided copy (an MLP's SGD step
// spent 40% of its time there).
TEST(LinearTest, WeightGradientIsContiguousLikeTheWeight) {
  for (Shape xs : {Shape{6, 4}, Shape{2, 3, 4}}) {
    Tensor x = random(xs, DType::Float64, 311), w = rand_leaf({5, 4}, 312), b = rand_leaf({5}, 313);
    backward(sum(linear(x, w, b)));
    EXPECT_TRUE(w.grad().is_contiguous()) << xs.size() << "-D input";
    // d/dw sum(x w^T) = column sums of x, broadcast over the outputs
    Tensor expected = sum(reshape(x, {-1, 4}), {0});
    for (int64_t o = 0; o < 5; ++o) expect_allclose(select(w.grad(), 0, o), expected, 1e-12, 1e-12);
  }
}

// Runs one registered matmul kernel directly on the given inputs.
Tensor run_kernel(const KernelEntry& k, const Tensor& a, const Tensor& b) {
  NoGradGuard no_grad;
  Tensor ref = matmul(a, b);  // output shape via the public op
  std::vector<Tensor> outs{empty(ref.shape(), a.dtype())};
  std::vector<Tensor> ins{a, b};
  Attrs attrs;
  k.fn(KernelContext{ins, outs, attrs});
  return outs[0];
}

TEST(MatmulTest, OnednnKernelMatchesCpuKernel) {
  const KernelEntry* cpu = nullptr;
  const KernelEntry* onednn = nullptr;
  std::vector<KernelEntry> entries = kernels_for("matmul");
  for (const auto& k : entries) {
    if (k.backend == "cpu") cpu = &k;
    if (k.backend == "onednn") onednn = &k;
  }
  ASSERT_NE(cpu, nullptr);
  if (onednn == nullptr) GTEST_SKIP() << "built without the oneDNN backend";
  EXPECT_GT(onednn->priority, cpu->priority);
  EXPECT_EQ(find_kernel("matmul", kCPU, DType::Float32).backend,
            std::getenv("SKIFF_DISABLE_BACKENDS") ? cpu->backend : onednn->backend);
  struct Case {
    Tensor a, b;
  };
  Tensor big_a = random({67, 129}, DType::Float32, 51), big_b = random({129, 33}, DType::Float32, 52);
  Tensor sq = random({256, 256}, DType::Float32, 53);
  Tensor q = random({2, 3, 40, 16}, DType::Float32, 54), kk = random({2, 3, 50, 16}, DType::Float32, 55);
  std::vector<Case> cases = {
      {big_a, big_b},
      {t(big_b), t(big_a)},
      {sq, t(sq)},
      {q, transpose(kk, -1, -2)},
      {random({48, 3, 5}, DType::Float32, 56), expand(random({1, 5, 7}, DType::Float32, 57), {48, 5, 7})},
      {slice(big_a, 1, 0, 129, 2), random({65, 9}, DType::Float32, 58)},
      {random({1, 129}, DType::Float32, 59), big_b},
      // One row times t(weight): the matrix-vector path a decoding Linear layer takes,
      // with a weight of 131 rows (blocks of 64 and a tail) and a row-strided weight view.
      {random({1, 200}, DType::Float32, 60), t(random({131, 200}, DType::Float32, 61))},
      {random({1, 96}, DType::Float32, 62), t(slice(random({70, 128}, DType::Float32, 63), 1, 0, 96))},
      {zeros({3, 0}), zeros({0, 4})},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("{} x {}", c.a.shape(), c.b.shape()));
    Tensor want = run_kernel(*cpu, c.a, c.b), got = run_kernel(*onednn, c.a, c.b);
    expect_allclose(got, want, 1e-5, 1e-4);
  }
}

}  // namespace
}  // namespace skiff
