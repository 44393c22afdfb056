# skiff_io: see framework/io/. (Module being written.)
