day0_add_test(test_storage_database SOURCES storage/test_database.cpp LABEL unit LIBS day0_storage)
