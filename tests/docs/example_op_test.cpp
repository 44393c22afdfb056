// docs/extending.md's example op (tests/docs/example_op/softsign.cpp) with the tests
// the guide asks every op to have: values against a reference, first- and
// second-order gradients, views, the error for a wrong dtype, and the ONNX export run
// back through skiff's inference engine. The docs quote exactly the code compiled here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "framework/autograd/gradcheck.h"
#include "framework/engine/predictor.h"
#include "framework/graph/onnx_export.h"
#include "framework/graph/onnx_import.h"
#include "framework/graph/trace.h"
#include "framework/ops/ops.h"

namespace skiff {
Tensor softsign(const Tensor& x);  // tests/docs/example_op/softsign.cpp

namespace {

// The definition, composed of existing ops.
Tensor reference(const Tensor& x) { return div(x, add(abs(x), 1.0)); }

void expect_close(const Tensor& a, const Tensor& b, double tol) {
  auto va = to(a, DType::Float64).to_vector<double>(), vb = to(b, DType::Float64).to_vector<double>();
  ASSERT_EQ(va.size(), vb.size());
  for (size_t i = 0; i < va.size(); ++i) EXPECT_NEAR(va[i], vb[i], tol) << "element " << i;
}

TEST(ExampleOp, ValuesMatchTheDefinition) {
  Tensor x = randn({4, 5});
  Tensor y = softsign(x);
  EXPECT_EQ(y.shape(), x.shape());
  EXPECT_EQ(y.dtype(), DType::Float32);
  expect_close(y, reference(x), 1e-6);
  auto v = softsign(from_vector(std::vector<double>{-3.0, 0.0, 1.0})).to_vector<double>();
  EXPECT_EQ(v, (std::vector<double>{-0.75, 0.0, 0.5}));
  // A view (every other column of a transpose) gives the values of its copy.
  Tensor view = narrow(transpose(x, 0, 1), 0, 1, 3);
  expect_close(softsign(view), reference(contiguous(view)), 1e-6);
}

TEST(ExampleOp, GradientsOfFirstAndSecondOrder) {
  Tensor x = randn({3, 4}, DType::Float64).set_requires_grad();
  auto fn = [](const std::vector<Tensor>& in) { return softsign(in[0]); };
  auto first = autograd::gradcheck(fn, {x});
  EXPECT_TRUE(first.ok) << first.message;
  auto second = autograd::gradgradcheck(fn, {x});
  EXPECT_TRUE(second.ok) << second.message;
}

TEST(ExampleOp, AWrongDtypeIsATypeErrorNamingTheOp) {
  try {
    softsign(from_vector(std::vector<int64_t>{1, 2}));
    FAIL() << "no error";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("softsign: needs float32 or float64"), std::string::npos) << e.what();
  }
}

TEST(ExampleOp, ExportsToOnnxAndRunsInTheEngine) {
  Tensor x = randn({2, 6});
  graph::Graph g = graph::trace(nullptr, [](const std::vector<Tensor>& in) { return std::vector<Tensor>{softsign(in[0])}; },
                                {x});
  engine::Predictor p(graph::import_onnx_bytes(graph::export_onnx_bytes(g), "softsign"));
  expect_close(p.run(std::vector<Tensor>{x})[0], softsign(x), 1e-6);
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ExampleOp, TheGuideQuotesTheCompiledCode) {
  const std::filesystem::path root = SKIFF_SOURCE_DIR;
  std::string code = read_text(root / "tests/docs/example_op/softsign.cpp");
  ASSERT_FALSE(code.empty());
  for (const char* doc : {"docs/extending.md", "docs/extending.zh.md"})
    EXPECT_NE(read_text(root / doc).find("```cpp\n" + code + "```"), std::string::npos)
        << doc << " does not quote tests/docs/example_op/softsign.cpp as it is";
}

}  // namespace
}  // namespace skiff
