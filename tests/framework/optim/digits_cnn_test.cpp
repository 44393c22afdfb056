// Proof that training works end to end (issue 3): a small CNN trained on the real
// handwritten digits (scikit-learn's digits.csv.gz, 1797 8x8 images) reaches at
// least 97% accuracy on a held-out fifth. Everything is seeded, so the accuracy is
// the same on every run with the same thread count.
#include <gtest/gtest.h>

#include <chrono>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/core/threading.h"
#include "framework/data/dataloader.h"
#include "framework/data/digits.h"
#include "framework/nn/nn.h"
#include "framework/ops/ops.h"
#include "framework/optim/lr_scheduler.h"
#include "framework/optim/optimizers.h"

namespace skiff {
namespace {

// Sets the thread count for a scope and restores the previous one.
struct ThreadCountGuard {
  explicit ThreadCountGuard(int n) : saved(num_threads()) { set_num_threads(n); }
  ~ThreadCountGuard() { set_num_threads(saved); }
  int saved;
};

// A 3x3 convolution with padding 1 (keeps H and W).
std::shared_ptr<nn::Conv2d> conv3x3(int64_t in, int64_t out, Generator* gen) {
  return std::make_shared<nn::Conv2d>(in, out, std::vector<int64_t>{3}, std::vector<int64_t>{1},
                                      std::vector<int64_t>{1}, std::vector<int64_t>{1}, 1, true, gen);
}

// conv(1->16) bn relu, conv(16->32) bn relu, maxpool 2 -> [32, 4, 4], dropout, linear 512 -> 10.
class DigitsCnn : public nn::Module {
 public:
  explicit DigitsCnn(Generator* gen) {
    conv1 = register_module("conv1", conv3x3(1, 16, gen));
    bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(16));
    conv2 = register_module("conv2", conv3x3(16, 32, gen));
    bn2 = register_module("bn2", std::make_shared<nn::BatchNorm2d>(32));
    drop = register_module("drop", std::make_shared<nn::Dropout>(0.25, gen));
    fc = register_module("fc", std::make_shared<nn::Linear>(32 * 4 * 4, 10, true, gen));
  }
  std::string type_name() const override { return "DigitsCnn"; }
  Tensor forward(const Tensor& x) override {
    Tensor h = relu((*bn1)((*conv1)(x)));
    h = relu((*bn2)((*conv2)(h)));
    h = max_pool2d(h, {2, 2});
    return (*fc)((*drop)(flatten(h, 1)));
  }
  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::BatchNorm2d> bn1, bn2;
  std::shared_ptr<nn::Dropout> drop;
  std::shared_ptr<nn::Linear> fc;
};

// Rows i with i % 5 == 4 are held out (359 of 1797), the rest (1438) train.
struct Split {
  Tensor train_x, train_y, test_x, test_y;
};
Split split_fifth(const data::DigitsData& d) {
  std::vector<int64_t> train, test;
  for (int64_t i = 0; i < d.labels.shape()[0]; ++i) (i % 5 == 4 ? test : train).push_back(i);
  Tensor ti = from_vector<int64_t>(train), vi = from_vector<int64_t>(test);
  return {index_select(d.images, 0, ti), index_select(d.labels, 0, ti), index_select(d.images, 0, vi),
          index_select(d.labels, 0, vi)};
}

double accuracy(nn::Module& model, const Tensor& x, const Tensor& y) {
  NoGradGuard no_grad;
  model.eval();
  Tensor pred = argmax(model(x), 1);
  model.train();
  return sum(to(eq(pred, y), DType::Float64)).item<double>() / double(y.shape()[0]);
}

TEST(DigitsCnnTest, ReachesNinetySevenPercentOnHeldOutFifth) {
  auto path = data::find_digits_csv();
  if (!path) GTEST_SKIP() << "python3-sklearn is not installed (scripts/setup.sh installs it)";
  // One thread: the tensors are tiny, so a second thread only adds synchronisation, and
  // with ctest -j on a loaded machine spinning OpenMP teams slow this test down ~7x.
  ThreadCountGuard one_thread(1);
  const auto t0 = std::chrono::steady_clock::now();
  Split s = split_fifth(data::load_digits(*path));
  ASSERT_EQ(s.train_x.shape(), (Shape{1438, 1, 8, 8}));
  ASSERT_EQ(s.test_x.shape(), (Shape{359, 1, 8, 8}));

  Generator gen(2024);
  auto model = std::make_shared<DigitsCnn>(&gen);
  optim::AdamW opt(model->parameters(), {.lr = 3e-3, .weight_decay = 1e-4});
  const int epochs = 12;
  data::DataLoader loader(
      std::make_shared<data::TensorDataset>(data::Example{{"image", s.train_x}, {"label", s.train_y}}),
      {.batch_size = 32, .shuffle = true, .seed = 7});
  optim::CosineAnnealingLR sched(opt, epochs * loader.num_batches());

  double first_loss = 0, last_loss = 0;
  for (int e = 0; e < epochs; ++e) {
    for (data::Example& b : loader.epoch(e)) {
      opt.zero_grad();
      Tensor loss = cross_entropy((*model)(b.at("image")), b.at("label"));
      backward(loss);
      opt.step();
      sched.step();
      last_loss = loss.item<double>();
      if (first_loss == 0) first_loss = last_loss;
    }
  }
  const double acc = accuracy(*model, s.test_x, s.test_y);
  const double train_acc = accuracy(*model, s.train_x, s.train_y);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  RecordProperty("held_out_accuracy", std::to_string(acc));
  std::printf("digits CNN: held-out accuracy %.4f, train accuracy %.4f, loss %.3f -> %.4f, %.1f s\n", acc, train_acc,
              first_loss, last_loss, secs);
  EXPECT_GE(acc, 0.97);
  EXPECT_LT(last_loss, first_loss / 10);
}

}  // namespace
}  // namespace skiff
