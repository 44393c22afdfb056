#!/usr/bin/env python3
"""skiff from Python through libskiff's C API (include/skiff/skiff_c.h) and ctypes,
with nothing but the standard library.

    python3 examples/python/skiff_ctypes.py IMAGE [--lib build/lib/libskiff.so]

reads the text in IMAGE (the "ocr" pipeline), then runs the PP-OCRv4 text detector as a
raw model on a blank image and prints its output's name and shape.
"""
import argparse
import array
import ctypes
import json
import os
import sys


class Tensor(ctypes.Structure):
    """struct skiff_tensor."""
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p)]


SKIFF_FLOAT32 = 7
API_VERSION = 1


class Skiff:
    """A thin binding: each call checks its status and raises with skiff's message."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        lib = self.lib
        lib.skiff_api_version.restype = ctypes.c_int32
        lib.skiff_last_error.restype = ctypes.c_char_p
        lib.skiff_version.restype = ctypes.c_char_p
        lib.skiff_pipeline_load.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.skiff_pipeline_run.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.skiff_pipeline_free.argtypes = [ctypes.c_void_p]
        lib.skiff_string_free.argtypes = [ctypes.c_void_p]
        lib.skiff_model_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.skiff_model_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(Tensor), ctypes.c_size_t,
                                        ctypes.POINTER(ctypes.c_void_p)]
        lib.skiff_model_free.argtypes = [ctypes.c_void_p]
        lib.skiff_outputs_count.argtypes = [ctypes.c_void_p]
        lib.skiff_outputs_count.restype = ctypes.c_size_t
        lib.skiff_outputs_get.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(Tensor)]
        lib.skiff_outputs_free.argtypes = [ctypes.c_void_p]
        if lib.skiff_api_version() != API_VERSION:
            raise RuntimeError(f"libskiff speaks C API {lib.skiff_api_version()}, this binding {API_VERSION}")

    def check(self, status):
        if status != 0:
            raise RuntimeError(f"skiff ({status}): {self.lib.skiff_last_error().decode()}")

    def pipeline(self, name, settings=None):
        handle = ctypes.c_void_p()
        self.check(self.lib.skiff_pipeline_load(name.encode(), json.dumps(settings or {}).encode(), ctypes.byref(handle)))
        return handle

    def run(self, pipeline, request):
        out = ctypes.c_void_p()
        self.check(self.lib.skiff_pipeline_run(pipeline, json.dumps(request).encode(), ctypes.byref(out)))
        try:
            return json.loads(ctypes.string_at(out).decode())
        finally:
            self.lib.skiff_string_free(out)

    def run_model(self, model, shape, values):
        dims = (ctypes.c_int64 * len(shape))(*shape)
        data = array.array("f", values)
        address, _ = data.buffer_info()
        tensor = Tensor(None, SKIFF_FLOAT32, len(shape), dims, address)
        outputs = ctypes.c_void_p()
        self.check(self.lib.skiff_model_run(model, ctypes.byref(tensor), 1, ctypes.byref(outputs)))
        try:
            result = {}
            for i in range(self.lib.skiff_outputs_count(outputs)):
                t = Tensor()
                self.check(self.lib.skiff_outputs_get(outputs, i, ctypes.byref(t)))
                result[t.name.decode()] = [t.shape[d] for d in range(t.rank)]
            return result
        finally:
            self.lib.skiff_outputs_free(outputs)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("image")
    p.add_argument("--lib", default=os.path.join(here, "..", "..", "build", "lib", "libskiff.so"))
    args = p.parse_args()
    skiff = Skiff(args.lib)

    ocr = skiff.pipeline("ocr", {"use_textline_orientation": False})
    result = skiff.run(ocr, {"file": os.path.abspath(args.image)})
    print("\n".join(result["ocrResults"][0]["prunedResult"]["rec_texts"]))
    skiff.lib.skiff_pipeline_free(ocr)

    model = ctypes.c_void_p()
    skiff.check(skiff.lib.skiff_model_load(b"ppocr-v4-det", ctypes.byref(model)))
    print(skiff.run_model(model, [1, 3, 64, 96], [0.0] * (3 * 64 * 96)))
    skiff.lib.skiff_model_free(model)

    # Errors come back as exceptions with skiff's message, naming what is wrong.
    try:
        skiff.run(skiff.pipeline("ocr", {"use_textline_orientation": False}), {"file": "no/such/image.png"})
    except RuntimeError as e:
        print(e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
