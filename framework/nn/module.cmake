# skiff_nn: see framework/nn/. (Module being written.)
