# Tests of storage/ (conversation history in SQLite) and of `day0-cli history`.
# Included from tests/CMakeLists.txt: paths are relative to tests/.
day0_add_test(test_storage_database SOURCES storage/test_database.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_codec SOURCES storage/test_codec.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_migrations SOURCES storage/test_migrations.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_history SOURCES storage/test_history_db.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_search SOURCES storage/test_history_search.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_recovery SOURCES storage/test_open_history.cpp LABEL unit LIBS day0_storage)
day0_add_test(test_storage_transfer SOURCES storage/test_transfer.cpp LABEL unit LIBS day0_storage)

