// Image codecs on libpng, libjpeg-turbo and a small BMP reader/writer.
//
// The PNG and JPEG decoders replay what OpenCV 4.6's grfmt_png.cpp and
// grfmt_jpeg.cpp ask the libraries for, in the same order, so pixels match
// cv::imread(IMREAD_COLOR) exactly (tests/framework/data/image_io_test.cpp
// cross-checks). Both libraries report errors by longjmp: every call into them
// happens inside a small function whose only locals are trivially
// destructible, with its own setjmp, so no C++ destructor is ever skipped.
#include "framework/data/image_io.h"

// clang-format off
#include <cstdio>  // before jpeglib.h, which needs FILE and size_t
#include <jpeglib.h>
#include <jerror.h>
// clang-format on
#include <fmt/format.h>
#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <glob.h>
#include <set>
#include <opencv2/core.hpp>
#include <string_view>

#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::data {
namespace fs = std::filesystem;
using namespace std::string_view_literals;

namespace {

[[noreturn]] void fail(const std::string& name, std::string_view reason) {
  SKIFF_THROW(IoError, "cannot decode image '{}': {}", name, reason);
}

void check_size(const std::string& name, int64_t w, int64_t h) {
  if (w <= 0 || h <= 0) fail(name, fmt::format("invalid size {}x{}", w, h));
  if (w * h > kMaxImagePixels)
    fail(name, fmt::format("{}x{} is larger than the {} pixel limit", w, h, kMaxImagePixels));
}

// ---------------------------------------------------------------- PNG

struct PngInput {
  const uint8_t* data;
  size_t size;
  size_t pos;
  char msg[200];
};

[[noreturn]] void png_on_error(png_structp png, png_const_charp msg) {
  auto* in = static_cast<PngInput*>(png_get_error_ptr(png));
  std::snprintf(in->msg, sizeof in->msg, "%s", msg);
  png_longjmp(png, 1);
}
void png_on_warning(png_structp, png_const_charp) {}

void png_read_mem(png_structp png, png_bytep out, size_t n) {
  auto* in = static_cast<PngInput*>(png_get_io_ptr(png));
  if (n > in->size - in->pos) png_error(png, "truncated file");
  std::memcpy(out, in->data + in->pos, n);
  in->pos += n;
}

struct PngHeader {
  png_uint_32 width = 0, height = 0;
  int depth = 0, color = 0;
};

bool png_read_header(png_structp png, png_infop info, PngHeader* h) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  png_get_IHDR(png, info, &h->width, &h->height, &h->depth, &h->color, nullptr, nullptr, nullptr);
  return true;
}

// OpenCV's PngDecoder::readData for an 8-bit, 3-channel destination.
bool png_read_pixels(png_structp png, png_infop info, const PngHeader* h, png_bytep* rows, size_t row_bytes) {
  if (setjmp(png_jmpbuf(png))) return false;
  if (h->depth == 16) png_set_strip_16(png);
  png_set_strip_alpha(png);
  if (h->color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if ((h->color & PNG_COLOR_MASK_COLOR) == 0 && h->depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (h->color & PNG_COLOR_MASK_COLOR)
    png_set_bgr(png);
  else
    png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != row_bytes) png_error(png, "unexpected row size after conversion");
  png_read_image(png, rows);
  png_read_end(png, nullptr);
  return true;
}

cv::Mat decode_png(std::span<const uint8_t> bytes, const std::string& name) {
  PngInput in{bytes.data(), bytes.size(), 0, {}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &in, png_on_error, png_on_warning);
  if (!png) fail(name, "out of memory");
  png_infop info = png_create_info_struct(png);
  struct Guard {
    png_structp* p;
    png_infop* i;
    ~Guard() { png_destroy_read_struct(p, i, nullptr); }
  } guard{&png, &info};
  if (!info) fail(name, "out of memory");
  png_set_read_fn(png, &in, png_read_mem);

  PngHeader h;
  if (!png_read_header(png, info, &h)) fail(name, fmt::format("corrupt PNG ({})", in.msg));
  check_size(name, h.width, h.height);
  cv::Mat out(int(h.height), int(h.width), CV_8UC3);
  std::vector<png_bytep> rows(h.height);
  for (int y = 0; y < out.rows; ++y) rows[y] = out.ptr(y);
  if (!png_read_pixels(png, info, &h, rows.data(), size_t(h.width) * 3))
    fail(name, fmt::format("corrupt PNG ({})", in.msg));
  return out;
}

// ---------------------------------------------------------------- JPEG

struct JpegError {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char msg[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpeg_on_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->msg);
  std::longjmp(err->jump, 1);
}

// Warnings (recoverable corruption) are silent, except a premature end of the
// data: libjpeg would pad the image with gray, we report a truncated file.
void jpeg_on_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) jpeg_on_error(cinfo);
}

