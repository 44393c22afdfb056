# Tests of skiff_optim.
