// Synthetic text images, the sample receipt and the PaddleOCR-format dataset writer.
#include "suites/ocr/synth.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numbers>
#include <opencv2/imgproc.hpp>
#include <span>

#include "framework/core/error.h"
#include "framework/core/splitmix.h"
#include "framework/data/image_io.h"
#include "framework/io/file.h"
#include "suites/ocr/font.h"

namespace skiff::ocr {
namespace {

// splitmix64 (framework/core/splitmix.h) keeps renders reproducible across standard libraries.

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(splitmix64(seed ^ 0x5EED5EED5EED5EEDull)) {}
  uint64_t next() { return splitmix64(state_ += 0x9E3779B97F4A7C15ull); }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [lo, hi].
  int int_in(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(double p) { return uniform() < p; }
  template <typename T>
  const T& pick(std::span<const T> items) {
    return items[next() % items.size()];
  }
  /// Standard normal (Box-Muller, both values used).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = std::max(uniform(), 1e-300), u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * std::numbers::pi * u2);
    has_spare_ = true;
    return r * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  uint64_t state_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// ---- Built-in corpus -------------------------------------------------------

constexpr const char* kZhProducts[] = {
    "新鲜草莓",   "进口牛奶", "全麦面包", "矿泉水",   "绿茶饮料", "红富士苹果", "东北大米",
    "土鸡蛋",     "原味酸奶", "黑巧克力", "薯片",     "洗衣液",   "薄荷牙膏",   "抽纸",
    "咖啡豆",     "鲜榨橙汁", "方便面",   "海南香蕉", "西红柿",   "小黄瓜",     "五花肉",
    "三文鱼",     "花生油",   "生抽酱油", "食用盐",   "白砂糖",   "槐花蜂蜜",   "苏打饼干",
    "香草冰淇淋", "精酿啤酒", "有机蔬菜", "手工水饺", "乌龙茶",   "纯净水",     "保温杯"};
constexpr const char* kZhCities[] = {"北京市", "上海市", "广州市", "深圳市", "杭州市",
                                     "成都市", "武汉市", "南京市", "西安市", "重庆市"};
constexpr const char* kZhDistricts[] = {"朝阳区", "海淀区", "浦东新区", "天河区", "南山区",
                                        "西湖区", "武侯区", "江汉区",   "鼓楼区", "雁塔区"};
constexpr const char* kZhRoads[] = {"人民路",   "建设大道", "解放路", "中山路", "长江路",
                                    "科技园路", "和平街",   "文化路", "湖滨路", "学院路"};
constexpr const char* kZhSentences[] = {"欢迎光临本店",
                                        "营业时间早九点至晚十点",
                                        "请保管好您的随身物品",
                                        "本店支持微信和支付宝",
                                        "会员日全场八折优惠",
                                        "小心地滑",
                                        "禁止吸烟",
                                        "今天天气晴朗适合出行",
                                        "请勿在此停车",
                                        "出口在左侧",
                                        "买一送一限时抢购",
                                        "新品上市敬请品尝",
                                        "温馨提示：请排队等候",
                                        "安全出口",
                                        "非工作人员请勿入内",
                                        "祝您生活愉快",
                                        "节约用水从我做起",
                                        "前方施工请绕行",
                                        "本周特价商品",
                                        "请出示健康码",
                                        "电梯维修暂停使用",
                                        "办公时间周一至周五",
                                        "地铁二号线换乘站",
                                        "学而时习之"};
constexpr const char* kEnSentences[] = {"Welcome to our store",
                                        "Open daily 9:00-22:00",
                                        "Fresh fruit and vegetables",
                                        "Thank you for your visit",
                                        "No parking",
                                        "Emergency exit",
                                        "Buy one get one free",
                                        "Please keep the door closed",
                                        "Coffee & Tea",
                                        "Best price guaranteed",
                                        "Free Wi-Fi inside",
                                        "Order online, pick up in store",
                                        "Handle with care",
                                        "Keep refrigerated",
                                        "Best before end",
                                        "Staff only",
                                        "Please queue here",
                                        "Closed on Mondays",
                                        "Happy hour 5pm-7pm",
                                        "All items 20% off",
                                        "Cash and cards accepted"};
constexpr const char* kEnProducts[] = {"Organic Milk 1L", "Whole Wheat Bread", "Green Tea 500ml",
                                       "Orange Juice",    "Sparkling Water",   "Dark Chocolate",
                                       "Potato Chips",    "Fresh Salmon",      "Espresso Beans",
                                       "Greek Yogurt",    "Olive Oil 750ml",   "Paper Towels"};
constexpr const char* kZhUnits[] = {"件", "瓶", "袋", "盒", "个", "包"};
constexpr const char* kAlnum = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789";

template <typename T, size_t N>
const T& pick(Rng& rng, const T (&items)[N]) {
  return rng.pick(std::span<const T>(items, N));
}

std::string digits(Rng& rng, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>('0' + rng.int_in(0, 9));
  return s;
}
std::string price(Rng& rng) {
  const int yuan = rng.chance(0.7) ? rng.int_in(1, 99) : rng.int_in(100, 2999);
  return fmt::format("{}.{:02d}", yuan, rng.int_in(0, 19) * 5);
}
std::string date(Rng& rng) {
  const int y = rng.int_in(2015, 2025), m = rng.int_in(1, 12), d = rng.int_in(1, 28);
  switch (rng.int_in(0, 2)) {
    case 0:
      return fmt::format("{}-{:02d}-{:02d}", y, m, d);
    case 1:
      return fmt::format("{}年{}月{}日", y, m, d);
    default:
      return fmt::format("{}/{:02d}/{:02d}", y, m, d);
  }
}
std::string time_of_day(Rng& rng) {
  return fmt::format("{:02d}:{:02d}:{:02d}", rng.int_in(0, 23), rng.int_in(0, 59),
                     rng.int_in(0, 59));
}
std::string phone(Rng& rng) {
  if (rng.chance(0.5))
    return fmt::format("1{}-{}-{}", rng.int_in(30, 89), digits(rng, 4), digits(rng, 4));
  return fmt::format("0{}-{} {}", rng.int_in(10, 29), digits(rng, 4), digits(rng, 4));
}
std::string address(Rng& rng) {
  return fmt::format("{}{}{}{}号", pick(rng, kZhCities), pick(rng, kZhDistricts),
                     pick(rng, kZhRoads), rng.int_in(1, 999));
}

std::string chinese_line(Rng& rng) {
  switch (rng.int_in(0, 2)) {
    case 0:
      return pick(rng, kZhProducts);
    case 1:
      return address(rng);
    default:
      return pick(rng, kZhSentences);
  }
}
std::string english_line(Rng& rng) {
  return rng.chance(0.6) ? std::string(pick(rng, kEnSentences))
                         : std::string(pick(rng, kEnProducts));
}
std::string digits_line(Rng& rng) {
  switch (rng.int_in(0, 6)) {
    case 0:
      return price(rng);
    case 1:
      return date(rng);
    case 2:
      return time_of_day(rng);
    case 3:
      return phone(rng);
    case 4:
      return "No." + digits(rng, 11);
    case 5:
      return "69" + digits(rng, 11);  // EAN-13-like barcode number
    default:
      return fmt::format("{} {}", date(rng), time_of_day(rng).substr(0, 5));
  }
}
std::string mixed_line(Rng& rng) {
  switch (rng.int_in(0, 10)) {
    case 0:
      return fmt::format("{} ¥{}", pick(rng, kZhProducts), price(rng));
    case 1:
      return fmt::format("{} {}{} {}元", pick(rng, kZhProducts), rng.int_in(1, 9),
                         pick(rng, kZhUnits), price(rng));
    case 2:
      return "日期：" + date(rng);
    case 3:
      return "电话：" + phone(rng);
    case 4:
      return "地址：" + address(rng);
    case 5:
      return fmt::format("{} ${}", pick(rng, kEnProducts), price(rng));
    case 6:
      return "订单号：" + digits(rng, 14);
    case 7:
      return fmt::format("满{}减{}", rng.int_in(1, 5) * 50, rng.int_in(1, 4) * 5);
    case 8:
      return fmt::format("第{}号窗口", rng.int_in(1, 30));
    case 9: {
      std::string pw;
      for (int i = 0; i < 8; ++i) pw += kAlnum[rng.int_in(0, 33)];
      return "Wi-Fi密码：" + pw;
    }
    default:
      return fmt::format("会员价 {}元 原价{}元", price(rng), price(rng));
  }
}

std::string corpus_line(Rng& rng) {
  switch (rng.int_in(0, 3)) {
    case 0:
      return chinese_line(rng);
    case 1:
      return english_line(rng);
    case 2:
      return digits_line(rng);
    default:
      return mixed_line(rng);
  }
}

// ---- Colours ---------------------------------------------------------------

double luminance(const cv::Scalar& bgr) { return 0.114 * bgr[0] + 0.587 * bgr[1] + 0.299 * bgr[2]; }

// Rejection-samples a colour with channels in [lo, hi] and luminance in
// [lum_lo, lum_hi]; the fallback keeps the contrast guarantee if sampling
// is unlucky.
cv::Scalar sample_colour(Rng& rng, int lo, int hi, double lum_lo, double lum_hi,
                         const cv::Scalar& fallback) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    const cv::Scalar c(rng.int_in(lo, hi), rng.int_in(lo, hi), rng.int_in(lo, hi));
    const double l = luminance(c);
    if (l >= lum_lo && l <= lum_hi) return c;
  }
  return fallback;
}

struct Palette {
  cv::Scalar bg0, bg1;  // gradient ends (equal for a uniform background)
  bool dark_background;
  double bg_lum_min, bg_lum_max;
};

Palette sample_palette(Rng& rng, const SynthOptions& o) {
  Palette p;
  p.dark_background = rng.chance(o.dark_background_prob);
  const bool gradient = rng.chance(o.gradient_prob);
  auto bg = [&] {
    return p.dark_background ? sample_colour(rng, 0, 90, 0, 70, cv::Scalar::all(30))
                             : sample_colour(rng, 150, 255, 180, 255, cv::Scalar::all(235));
  };
  p.bg0 = bg();
  p.bg1 = gradient ? bg() : p.bg0;
  p.bg_lum_min = std::min(luminance(p.bg0), luminance(p.bg1));
  p.bg_lum_max = std::max(luminance(p.bg0), luminance(p.bg1));
  return p;
}

cv::Scalar sample_text_colour(Rng& rng, const Palette& p) {
  if (p.dark_background)
    return sample_colour(rng, 140, 255, p.bg_lum_max + 110, 255, cv::Scalar::all(255));
  return sample_colour(rng, 0, 130, 0, p.bg_lum_min - 110, cv::Scalar::all(0));
}

cv::Mat make_background(Rng& rng, const Palette& p, cv::Size size) {
  cv::Mat img(size, CV_8UC3);
  const double angle = rng.uniform(0, 2 * std::numbers::pi);
  const double dx = std::cos(angle), dy = std::sin(angle);
  // Project the corners on the gradient direction to map positions to [0, 1].
  double lo = 1e30, hi = -1e30;
  for (const cv::Point2d c : {cv::Point2d(0, 0), cv::Point2d(size.width, 0),
                              cv::Point2d(0, size.height), cv::Point2d(size.width, size.height)}) {
    lo = std::min(lo, c.x * dx + c.y * dy);
    hi = std::max(hi, c.x * dx + c.y * dy);
  }
  for (int y = 0; y < size.height; ++y) {
    auto* row = img.ptr<cv::Vec3b>(y);
    for (int x = 0; x < size.width; ++x) {
      const double t = (x * dx + y * dy - lo) / (hi - lo);
      for (int c = 0; c < 3; ++c)
        row[x][c] = cv::saturate_cast<uint8_t>(p.bg0[c] + (p.bg1[c] - p.bg0[c]) * t);
    }
  }
  return img;
}

void add_noise(Rng& rng, cv::Mat& img, double sigma) {
  if (sigma <= 0) return;
  for (int y = 0; y < img.rows; ++y) {
    uint8_t* row = img.ptr<uint8_t>(y);
    for (int i = 0; i < img.cols * 3; ++i)
      row[i] = cv::saturate_cast<uint8_t>(row[i] + sigma * rng.normal());
  }
}

// ---- Layout ----------------------------------------------------------------

constexpr int kMargin = 10;  // free border around the canvas (keeps BORDER_REPLICATE text-free)

int quad_pad(int font_px) { return std::max(2, static_cast<int>(std::lround(font_px * 0.1))); }

std::array<cv::Point2f, 4> rect_quad(cv::Rect r, int pad) {
  const float x0 = static_cast<float>(r.x - pad), y0 = static_cast<float>(r.y - pad);
  const float x1 = static_cast<float>(r.x + r.width + pad),
              y1 = static_cast<float>(r.y + r.height + pad);
  return {cv::Point2f(x0, y0), cv::Point2f(x1, y0), cv::Point2f(x1, y1), cv::Point2f(x0, y1)};
}

std::string trim(std::string s) {
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// Shrinks the font, then cuts code points, until the text fits in max_width.
// Returns false when not even one code point fits.
bool fit_line(const Font& font, std::string& text, int& px, int min_px, int max_width,
              cv::Mat& mask) {
  mask = font.render_mask(text, px);
  if (mask.cols > max_width && px > min_px) {
    px = std::max(min_px, static_cast<int>(px * static_cast<double>(max_width) / mask.cols));
    mask = font.render_mask(text, px);
  }
  std::vector<std::string> cps = split_utf8(text);
  while (mask.cols > max_width && cps.size() > 1) {
    const size_t keep = std::clamp<size_t>(cps.size() * max_width / mask.cols, 1, cps.size() - 1);
    cps.resize(keep);
    std::string cut;
    for (const auto& c : cps) cut += c;
    text = trim(cut);
    mask = font.render_mask(text, px);
  }
  return !mask.empty() && mask.cols <= max_width && !text.empty();
}

void check_options(const SynthOptions& o) {
  SKIFF_CHECK(o.width >= 64 && o.height >= 64 && o.width <= 8192 && o.height <= 8192,
              "render_synth_image: expected a canvas between 64x64 and 8192x8192, got {}x{}",
              o.width, o.height);
  SKIFF_CHECK(o.min_lines >= 1 && o.min_lines <= o.max_lines,
              "render_synth_image: expected 1 <= min_lines <= max_lines, got {} and {}",
              o.min_lines, o.max_lines);
  SKIFF_CHECK(o.min_font_px >= 8 && o.min_font_px <= o.max_font_px && o.max_font_px <= 256,
              "render_synth_image: expected 8 <= min_font_px <= max_font_px <= 256, got {} and {}",
              o.min_font_px, o.max_font_px);
  SKIFF_CHECK(o.max_rotation_deg >= 0 && o.max_rotation_deg <= 45,
              "render_synth_image: expected max_rotation_deg in [0, 45], got {}",
              o.max_rotation_deg);
  for (const float p : {o.upside_down_prob, o.gradient_prob, o.dark_background_prob})
    SKIFF_CHECK(p >= 0 && p <= 1, "render_synth_image: expected probabilities in [0, 1], got {}",
                p);
  SKIFF_CHECK(o.blur_sigma >= 0, "render_synth_image: expected blur_sigma >= 0, got {}", o.blur_sigma);
  SKIFF_CHECK(o.max_noise_sigma >= 0, "render_synth_image: expected max_noise_sigma >= 0, got {}",
              o.max_noise_sigma);
  for (const std::string& t : o.texts)
    SKIFF_CHECK(!trim(t).empty() && t.find_first_of("\t\n\r") == std::string::npos,
                "render_synth_image: expected non-blank texts without tabs or newlines, got '{}'",
                t);
}

// Rotates the image about its centre into a canvas that holds all of it, and
// moves the quads with it.
void rotate_image(SynthImage& s, double angle_deg) {
  const cv::Size in = s.image.size();
  const double rad = angle_deg * std::numbers::pi / 180.0;
  const double c = std::abs(std::cos(rad)), sn = std::abs(std::sin(rad));
  const cv::Size out(static_cast<int>(std::ceil(in.width * c + in.height * sn)),
                     static_cast<int>(std::ceil(in.width * sn + in.height * c)));
  cv::Mat m =
      cv::getRotationMatrix2D(cv::Point2f(in.width / 2.0f, in.height / 2.0f), angle_deg, 1.0);
  m.at<double>(0, 2) += (out.width - in.width) / 2.0;
  m.at<double>(1, 2) += (out.height - in.height) / 2.0;
  cv::Mat rotated;
  cv::warpAffine(s.image, rotated, m, out, cv::INTER_LINEAR, cv::BORDER_REPLICATE);
  s.image = rotated;
  const cv::Matx23d a(m);
  for (SynthLine& line : s.lines)
    for (cv::Point2f& p : line.quad)
      p = cv::Point2f(static_cast<float>(a(0, 0) * p.x + a(0, 1) * p.y + a(0, 2)),
                      static_cast<float>(a(1, 0) * p.x + a(1, 1) * p.y + a(1, 2)));
}

}  // namespace

std::string synth_corpus_line(uint64_t seed) {
  Rng rng(seed);
  return corpus_line(rng);
}

SynthImage render_synth_image(const SynthOptions& o, uint64_t seed) {
  check_options(o);
  const Font& font = Font::cjk();
  Rng rng(seed);
  const Palette palette = sample_palette(rng, o);
  SynthImage out;
  out.image = make_background(rng, palette, {o.width, o.height});

  // Plan the lines first, then spread the unused height over the gaps so the
  // text covers the whole canvas instead of piling up at the top.
  struct Planned {
    std::string text;
    cv::Mat mask;
    int pad;
    cv::Scalar colour;
    bool flip;
  };
  constexpr int kMinGap = 4;
  const int n_lines = rng.int_in(o.min_lines, o.max_lines);
  const int avail_w = o.width - 2 * kMargin - 2 * quad_pad(o.max_font_px);
  const int avail_h = o.height - 2 * kMargin;
  std::vector<Planned> plan;
  int used = 0;
  for (int i = 0; i < n_lines; ++i) {
    int px = rng.int_in(o.min_font_px, o.max_font_px);
    std::string text =
        o.texts.empty() ? corpus_line(rng) : trim(o.texts[rng.next() % o.texts.size()]);
    const cv::Scalar colour = sample_text_colour(rng, palette);
    const bool flip = rng.chance(o.upside_down_prob);
    cv::Mat mask;
    if (!fit_line(font, text, px, o.min_font_px, avail_w, mask)) continue;
    const int pad = quad_pad(px);
    const int need = mask.rows + 2 * pad + (plan.empty() ? 0 : kMinGap);
    if (used + need > avail_h) {
      if (!plan.empty()) break;  // full
      continue;                  // nothing drawn yet: try another (smaller) line
    }
    if (flip) cv::rotate(mask, mask, cv::ROTATE_180);
    plan.push_back({std::move(text), mask, pad, colour, flip});
    used += need;
  }
  std::vector<double> weights(plan.size() + 1);
  double total = 0;
  for (double& w : weights) total += (w = rng.uniform(0.05, 1.0));
  int y = kMargin + static_cast<int>((avail_h - used) * weights[0] / total);
  for (size_t i = 0; i < plan.size(); ++i) {
    const Planned& p = plan[i];
    const int x0 = kMargin + p.pad;
    const int x = x0 + rng.int_in(0, std::max(0, o.width - kMargin - p.pad - p.mask.cols - x0));
    const cv::Rect ink(x, y + p.pad, p.mask.cols, p.mask.rows);
    blend_mask(out.image, p.mask, ink.tl(), p.colour);
    out.lines.push_back({p.text, rect_quad(ink, p.pad), p.flip});
    y += p.mask.rows + 2 * p.pad + kMinGap +
         static_cast<int>((avail_h - used) * weights[i + 1] / total);
  }
  SKIFF_CHECK(!out.lines.empty(),
              "render_synth_image: a {}x{} canvas is too small for one line at {} px", o.width,
              o.height, o.min_font_px);

  const double angle = rng.uniform(-o.max_rotation_deg, o.max_rotation_deg);
  if (std::abs(angle) >= 0.05) rotate_image(out, angle);
  if (o.blur_sigma > 0) cv::GaussianBlur(out.image, out.image, cv::Size(0, 0), o.blur_sigma);
  add_noise(rng, out.image, rng.uniform(0, o.max_noise_sigma));
  return out;
}

SynthImage render_sample_receipt() {
  enum class Align { Left, Center };
  struct Row {
    const char* text;
    int px;
    Align align;
    int gap_before;  // extra space above the row, separates sections
  };
  // Item rows share one shape (four-character name, quantity, unit price,
  // amount) so they line up like columns while staying one detectable line.
  static constexpr Row kRows[] = {
      {"鲜果时光便利店", 46, Align::Center, 0},
      {"FRESH TIME MART", 26, Align::Center, 0},
      {"地址：上海市浦东新区张江路188号", 24, Align::Left, 14},
      {"电话：021-5888 1234", 24, Align::Left, 0},
      {"商品 数量 单价 金额", 26, Align::Left, 22},
      {"有机牛奶 1 12.80 12.80", 26, Align::Left, 0},
      {"全麦面包 2 15.00 30.00", 26, Align::Left, 0},
      {"新鲜草莓 1 29.90 29.90", 26, Align::Left, 0},
      {"精品咖啡 2 18.50 37.00", 26, Align::Left, 0},
      {"合计：109.70元", 30, Align::Left, 22},
      {"日期：2024-05-18 14:32:07", 24, Align::Left, 14},
      {"Thank you for shopping with us!", 24, Align::Left, 0},
      {"谢谢惠顾，欢迎再次光临", 28, Align::Center, 14},
  };
  constexpr int kWidth = 800, kLeft = 80, kTop = 48, kLineGap = 22, kBottom = 48;
  const Font& font = Font::cjk();
  std::vector<cv::Mat> masks;
  std::vector<cv::Point> origins;
  int y = kTop;
  for (const Row& r : kRows) {
    masks.push_back(font.render_mask(r.text, r.px));
    y += r.gap_before;
    const int x = r.align == Align::Center ? (kWidth - masks.back().cols) / 2 : kLeft;
    origins.emplace_back(x, y);
    y += masks.back().rows + kLineGap;
  }
  SynthImage out;
  out.image = cv::Mat(y - kLineGap + kBottom, kWidth, CV_8UC3, cv::Scalar::all(255));
  const cv::Scalar ink(40, 35, 30);
  for (size_t i = 0; i < masks.size(); ++i) {
    blend_mask(out.image, masks[i], origins[i], ink);
    out.lines.push_back({kRows[i].text, rect_quad({origins[i], masks[i].size()}, 4), false});
  }
  return out;
}

cv::Mat crop_synth_line(const cv::Mat& image, const SynthLine& line) {
  const auto& q = line.quad;
  const int w = std::max(
      1, static_cast<int>(std::lround(std::max(cv::norm(q[0] - q[1]), cv::norm(q[3] - q[2])))));
  const int h = std::max(
      1, static_cast<int>(std::lround(std::max(cv::norm(q[0] - q[3]), cv::norm(q[1] - q[2])))));
  const cv::Point2f dst[4] = {{0, 0},
                              {static_cast<float>(w), 0},
                              {static_cast<float>(w), static_cast<float>(h)},
                              {0, static_cast<float>(h)}};
  const cv::Mat m = cv::getPerspectiveTransform(q.data(), dst);
  cv::Mat crop;
  cv::warpPerspective(image, crop, m, {w, h}, cv::INTER_CUBIC, cv::BORDER_REPLICATE);
  if (line.upside_down) cv::rotate(crop, crop, cv::ROTATE_180);
  return crop;
}

namespace {

std::string encode_jpeg(const cv::Mat& img, const std::string& what) {
  std::vector<uint8_t> buf;
  try {
    buf = data::encode_image(img, ".jpg", 95);
  } catch (const IoError& e) {
    SKIFF_THROW(IoError, "write_synth_dataset: could not encode {} as JPEG ({})", what, e.what());
  }
  return {buf.begin(), buf.end()};
}

}  // namespace

void write_synth_dataset(const std::string& dir, int count, uint64_t seed,
                         const SynthOptions& options) {
  SKIFF_CHECK(count >= 0, "write_synth_dataset: expected count >= 0, got {}", count);
  check_options(options);
  namespace fs = std::filesystem;
  const fs::path root(dir);
  std::error_code ec;
  fs::create_directories(root / "crops", ec);
  SKIFF_CHECK_T(IoError, !ec, "write_synth_dataset: cannot create '{}': {}",
                (root / "crops").string(), ec.message());
  std::string det_gt, rec_gt;
  for (int i = 0; i < count; ++i) {
    const SynthImage s = render_synth_image(options, splitmix64(seed + 0x632BE59BD9B4E019ull * (i + 1)));
    const std::string name = fmt::format("img_{:05d}.jpg", i);
    io::write_file_atomic(root / name, encode_jpeg(s.image, name));
    nlohmann::ordered_json labels = nlohmann::ordered_json::array();
    for (size_t k = 0; k < s.lines.size(); ++k) {
      const SynthLine& line = s.lines[k];
      nlohmann::ordered_json points = nlohmann::ordered_json::array();
      for (const cv::Point2f& p : line.quad)
        points.push_back(
            {std::clamp<int>(static_cast<int>(std::lround(p.x)), 0, s.image.cols - 1),
             std::clamp<int>(static_cast<int>(std::lround(p.y)), 0, s.image.rows - 1)});
      labels.push_back({{"transcription", line.text}, {"points", std::move(points)}});
      const std::string crop = fmt::format("crops/img_{:05d}_{:03d}.jpg", i, k);
      io::write_file_atomic(root / crop, encode_jpeg(crop_synth_line(s.image, line), crop));
      rec_gt += crop + "\t" + line.text + "\n";
    }
    det_gt += name + "\t" + labels.dump() + "\n";
  }
  io::write_file_atomic(root / "det_gt.txt", det_gt);
  io::write_file_atomic(root / "rec_gt.txt", rec_gt);
}

}  // namespace skiff::ocr
