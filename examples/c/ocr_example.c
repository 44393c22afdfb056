/* OCR and a raw model run from C through libskiff (include/skiff/skiff_c.h).
 *
 *   skiff_c_example IMAGE        prints the OCR result (JSON), then the text detector's
 *                                output shape for a blank 64x96 input
 *
 * Build: cc ocr_example.c -I include -L build/lib -lskiff -Wl,-rpath,build/lib
 */
#include <stdio.h>
#include <stdlib.h>

#include "skiff/skiff_c.h"

static int fail(const char* what) {
  fprintf(stderr, "%s: %s\n", what, skiff_last_error());
  return 1;
}

static char* read_all(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* bytes = n > 0 ? malloc((size_t)n) : NULL;
  if (bytes && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
    free(bytes);
    bytes = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return bytes;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s IMAGE\n", argv[0]);
    return 2;
  }
  if (skiff_api_version() != SKIFF_C_API_VERSION) {
    fprintf(stderr, "libskiff speaks C API %d, this program %d\n", skiff_api_version(), SKIFF_C_API_VERSION);
    return 1;
  }

  /* A pipeline: the image's bytes in, the result's JSON out. */
  size_t size = 0;
  char* image = read_all(argv[1], &size);
  if (!image) {
    fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 1;
  }
  skiff_pipeline* ocr = NULL;
  if (skiff_pipeline_load("ocr", "{\"use_textline_orientation\": false}", &ocr) != SKIFF_OK) return fail("ocr");
  char* result = NULL;
  skiff_status status = skiff_pipeline_run_image(ocr, image, size, NULL, &result);
  free(image);
  if (status != SKIFF_OK) return fail(argv[1]);
  printf("%s\n", result);
  skiff_string_free(result);
  skiff_pipeline_free(ocr);

  /* A model: tensors in, tensors out. */
  skiff_model* det = NULL;
  if (skiff_model_load("ppocr-v4-det", &det) != SKIFF_OK) return fail("ppocr-v4-det");
  const int64_t shape[4] = {1, 3, 64, 96};
  float* pixels = calloc(3 * 64 * 96, sizeof(float));
  skiff_tensor input = {NULL, SKIFF_FLOAT32, 4, shape, pixels};
  skiff_outputs* outputs = NULL;
  status = skiff_model_run(det, &input, 1, &outputs);
  free(pixels);
  if (status != SKIFF_OK) return fail("ppocr-v4-det run");
  skiff_tensor out;
  skiff_outputs_get(outputs, 0, &out);
  printf("%s:", out.name);
  for (int32_t d = 0; d < out.rank; ++d) printf(" %lld", (long long)out.shape[d]);
  printf("\n");
  skiff_outputs_free(outputs);
  skiff_model_free(det);
  return 0;
}
