#include "suites/detection/coco_dataset.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::detection {

namespace {

using nlohmann::json;

// Reads fields of one JSON document; every error names the document and the
// element's path ("annotations[12].bbox").
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(std::string_view where, std::string_view what) const {
    SKIFF_THROW(ValueError, "{}: {}: {}", source_, where, what);
  }

  json parse(std::string_view text) const {
    json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) SKIFF_THROW(ValueError, "{}: not valid JSON", source_);
    return j;
  }

  const json* field(const json& obj, const std::string& where, const char* key, bool required) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(where, fmt::format("missing \"{}\"", key));
      return nullptr;
    }
    return &*it;
  }

  int64_t integer(const json& v, const std::string& where) const {
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(where, fmt::format("expected an integer within int64, got {}", v.dump()));
    if (!v.is_number_integer()) fail(where, fmt::format("expected an integer, got {}", v.dump()));
    return v.get<int64_t>();
  }

  double number(const json& v, const std::string& where) const {
    if (!v.is_number()) fail(where, fmt::format("expected a number, got {}", v.dump()));
    double d = v.get<double>();
    if (!std::isfinite(d)) fail(where, fmt::format("expected a finite number, got {}", v.dump()));
    return d;
  }

  std::string string(const json& v, const std::string& where) const {
    if (!v.is_string()) fail(where, fmt::format("expected a string, got {}", v.dump()));
    return v.get<std::string>();
  }

  const json& array(const json& obj, const char* key) const {
    const json* v = field(obj, "top level", key, true);
    if (!v->is_array()) fail(key, fmt::format("expected an array, got {}", v->type_name()));
    return *v;
  }

  void require_object(const json& v, const std::string& where) const {
    if (!v.is_object()) fail(where, fmt::format("expected an object, got {}", v.type_name()));
  }

  // [x, y, w, h]: four finite numbers; w and h > 0 (strict) or >= 0.
  BoxXywh box(const json& v, const std::string& where, bool strict) const {
    if (!v.is_array() || v.size() != 4)
      fail(where, fmt::format("expected [x, y, width, height], got {}", v.dump()));
    BoxXywh b;
    for (size_t i = 0; i < 4; ++i) b[i] = number(v[i], where);
    const char* rule = strict ? "> 0" : ">= 0";
    if (strict ? !(b[2] > 0) : !(b[2] >= 0)) fail(where, fmt::format("width must be {}, got {}", rule, b[2]));
    if (strict ? !(b[3] > 0) : !(b[3] >= 0)) fail(where, fmt::format("height must be {}, got {}", rule, b[3]));
    return b;
  }

 private:
  std::string_view source_;
};

std::string at(const char* array, size_t i) { return fmt::format("{}[{}]", array, i); }
std::string at(const char* array, size_t i, const char* key) { return fmt::format("{}[{}].{}", array, i, key); }

}  // namespace

int64_t CocoDataset::image_index(int64_t image_id) const {
  auto it = image_index_.find(image_id);
  return it == image_index_.end() ? -1 : it->second;
}

int64_t CocoDataset::category_index(int64_t category_id) const {
  auto it = category_index_.find(category_id);
  return it == category_index_.end() ? -1 : it->second;
}

void CocoDataset::build_index() {
  image_index_.clear();
  category_index_.clear();
  for (size_t i = 0; i < images.size(); ++i)
    SKIFF_CHECK(image_index_.emplace(images[i].id, int64_t(i)).second, "images[{}]: duplicate image id {}", i,
                images[i].id);
  for (size_t i = 0; i < categories.size(); ++i)
    SKIFF_CHECK(category_index_.emplace(categories[i].id, int64_t(i)).second,
                "categories[{}]: duplicate category id {}", i, categories[i].id);
}

