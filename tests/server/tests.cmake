# The OpenAI-compatible server and the remote-engine client (app/server, app/remote).
day0_add_test(test_sse_parser SOURCES server/test_sse_parser.cpp LABEL unit LIBS day0_remote)
day0_add_test(test_chat_request SOURCES server/test_chat_request.cpp LABEL unit LIBS day0_server day0_common)
day0_add_test(test_remote_client SOURCES server/test_remote_client.cpp LABEL integration
  LIBS day0_remote PkgConfig::CPP_HTTPLIB nlohmann_json::nlohmann_json)
day0_add_test(test_openai_server SOURCES server/test_openai_server.cpp LABEL integration
  LIBS day0_remote day0_engine PkgConfig::CPP_HTTPLIB nlohmann_json::nlohmann_json)
add_dependencies(test_openai_server day0-cli)
day0_add_test(test_openai_server_images SOURCES server/test_openai_server_images.cpp LABEL integration
  LIBS day0_engine PkgConfig::CPP_HTTPLIB nlohmann_json::nlohmann_json)
add_dependencies(test_openai_server_images day0-cli)