struct JpegDecoder {
  jpeg_decompress_struct cinfo{};
  JpegError err{};
  bool created = false;
  ~JpegDecoder() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

// OpenCV's JpegDecoder::readHeader plus the color setup of readData.
bool jpeg_read_header_bgr(JpegDecoder* d, const uint8_t* data, size_t size) {
  d->cinfo.err = jpeg_std_error(&d->err.pub);
  d->err.pub.error_exit = jpeg_on_error;
  d->err.pub.emit_message = jpeg_on_message;
  if (setjmp(d->err.jump)) return false;
  jpeg_create_decompress(&d->cinfo);
  d->created = true;
  jpeg_mem_src(&d->cinfo, data, static_cast<unsigned long>(size));
  jpeg_save_markers(&d->cinfo, JPEG_APP0 + 1, 0xffff);
  jpeg_read_header(&d->cinfo, TRUE);
  if (d->cinfo.num_components != 4) {
    d->cinfo.out_color_space = JCS_EXT_BGR;
    d->cinfo.out_color_components = 3;
  } else {
    d->cinfo.out_color_space = JCS_CMYK;
    d->cinfo.out_color_components = 4;
  }
  jpeg_calc_output_dimensions(&d->cinfo);
  return true;
}

// Adobe (inverted) CMYK to BGR, as OpenCV's icvCvt_CMYK2BGR_8u_C4C3R.
void cmyk_to_bgr(const uint8_t* cmyk, uint8_t* bgr, int width) {
  for (int i = 0; i < width; ++i, cmyk += 4, bgr += 3) {
    const int c = cmyk[0], m = cmyk[1], y = cmyk[2], k = cmyk[3];
    bgr[2] = uint8_t(k - ((255 - c) * k >> 8));
    bgr[1] = uint8_t(k - ((255 - m) * k >> 8));
    bgr[0] = uint8_t(k - ((255 - y) * k >> 8));
  }
}

bool jpeg_read_pixels(JpegDecoder* d, cv::Mat* out, uint8_t* cmyk_row) {
  if (setjmp(d->err.jump)) return false;
  jpeg_start_decompress(&d->cinfo);
  while (d->cinfo.output_scanline < d->cinfo.output_height) {
    const int y = int(d->cinfo.output_scanline);
    JSAMPROW row = cmyk_row ? cmyk_row : out->ptr(y);
    if (jpeg_read_scanlines(&d->cinfo, &row, 1) != 1) ERREXIT(&d->cinfo, JERR_INPUT_EOF);
    if (cmyk_row) cmyk_to_bgr(cmyk_row, out->ptr(y), out->cols);
  }
  jpeg_finish_decompress(&d->cinfo);
  return true;
}

// The Orientation tag (0x0112) of an "Exif\0\0" APP1 payload; 1 when absent.
int exif_orientation(const uint8_t* p, size_t n) {
  if (n < 14 || std::memcmp(p, "Exif\0\0", 6) != 0) return 1;
  p += 6;
  n -= 6;
  const bool le = p[0] == 'I' && p[1] == 'I';
  if (!le && !(p[0] == 'M' && p[1] == 'M')) return 1;
  auto u16 = [&](size_t o) -> uint32_t { return le ? p[o] | p[o + 1] << 8 : p[o] << 8 | p[o + 1]; };
  auto u32 = [&](size_t o) -> uint32_t { return le ? u16(o) | u16(o + 2) << 16 : u16(o) << 16 | u16(o + 2); };
  if (u16(2) != 42) return 1;
  const size_t ifd = u32(4);
  if (ifd > n - 2) return 1;
  const size_t count = u16(ifd);
  for (size_t i = 0; i < count; ++i) {
    const size_t e = ifd + 2 + 12 * i;
    if (e + 12 > n) break;
    if (u16(e) == 0x0112) {
      const uint32_t v = u16(e + 2) == 3 ? u16(e + 8) : 1;  // type SHORT
      return v >= 1 && v <= 8 ? int(v) : 1;
    }
  }
  return 1;
}

// OpenCV's ApplyExifOrientation (loadsave.cpp).
cv::Mat apply_orientation(const cv::Mat& img, int orientation) {
  cv::Mat out;
  switch (orientation) {
    case 2: cv::flip(img, out, 1); return out;
    case 3: cv::flip(img, out, -1); return out;
    case 4: cv::flip(img, out, 0); return out;
    case 5: cv::transpose(img, out); return out;
    case 6: cv::transpose(img, out); cv::flip(out, out, 1); return out;
    case 7: cv::transpose(img, out); cv::flip(out, out, -1); return out;
    case 8: cv::transpose(img, out); cv::flip(out, out, 0); return out;
    default: return img;
  }
}

cv::Mat decode_jpeg(std::span<const uint8_t> bytes, const std::string& name) {
  JpegDecoder d;
  if (!jpeg_read_header_bgr(&d, bytes.data(), bytes.size())) fail(name, fmt::format("corrupt JPEG ({})", d.err.msg));
  check_size(name, d.cinfo.image_width, d.cinfo.image_height);
  check_size(name, d.cinfo.output_width, d.cinfo.output_height);
  // Before jpeg_finish_decompress, which frees the saved markers.
  int orientation = 1;
  for (jpeg_saved_marker_ptr m = d.cinfo.marker_list; m; m = m->next) {
    if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 && std::memcmp(m->data, "Exif\0\0", 6) == 0) {
      orientation = exif_orientation(m->data, m->data_length);
      break;
    }
  }
  const bool cmyk = d.cinfo.out_color_space == JCS_CMYK;
  cv::Mat out(int(d.cinfo.output_height), int(d.cinfo.output_width), CV_8UC3);
  std::vector<uint8_t> cmyk_row(cmyk ? size_t(out.cols) * 4 : 0);
  if (!jpeg_read_pixels(&d, &out, cmyk ? cmyk_row.data() : nullptr))
    fail(name, fmt::format("corrupt JPEG ({})", d.err.msg));
  return apply_orientation(out, orientation);
}

