# The OpenAI-compatible server (day0_server) and the client for remote OpenAI-compatible
# engines (day0_remote), both on cpp-httplib from Debian (libcpp-httplib-dev), no Qt.
# Included from app/CMakeLists.txt after day0-cli is defined; paths are relative to app/.
pkg_check_modules(CPP_HTTPLIB REQUIRED IMPORTED_TARGET GLOBAL cpp-httplib)

add_library(day0_server STATIC
  ${CMAKE_CURRENT_LIST_DIR}/chat_request.cpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/openai_server.cpp
  ${CMAKE_CURRENT_LIST_DIR}/request_images.cpp
)
target_include_directories(day0_server PUBLIC ${CMAKE_CURRENT_LIST_DIR}/..)
target_link_libraries(day0_server PUBLIC day0_engine PRIVATE day0_common PkgConfig::CPP_HTTPLIB nlohmann_json::nlohmann_json Threads::Threads)
set_target_properties(day0_server PROPERTIES AUTOMOC OFF)

add_library(day0_remote STATIC
  ${CMAKE_CURRENT_LIST_DIR}/../remote/sse_parser.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../remote/remote_client.cpp
)
target_include_directories(day0_remote PUBLIC ${CMAKE_CURRENT_LIST_DIR}/..)
target_link_libraries(day0_remote PUBLIC day0_engine PRIVATE day0_common PkgConfig::CPP_HTTPLIB nlohmann_json::nlohmann_json Threads::Threads)
set_target_properties(day0_remote PROPERTIES AUTOMOC OFF)

target_link_libraries(day0-cli PRIVATE day0_server day0_remote)
