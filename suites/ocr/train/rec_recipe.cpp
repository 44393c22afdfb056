#include "suites/ocr/train/rec_recipe.h"

#include <filesystem>
#include <fstream>
#include <mutex>

#include "framework/config/config.h"
#include "framework/core/error.h"
#include "framework/engine/predictor.h"
#include "framework/graph/onnx_export.h"
#include "framework/io/file.h"
#include "framework/ops/ops.h"
#include "framework/train/recipe.h"
#include "framework/zoo/zoo.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/preprocess.h"
#include "suites/ocr/rec_inference_config.h"
#include "suites/ocr/train/rec_data.h"
#include "suites/ocr/train/rec_metric.h"
#include "suites/ocr/train/rec_model.h"
#include "suites/ocr/train/transforms.h"

namespace skiff::ocr {

namespace fs = std::filesystem;
using config::Key;
using config::Schema;
using config::Section;
using config::Type;

namespace {

// ---- components ---------------------------------------------------------------------------

struct ModelContext {
  const Charset& charset;
  const Section& global;
};
using ArchitectureFactory = config::Factory<std::unique_ptr<RecModel>, const ModelContext&>;

Key model_type_key() {
  return Key{.name = "model_type", .type = Type::String, .help = "rec (text recognition)", .required = true,
             .choices = {"rec"}};
}

using PartFactory = config::Factory<void, CrnnOptions&>;  // a CRNN part fills its share of the options

const PartFactory& backbones() {
  static PartFactory f("backbone");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("MiniVGG", "six conv-bn-relu blocks, height pooled to 1",
          Schema{{Key{.name = "channels", .type = Type::Integers, .help = "six channel counts", .min = 1}}},
          [](const Section& s, CrnnOptions& o) {
            o.channels = s.integers("channels", o.channels, 1);
            if (o.channels.size() != 6)
              throw ValueError(fmt::format("{}: needs six channel counts, got {}", s.where("channels"), o.channels.size()));
          });
  });
  return f;
}

const PartFactory& necks() {
  static PartFactory f("neck");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("SequenceEncoder", "two-layer bidirectional LSTM over the width",
          Schema{{Key{.name = "encoder_type", .type = Type::String, .choices = {"rnn"}},
                  Key{.name = "hidden_size", .type = Type::Integer, .help = "per direction", .min = 1}}},
          [](const Section& s, CrnnOptions& o) { o.hidden_size = s.integer("hidden_size", o.hidden_size, 1); });
  });
  return f;
}

const PartFactory& heads() {
  static PartFactory f("head");
  static std::once_flag once;
  std::call_once(once, [] {
    // Its size is the dictionary's (CrnnOptions::num_classes, set by the architecture).
    f.add("CTCHead", "linear layer to the dictionary's classes",
          Schema{{Key{.name = "fc_decay", .type = Type::Number, .help = "accepted for PaddleOCR recipes", .min = 0}}},
          [](const Section&, CrnnOptions&) {});
  });
  return f;
}

const ArchitectureFactory& architectures() {
  static ArchitectureFactory f("architecture");
  static std::once_flag once;
  std::call_once(once, [] {
    backbones(), necks(), heads();
    Key algorithm{.name = "algorithm", .type = Type::String, .help = "a label for the run (e.g. SVTR_LCNet, CRNN)"};

    f.add("ImportedGraph", "the ONNX recognizer named by Global.pretrained_model, trained as a graph module",
          Schema{{model_type_key(), algorithm}}, [](const Section&, const ModelContext& c) -> std::unique_ptr<RecModel> {
            if (!c.global.has("pretrained_model"))
              throw ValueError(fmt::format("{}: ImportedGraph needs Global.pretrained_model (a zoo name such as "
                                           "ppocr-v4-rec or an .onnx file)",
                                           c.global.where("pretrained_model")));
            fs::path onnx = zoo::resolve_model_path(c.global.text("pretrained_model"));
            auto m = std::make_unique<ImportedRecognizer>(onnx.string());
            if (m->num_classes() != int64_t(c.charset.size()))
              throw ValueError(fmt::format("{}: the model outputs {} classes but the dictionary gives {} (blank, "
                                           "entries{}); use the model's own dictionary",
                                           c.global.where("character_dict_path"), m->num_classes(), c.charset.size(),
                                           c.global.boolean("use_space_char", true) ? ", space" : ""));
            return m;
          });
    f.add("CRNN", "CRNN written in skiff's nn API (Backbone MiniVGG, Neck SequenceEncoder, Head CTCHead)",
          Schema{{model_type_key(), algorithm,
                  Key{.name = "Transform", .type = Type::Any, .help = "must be empty (no rectification network)"},
                  Key{.name = "Backbone", .type = Type::Component, .required = true, .kind = "backbone"},
                  Key{.name = "Neck", .type = Type::Component, .required = true, .kind = "neck"},
                  Key{.name = "Head", .type = Type::Component, .required = true, .kind = "head"}}},
          [](const Section& s, const ModelContext& c) -> std::unique_ptr<RecModel> {
            if (s.has("Transform"))
              throw ValueError(fmt::format("{}: CRNN has no Transform stage; leave it empty", s.where("Transform")));
            CrnnOptions o{.num_classes = int64_t(c.charset.size())};
            backbones().make(s.section("Backbone"), o);
            necks().make(s.section("Neck"), o);
            heads().make(s.section("Head"), o);
            return std::make_unique<Crnn>(o);
          });
  });
  return f;
}