// ---------------------------------------------------------------- BMP

uint32_t le16(const uint8_t* p) { return p[0] | p[1] << 8; }
uint32_t le32(const uint8_t* p) { return le16(p) | le16(p + 2) << 16; }

// Uncompressed 1/4/8-bit palette, 24-bit and 32-bit (BI_RGB, or BI_BITFIELDS
// with the standard BGRA masks) Windows bitmaps, bottom-up or top-down.
cv::Mat decode_bmp(std::span<const uint8_t> b, const std::string& name) {
  const size_t n = b.size();
  const uint8_t* p = b.data();
  if (n < 14 + 40) fail(name, "truncated BMP header");
  const size_t offset = le32(p + 10);
  const size_t header = le32(p + 14);
  if (header < 40 || header > n - 14) fail(name, fmt::format("unsupported BMP header of {} bytes", header));
  const int64_t width = int32_t(le32(p + 18));
  const int64_t signed_height = int32_t(le32(p + 22));
  const int bits = int(le16(p + 28));
  const uint32_t compression = le32(p + 30);
  const int64_t height = signed_height < 0 ? -signed_height : signed_height;
  check_size(name, width, height);
  if (bits != 1 && bits != 4 && bits != 8 && bits != 24 && bits != 32)
    fail(name, fmt::format("unsupported BMP bit depth {}", bits));
  if (compression == 3 && bits == 32) {
    // Masks follow a 40-byte header, or sit inside a larger one.
    if (14 + 40 + 12 > n) fail(name, "truncated BMP header");
    if (le32(p + 54) != 0xFF0000 || le32(p + 58) != 0xFF00 || le32(p + 62) != 0xFF)
      fail(name, "unsupported BMP channel masks");
  } else if (compression != 0) {
    fail(name, fmt::format("unsupported BMP compression {}", compression));
  }

  uint8_t palette[256][4] = {};
  if (bits <= 8) {
    const size_t start = 14 + header + (compression == 3 && header == 40 ? 12 : 0);
    size_t colors = le32(p + 46);
    if (colors == 0 || colors > (1u << bits)) colors = size_t(1) << bits;
    if (start + 4 * colors > n) fail(name, "truncated BMP palette");
    std::memcpy(palette, p + start, 4 * colors);
  }
  const size_t stride = (size_t(width) * bits + 31) / 32 * 4;
  if (offset > n || stride * size_t(height) > n - offset) fail(name, "truncated BMP pixel data");

  cv::Mat out(int(height), int(width), CV_8UC3);
  for (int64_t y = 0; y < height; ++y) {
    const uint8_t* row = p + offset + stride * size_t(signed_height < 0 ? y : height - 1 - y);
    uint8_t* dst = out.ptr(int(y));
    if (bits == 24) {
      std::memcpy(dst, row, size_t(width) * 3);
    } else if (bits == 32) {
      for (int64_t x = 0; x < width; ++x) std::memcpy(dst + 3 * x, row + 4 * x, 3);
    } else {
      const int mask = (1 << bits) - 1;
      for (int64_t x = 0; x < width; ++x) {
        const size_t bit = size_t(x) * bits;
        const int index = row[bit / 8] >> (8 - bits - int(bit % 8)) & mask;
        std::memcpy(dst + 3 * x, palette[index], 3);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------- encoders

struct PngOutput {
  std::vector<uint8_t>* bytes;
  bool out_of_memory;
  char msg[200];
};

[[noreturn]] void png_on_write_error(png_structp png, png_const_charp msg) {
  auto* o = static_cast<PngOutput*>(png_get_error_ptr(png));
  std::snprintf(o->msg, sizeof o->msg, "%s", msg);
  png_longjmp(png, 1);
}

void png_write_mem(png_structp png, png_bytep data, size_t n) {
  auto* o = static_cast<PngOutput*>(png_get_io_ptr(png));
  try {
    o->bytes->insert(o->bytes->end(), data, data + n);
  } catch (const std::bad_alloc&) {
    o->out_of_memory = true;
  }
  if (o->out_of_memory) png_error(png, "out of memory");
}
void png_flush_mem(png_structp) {}

bool png_write(png_structp png, png_infop info, const cv::Mat* img, png_bytep* rows, int level) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_compression_level(png, level);
  png_set_IHDR(png, info, png_uint_32(img->cols), png_uint_32(img->rows), 8,
               img->channels() == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (img->channels() == 3) png_set_bgr(png);
  png_write_image(png, rows);
  png_write_end(png, info);
  return true;
}

std::vector<uint8_t> encode_png(const cv::Mat& img, int level) {
  std::vector<uint8_t> bytes;
  PngOutput o{&bytes, false, {}};
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &o, png_on_write_error, png_on_warning);
  SKIFF_CHECK_T(IoError, png, "encode_image: out of memory");
  png_infop info = png_create_info_struct(png);
  struct Guard {
    png_structp* p;
    png_infop* i;
    ~Guard() { png_destroy_write_struct(p, i); }
  } guard{&png, &info};
  SKIFF_CHECK_T(IoError, info, "encode_image: out of memory");
  png_set_write_fn(png, &o, png_write_mem, png_flush_mem);
  std::vector<png_bytep> rows(size_t(img.rows));
  for (int y = 0; y < img.rows; ++y) rows[y] = const_cast<png_bytep>(img.ptr(y));
  if (!png_write(png, info, &img, rows.data(), level)) SKIFF_THROW(IoError, "encode_image: PNG error ({})", o.msg);
  return bytes;
}

struct JpegEncoder {
  jpeg_compress_struct cinfo{};
  JpegError err{};
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  bool created = false;
  ~JpegEncoder() {
    if (created) jpeg_destroy_compress(&cinfo);
    std::free(buffer);
  }
};

// OpenCV's JpegEncoder::write with default parameters apart from the quality.
bool jpeg_write(JpegEncoder* e, const cv::Mat* img, int quality) {
  e->cinfo.err = jpeg_std_error(&e->err.pub);
  e->err.pub.error_exit = jpeg_on_error;
  if (setjmp(e->err.jump)) return false;
  jpeg_create_compress(&e->cinfo);
  e->created = true;
  jpeg_mem_dest(&e->cinfo, &e->buffer, &e->size);
  e->cinfo.image_width = JDIMENSION(img->cols);
  e->cinfo.image_height = JDIMENSION(img->rows);
  e->cinfo.input_components = img->channels();
  e->cinfo.in_color_space = img->channels() == 3 ? JCS_EXT_BGR : JCS_GRAYSCALE;
  jpeg_set_defaults(&e->cinfo);
  jpeg_set_quality(&e->cinfo, quality, TRUE);
  jpeg_start_compress(&e->cinfo, TRUE);
  while (e->cinfo.next_scanline < e->cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(img->ptr(int(e->cinfo.next_scanline)));
    jpeg_write_scanlines(&e->cinfo, &row, 1);
  }
  jpeg_finish_compress(&e->cinfo);
  return true;
}

std::vector<uint8_t> encode_jpeg(const cv::Mat& img, int quality) {
  JpegEncoder e;
  if (!jpeg_write(&e, &img, quality)) SKIFF_THROW(IoError, "encode_image: JPEG error ({})", e.err.msg);
  return {e.buffer, e.buffer + e.size};
}

void put16(std::vector<uint8_t>& v, uint32_t x) {
  v.push_back(uint8_t(x));
  v.push_back(uint8_t(x >> 8));
}
void put32(std::vector<uint8_t>& v, uint32_t x) {
  put16(v, x & 0xFFFF);
  put16(v, x >> 16);
}

// 24-bit BGR, or 8-bit with a gray palette for one channel; bottom-up rows.
std::vector<uint8_t> encode_bmp(const cv::Mat& img) {
  const int channels = img.channels();
  const size_t stride = (size_t(img.cols) * channels + 3) / 4 * 4;
  const size_t palette = channels == 1 ? 256 * 4 : 0;
  const size_t offset = 14 + 40 + palette;
  const size_t total = offset + stride * size_t(img.rows);
  SKIFF_CHECK_T(IoError, total <= 0xFFFFFFFFu, "encode_image: image too large for BMP");
  std::vector<uint8_t> v;
  v.reserve(total);
  v.push_back('B');
  v.push_back('M');
  put32(v, uint32_t(total));
  put32(v, 0);
  put32(v, uint32_t(offset));
  put32(v, 40);
  put32(v, uint32_t(img.cols));
  put32(v, uint32_t(img.rows));
  put16(v, 1);
  put16(v, uint16_t(8 * channels));
  put32(v, 0);  // BI_RGB
  put32(v, uint32_t(stride * size_t(img.rows)));
  put32(v, 0);
  put32(v, 0);
  put32(v, channels == 1 ? 256 : 0);
  put32(v, 0);
  for (int i = 0; channels == 1 && i < 256; ++i) put32(v, uint32_t(i * 0x010101));
  for (int y = img.rows - 1; y >= 0; --y) {
    const uint8_t* row = img.ptr(y);
    v.insert(v.end(), row, row + size_t(img.cols) * channels);
    v.resize(v.size() + stride - size_t(img.cols) * channels, 0);
  }
  return v;
}

std::string normalized_ext(const std::string& ext) {
  std::string e = ext;
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (!e.empty() && e[0] != '.') e.insert(e.begin(), '.');
  return e;
}

}  // namespace

cv::Mat decode_image(std::span<const uint8_t> bytes, const std::string& name) {
  const uint8_t* p = bytes.data();
  const size_t n = bytes.size();
  auto starts = [&](std::string_view magic, size_t at = 0) {  // magic: a ""sv literal, NULs included
    return n >= at + magic.size() && std::memcmp(p + at, magic.data(), magic.size()) == 0;
  };
  if (n == 0) fail(name, "the file is empty");
  if (starts("\x89PNG\r\n\x1a\n"sv)) return decode_png(bytes, name);
  if (starts("\xFF\xD8\xFF"sv)) return decode_jpeg(bytes, name);
  if (starts("BM"sv)) return decode_bmp(bytes, name);
  const char* other = starts("GIF8"sv)                              ? "GIF"
                      : starts("II*\0"sv) || starts("MM\0*"sv)      ? "TIFF"
                      : starts("RIFF"sv) && starts("WEBP"sv, 8)     ? "WebP"
                      : starts("\x76\x2f\x31\x01"sv)               ? "OpenEXR"
                      : starts("\0\0\0\x0cjP  "sv)                 ? "JPEG 2000"
                                                                    : nullptr;
  if (other) fail(name, fmt::format("{} images are not supported (PNG, JPEG and BMP are)", other));
  fail(name, "not a PNG, JPEG or BMP image");
}

cv::Mat decode_image_field(std::string_view bytes, const std::string& field) {
  try {
    return decode_image({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, field);
  } catch (const IoError& e) {
    SKIFF_THROW(ValueError, "{}: not an image skiff can decode ({})", field, e.what());
  }
}

cv::Mat read_image_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) SKIFF_THROW(IoError, "cannot read image '{}': no such file", path);
  if (fs::is_directory(path, ec)) SKIFF_THROW(IoError, "cannot read image '{}': it is a directory", path);
  const std::string bytes = io::read_file(path);
  return decode_image({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, path);
}

std::vector<uint8_t> encode_image(const cv::Mat& image, const std::string& ext, int jpeg_quality,
                                  int png_compression) {
  SKIFF_CHECK(!image.empty(), "encode_image: expected a non-empty image");
  SKIFF_CHECK_DTYPE(image.depth() == CV_8U && (image.channels() == 1 || image.channels() == 3),
                    "encode_image: expected an 8-bit image with 1 or 3 channels, got depth {} with {} channels",
                    image.depth(), image.channels());
  SKIFF_CHECK(jpeg_quality >= 0 && jpeg_quality <= 100, "encode_image: expected jpeg_quality in [0, 100], got {}",
              jpeg_quality);
  SKIFF_CHECK(png_compression >= 0 && png_compression <= 9,
              "encode_image: expected png_compression in [0, 9], got {}", png_compression);
  const std::string e = normalized_ext(ext);
  if (e == ".png") return encode_png(image, png_compression);
  if (e == ".jpg" || e == ".jpeg") return encode_jpeg(image, jpeg_quality);
  if (e == ".bmp") return encode_bmp(image);
  SKIFF_THROW(IoError, "encode_image: unsupported extension '{}' (expected .png, .jpg, .jpeg or .bmp)", ext);
}

void write_image_file(const std::string& path, const cv::Mat& image) {
  std::vector<uint8_t> bytes;
  try {
    bytes = encode_image(image, fs::path(path).extension().string());
  } catch (const IoError& e) {
    SKIFF_THROW(IoError, "cannot write image '{}': {}", path, e.what());
  }
  io::write_file_atomic(path, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
}

bool has_image_extension(const std::string& path) {
  static const std::set<std::string> exts{".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp", ".pbm", ".pgm", ".ppm"};
  std::string e = fs::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), ::tolower);
  return exts.count(e) != 0;
}

std::vector<std::string> expand_image_inputs(const std::vector<std::string>& args, const std::string& command) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> files;
      for (const auto& e : fs::directory_iterator(a, ec))
        if (e.is_regular_file() && has_image_extension(e.path().string())) files.push_back(e.path().string());
      std::sort(files.begin(), files.end());
      if (files.empty()) fmt::print(stderr, "{}: warning: no images in directory {}\n", command, a);
      out.insert(out.end(), files.begin(), files.end());
    } else if (!fs::exists(a, ec) && a.find_first_of("*?[") != std::string::npos) {
      glob_t g{};
      if (::glob(a.c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
      else
        out.push_back(a);
      globfree(&g);
    } else {
      out.push_back(a);
    }
  }
  return out;
}

}  // namespace skiff::data
