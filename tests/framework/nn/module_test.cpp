// Module base class and containers: registration, naming, state dicts, modes,
// dtype conversion and freezing.

#include <gtest/gtest.h>

#include "framework/autograd/engine.h"
#include "framework/nn/containers.h"
#include "framework/nn/module.h"
#include "framework/ops/ops.h"

namespace skiff::nn {
namespace {

// y = x * w + b with a running-count buffer: small enough to reason about.
class Affine : public Module {
 public:
  explicit Affine(int64_t n) {
    w = register_parameter("w", full({n}, 2.0));
    b = register_parameter("b", zeros({n}));
    register_buffer("count", zeros({1}, DType::Int64));
    register_buffer("stat", ones({n}));
  }
  std::string type_name() const override { return "Affine"; }
  Tensor forward(const Tensor& x) override { return x * w + b; }
  Tensor w, b;
};

class Block : public Module {
 public:
  Block() {
    a = register_module("a", std::make_shared<Affine>(3));
    seq = register_module("seq", std::make_shared<Sequential>(
                                     std::initializer_list<ModulePtr>{std::make_shared<Affine>(3), std::make_shared<Affine>(3)}));
    scale = register_parameter("scale", ones({1}));
  }
  std::string type_name() const override { return "Block"; }
  Tensor forward(const Tensor& x) override { return (*seq)((*a)(x)) * scale; }
  std::shared_ptr<Affine> a;
  std::shared_ptr<Sequential> seq;
  Tensor scale;
};

std::vector<std::string> names(const std::vector<std::pair<std::string, Tensor>>& v) {
  std::vector<std::string> out;
  for (auto& p : v) out.push_back(p.first);
  return out;
}

TEST(ModuleTest, NamedParametersFollowRegistrationOrderOwnFirst) {
  Block m;
  EXPECT_EQ(names(m.named_parameters()),
            (std::vector<std::string>{"scale", "a.w", "a.b", "seq.0.w", "seq.0.b", "seq.1.w", "seq.1.b"}));
  EXPECT_EQ(names(m.named_parameters(false)), (std::vector<std::string>{"scale"}));
  EXPECT_EQ(m.parameters().size(), 7u);
  EXPECT_EQ(names(m.named_buffers()),
            (std::vector<std::string>{"a.count", "a.stat", "seq.0.count", "seq.0.stat", "seq.1.count", "seq.1.stat"}));
  EXPECT_EQ(m.num_parameters(), 1 + 6 * 3);
  for (auto& p : m.parameters()) EXPECT_TRUE(p.requires_grad());
  // The handle kept by the layer is the registered tensor itself.
  EXPECT_TRUE(m.a->w.is_same(m.a->param("w")));
}

TEST(ModuleTest, RejectsBadNames) {
  Affine m(2);
  EXPECT_THROW(m.register_parameter("w", zeros({2})), ValueError);
  EXPECT_THROW(m.register_buffer("a.b", zeros({2})), ValueError);
  EXPECT_THROW(m.register_parameter("", zeros({2})), ValueError);
  EXPECT_THROW(m.register_parameter("i", zeros({2}, DType::Int64)), TypeError);
  EXPECT_THROW(m.register_module("stat", std::make_shared<Affine>(2)), ValueError);
  EXPECT_THROW(m.param("nope"), ValueError);
  EXPECT_THROW(m.child("nope"), ValueError);
}

TEST(ModuleTest, BaseForwardThrowsNotImplemented) {
  Module m;
  EXPECT_THROW(m(zeros({1})), NotImplementedError);
}

TEST(ModuleTest, StateDictRoundTripCopiesInPlace) {
  Block src, dst;
  {
    NoGradGuard g;
    for (auto& p : src.parameters()) detail::fill(p, 0.5);
  }
  detail::fill(src.a->buffer("count"), 7);
  auto sd = src.state_dict();
  EXPECT_EQ(sd.size(), 7u + 6u);
  EXPECT_FALSE(sd.at("a.w").requires_grad());
  Tensor handle = dst.a->w;
  auto r = dst.load_state_dict(sd);
  EXPECT_TRUE(r.missing_keys.empty());
  EXPECT_TRUE(handle.is_same(dst.a->w));
  EXPECT_EQ(handle.to_vector<float>(), (std::vector<float>{0.5f, 0.5f, 0.5f}));
  EXPECT_EQ(dst.a->buffer("count").item<int64_t>(), 7);
  // The state dict shares storage with the source module (no copy).
  detail::fill(sd.at("scale"), 3.0);
  EXPECT_EQ(src.scale.item<float>(), 3.0f);
}

TEST(ModuleTest, StrictLoadListsMissingUnexpectedAndMismatchedKeys) {
  Block m;
  auto sd = m.state_dict();
  sd.erase("a.b");
  sd["extra.weight"] = zeros({1});
  sd["seq.1.w"] = zeros({4, 2});
  try {
    m.load_state_dict(sd);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("missing keys: a.b"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unexpected keys: extra.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("seq.1.w (checkpoint [4, 2], module [3])"), std::string::npos) << msg;
  }
}

TEST(ModuleTest, NonStrictLoadReportsButStillRejectsShapes) {
  Affine m(3);
  std::map<std::string, Tensor> sd{{"w", full({3}, 5.0)}, {"junk", zeros({1})}};
  auto r = m.load_state_dict(sd, /*strict=*/false);
  EXPECT_EQ(r.missing_keys, (std::vector<std::string>{"b", "count", "stat"}));
  EXPECT_EQ(r.unexpected_keys, (std::vector<std::string>{"junk"}));
  EXPECT_EQ(m.w.to_vector<float>(), (std::vector<float>{5, 5, 5}));
  sd["w"] = zeros({2});
  EXPECT_THROW(m.load_state_dict(sd, false), ValueError);
  // A failed load leaves the module untouched.
  EXPECT_EQ(m.w.to_vector<float>(), (std::vector<float>{5, 5, 5}));
}

TEST(ModuleTest, LoadConvertsDtype) {
  Affine m(2);
  m.load_state_dict({{"w", full({2}, 1.5, DType::Float64)}, {"b", zeros({2})}, {"count", zeros({1}, DType::Int64)},
                     {"stat", ones({2})}});
  EXPECT_EQ(m.w.dtype(), DType::Float32);
  EXPECT_EQ(m.w.to_vector<float>(), (std::vector<float>{1.5f, 1.5f}));
}

TEST(ModuleTest, TrainEvalPropagatesToChildren) {
  Block m;
  EXPECT_TRUE(m.is_training());
  m.eval();
  for (auto& [name, mod] : m.named_modules()) EXPECT_FALSE(mod->is_training()) << name;
  m.train();
  EXPECT_TRUE(m.seq->child("1")->is_training());
  EXPECT_EQ(m.named_modules().size(), 5u);  // root, a, seq, seq.0, seq.1
}

TEST(ModuleTest, ToDtypeConvertsInPlaceAndKeepsIntegerBuffers) {
  Block m;
  Tensor handle = m.a->w;
  m.to(DType::Float64);
  EXPECT_EQ(handle.dtype(), DType::Float64);
  EXPECT_TRUE(handle.requires_grad());
  EXPECT_EQ(handle.to_vector<double>(), (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(m.a->buffer("stat").dtype(), DType::Float64);
  EXPECT_EQ(m.a->buffer("count").dtype(), DType::Int64);
  Tensor y = m(ones({3}, DType::Float64));
  EXPECT_EQ(y.dtype(), DType::Float64);
  EXPECT_THROW(m.to(DType::Int32), TypeError);
}

TEST(ModuleTest, FreezingStopsGradientsAndZeroGradClears) {
  Block m;
  m.a->requires_grad_(false);
  Tensor y = sum(m(ones({3})));
  skiff::backward(y);
  EXPECT_FALSE(m.a->w.grad().defined());
  ASSERT_TRUE(m.seq->child("0")->param("w").grad().defined());
  EXPECT_EQ(m.num_parameters(true), 1 + 4 * 3);
  m.zero_grad();
  EXPECT_FALSE(m.seq->child("0")->param("w").grad().defined());
  m.requires_grad_(true);
  EXPECT_TRUE(m.a->w.requires_grad());
}

TEST(ModuleTest, SharedModuleIsTrainedOnce) {
  auto shared = std::make_shared<Affine>(2);
  Sequential s{shared, shared};
  EXPECT_EQ(s.parameters().size(), 2u);
  EXPECT_EQ(s.state_dict().count("1.w"), 1u);
}

TEST(ModuleTest, ErrorsCarryModuleContext) {
  Sequential s{std::make_shared<Affine>(3)};
  try {
    s(ones({4}));
    FAIL();
  } catch (const ShapeError& e) {
    std::string full = e.full_message();
    EXPECT_NE(full.find("in Affine.forward"), std::string::npos) << full;
    EXPECT_NE(full.find("Sequential entry (0)"), std::string::npos) << full;
  }
}

TEST(ContainersTest, SequentialChainsAndIndexes) {
  Sequential s{std::make_shared<Affine>(2), std::make_shared<Affine>(2)};
  EXPECT_EQ(s(ones({2})).to_vector<float>(), (std::vector<float>{4, 4}));
  EXPECT_EQ(s[-1]->type_name(), "Affine");
  EXPECT_THROW(s[2], IndexError);
  Sequential empty;
  EXPECT_EQ(empty(ones({2})).to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_NE(s.str().find("(1): Affine()"), std::string::npos) << s.str();
}

TEST(ContainersTest, ModuleListAndDict) {
  ModuleList l{std::make_shared<Affine>(1)};
  l.push_back(std::make_shared<Affine>(1));
  EXPECT_EQ(l.size(), 2);
  EXPECT_EQ(names(l.named_parameters())[2], "1.w");
  EXPECT_NE(l.at<Affine>(1), nullptr);
  EXPECT_THROW(l.at<Sequential>(0), TypeError);
  EXPECT_THROW(l(ones({1})), NotImplementedError);
  int n = 0;
  for (auto& m : l) n += m != nullptr;
  EXPECT_EQ(n, 2);

  ModuleDict d{{"enc", std::make_shared<Affine>(1)}};
  d.insert("dec", std::make_shared<Affine>(1));
  EXPECT_TRUE(d.contains("dec"));
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"enc", "dec"}));
  EXPECT_THROW(d.insert("enc", std::make_shared<Affine>(1)), ValueError);
  EXPECT_EQ(d.state_dict().count("dec.w"), 1u);
}

}  // namespace
}  // namespace skiff::nn
