# The desktop app: view-models, the engine bridge and the chat with the real engine and the
# demo model, offscreen; and `day0 --selftest` end to end. Paths are relative to tests/.
if(DAY0_BUILD_GUI)
  day0_add_test(test_gui_models SOURCES gui/test_gui_models.cpp LABEL unit LIBS day0_app)
  day0_add_test(test_gui_render SOURCES gui/test_gui_render.cpp LABEL unit LIBS day0_app)
  day0_add_test(test_gui_chat SOURCES gui/test_gui_chat.cpp LABEL integration LIBS day0_app)
  day0_add_test(test_gui_chat_settings SOURCES gui/test_gui_chat_settings.cpp LABEL integration LIBS day0_app)
  day0_add_test(test_gui_streaming SOURCES gui/test_gui_streaming.cpp LABEL integration LIBS day0_app)
  day0_add_test(test_gui_remote SOURCES gui/test_gui_remote.cpp LABEL integration
    LIBS day0_app PkgConfig::CPP_HTTPLIB nlohmann_json::nlohmann_json)
  day0_add_test(test_gui_window SOURCES gui/test_gui_window.cpp LABEL integration
    LIBS day0_app day0_uiplugin Qt6::QuickControls2)
  # The file and folder pickers with only the QML modules of the package's Depends; again with
  # Qt.labs.folderlistmodel left out, where they must say so instead of opening.
  day0_add_test(test_gui_dialogs SOURCES gui/test_gui_dialogs.cpp LABEL integration
    LIBS day0_app day0_uiplugin Qt6::QuickControls2)
  list(JOIN DAY0_QT_RUNTIME_PACKAGES " " _day0_qt_runtime)
  target_compile_definitions(test_gui_dialogs PRIVATE DAY0_QT_RUNTIME_PACKAGES="${_day0_qt_runtime}")
  add_test(NAME test_gui_dialogs_missing_module COMMAND test_gui_dialogs)
  set_tests_properties(test_gui_dialogs_missing_module PROPERTIES
    LABELS integration
    SKIP_RETURN_CODE 77
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;DAY0_LOG_TO_FILE=0;DAY0_TEST_HIDE_PACKAGE=qml6-module-qt-labs-folderlistmodel"
    TIMEOUT 600)
  # Get a model: the controller and the page against a local server speaking the Hub's endpoints.
  day0_add_test(test_gui_hub SOURCES gui/test_gui_hub.cpp LABEL integration
    LIBS day0_app day0_uiplugin Qt6::QuickControls2 day0_fake_hub)
  day0_add_test(test_gui_knowledge SOURCES gui/test_gui_knowledge.cpp LABEL integration LIBS day0_app)
  day0_add_test(test_data_folder SOURCES gui/test_data_folder.cpp LABEL unit LIBS day0_app)
  day0_add_test(test_history_watch SOURCES gui/test_history_watch.cpp LABEL unit LIBS day0_app)
  day0_add_test(test_source_opener SOURCES gui/test_source_opener.cpp LABEL unit LIBS day0_app)
  add_test(NAME day0_selftest COMMAND day0 --selftest)
  set_tests_properties(day0_selftest PROPERTIES
    LABELS integration
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;XDG_DATA_HOME=${CMAKE_BINARY_DIR}/tests/selftest-data"
    PASS_REGULAR_EXPRESSION "day0 --selftest: ok"
    TIMEOUT 180)
  add_test(NAME day0_selftest_knowledge COMMAND day0 --selftest --page knowledge)
  set_tests_properties(day0_selftest_knowledge PROPERTIES
    LABELS integration
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;XDG_DATA_HOME=${CMAKE_BINARY_DIR}/tests/selftest-data"
    PASS_REGULAR_EXPRESSION "day0 --selftest: ok"
    TIMEOUT 180)
endif()

# Context assembly needs no Qt GUI: the knowledge library and a real tokenizer from the engine.
day0_add_test(test_knowledge_context SOURCES gui/test_knowledge_context.cpp LABEL unit
  LIBS day0_knowledge day0_engine)