struct CtcLossSpec {
  bool zero_infinity = true;  ///< ignore impossible alignments
};

const config::Factory<CtcLossSpec>& losses() {
  static config::Factory<CtcLossSpec> f("loss");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("CTCLoss", "connectionist temporal classification",
          Schema{{Key{.name = "use_focal_loss", .type = Type::Boolean, .help = "must be false"},
                  Key{.name = "zero_infinity", .type = Type::Boolean, .help = "ignore impossible alignments"}}},
          [](const Section& s) {
            if (s.boolean("use_focal_loss", false))
              throw ValueError(fmt::format("{}: focal CTC is not implemented; remove it", s.where("use_focal_loss")));
            return CtcLossSpec{.zero_infinity = s.boolean("zero_infinity", true)};
          });
  });
  return f;
}

// PostProcess: class probabilities [N, T, C] to text, one per line.
using RecDecoder = std::function<std::vector<DecodedText>(const Tensor& probs)>;

RecDecoder greedy_ctc_decoder(const Charset& charset) {
  return [&charset](const Tensor& probs) {
    std::vector<DecodedText> out;
    const int64_t steps = probs.size(1), classes = probs.size(2);
    for (int64_t i = 0; i < probs.size(0); ++i)
      out.push_back(ctc_greedy_decode(probs.data<float>() + i * steps * classes, int(steps), int(classes), charset));
    return out;
  };
}

const config::Factory<RecDecoder, const Charset&>& postprocesses() {
  static config::Factory<RecDecoder, const Charset&> f("postprocess");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("CTCLabelDecode", "greedy CTC decoding with the Global dictionary", Schema{},
          [](const Section&, const Charset& charset) { return greedy_ctc_decoder(charset); });
  });
  return f;
}

const config::Factory<MetricSpec>& metrics() {
  static config::Factory<MetricSpec> f("metric");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("RecMetric", "acc (whole-line match) and norm_edit_dis",
          Schema{{Key{.name = "main_indicator", .type = Type::String, .choices = {"acc", "norm_edit_dis"}},
                  Key{.name = "ignore_space", .type = Type::Boolean, .help = "compare without spaces (default true)"}}},
          [](const Section& s) {
            return MetricSpec{.main_indicator = s.text("main_indicator", "acc"),
                              .ignore_space = s.boolean("ignore_space", true)};
          });
  });
  return f;
}

const DatasetFactory& datasets() {
  static DatasetFactory f("dataset");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("SimpleDataSet", "label files of 'image_path<TAB>text' lines",
          Schema{{Key{.name = "data_dir", .type = Type::Path, .help = "image paths are relative to it"},
                  Key{.name = "label_file_list", .type = Type::Paths, .required = true},
                  Key{.name = "transforms", .type = Type::Components, .required = true, .kind = "transform"}}},
          make_simple_dataset);
  });
  return f;
}

// Registers every rec component (the schema asks for them by kind).
void register_components() { architectures(), losses(), postprocesses(), metrics(), datasets(), transforms(); }

