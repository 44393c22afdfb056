// LoRA: which layers get adapters, what trains, merge/unmerge equal to the adapted
// forward, adapter files on their own (PEFT layout), and errors naming what is wrong.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "framework/io/file.h"
#include "framework/io/safetensors.h"
#include "framework/nn/lora.h"
#include "framework/nn/nn.h"
#include "tests/framework/nn/nn_test_utils.h"
#include "tests/temp_dir.h"

namespace skiff::nn {
namespace {

using testing::values;

double max_abs_diff(const Tensor& a, const Tensor& b) {
  auto va = values(a), vb = values(b);
  EXPECT_EQ(va.size(), vb.size());
  double m = 0;
  for (size_t i = 0; i < va.size(); ++i) m = std::max(m, std::abs(va[i] - vb[i]));
  return m;
}

// An attention-like block: "attn.q_proj", "attn.v_proj", "attn.o_proj" and "mlp".
class Attn : public Module {
 public:
  explicit Attn(Generator* g) {
    q_proj = register_module("q_proj", std::make_shared<Linear>(8, 8, true, g));
    v_proj = register_module("v_proj", std::make_shared<Linear>(8, 8, false, g));
    o_proj = register_module("o_proj", std::make_shared<Linear>(8, 8, true, g));
  }
  Tensor forward(const Tensor& x) override { return (*o_proj)(tanh((*q_proj)(x)) * (*v_proj)(x)); }
  std::shared_ptr<Linear> q_proj, v_proj, o_proj;
};

class Net : public Module {
 public:
  explicit Net(uint64_t seed) : gen(seed) {
    attn = register_module("attn", std::make_shared<Attn>(&gen));
    mlp = register_module("mlp", std::make_shared<Linear>(8, 4, true, &gen));
  }
  Tensor forward(const Tensor& x) override { return (*mlp)((*attn)(x)); }
  Generator gen;
  std::shared_ptr<Attn> attn;
  std::shared_ptr<Linear> mlp;
};

// Gives every lora_B random values (training would), so the adapters change the output.
void perturb_adapters(Module& m) {
  Generator g(99);
  std::map<std::string, Tensor> sd;
  for (auto& [name, t] : m.named_parameters())
    if (name.find("lora_B") != std::string::npos) sd[name] = rand(t.shape(), DType::Float32, &g) - 0.5;
  m.load_state_dict(sd, /*strict=*/false);
}

TEST(LoraTest, AdaptsTheNamedLayersOnlyAndTrainsOnlyTheAdapters) {
  Net net(1);
  Tensor x = rand({3, 8});
  Tensor before = net(x);
  auto names = add_lora(net, LoraOptions{.rank = 2, .alpha = 4, .targets = {"q_proj", "v_proj"}});
  EXPECT_EQ(names, (std::vector<std::string>{"attn.q_proj", "attn.v_proj"}));
  EXPECT_FALSE(net.attn->o_proj->has_lora());
  EXPECT_FALSE(net.mlp->has_lora());
  EXPECT_DOUBLE_EQ(net.attn->q_proj->lora_scale(), 2.0);
  EXPECT_EQ(net.attn->q_proj->lora_A->weight.shape(), (Shape{2, 8}));
  EXPECT_EQ(net.attn->q_proj->lora_B->weight.shape(), (Shape{8, 2}));
  // B starts at zero: the adapted model computes what the base model did.
  EXPECT_EQ(max_abs_diff(net(x), before), 0.0);

  std::vector<std::string> trainable;
  for (auto& [name, t] : net.named_parameters())
    if (t.requires_grad()) trainable.push_back(name);
  EXPECT_EQ(trainable, (std::vector<std::string>{"attn.q_proj.lora_A.weight", "attn.q_proj.lora_B.weight",
                                                 "attn.v_proj.lora_A.weight", "attn.v_proj.lora_B.weight"}));
  perturb_adapters(net);
  backward(sum(net(x)));
  EXPECT_FALSE(net.attn->q_proj->weight.grad().defined());
  EXPECT_FALSE(net.mlp->weight.grad().defined());
  EXPECT_GT(max_abs_diff(net.attn->q_proj->lora_A->weight.grad(), zeros({2, 8})), 0.0);
}

TEST(LoraTest, MergeEqualsTheAdaptedForwardAndUnmergeRestoresTheWeights) {
  Net net(2);
  add_lora(net, LoraOptions{.rank = 4, .alpha = 8, .targets = {"q_proj", "v_proj", "o_proj"}});
  perturb_adapters(net);
  Tensor x = rand({5, 8});
  Tensor adapted = net(x);
  Tensor w0 = clone(net.attn->q_proj->weight);
  merge_lora(net);
  EXPECT_TRUE(net.attn->q_proj->lora_merged());
  EXPECT_GT(max_abs_diff(net.attn->q_proj->weight, w0), 1e-3);  // the update is in the weight now
  EXPECT_LE(max_abs_diff(net(x), adapted), 1e-5);
  EXPECT_THROW(merge_lora(net), ValueError);  // twice
  unmerge_lora(net);
  EXPECT_LE(max_abs_diff(net.attn->q_proj->weight, w0), 1e-6);
  EXPECT_LE(max_abs_diff(net(x), adapted), 1e-5);
  EXPECT_THROW(unmerge_lora(net), ValueError);
}

TEST(LoraTest, SavesTheAdaptersAloneAndLoadsThemIntoAFreshModel) {
  skiff::testing::TempDir dir;
  LoraOptions o{.rank = 3, .alpha = 6, .targets = {"q_proj", "mlp"}};
  Net trained(3);
  add_lora(trained, o);
  perturb_adapters(trained);
  save_lora(trained, o, dir.path);

  io::SafetensorsFile f = io::load_safetensors(dir.path / "adapter_model.safetensors");
  std::vector<std::string> names;
  for (auto& [name, t] : f.tensors) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"base_model.model.attn.q_proj.lora_A.weight",
                                             "base_model.model.attn.q_proj.lora_B.weight",
                                             "base_model.model.mlp.lora_A.weight", "base_model.model.mlp.lora_B.weight"}));
  auto cfg = nlohmann::json::parse(io::read_file(dir.path / "adapter_config.json"));
  EXPECT_EQ(cfg["peft_type"], "LORA");
  EXPECT_EQ(cfg["r"], 3);
  EXPECT_EQ(cfg["lora_alpha"], 6.0);

  LoraOptions read = load_lora_options(dir.path);
  EXPECT_EQ(read.rank, 3);
  EXPECT_EQ(read.targets, o.targets);
  Net fresh(3);  // same seed: the same base weights
  add_lora(fresh, read);
  load_lora(fresh, dir.path);
  Tensor x = rand({2, 8});
  EXPECT_EQ(max_abs_diff(fresh(x), trained(x)), 0.0);
}

TEST(LoraTest, ErrorsNameTheLayersAndTensors) {
  Net net(4);
  try {
    add_lora(net, LoraOptions{.targets = {"query"}});
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("q_proj, v_proj, o_proj, mlp"), std::string::npos) << e.what();
  }
  EXPECT_THROW(merge_lora(net), ValueError);  // no adapter yet
  EXPECT_THROW(add_lora(net, LoraOptions{.rank = 0}), ValueError);

  skiff::testing::TempDir dir;
  Net a(5);
  add_lora(a, LoraOptions{.rank = 2, .targets = {"q_proj"}});
  save_lora(a, LoraOptions{.rank = 2, .targets = {"q_proj"}}, dir.path);
  Net b(5);
  add_lora(b, LoraOptions{.rank = 4, .targets = {"q_proj"}});
  try {
    load_lora(b, dir.path);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("attn.q_proj.lora_A.weight (file [2, 8], model [4, 8])"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(load_lora_options(dir.path / "absent"), IoError);
}

}  // namespace
}  // namespace skiff::nn
