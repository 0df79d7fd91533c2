# Tests of storage/ (conversation history in SQLite) and of `day0-cli history`.
# Included from tests/CMakeLists.txt: paths are relative to tests/.
day0_add_test(test_storage_database SOURCES storage/test_database.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_codec SOURCES storage/test_codec.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_migrations SOURCES storage/test_migrations.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_history SOURCES storage/test_history_db.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_search SOURCES storage/test_history_search.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_store SOURCES storage/test_history_store.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_recovery SOURCES storage/test_open_history.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_transfer SOURCES storage/test_transfer.cpp LABEL unit LIBS day0_storage)

# The crash test kills a writer process (SIGKILL) at random moments while it streams replies.
add_executable(storage_crash_writer storage/crash_writer.cpp)
target_link_libraries(storage_crash_writer PRIVATE day0_storage)
target_include_directories(storage_crash_writer PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
set_target_properties(storage_crash_writer PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
day0_add_test(test_storage_crash SOURCES storage/test_crash.cpp LABEL integration LIBS day0_storage)
target_compile_definitions(test_storage_crash PRIVATE
  DAY0_CRASH_WRITER="$<TARGET_FILE:storage_crash_writer>")
add_dependencies(test_storage_crash storage_crash_writer)

day0_add_test(test_history_cli SOURCES storage/test_history_cli.cpp LABEL integration LIBS day0_storage)
add_dependencies(test_history_cli day0-cli)
day0_add_test(test_storage_message_context SOURCES storage/test_message_context.cpp LABEL unit LIBS day0_storage)
