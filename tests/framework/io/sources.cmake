# Tests of skiff_io.
