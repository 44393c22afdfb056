// skiff_train_bench: training-step timings (forward + backward + AdamW step) of
// small models, the same ones bench/pytorch_train.py builds in PyTorch
// (bench/compare_train.sh prints the ratios):
//   crnn    CRNN-style recognizer: x [32, 3, 48, 320]; 6 conv-bn-relu blocks to 256
//           channels, height pooled to 1 (80 steps), 2-layer BiLSTM of width 256,
//           linear to 6625 classes, CTC loss on targets of length 10..25
//   gpt     GPT-style decoder: 6 pre-norm layers, d_model 256, 4 heads, ffn 1024,
//           dropout 0.1, seq 128, batch 8, vocab 8000, causal mask, tied nothing
//   resnet8 ResNet-8-style CNN: conv-bn-relu 16, three basic blocks (16, 32/2, 64/2),
//           global average pool, linear 10; x [128, 3, 32, 32]
//   picodet the detection suite's PicoDet-class model (LCNet x1.0, LCPAN 128,
//           PicoHeadV2 with 2 convs, reg_max 7, 8 classes) on x [16, 3, 320, 320]
//           with 3 boxes per image: task-aligned assignment, VFL + GIoU + DFL
//   encoder the NLP suite's BERT-style spam classifier as configs/nlp/spam_classifier.yml
//           builds it: vocab 8003, 2 pre-norm layers, d_model 128, 4 heads, ffn 512,
//           dropout 0.1, [CLS] tanh pooler, 2 classes; batch 32 of up to 128 tokens,
//           rows of lengths 48..128 padded (the padding mask in every layer)
//   clip    the multimodal suite's dual encoder as configs/multimodal/clip_synth.yml builds
//           it: CNN image tower (stages 32, 64, 128, 256 of two 3x3 conv-bn-relu, the
//           first of stride 2; global average; projection 64), causal text transformer
//           (vocab 50, 16 positions, 3 pre-norm layers, d_model 128, 4 heads, ffn 512, no
//           dropout, end-token feature, projection 64), learnable temperature, symmetric
//           InfoNCE; batch 64 of 64x64 images and captions of 3..9 tokens padded to 9
// Timing: `--warmup` steps, then the median of at least `--reps` steps (and at
// least --min-time seconds).
//
//   skiff_train_bench [--threads-list 1,2] [--filter gpt] [--json] [--reps 5]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/core/threading.h"
#include "framework/nn/nn.h"
#include "framework/ops/ops.h"
#include "framework/optim/optimizers.h"
#include "suites/detection/train/gfl_loss.h"
#include "suites/detection/train/picodet.h"
#include "suites/multimodal/clip_model.h"
#include "suites/nlp/encoder/heads.h"

