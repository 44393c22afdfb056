# Tests of skiff_nn.
