/* skiff's C API: load a model or a pipeline, run it on buffers, read the results.
 *
 * This is what other languages bind to (examples/python/skiff_ctypes.py uses it through
 * ctypes). It is stable: a function, once here, keeps its signature and meaning for
 * every SKIFF_C_API_VERSION 1 library; additions raise the minor version. Link with
 * -lskiff (the shared library libskiff.so).
 *
 * Conventions
 *  - Every fallible function returns a skiff_status; SKIFF_OK is 0. On failure,
 *    skiff_last_error() holds the message (it names the input that is wrong) until the
 *    calling thread's next call into the API.
 *  - Objects are opaque handles created by *_load / *_run and released by *_free;
 *    *_free(NULL) does nothing. A model or pipeline may be run from several threads
 *    at once; one skiff_outputs belongs to one thread at a time.
 *  - Strings are UTF-8 and NUL-terminated. Strings the API returns through `char**`
 *    are the caller's, released with skiff_string_free().
 */
#ifndef SKIFF_SKIFF_C_H
#define SKIFF_SKIFF_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SKIFF_C_API_VERSION 1
#define SKIFF_C_API_MINOR 0

#if defined(__GNUC__)
#define SKIFF_C_EXPORT __attribute__((visibility("default")))
#else
#define SKIFF_C_EXPORT
#endif

/* Same numbers as the skiff command's exit codes. */
typedef enum skiff_status {
  SKIFF_OK = 0,
  SKIFF_ERROR = 1,                /* an unexpected error */
  SKIFF_ERROR_BAD_INPUT = 2,      /* a wrong argument, file, request, shape or dtype */
  SKIFF_ERROR_NOT_IMPLEMENTED = 3,
  SKIFF_ERROR_DEVICE = 4,         /* out of memory, device failure */
  SKIFF_ERROR_IO = 5,             /* a file that cannot be read, a download that failed */
  SKIFF_ERROR_INTERNAL = 70       /* a bug in skiff */
} skiff_status;

/* Element types; the values are stable. */
typedef enum skiff_dtype {
  SKIFF_BOOL = 0,
  SKIFF_UINT8 = 1,
  SKIFF_INT8 = 2,
  SKIFF_INT32 = 3,
  SKIFF_INT64 = 4,
  SKIFF_FLOAT16 = 5,
  SKIFF_BFLOAT16 = 6,
  SKIFF_FLOAT32 = 7,
  SKIFF_FLOAT64 = 8
} skiff_dtype;

/* A dense row-major tensor in memory someone else owns. */
typedef struct skiff_tensor {
  const char* name;     /* input/output name; NULL: by position */
  skiff_dtype dtype;
  int32_t rank;         /* number of dims, at most 8 */
  const int64_t* shape; /* rank sizes */
  const void* data;     /* product(shape) elements */
} skiff_tensor;

/* ---- the library -------------------------------------------------------------- */

/* SKIFF_C_API_VERSION of the loaded library: check it equals the header's. */
SKIFF_C_EXPORT int32_t skiff_api_version(void);
/* skiff's version, e.g. "0.1.0". */
SKIFF_C_EXPORT const char* skiff_version(void);
/* The message of the calling thread's last failure ("" if none). */
SKIFF_C_EXPORT const char* skiff_last_error(void);
/* OpenMP threads skiff uses (default: SKIFF_NUM_THREADS or every core). */
SKIFF_C_EXPORT skiff_status skiff_set_num_threads(int32_t n);
SKIFF_C_EXPORT void skiff_string_free(char* s);

/* ---- models: one ONNX / TF.js / zoo model on tensors ------------------------------ */

typedef struct skiff_model skiff_model;
typedef struct skiff_outputs skiff_outputs;

/* Loads an .onnx file, a TF.js model.json or a zoo model name (pulled on first use). */
SKIFF_C_EXPORT skiff_status skiff_model_load(const char* path_or_zoo_name, skiff_model** model);
SKIFF_C_EXPORT void skiff_model_free(skiff_model* model);
SKIFF_C_EXPORT size_t skiff_model_num_inputs(const skiff_model* model);
SKIFF_C_EXPORT size_t skiff_model_num_outputs(const skiff_model* model);
/* The declared input/output `index`: name, dtype, rank and shape (-1 for a dynamic dim).
 * The pointers stay valid while the model lives. */
SKIFF_C_EXPORT skiff_status skiff_model_input(const skiff_model* model, size_t index, skiff_tensor* info);
SKIFF_C_EXPORT skiff_status skiff_model_output(const skiff_model* model, size_t index, skiff_tensor* info);
/* Runs the model on `num_inputs` tensors (by name, or in declaration order when the names
 * are NULL). The data are copied; the results go to *outputs. */
SKIFF_C_EXPORT skiff_status skiff_model_run(const skiff_model* model, const skiff_tensor* inputs, size_t num_inputs,
                                            skiff_outputs** outputs);
SKIFF_C_EXPORT size_t skiff_outputs_count(const skiff_outputs* outputs);
/* Output `index`; its name, shape and data stay valid until skiff_outputs_free. */
SKIFF_C_EXPORT skiff_status skiff_outputs_get(const skiff_outputs* outputs, size_t index, skiff_tensor* tensor);
SKIFF_C_EXPORT void skiff_outputs_free(skiff_outputs* outputs);

/* ---- pipelines: OCR, detection, generation, ... --------------------------------- */

typedef struct skiff_pipeline skiff_pipeline;

/* Loads the pipeline `name` ("ocr", "det", "nlp/generate": the endpoints of `skiff serve`)
 * with `settings_json`, an object of its settings ({"det_model": "det.onnx"}; NULL or
 * "{}" for the defaults). */
SKIFF_C_EXPORT skiff_status skiff_pipeline_load(const char* name, const char* settings_json,
                                                skiff_pipeline** pipeline);
SKIFF_C_EXPORT void skiff_pipeline_free(skiff_pipeline* pipeline);
/* Runs one request, the JSON body `skiff serve` takes ({"file": ...} for "ocr"; a file
 * field may also be a file's path), and returns the JSON of its "result" in *result_json. */
SKIFF_C_EXPORT skiff_status skiff_pipeline_run(const skiff_pipeline* pipeline, const char* request_json,
                                               char** result_json);
/* The same request with the image given as encoded bytes (PNG, JPEG, BMP) in memory:
 * they go into the pipeline's image field ("file" or "image"); `options_json` holds the
 * other fields (NULL: none). */
SKIFF_C_EXPORT skiff_status skiff_pipeline_run_image(const skiff_pipeline* pipeline, const void* encoded_image,
                                                     size_t size, const char* options_json, char** result_json);

#ifdef __cplusplus
}
#endif

#endif /* SKIFF_SKIFF_C_H */