namespace skiff::bench {
namespace {

using namespace skiff::nn;

std::shared_ptr<Conv2d> conv(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad, bool bias) {
  return std::make_shared<Conv2d>(in, out, std::vector<int64_t>{k}, std::vector<int64_t>{stride},
                                  std::vector<int64_t>{pad}, std::vector<int64_t>{1}, 1, bias);
}

// ---- (a) CRNN ---------------------------------------------------------------------------

class Crnn : public Module {
 public:
  static constexpr int64_t kClasses = 6625;
  Crnn() {
    const int64_t ch[] = {32, 64, 128, 128, 256, 256};
    int64_t in = 3;
    for (int i = 0; i < 6; ++i) {
      convs.push_back(register_module(fmt::format("conv{}", i), conv(in, ch[i], 3, 1, 1, false)));
      bns.push_back(register_module(fmt::format("bn{}", i), std::make_shared<BatchNorm2d>(ch[i])));
      in = ch[i];
    }
    rnn = register_module("rnn", std::make_shared<LSTM>(256, 256, RNNOptions{.num_layers = 2, .bidirectional = true}));
    fc = register_module("fc", std::make_shared<Linear>(512, kClasses));
  }
  std::string type_name() const override { return "Crnn"; }
  // x [N, 3, 48, 320] -> log-probabilities [80, N, 6625].
  Tensor forward(const Tensor& x) override {
    Tensor h = x;
    for (int i = 0; i < 6; ++i) {
      h = relu((*bns[size_t(i)])((*convs[size_t(i)])(h)));
      if (i == 0 || i == 1) h = max_pool2d(h, {2, 2});  // 24x160, then 12x80
      if (i == 3 || i == 5) h = max_pool2d(h, {2, 1});  // 6x80, then 3x80
    }
    h = amax(h, {2}, false);             // height pooled to 1: [N, 256, 80]
    h = permute(h, {2, 0, 1});           // [80, N, 256]
    Tensor seq = (*rnn)(h);              // [80, N, 512]
    return log_softmax((*fc)(seq), -1);  // [80, N, C]
  }
  std::vector<std::shared_ptr<Conv2d>> convs;
  std::vector<std::shared_ptr<BatchNorm2d>> bns;
  std::shared_ptr<LSTM> rnn;
  std::shared_ptr<Linear> fc;
};

// ---- (b) GPT ----------------------------------------------------------------------------

class Gpt : public Module {
 public:
  static constexpr int64_t kVocab = 8000, kSeq = 128, kDim = 256;
  Gpt() {
    tok = register_module("tok", std::make_shared<Embedding>(kVocab, kDim));
    pos = register_module("pos", std::make_shared<Embedding>(kSeq, kDim));
    blocks = register_module("blocks", std::make_shared<ModuleList>());
    for (int i = 0; i < 6; ++i)
      blocks->push_back(
          std::make_shared<TransformerEncoderLayer>(kDim, 4,
                                                    TransformerLayerOptions{.dim_feedforward = 4 * kDim,
                                                                            .dropout = 0.1,
                                                                            .activation = TransformerActivation::GELU,
                                                                            .norm_first = true}));
    norm = register_module("norm", std::make_shared<LayerNorm>(std::vector<int64_t>{kDim}));
    head = register_module("head", std::make_shared<Linear>(kDim, kVocab, false));
    mask = causal_mask(kSeq);
  }
  std::string type_name() const override { return "Gpt"; }
  // ids [B, T] int64 -> logits [B, T, vocab].
  Tensor forward(const Tensor& ids) override {
    Tensor h = add((*tok)(ids), (*pos)(arange(0.0, double(ids.size(1)), 1.0, DType::Int64)));
    for (const auto& b : *blocks) h = std::static_pointer_cast<TransformerEncoderLayer>(b)->forward(h, mask);
    return (*head)((*norm)(h));
  }
  std::shared_ptr<Embedding> tok, pos;
  std::shared_ptr<ModuleList> blocks;
  std::shared_ptr<LayerNorm> norm;
  std::shared_ptr<Linear> head;
  Tensor mask;
};

// ---- (c) ResNet-8 -----------------------------------------------------------------------

class BasicBlock : public Module {
 public:
  BasicBlock(int64_t in, int64_t out, int64_t stride) {
    c1 = register_module("conv1", conv(in, out, 3, stride, 1, false));
    b1 = register_module("bn1", std::make_shared<BatchNorm2d>(out));
    c2 = register_module("conv2", conv(out, out, 3, 1, 1, false));
    b2 = register_module("bn2", std::make_shared<BatchNorm2d>(out));
    if (stride != 1 || in != out) {
      down = register_module("down", conv(in, out, 1, stride, 0, false));
      down_bn = register_module("down_bn", std::make_shared<BatchNorm2d>(out));
    }
  }
  std::string type_name() const override { return "BasicBlock"; }
  Tensor forward(const Tensor& x) override {
    Tensor h = relu((*b1)((*c1)(x)));
    h = (*b2)((*c2)(h));
    return relu(add(h, down ? (*down_bn)((*down)(x)) : x));
  }
  std::shared_ptr<Conv2d> c1, c2, down;
  std::shared_ptr<BatchNorm2d> b1, b2, down_bn;
};

class ResNet8 : public Module {
 public:
  ResNet8() {
    stem = register_module("stem", conv(3, 16, 3, 1, 1, false));
    bn = register_module("bn", std::make_shared<BatchNorm2d>(16));
    l1 = register_module("layer1", std::make_shared<BasicBlock>(16, 16, 1));
    l2 = register_module("layer2", std::make_shared<BasicBlock>(16, 32, 2));
    l3 = register_module("layer3", std::make_shared<BasicBlock>(32, 64, 2));
    fc = register_module("fc", std::make_shared<Linear>(64, 10));
  }
  std::string type_name() const override { return "ResNet8"; }
  Tensor forward(const Tensor& x) override {
    Tensor h = relu((*bn)((*stem)(x)));
    h = (*l3)((*l2)((*l1)(h)));
    return (*fc)(flatten(global_avg_pool2d(h), 1));
  }
  std::shared_ptr<Conv2d> stem;
  std::shared_ptr<BatchNorm2d> bn;
  std::shared_ptr<BasicBlock> l1, l2, l3;
  std::shared_ptr<Linear> fc;
};

// ---- driver -----------------------------------------------------------------------------

struct Options {
  std::string threads = "1,2";
  std::string filter;
  bool json = false;
  int warmup = 2;
  int reps = 5;
  double min_time = 2.0;
};

// One training step of a built model, and the size of what it trains (compare_train.sh
// checks that PyTorch trains as many parameters, in as many tensors).
struct Step {
  std::function<double()> run;
  int64_t params = 0, param_tensors = 0;
};

// One benchmark: builds the model and data, returns a closure running one training step.
struct Case {
  const char* name;
  std::function<Step()> make;
};

Step train_step(std::shared_ptr<Module> model, std::function<Tensor()> loss_fn) {
  auto opt = std::make_shared<optim::AdamW>(model->parameters(), optim::AdamOptions{.lr = 1e-4, .weight_decay = 1e-2});
  Step s;
  for (const Tensor& p : model->parameters()) s.params += p.numel(), ++s.param_tensors;
  s.run = [model, opt, loss_fn] {
    opt->zero_grad();
    Tensor loss = loss_fn();
    backward(loss);
    opt->step();
    return loss.item<double>();
  };
  return s;
}

std::vector<Case> cases() {
  return {
      {"crnn",
       [] {
         auto m = std::make_shared<Crnn>();
         Tensor x = randn({32, 3, 48, 320});
         // Targets: lengths 10..25, values in 1..C-1 (0 is the blank).
         std::vector<int64_t> lengths(32);
         for (int i = 0; i < 32; ++i) lengths[size_t(i)] = 10 + (i * 7) % 16;
         Tensor targets = randint(1, Crnn::kClasses, {32, 25});
         Tensor target_lengths = from_vector<int64_t>(lengths);
         Tensor input_lengths = full(Shape{32}, 80.0, DType::Int64);
         return train_step(m, [=] { return ctc_loss((*m)(x), targets, input_lengths, target_lengths); });
       }},
      {"gpt",
       [] {
         auto m = std::make_shared<Gpt>();
         Tensor ids = randint(0, Gpt::kVocab, {8, Gpt::kSeq});
         Tensor next = randint(0, Gpt::kVocab, {8 * Gpt::kSeq});
         return train_step(m, [=] { return cross_entropy(reshape((*m)(ids), {8 * Gpt::kSeq, Gpt::kVocab}), next); });
       }},
      {"resnet8",
       [] {
         auto m = std::make_shared<ResNet8>();
         Tensor x = randn({128, 3, 32, 32});
         Tensor y = randint(0, 10, {128});
         return train_step(m, [=] { return cross_entropy((*m)(x), y); });
       }},
      {"picodet",
       [] {
         using namespace skiff::detection;
         auto m = std::make_shared<PicoDet>(PicoDetOptions{.num_classes = 8, .backbone_scale = 1.0, .neck_channels = 128});
         Tensor x = randn({16, 3, 320, 320});
         // Three boxes per image, sizes 24..152 px, at fixed pseudo-random places.
         std::vector<GroundTruth> truth(16);
         for (int i = 0; i < 16; ++i)
           for (int k = 0; k < 3; ++k) {
             const float w = float(24 + (i * 37 + k * 53) % 129), h = float(24 + (i * 59 + k * 31) % 129);
             const float x0 = float((i * 71 + k * 97) % int(320 - w)), y0 = float((i * 43 + k * 89) % int(320 - h));
             truth[size_t(i)].boxes.push_back(Box{x0, y0, x0 + w, y0 + h});
             truth[size_t(i)].labels.push_back((i + k) % 8);
           }
         auto anchors = std::make_shared<AnchorPoints>();
         return train_step(m, [=] {
           DenseOutputs d = m->dense(x);
           if (anchors->size() == 0) *anchors = anchor_points(d.level_heights, d.level_widths, picodet_strides());
           return gfl_loss(d, *anchors, truth, m->options().reg_max).total;
         });
       }},
      {"encoder",
       [] {
         using namespace skiff::nlp;
         EncoderConfig c;
         c.pieces = 8000;
         c.labels = {"ham", "spam"};
         auto m = std::make_shared<EncoderForSequenceClassification>(c);
         // Rows of 48..128 tokens ([CLS] first), padded to 128: as a batch of mails.
         std::vector<int64_t> ids(32 * 128, c.pad_id()), labels(32);
         for (int64_t r = 0; r < 32; ++r) {
           const int64_t len = 48 + (r * 37) % 81;
           ids[size_t(r * 128)] = c.cls_id();
           for (int64_t j = 1; j < len; ++j) ids[size_t(r * 128 + j)] = 3 + (r * 131 + j * 17) % 7997;
           labels[size_t(r)] = r % 2;
         }
         Tensor x = from_vector(ids, {32, 128}), y = from_vector(labels);
         Tensor pad = padding_mask(x, c.pad_id());
         return train_step(m, [=] { return cross_entropy(m->forward(x, pad), y); });
       }},
      {"clip",
       [] {
         using namespace skiff::multimodal;
         ClipConfig c;
         c.vision_type = "cnn";
         c.vocab_size = 50;
         auto m = std::make_shared<ClipModel>(c);
         Generator g(0);
         Tensor images = randn({64, 3, 64, 64}, DType::Float32, &g);
         // Captions of 3..9 tokens ending in the end token (3), padded with 0 to 9.
         std::vector<int64_t> ids(64 * 9, 0);
         std::vector<bool> pad(64 * 9, true);
         for (int64_t r = 0; r < 64; ++r) {
           const int64_t len = 3 + (r * 5) % 7;
           for (int64_t j = 0; j < len; ++j) {
             ids[size_t(r * 9 + j)] = j + 1 == len ? 3 : 5 + (r * 7 + j * 11) % 45;
             pad[size_t(r * 9 + j)] = false;
           }
         }
         Tensor x = from_vector(ids, {64, 9}), mask = from_vector(pad, {64, 9});
         return train_step(m, [=] { return clip_loss(m->encode_image(images), m->encode_text(x, mask), m->logit_scale_value()); });
       }},
  };
}

double median_seconds(const std::function<double()>& step, const Options& o) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < o.warmup; ++i) step();
  std::vector<double> times;
  const auto start = clock::now();
  while (int(times.size()) < o.reps || std::chrono::duration<double>(clock::now() - start).count() < o.min_time) {
    const auto t0 = clock::now();
    step();
    times.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    if (times.size() > 200) break;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int run(const Options& o) {
  std::vector<int> thread_counts;
  std::stringstream list(o.threads);
  for (std::string part; std::getline(list, part, ',');) thread_counts.push_back(std::max(1, std::atoi(part.c_str())));
  for (int nt : thread_counts) {
    set_num_threads(nt);
    for (const Case& c : cases()) {
      if (!o.filter.empty() && std::string(c.name).find(o.filter) == std::string::npos) continue;
      manual_seed(0);
      Step step = c.make();
      const double t = median_seconds(step.run, o);
      if (o.json) {
        fmt::print("{}\n", nlohmann::json{{"bench", c.name}, {"threads", nt}, {"seconds", t}, {"params", step.params},
                                          {"param_tensors", step.param_tensors}}
                               .dump());
      } else {
        fmt::print("{:<10} threads={}  {:9.1f} ms/step\n", c.name, nt, t * 1e3);
      }
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace skiff::bench

int main(int argc, char** argv) {
  skiff::bench::Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "{} needs a value\n", a);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads-list")
      o.threads = value();
    else if (a == "--filter")
      o.filter = value();
    else if (a == "--json")
      o.json = true;
    else if (a == "--warmup")
      o.warmup = std::atoi(value().c_str());
    else if (a == "--reps")
      o.reps = std::atoi(value().c_str());
    else if (a == "--min-time")
      o.min_time = std::atof(value().c_str());
    else {
      fmt::print(stderr,
                 "usage: skiff_train_bench [--threads-list 1,2] [--filter NAME] [--json] [--warmup N] [--reps N] "
                 "[--min-time S]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  try {
    return skiff::bench::run(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "skiff_train_bench: {}\n", e.what());
    return 1;
  }
}
