# Tests of skiff_data.
