#include "framework/optim/ema.h"

#include <gtest/gtest.h>

#include "framework/nn/module.h"

namespace skiff::optim {
namespace {

TEST(EmaTest, AveragesWithConstantDecay) {
  Tensor w = from_vector<double>({0.0, 10.0});
  ExponentialMovingAverage ema({w}, 0.9);
  std::vector<double> s = {0.0, 10.0};
  for (int k = 1; k <= 5; ++k) {
    detail::copy_into(w, from_vector<double>({double(k), 10.0 - k}));
    ema.update();
    s[0] = 0.9 * s[0] + 0.1 * k;
    s[1] = 0.9 * s[1] + 0.1 * (10.0 - k);
  }
  auto avg = ema.averaged().at("0").to_vector<double>();
  EXPECT_NEAR(avg[0], s[0], 1e-12);
  EXPECT_NEAR(avg[1], s[1], 1e-12);
  EXPECT_EQ(ema.num_updates(), 5);
}

TEST(EmaTest, WarmupRampsDecay) {
  Tensor w = from_vector<double>({0.0});
  ExponentialMovingAverage ema({w}, 0.99, /*warmup=*/true);
  EXPECT_DOUBLE_EQ(ema.current_decay(), 0.1);  // (1 + 0) / (10 + 0)
  double s = 0.0;
  for (int k = 0; k < 1000; ++k) {  // reaches 0.99 at k = 890
    const double d = std::min(0.99, (1.0 + k) / (10.0 + k));
    EXPECT_DOUBLE_EQ(ema.current_decay(), d);
    detail::fill(w, 1.0);
    ema.update();
    s = d * s + (1 - d) * 1.0;
  }
  EXPECT_NEAR(ema.averaged().at("0").item<double>(), s, 1e-12);
  EXPECT_DOUBLE_EQ(ema.current_decay(), 0.99);
}

TEST(EmaTest, StoreCopyRestoreSwapsWeights) {
  Tensor w = from_vector<float>({1.0f, 2.0f});
  ExponentialMovingAverage ema({w}, 0.5);
  detail::copy_into(w, from_vector<float>({3.0f, 4.0f}));
  ema.update();  // shadow = (2, 3)
  {
    EmaScope scope(ema);
    EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{2.0f, 3.0f}));
    EXPECT_THROW(ema.store(), ValueError);
  }
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{3.0f, 4.0f}));
  EXPECT_THROW(ema.restore(), ValueError);
}

class TinyModule : public nn::Module {
 public:
  TinyModule() {
    register_parameter("weight", from_vector<double>({1.0, 2.0}));
    register_buffer("count", from_vector<int64_t>({0}));
  }
  std::string type_name() const override { return "Tiny"; }
};

TEST(EmaTest, TracksModuleParametersAndBuffersByName) {
  auto m = std::make_shared<TinyModule>();
  ExponentialMovingAverage ema(*m, 0.5);
  EXPECT_EQ(ema.names(), (std::vector<std::string>{"count", "weight"}));
  detail::copy_into(m->param("weight"), from_vector<double>({3.0, 4.0}));
  detail::fill(m->buffer("count"), 7);
  ema.update();
  auto avg = ema.averaged();
  EXPECT_EQ(avg.at("weight").to_vector<double>(), (std::vector<double>{2.0, 3.0}));
  EXPECT_EQ(avg.at("count").to_vector<int64_t>(), (std::vector<int64_t>{7}));  // copied, not averaged
  ema.copy_to();
  EXPECT_EQ(m->param("weight").to_vector<double>(), (std::vector<double>{2.0, 3.0}));

  auto m2 = std::make_shared<TinyModule>();
  ExponentialMovingAverage ema2(*m2, 0.1);
  ema2.load_state_dict(OptimizerState::from_tensor_map(ema.state_dict().to_tensor_map()));
  EXPECT_EQ(ema2.averaged().at("weight").to_vector<double>(), (std::vector<double>{2.0, 3.0}));
  EXPECT_EQ(ema2.num_updates(), 1);
  EXPECT_EQ(ema2.decay(), 0.5);
}

TEST(EmaTest, RejectsBadDecayAndMismatchedState) {
  Tensor w = from_vector<double>({1.0});
  EXPECT_THROW(ExponentialMovingAverage({w}, 1.5), ValueError);
  ExponentialMovingAverage ema({w}, 0.9);
  OptimizerState sd;
  EXPECT_THROW(ema.load_state_dict(sd), ValueError);
  sd.tensors["shadow.0"] = from_vector<double>({1.0, 2.0});
  EXPECT_THROW(ema.load_state_dict(sd), ShapeError);
}

}  // namespace
}  // namespace skiff::optim
