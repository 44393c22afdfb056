# skiff_data: see framework/data/. (Module being written.)
