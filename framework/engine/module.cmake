# skiff_engine: the Predictor (framework/engine/).
skiff_add_module(engine
  SOURCES engine/predictor.cpp
  DEPS skiff_graph)
target_link_libraries(skiff_framework INTERFACE skiff_engine)
