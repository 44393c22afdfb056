# Tests of skiff_io.
skiff_add_test(skiff_io_test
  SOURCES framework/io/safetensors_test.cpp framework/io/checkpoint_test.cpp framework/io/base64_test.cpp
  DEPS skiff_framework skiff_io)
# Exact resume after SIGKILL: re-executes itself as the training child (ResumeChild.Train).
skiff_add_test(skiff_resume_test
  SOURCES framework/io/resume_test.cpp
  DEPS skiff_framework
  LABELS training)
