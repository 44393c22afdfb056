# skiff_distributed: process groups over Gloo (CPU, TCP) with an HTTP rendezvous store
# hosted by rank 0, and data parallelism (framework/distributed/).
find_package(Gloo REQUIRED CONFIG)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
skiff_add_module(distributed
  SOURCES distributed/store.cpp distributed/process_group.cpp distributed/data_parallel.cpp distributed/zero.cpp
  DEPS skiff_nn skiff_optim skiff_io gloo
  PRIVATE_DEPS PkgConfig::HTTPLIB)