// ---- reading a recipe -----------------------------------------------------------------------

Charset charset_of(const Recipe& r) {
  Section g = r.section("Global");
  bool space = g.boolean("use_space_char", true);
  if (g.has("character_dict_path")) return Charset::load(g.text("character_dict_path"), space);
  std::string pretrained = g.text("pretrained_model", "");
  if (!pretrained.empty() && !fs::exists(pretrained))
    return Charset::load(zoo::fetch_file(pretrained, "ppocr_keys_v1.txt"), space);
  if (!pretrained.empty()) {
    fs::path beside = fs::path(pretrained).parent_path() / "ppocr_keys_v1.txt";
    if (fs::exists(beside)) return Charset::load(beside, space);
  }
  throw ValueError(fmt::format("{}: missing (the dictionary: one character per line)", g.where("character_dict_path")));
}

TransformContext transform_context(const Recipe& r, const Charset& charset) {
  return {.charset = &charset, .max_text_length = int(r.section("Global").integer("max_text_length", 25, 1))};
}

// Every example must hold what the CTC loss needs.
void require_training_outputs(const TransformPipeline& p) { p.require_outputs({"image", "label", "length"}); }

// A split's transform list.
std::shared_ptr<const TransformPipeline> pipeline_of(const Recipe& r, const std::string& split, const Charset& charset) {
  auto p = std::make_shared<const TransformPipeline>(r.section(split).section("dataset"), transform_context(r, charset));
  require_training_outputs(*p);
  return p;
}

// The input size of the model: Eval's RecResizeImg.
const RecResizeImg& eval_resize(const TransformPipeline& eval) { return eval.get<RecResizeImg>("RecResizeImg"); }

std::shared_ptr<TransformDataset> make_dataset(const Recipe& r, const std::string& split, const Charset& charset) {
  auto set = datasets().make(r.section(split).section("dataset"), transform_context(r, charset));
  require_training_outputs(set->pipeline());
  if (set->skipped() > 0)
    std::fprintf(stderr, "%s: skipped %lld lines (empty after dropping characters outside the dictionary, or longer "
                 "than max_text_length %lld)\n", split.c_str(), (long long)set->skipped(),
                 (long long)r.section("Global").integer("max_text_length", 25, 1));
  return set;
}

std::unique_ptr<RecModel> make_model(const Recipe& r, const Charset& charset) {
  Section global = r.section("Global");
  return architectures().make(r.section("Architecture"), ModelContext{charset, global});
}

// The model a non-training command runs, in eval mode, with the weights of Global.checkpoints,
// else the run's best model, else the pretrained model (see load_trained_weights).
std::unique_ptr<RecModel> trained_model(const Recipe& r, const Charset& charset) {
  auto model = make_model(r, charset);
  load_trained_weights(*model, r);
  return model;
}

// The probabilities of a batch in eval mode.
Tensor probabilities(RecModel& model, const Tensor& images) {
  NoGradGuard no_grad;
  Tensor p = model.forward(images);
  return p.is_contiguous() ? p : skiff::detail::contiguous_copy(p);
}

// PostProcess, CTCLabelDecode when the recipe has none.
RecDecoder decoder_of(const Recipe& r, const Charset& charset) {
  return r.top().has("PostProcess") ? postprocesses().make(r.section("PostProcess"), charset)
                                    : greedy_ctc_decoder(charset);
}

std::string label_text(const Tensor& label, const Tensor& length, int64_t i, const Charset& charset) {
  std::string s;
  const int64_t n = length.data<int64_t>()[i], width = label.size(1);
  for (int64_t k = 0; k < n; ++k) s += charset.at(size_t(label.data<int64_t>()[i * width + k]));
  return s;
}

RecMetricResult run_eval(RecModel& model, data::DataLoader& loader, const RecDecoder& decode, const Charset& charset,
                         bool ignore_space) {
  RecMetric metric(ignore_space);
  bool was_training = model.is_training();
  model.eval();
  auto pass = loader.epoch(0);
  while (auto batch = pass.next()) {
    auto decoded = decode(probabilities(model, batch->at("image")));
    for (size_t i = 0; i < decoded.size(); ++i)
      metric.add(decoded[i].text, label_text(batch->at("label"), batch->at("length"), int64_t(i), charset));
  }
  model.train(was_training);
  return metric.result();
}

