# The desktop app's library (day0_app): controllers, view-models and the engine bridge.
# Included from app/CMakeLists.txt; paths are relative to app/.
target_sources(day0_app PRIVATE
  bridge/engine_bridge.cpp
  bridge/engine_bridge.h
  gui/app_settings.cpp
  gui/app_settings.h
  gui/chat_attachments.cpp
  gui/chat_controller.cpp
  gui/chat_controller.h
  gui/chat_internal.h
  gui/chat_reply.cpp
  gui/chat_settings.cpp
  gui/code_highlighter.cpp
  gui/code_highlighter.h
  gui/conversation_list_model.cpp
  gui/conversation_list_model.h
  gui/data_folder.cpp
  gui/data_folder.h
  gui/document_attachments.cpp
  gui/document_attachments.h
  gui/hub_controller.cpp
  gui/hub_controller.h
  gui/image_attachments.cpp
  gui/image_attachments.h
  gui/knowledge_controller.cpp
  gui/knowledge_controller.h
  gui/markdown_blocks.cpp
  gui/markdown_blocks.h
  gui/math_parse.cpp
  gui/math_parse.h
  gui/math_render.cpp
  gui/math_render.h
  gui/message_blocks.cpp
  gui/message_blocks.h
  gui/message_list_model.cpp
  gui/message_list_model.h
  gui/model_manager.cpp
  gui/model_manager.h
  gui/reply_render.cpp
  gui/reply_render.h
  gui/selftest.cpp
  gui/selftest.h
  gui/server_controller.cpp
  gui/server_controller.h
  gui/source_opener.cpp
  gui/source_opener.h
  gui/user_path.cpp
  gui/user_path.h
)
target_link_libraries(day0_app PUBLIC day0_storage day0_server day0_remote day0_hub)
target_compile_definitions(day0_app PRIVATE DAY0_RESOURCES_DIR="${PROJECT_SOURCE_DIR}/resources")
