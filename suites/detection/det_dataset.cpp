#include "suites/detection/det_dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "framework/config/schema.h"
#include "framework/core/error.h"

namespace skiff::detection {

namespace fs = std::filesystem;

namespace {

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

CocoDetDatasetOptions read_options(const config::Section& s) {
  using config::Key;
  using config::Type;
  config::Schema schema{{Key{.name = "name", .type = Type::String, .choices = {"COCODataSet"}},
                         Key{.name = "dataset_dir", .type = Type::String},
                         Key{.name = "image_dir", .type = Type::String},
                         Key{.name = "anno_path", .type = Type::String, .required = true},
                         Key{.name = "data_fields", .type = Type::Strings},
                         Key{.name = "allow_empty", .type = Type::Boolean}}};
  const std::string tag = s.node().Tag();
  if (!tag.empty() && tag != "?" && tag != "!" && tag != "!COCODataSet")
    throw ValueError(fmt::format("{}: unknown dataset '{}' (known: COCODataSet)", s.where(""), tag));
  config::validate(s, schema);
  for (const auto& f : s.texts("data_fields", std::vector<std::string>{}))
    if (f != "image" && f != "gt_bbox" && f != "gt_class" && f != "is_crowd" && f != "im_id")
      throw ValueError(fmt::format("{}: unsupported field '{}' (known: image, gt_bbox, gt_class, is_crowd, im_id)",
                                   s.where("data_fields"), f));
  return {.dataset_dir = s.text("dataset_dir", "."),
          .image_dir = s.text("image_dir", ""),
          .anno_path = s.text("anno_path"),
          .allow_empty = s.boolean("allow_empty", false)};
}

}  // namespace

CocoDetDataset::CocoDetDataset(const CocoDetDatasetOptions& options) { load(options); }

CocoDetDataset::CocoDetDataset(const config::Section& section) { load(read_options(section)); }

void CocoDetDataset::load(const CocoDetDatasetOptions& o) {
  const fs::path root(o.dataset_dir);
  anno_file_ = (root / o.anno_path).string();
  coco_ = load_coco_dataset(anno_file_);
  std::vector<size_t> order(coco_.categories.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return coco_.categories[a].id < coco_.categories[b].id; });
  std::unordered_map<int64_t, int> label_of;
  for (size_t k : order) {
    label_of[coco_.categories[k].id] = int(category_ids_.size());
    category_ids_.push_back(coco_.categories[k].id);
    class_names_.push_back(coco_.categories[k].name);
  }
  std::vector<std::vector<size_t>> anns(coco_.images.size());
  for (size_t a = 0; a < coco_.annotations.size(); ++a)
    anns[size_t(coco_.image_index(coco_.annotations[a].image_id))].push_back(a);
  for (size_t i = 0; i < coco_.images.size(); ++i) {
    const CocoImage& im = coco_.images[i];
    DetSample s;
    s.image_id = im.id;
    s.where = fmt::format("{}: images[{}] (id {})", anno_file_, i, im.id);
    SKIFF_CHECK(!im.file_name.empty(), "{}: no file_name", s.where);
    s.path = (root / o.image_dir / im.file_name).string();
    s.orig_h = int(im.height), s.orig_w = int(im.width);
    bool targets = false;
    for (size_t a : anns[i]) {
      const CocoAnnotation& an = coco_.annotations[a];
      Box b{float(an.bbox[0]), float(an.bbox[1]), float(an.bbox[0] + an.bbox[2]), float(an.bbox[1] + an.bbox[3])};
      if (im.width > 0 && im.height > 0) {
        b = {std::clamp(b.x0, 0.f, float(im.width)), std::clamp(b.y0, 0.f, float(im.height)),
             std::clamp(b.x1, 0.f, float(im.width)), std::clamp(b.y1, 0.f, float(im.height))};
      }
      if (!(b.x1 - b.x0 > 1e-5f && b.y1 - b.y0 > 1e-5f)) continue;
      s.boxes.push_back(b);
      s.labels.push_back(label_of.at(an.category_id));
      s.is_crowd.push_back(an.iscrowd ? 1 : 0);
      targets = targets || !an.iscrowd;
    }
    if (!targets && !o.allow_empty) {
      ++skipped_empty_;
      continue;
    }
    if (!fs::exists(s.path))
      throw IoError(fmt::format("{}: image '{}' listed in {} does not exist", s.path, im.file_name, anno_file_));
    records_.push_back(std::move(s));
  }
  SKIFF_CHECK(!records_.empty(), "{}: no usable image ({} of {} have no boxes; set allow_empty: true to keep them)",
              anno_file_, skipped_empty_, coco_.images.size());
}

const DetSample& CocoDetDataset::record(int64_t index) const {
  SKIFF_CHECK_INDEX(index >= 0 && index < size(), "CocoDetDataset: image {} out of range [0, {})", index, size());
  return records_[size_t(index)];
}

DetLoader::DetLoader(std::shared_ptr<const CocoDetDataset> dataset, std::shared_ptr<const DetPipeline> pipeline,
                     DetReaderSettings settings, uint64_t seed)
    : dataset_(std::move(dataset)), pipeline_(std::move(pipeline)), settings_(settings), seed_(seed) {
  SKIFF_CHECK(settings_.batch_size >= 1, "DetLoader: expected batch_size >= 1, got {}", settings_.batch_size);
}

int64_t DetLoader::num_batches() const {
  const int64_t n = dataset_->size(), b = settings_.batch_size;
  return settings_.drop_last ? n / b : (n + b - 1) / b;
}

DetBatch DetLoader::batch(int64_t epoch, int64_t index) const {
  SKIFF_CHECK_INDEX(index >= 0 && index < num_batches(), "DetLoader: batch {} out of range [0, {})", index,
                    num_batches());
  const int64_t n = dataset_->size();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (settings_.shuffle) {
    Generator g(mix(seed_ ^ mix(uint64_t(epoch) + 1)));
    for (size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[size_t(g.next_u64() % uint64_t(i))]);
  }
  Generator gen(mix(mix(seed_ + 0x51ED) ^ mix(uint64_t(epoch) << 32 ^ uint64_t(index))));
  std::vector<DetSample> samples;
  for (int64_t k = index * settings_.batch_size; k < std::min(n, (index + 1) * settings_.batch_size); ++k)
    samples.push_back(dataset_->record(order[size_t(k)]));
  return pipeline_->run(std::move(samples), gen);
}

}  // namespace skiff::detection