class RecTask : public train::TrainTask {
 public:
  RecTask(RecModel& model, data::DataLoader& eval_loader, RecDecoder decode, const Charset& charset, bool zero_infinity,
          bool ignore_space)
      : model_(model), eval_(eval_loader), decode_(std::move(decode)), charset_(charset), zero_infinity_(zero_infinity),
        ignore_space_(ignore_space) {}
  nn::Module& model() override { return model_; }
  Tensor loss(const data::Example& b) override {
    Tensor lp = permute(model_.log_probs(b.at("image")), {1, 0, 2});  // [T, N, C]
    const int64_t steps = lp.size(0), n = lp.size(1);
    std::vector<int64_t> input_lengths(size_t(n), steps);
    std::vector<int64_t> target_lengths(b.at("length").data<int64_t>(), b.at("length").data<int64_t>() + n);
    return ctc_loss(lp, b.at("label"), input_lengths, target_lengths, 0, Reduction::Mean, zero_infinity_);
  }
  std::map<std::string, double> evaluate() override {
    auto r = run_eval(model_, eval_, decode_, charset_, ignore_space_);
    return {{"acc", r.acc}, {"norm_edit_dis", r.norm_edit_dis}};
  }

 private:
  RecModel& model_;
  data::DataLoader& eval_;
  RecDecoder decode_;
  const Charset& charset_;
  bool zero_infinity_, ignore_space_;
};

}  // namespace

const Schema& rec_recipe_schema() {
  static const Schema schema = [] {
    register_components();
    return recipe_schema(
        {Key{.name = "character_dict_path", .type = Type::Path, .help = "dictionary, one character per line"},
         Key{.name = "max_text_length", .type = Type::Integer, .help = "longest label kept", .min = 1},
         Key{.name = "use_space_char", .type = Type::Boolean, .help = "add ' ' as the last class"},
         Key{.name = "infer_img", .type = Type::String, .help = "default image for skiff predict"},
         Key{.name = "save_res_path", .type = Type::String, .help = "accepted for PaddleOCR recipes"},
         Key{.name = "infer_mode", .type = Type::Boolean, .help = "accepted for PaddleOCR recipes"}},
        {.architecture = "architecture", .loss = "loss", .metric = "metric", .postprocess = "postprocess",
         .dataset = "dataset"});
  }();
  return schema;
}

void RecRecipeRunner::check(const Recipe& r, const config::ValidateOptions& options) const {
  config::validate(r.top(), rec_recipe_schema(), options);
  // Components that build without the dictionary or data build now, not hours into a run.
  losses().make(r.section("Loss"));
  metrics().make(r.section("Metric"));
}

train::FitResult train_recognizer(const Recipe& r, const std::optional<fs::path>& resume, bool quiet) {
  Section global = r.section("Global");
  train::seed_run(global);
  Charset charset = charset_of(r);
  auto model = make_model(r, charset);
  // A weights file on top of the architecture (ImportedGraph already holds the pretrained weights).
  if (r.section("Architecture").text("name") != "ImportedGraph") load_pretrained_weights(*model, r);

  auto train_set = make_dataset(r, "Train", charset);
  auto eval_set = make_dataset(r, "Eval", charset);
  data::DataLoader train_loader(train_set, loader_options(r, "Train", true));
  data::DataLoader eval_loader(eval_set, loader_options(r, "Eval", false));

  train::TrainerOptions o = train::trainer_options(global, r.section("Optimizer"), train_loader.num_batches());
  MetricSpec metric = metrics().make(r.section("Metric"));
  o.metric = metric.main_indicator;
  o.higher_is_better = true;
  o.quiet = quiet;
  record_recipe(r, o);
  auto opt = train::build_optimizer(r.section("Optimizer"), model->parameters(), o.epochs, train_loader.num_batches());
  RecTask task(*model, eval_loader, decoder_of(r, charset), charset, losses().make(r.section("Loss")).zero_infinity,
               metric.ignore_space);
  train::Trainer trainer(task, *opt.optimizer, opt.scheduler.get(), train_loader, o);
  return trainer.fit(resume);
}