CocoDataset parse_coco_dataset(std::string_view json_text, std::string_view source) {
  Reader r(source);
  json j = r.parse(json_text);
  r.require_object(j, "top level");
  CocoDataset ds;

  const json& images = r.array(j, "images");
  ds.images.reserve(images.size());
  std::unordered_set<int64_t> image_ids;
  for (size_t i = 0; i < images.size(); ++i) {
    const json& e = images[i];
    r.require_object(e, at("images", i));
    CocoImage im;
    im.id = r.integer(*r.field(e, at("images", i), "id", true), at("images", i, "id"));
    if (!image_ids.insert(im.id).second) r.fail(at("images", i, "id"), fmt::format("duplicate image id {}", im.id));
    if (const json* v = r.field(e, {}, "file_name", false)) im.file_name = r.string(*v, at("images", i, "file_name"));
    if (const json* v = r.field(e, {}, "width", false)) im.width = r.integer(*v, at("images", i, "width"));
    if (const json* v = r.field(e, {}, "height", false)) im.height = r.integer(*v, at("images", i, "height"));
    ds.images.push_back(std::move(im));
  }

  const json& categories = r.array(j, "categories");
  ds.categories.reserve(categories.size());
  std::unordered_set<int64_t> category_ids;
  for (size_t i = 0; i < categories.size(); ++i) {
    const json& e = categories[i];
    r.require_object(e, at("categories", i));
    CocoCategory c;
    c.id = r.integer(*r.field(e, at("categories", i), "id", true), at("categories", i, "id"));
    if (!category_ids.insert(c.id).second)
      r.fail(at("categories", i, "id"), fmt::format("duplicate category id {}", c.id));
    c.name = r.string(*r.field(e, at("categories", i), "name", true), at("categories", i, "name"));
    if (const json* v = r.field(e, {}, "supercategory", false))
      c.supercategory = r.string(*v, at("categories", i, "supercategory"));
    ds.categories.push_back(std::move(c));
  }

  const json& annotations = r.array(j, "annotations");
  ds.annotations.reserve(annotations.size());
  std::unordered_set<int64_t> annotation_ids;
  for (size_t i = 0; i < annotations.size(); ++i) {
    const json& e = annotations[i];
    const std::string where = at("annotations", i);
    r.require_object(e, where);
    CocoAnnotation a;
    a.id = r.integer(*r.field(e, where, "id", true), at("annotations", i, "id"));
    if (!annotation_ids.insert(a.id).second)
      r.fail(at("annotations", i, "id"), fmt::format("duplicate annotation id {}", a.id));
    a.image_id = r.integer(*r.field(e, where, "image_id", true), at("annotations", i, "image_id"));
    if (!image_ids.count(a.image_id))
      r.fail(at("annotations", i, "image_id"), fmt::format("unknown image id {}", a.image_id));
    a.category_id = r.integer(*r.field(e, where, "category_id", true), at("annotations", i, "category_id"));
    if (!category_ids.count(a.category_id))
      r.fail(at("annotations", i, "category_id"), fmt::format("unknown category id {}", a.category_id));
    a.bbox = r.box(*r.field(e, where, "bbox", true), at("annotations", i, "bbox"), /*strict=*/true);
    a.area = a.bbox[2] * a.bbox[3];
    if (const json* v = r.field(e, where, "area", false)) {
      a.area = r.number(*v, at("annotations", i, "area"));
      if (a.area < 0) r.fail(at("annotations", i, "area"), fmt::format("must be >= 0, got {}", a.area));
    }
    if (const json* v = r.field(e, where, "iscrowd", false)) {
      if (v->is_boolean()) {
        a.iscrowd = v->get<bool>();
      } else {
        int64_t c = r.integer(*v, at("annotations", i, "iscrowd"));
        if (c != 0 && c != 1) r.fail(at("annotations", i, "iscrowd"), fmt::format("expected 0 or 1, got {}", c));
        a.iscrowd = c == 1;
      }
    }
    ds.annotations.push_back(a);
  }
  ds.build_index();
  return ds;
}

CocoDataset load_coco_dataset(const std::filesystem::path& path) {
  return parse_coco_dataset(io::read_file(path), path.string());
}

std::vector<Detection> parse_coco_results(std::string_view json_text, std::string_view source,
                                          const CocoDataset& gt) {
  Reader r(source);
  json j = r.parse(json_text);
  if (!j.is_array()) r.fail("top level", fmt::format("expected an array of detections, got {}", j.type_name()));
  std::vector<Detection> dets;
  dets.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const json& e = j[i];
    const std::string where = fmt::format("[{}]", i);
    r.require_object(e, where);
    Detection d;
    d.image_id = r.integer(*r.field(e, where, "image_id", true), where + ".image_id");
    if (gt.image_index(d.image_id) < 0)
      r.fail(where + ".image_id", fmt::format("image id {} is not in the ground truth", d.image_id));
    d.category_id = r.integer(*r.field(e, where, "category_id", true), where + ".category_id");
    if (gt.category_index(d.category_id) < 0)
      r.fail(where + ".category_id", fmt::format("category id {} is not in the ground truth", d.category_id));
    d.bbox = r.box(*r.field(e, where, "bbox", true), where + ".bbox", /*strict=*/false);
    d.score = r.number(*r.field(e, where, "score", true), where + ".score");
    dets.push_back(d);
  }
  return dets;
}

std::vector<Detection> load_coco_results(const std::filesystem::path& path, const CocoDataset& gt) {
  return parse_coco_results(io::read_file(path), path.string(), gt);
}

std::string coco_results_json(const std::vector<Detection>& detections) {
  json out = json::array();
  for (size_t i = 0; i < detections.size(); ++i) {
    const Detection& d = detections[i];
    SKIFF_CHECK(std::isfinite(d.score) && std::isfinite(d.bbox[0]) && std::isfinite(d.bbox[1]) &&
                    std::isfinite(d.bbox[2]) && std::isfinite(d.bbox[3]),
                "coco results: detection {} (image {}): expected finite bbox and score, got [{}] and {}", i,
                d.image_id, fmt::join(d.bbox, ", "), d.score);
    out.push_back({{"image_id", d.image_id},
                   {"category_id", d.category_id},
                   {"bbox", {d.bbox[0], d.bbox[1], d.bbox[2], d.bbox[3]}},
                   {"score", d.score}});
  }
  return out.dump() + "\n";
}

void write_coco_results(const std::filesystem::path& path, const std::vector<Detection>& detections) {
  io::write_file_atomic(path, coco_results_json(detections));
}

}  // namespace skiff::detection
