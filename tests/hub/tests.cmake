# Models from the Hugging Face Hub (app/hub) and `day0-cli pull`, against a local server that
# speaks the Hub's endpoints (hub/fake_hub.*), started by each test on loopback.
add_library(day0_fake_hub STATIC hub/fake_hub.cpp hub/shape_repo.cpp)
target_include_directories(day0_fake_hub PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(day0_fake_hub PUBLIC day0_engine_internal day0_hub
  PRIVATE PkgConfig::CPP_HTTPLIB nlohmann_json::nlohmann_json Threads::Threads)
set_target_properties(day0_fake_hub PROPERTIES AUTOMOC OFF)

day0_add_test(test_hub SOURCES hub/test_hub.cpp LABEL integration LIBS day0_fake_hub)
day0_add_test(test_hub_cli SOURCES hub/test_hub_cli.cpp LABEL integration LIBS day0_fake_hub)
add_dependencies(test_hub_cli day0-cli)