std::map<std::string, double> evaluate_recognizer(const Recipe& r) {
  Charset charset = charset_of(r);
  auto model = trained_model(r, charset);
  data::DataLoader loader(make_dataset(r, "Eval", charset), loader_options(r, "Eval", false));
  auto m = run_eval(*model, loader, decoder_of(r, charset), charset, metrics().make(r.section("Metric")).ignore_space);
  return {{"acc", m.acc}, {"norm_edit_dis", m.norm_edit_dis}, {"samples", double(m.count)}};
}

std::vector<RecPrediction> predict_recognizer(const Recipe& r, const std::vector<std::string>& images) {
  Charset charset = charset_of(r);
  auto model = trained_model(r, charset);
  auto eval = pipeline_of(r, "Eval", charset);
  const RecResizeImg& resize = eval_resize(*eval);
  RecPreprocessParams p{.height = resize.height(), .base_width = resize.width(), .fixed_width = resize.width()};
  RecDecoder decode = decoder_of(r, charset);
  std::vector<RecPrediction> out;
  for (const auto& path : images) {
    cv::Mat img = read_image(path);
    std::vector<float> buf;
    int width = preprocess_rec_batch(std::span<const cv::Mat>(&img, 1), buf, p);
    Tensor x = from_blob(buf.data(), Shape{1, 3, resize.height(), width}, DType::Float32);
    auto t = decode(probabilities(*model, x))[0];
    out.push_back({path, t.text, t.score});
  }
  return out;
}

double export_recognizer(const Recipe& r, const fs::path& dir) {
  Charset charset = charset_of(r);
  auto model = trained_model(r, charset);
  auto eval = pipeline_of(r, "Eval", charset);
  const RecResizeImg& d = eval_resize(*eval);
  graph::Graph g = model->inference_graph(d.height(), d.width());
  fs::create_directories(dir);
  graph::export_onnx(g, (dir / "inference.onnx").string());

  RecInferenceConfig ic;
  ic.model_name = r.section("Architecture").text("algorithm", r.section("Architecture").text("name"));
  ic.height = d.height();
  ic.width = d.width();
  // A traced CRNN has a static width; an imported graph keeps the ONNX file's dynamic one.
  ic.fixed_width = r.section("Architecture").text("name") != "ImportedGraph";
  ic.batch_size = 0;  // both architectures export with a dynamic batch
  ic.use_space_char = r.section("Global").boolean("use_space_char", true);
  for (size_t i = 1; i < charset.size() - (ic.use_space_char ? 1 : 0); ++i) ic.characters.push_back(charset.at(i));
  write_rec_inference_config(dir / "inference.yml", ic);

  // The exported file must give the eager model's probabilities.
  Generator gen(7);
  Tensor x = rand({3, 3, d.height(), d.width()}, DType::Float32, &gen, -1.0, 1.0);
  Tensor eager = probabilities(*model, x);
  engine::Predictor exported((dir / "inference.onnx").string());
  Tensor onnx = exported.run(std::vector<Tensor>{x})[0];
  SKIFF_CHECK_SHAPE(onnx.shape() == eager.shape(), "exported model gives shape {}, the eager model {}", onnx.shape(),
                    eager.shape());
  return amax(abs(sub(onnx, eager))).item<double>();
}

}  // namespace skiff::ocr

namespace skiff::ocr {

train::FitResult RecRecipeRunner::train(const Recipe& r, const train::TrainRequest& request) const {
  return train_recognizer(r, resume_from(r, request), request.quiet);
}

std::map<std::string, double> RecRecipeRunner::evaluate(const Recipe& r) const { return evaluate_recognizer(r); }

std::vector<std::string> RecRecipeRunner::predict(const Recipe& r, const train::PredictRequest& request) const {
  if (!request.save_dir.empty())
    throw ValueError(fmt::format("{}: --save_path draws detection boxes; this is a recognition recipe", r.file));
  std::vector<std::string> lines;
  for (const auto& p : predict_recognizer(r, predict_inputs(r, request)))
    lines.push_back(fmt::format("{}\t{}\t{:.4f}", p.image, p.text, p.score));
  return lines;
}

train::ExportResult RecRecipeRunner::export_model(const Recipe& r, const fs::path& dir) const {
  return exported(dir, export_recognizer(r, dir));
}

}  // namespace skiff::ocr
