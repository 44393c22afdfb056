// `skiff mm`: the multimodal suite's commands. `skiff mm synth DIR` writes the compositional
// image-caption set (suites/multimodal/synth.h); zeroshot, embed and search run a trained dual
// encoder from its exported directory (suites/multimodal/clip_files.h).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "framework/cli/command_registry.h"
#include "framework/core/progress_bar.h"
#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/io/safetensors.h"
#include "framework/ops/ops.h"
#include "suites/multimodal/beam_search.h"
#include "suites/multimodal/caption_dataset.h"
#include "suites/multimodal/clip_files.h"
#include "suites/multimodal/synth.h"
#include "suites/multimodal/zero_shot.h"

namespace skiff::multimodal {
namespace {

struct SynthOptions {
  std::string out;
  SynthCounts counts;
  uint64_t seed = 0;
  int size = 64;
  bool quiet = false;
};

void run_synth(const SynthOptions& o) {
  ProgressBar bar(!o.quiet);
  const int total = o.counts.train + o.counts.val + o.counts.heldout;
  const int step = total >= 2000 ? total / 4 : 0;  // off a terminal, a line every quarter of a long run
  write_synth_mm_dataset(o.out, o.counts, o.seed, o.size, [&](int done, int all) {
    if (bar.active()) bar.draw(double(done) / all, fmt::format("{}/{} images", done, all));
    else if (!o.quiet && step > 0 && done % step == 0 && done < all) fmt::print(stderr, "mm synth: {}/{} images\n", done, all);
  });
  bar.finish(false);
  fmt::print("wrote {} images ({}x{}): {} train, {} val, {} heldout (unseen colour-shape pairs) to {}\n", total,
             o.size, o.size, o.counts.train, o.counts.val, o.counts.heldout, o.out);
  fmt::print("captions: {0}/captions_<split>.json (COCO captions) and .tsv; summary: {0}/synth.json\n", o.out);
}

constexpr const char* kDefaultModelDir = "output/clip_synth/inference";

/// "a,b , c" -> {"a", "b", "c"} (blank entries dropped).
std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t\r") + 1);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

struct ZeroShotOptions {
  std::vector<std::string> images;
  std::string model_dir = kDefaultModelDir, labels, labels_file, templates;
  int topk = 3;
  bool json = false;
};

void run_zeroshot(const ZeroShotOptions& o) {
  std::vector<std::string> labels = o.labels_file.empty() ? split_list(o.labels, ',') : read_text_lines(o.labels_file);
  SKIFF_CHECK(labels.size() >= 2, "mm zeroshot: give at least two class names (--labels \"cat,dog\" or --labels_file)");
  const std::vector<std::string> templates =
      o.templates.empty() ? default_prompt_templates() : split_list(o.templates, '|');
  LoadedClip clip = load_clip_model(o.model_dir);
  NoGradGuard no_grad;
  const Tensor classes = class_embeddings(*clip.model, *clip.tokenizer, labels, templates);
  const Tensor probs = softmax(mul(matmul(embed_image_files(*clip.model, o.images), t(classes)),
                                   clip.model->logit_scale_value()), 1);
  const int64_t k = std::min<int64_t>(o.topk, int64_t(labels.size()));
  for (size_t i = 0; i < o.images.size(); ++i) {
    auto [values, index] = topk(select(probs, 0, int64_t(i)), k);
    const auto v = values.to_vector<float>();
    const auto idx = index.to_vector<int64_t>();
    if (o.json) {
      nlohmann::json top = nlohmann::json::array();
      for (int64_t r = 0; r < k; ++r)
        top.push_back({{"label", labels[size_t(idx[size_t(r)])]}, {"score", std::round(v[size_t(r)] * 1e4) / 1e4}});
      fmt::print("{}\n", nlohmann::json{{"input_path", o.images[i]}, {"labels", top}}.dump());
    } else {
      std::string line = o.images[i];
      for (int64_t r = 0; r < k; ++r) line += fmt::format("\t{} {:.4f}", labels[size_t(idx[size_t(r)])], v[size_t(r)]);
      fmt::print("{}\n", line);
    }
  }
}

struct EmbedOptions {
  std::vector<std::string> images, texts;
  std::string captions_file, model_dir = kDefaultModelDir, output;
  bool json = false;
};

void run_embed(const EmbedOptions& o) {
  const int kinds = !o.images.empty() + !o.texts.empty() + !o.captions_file.empty();
  SKIFF_CHECK(kinds == 1, "mm embed: give exactly one of --images, --text and --texts_file");
  LoadedClip clip = load_clip_model(o.model_dir);
  const bool images = !o.images.empty();
  const std::vector<std::string> items = images ? o.images : !o.texts.empty() ? o.texts : read_text_lines(o.captions_file);
  const Tensor e = images ? embed_image_files(*clip.model, items) : embed_texts(*clip.model, *clip.tokenizer, items);
  if (!o.output.empty()) {
    io::save_safetensors(o.output, {{"embeddings", e}},
                         {{"skiff.kind", images ? "image" : "text"}, {"skiff.items", nlohmann::json(items).dump()}});
    fmt::print(stderr, "wrote {} {} embeddings of {} values to {}\n", items.size(), images ? "image" : "text",
               e.size(1), o.output);
  }
  if (o.json || o.output.empty()) {
    const auto v = e.to_vector<float>();
    for (size_t i = 0; i < items.size(); ++i) {
      std::vector<float> row(v.begin() + int64_t(i) * e.size(1), v.begin() + int64_t(i + 1) * e.size(1));
      fmt::print("{}\n", nlohmann::json{{"item", items[i]}, {"embedding", row}}.dump());
    }
  }
}

struct SearchOptions {
  std::string index, model_dir = kDefaultModelDir, text, image;
  int topk = 5;
  bool json = false;
};

void run_search(const SearchOptions& o) {
  SKIFF_CHECK(o.text.empty() != o.image.empty(), "mm search: give exactly one of --text and --image");
  // The whole index is read: exact top-k, memory 4 x items x dimensions bytes.
  io::SafetensorsFile f = io::load_safetensors(o.index);
  auto e = f.tensors.find("embeddings");
  auto items_meta = f.metadata.find("skiff.items");
  SKIFF_CHECK(e != f.tensors.end() && e->second.dim() == 2 && items_meta != f.metadata.end(),
              "{}: not an index from skiff mm embed --output (needs 'embeddings' [N, D] and skiff.items)", o.index);
  const std::vector<std::string> items = nlohmann::json::parse(items_meta->second).get<std::vector<std::string>>();
  SKIFF_CHECK(int64_t(items.size()) == e->second.size(0), "{}: {} items for {} embeddings", o.index, items.size(),
              e->second.size(0));
  LoadedClip clip = load_clip_model(o.model_dir);
  SKIFF_CHECK(e->second.size(1) == clip.model->config().embed_dim, "{}: embeddings of {} values, but {} embeds into {}",
              o.index, e->second.size(1), o.model_dir, clip.model->config().embed_dim);
  const Tensor q = o.text.empty() ? embed_image_files(*clip.model, {o.image})
                                  : embed_texts(*clip.model, *clip.tokenizer, {o.text});
  const Tensor scores = squeeze(matmul(to(e->second, DType::Float32), t(q)), 1);
  const int64_t k = std::min<int64_t>(o.topk, int64_t(items.size()));
  auto [values, index] = topk(scores, k);
  const auto v = values.to_vector<float>();
  const auto idx = index.to_vector<int64_t>();
  for (int64_t r = 0; r < k; ++r) {
    const std::string& item = items[size_t(idx[size_t(r)])];
    if (o.json) fmt::print("{}\n", nlohmann::json{{"rank", r + 1}, {"item", item}, {"score", std::round(v[size_t(r)] * 1e4) / 1e4}}.dump());
    else fmt::print("{}\t{:.4f}\t{}\n", r + 1, v[size_t(r)], item);
  }
}

struct CaptionOptions {
  std::vector<std::string> images;
  std::string model_dir = "output/caption_synth/inference";
  int beam = 3, max_len = 15;
  double length_penalty = 1.0;
  bool json = false;
};

void run_caption(const CaptionOptions& o) {
  LoadedCaptioner cap = load_captioner(o.model_dir);
  const int32_t start = cap.tokenizer->token_to_id("[CLS]");
  const auto [end, pad] = end_and_pad_ids(*cap.tokenizer);
  SKIFF_CHECK(start >= 0, "{}: the captioner needs a [CLS] token to start captions", cap.tokenizer->source());
  NoGradGuard no_grad;
  for (const std::string& image : o.images) {
    std::vector<CaptionedImage> one{{image, {}, ""}};
    const Tensor mem = cap.model->memory(load_images(one, cap.model->config().image_size));
    const auto hyps = beam_search(cap.model->next_token_log_probs(mem), start, end,
                                  std::min<int64_t>(o.max_len, cap.model->config().context_length - 1), o.beam,
                                  o.length_penalty);
    std::string text;
    for (int64_t id : hyps.empty() ? std::vector<int64_t>{} : hyps[0].tokens) {
      if (id == end) break;
      if (id != pad && id != start) text += (text.empty() ? "" : " ") + cap.tokenizer->id_to_token(int32_t(id));
    }
    if (o.json)
      fmt::print("{}\n", nlohmann::json{{"input_path", image}, {"caption", text},
                                        {"log_prob", hyps.empty() ? 0.0 : std::round(hyps[0].log_prob * 1e4) / 1e4}}
                              .dump());
    else
      fmt::print("{}\t{}\n", image, text);
  }
}

void add_model_commands(CLI::App& mm) {
  const std::string model_help = "A trained dual encoder: model.safetensors, clip.json, vocab.txt (skiff export -c "
                                 "configs/multimodal/clip_synth.yml writes output/clip_synth/inference)";
  auto z = std::make_shared<ZeroShotOptions>();
  auto* zs = mm.add_subcommand("zeroshot", "Classify images among class names given as text (zero-shot)");
  zs->footer(
      "Each name is put into prompt templates (default: \"a {}\", \"a photo of a {}\", \"a picture of a {}\",\n"
      "\"one {}\"), the prompts' embeddings averaged per class; an image's classes are ranked by similarity.\n"
      "Examples:\n"
      "  skiff mm zeroshot data/mm/images/heldout_000000.png --labels \"red circle,blue circle,yellow square\"\n"
      "  skiff mm zeroshot shots/*.png --labels_file data/mm/classes.txt --json");
  zs->add_option("images", z->images, "Image files")->required()->check(CLI::ExistingFile);
  zs->add_option("--labels", z->labels, "Class names, comma-separated");
  zs->add_option("--labels_file,--labels-file", z->labels_file, "Class names, one per line")->check(CLI::ExistingFile);
  zs->add_option("--templates", z->templates, "Prompt templates with {} for the name, separated by |");
  zs->add_option("--model_dir,--model-dir", z->model_dir, model_help)->capture_default_str();
  zs->add_option("--topk", z->topk, "Classes listed per image")->capture_default_str()->check(CLI::PositiveNumber);
  zs->add_flag("--json", z->json, "One JSON object per image: input_path, labels [{label, score}]");
  zs->callback([z] { run_zeroshot(*z); });

  auto em = std::make_shared<EmbedOptions>();
  auto* embed = mm.add_subcommand("embed", "Embed images or texts into the shared space (safetensors or JSON lines)");
  embed->footer(
      "Examples:\n"
      "  skiff mm embed --images data/mm/images/val_*.png --output val_index.safetensors\n"
      "  skiff mm embed --text \"a red star\" --text \"two green circles\" --json");
  embed->add_option("--images", em->images, "Image files")->check(CLI::ExistingFile);
  embed->add_option("--text", em->texts, "A text (repeat for more)");
  embed->add_option("--texts_file,--texts-file", em->captions_file, "Texts, one per line")->check(CLI::ExistingFile);
  embed->add_option("--model_dir,--model-dir", em->model_dir, model_help)->capture_default_str();
  embed->add_option("--output,-o", em->output,
                    "Write 'embeddings' [N, D] and the items (metadata skiff.items) to this safetensors file, an index "
                    "for skiff mm search");
  embed->add_flag("--json", em->json, "Print one JSON object per item: item, embedding");
  embed->callback([em] { run_embed(*em); });

  auto se = std::make_shared<SearchOptions>();
  auto* search = mm.add_subcommand("search", "The items of an embedding index closest to a text or an image");
  search->footer(
      "Exact search: the whole index is read into memory (4 bytes x items x dimensions) and every item is\n"
      "scored by cosine similarity.\n"
      "Examples:\n"
      "  skiff mm search val_index.safetensors --text \"a yellow diamond below a purple circle\"\n"
      "  skiff mm search val_index.safetensors --image query.png --topk 10 --json");
  search->add_option("index", se->index, "An index from skiff mm embed --output")->required()->check(CLI::ExistingFile);
  search->add_option("--text", se->text, "Query text");
  search->add_option("--image", se->image, "Query image")->check(CLI::ExistingFile);
  search->add_option("--model_dir,--model-dir", se->model_dir, model_help)->capture_default_str();
  search->add_option("--topk", se->topk, "Items listed")->capture_default_str()->check(CLI::PositiveNumber);
  search->add_flag("--json", se->json, "One JSON object per item: rank, item, score");
  search->callback([se] { run_search(*se); });

  auto ca = std::make_shared<CaptionOptions>();
  auto* caption = mm.add_subcommand("caption", "Describe images in words with a trained captioner");
  caption->footer(
      "Beam search from [CLS] to [SEP]; finished captions ranked by log-probability / length^penalty.\n"
      "Examples:\n"
      "  skiff mm caption data/mm/images/val_000001.png\n"
      "  skiff mm caption shots/*.png --beam 5 --json");
  caption->add_option("images", ca->images, "Image files")->required()->check(CLI::ExistingFile);
  caption->add_option("--model_dir,--model-dir", ca->model_dir,
                      "A trained captioner: model.safetensors, captioner.json, vocab.txt (skiff export -c "
                      "configs/multimodal/caption_synth.yml writes output/caption_synth/inference)")
      ->capture_default_str();
  caption->add_option("--beam", ca->beam, "Beam width (1: greedy)")->capture_default_str()->check(CLI::PositiveNumber);
  caption->add_option("--max_len,--max-len", ca->max_len, "Longest caption in tokens")->capture_default_str()->check(CLI::PositiveNumber);
  caption->add_option("--length_penalty,--length-penalty", ca->length_penalty,
                      "Exponent of the length normalisation (0: raw log-probability)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  caption->add_flag("--json", ca->json, "One JSON object per image: input_path, caption, log_prob");
  caption->callback([ca] { run_caption(*ca); });
}

void add_mm_command(CLI::App& app) {
  auto* mm = app.add_subcommand("mm", "Image-text models: synthetic data, zero-shot classification, embeddings, search, captions");
  mm->require_subcommand(1);
  auto s = std::make_shared<SynthOptions>();
  auto* synth = mm->add_subcommand("synth", "Render a compositional image-caption set with held-out combinations");
  synth->footer(
      "Scenes: one object (\"a large red triangle\"), two or three equal ones (\"two green circles\"), two\n"
      "in a relation (\"a red triangle left of a blue circle\"), or a written word (\"the word tree written\n"
      "in yellow\"); 6 shapes, 6 colours, 2 sizes, on grey flat, gradient or noise backgrounds. Six\n"
      "colour-shape pairs (circle-blue, square-yellow, triangle-purple, star-orange, cross-red,\n"
      "diamond-green) never appear in train or val; the heldout split shows only them, so zero-shot\n"
      "accuracy there measures generalisation. Writes DIR/images/<split>_<id>.png,\n"
      "DIR/captions_<split>.json (COCO captions; single-object images carry \"label\"), DIR/captions_<split>.tsv\n"
      "(file<TAB>caption) and DIR/synth.json last. The same seed gives the same bytes.\n"
      "Examples:\n"
      "  skiff mm synth data/mm                          1000 train, 200 val, 200 heldout images of 64x64\n"
      "  skiff mm synth data/mm --train 5000 --size 96 --seed 3");
  synth->add_option("dir", s->out, "Output directory")->required();
  synth->add_option("--train", s->counts.train, "Training images")->capture_default_str()->check(CLI::NonNegativeNumber);
  synth->add_option("--val", s->counts.val, "Validation images (seen combinations)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  synth->add_option("--heldout", s->counts.heldout, "Images of the held-out colour-shape pairs")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  synth->add_option("--seed", s->seed, "Random seed (same seed, same files)")->capture_default_str();
  synth->add_option("--size", s->size, "Image side in pixels (32..1024)")->capture_default_str()->check(CLI::Range(32, 1024));
  synth->add_flag("--quiet,-q", s->quiet, "No progress on stderr");
  synth->callback([s] { run_synth(*s); });
  add_model_commands(*mm);
}

}  // namespace
}  // namespace skiff::multimodal

SKIFF_REGISTER_COMMAND("mm", skiff::multimodal::add_mm_command);
