# Models from the Hugging Face Hub (day0_hub, no Qt): the Hub's file listing and downloads
# (cpp-httplib), parallel resumable verified downloads (OpenSSL libcrypto for the hashes), the
# pre-download plan (the engine's inspect and memory plan) and the curated repositories.
# Included from app/CMakeLists.txt after server/sources.cmake (which finds cpp-httplib).
find_package(OpenSSL REQUIRED)
add_library(day0_hub STATIC
  ${CMAKE_CURRENT_LIST_DIR}/curated.cpp
  ${CMAKE_CURRENT_LIST_DIR}/digest.cpp
  ${CMAKE_CURRENT_LIST_DIR}/downloader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/file_selection.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hub_client.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hub_token.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pull_plan.cpp
)
target_include_directories(day0_hub PUBLIC ${CMAKE_CURRENT_LIST_DIR}/..)
target_link_libraries(day0_hub PUBLIC day0_engine
  PRIVATE PkgConfig::CPP_HTTPLIB nlohmann_json::nlohmann_json OpenSSL::Crypto Threads::Threads)
set_target_properties(day0_hub PROPERTIES AUTOMOC OFF)

target_link_libraries(day0-cli PRIVATE day0_hub)
