# skiff_optim: see framework/optim/. (Module being written.)
