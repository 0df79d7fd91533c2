# Tests of knowledge/ (documents, chunking, .gitignore, the folder index and search) and of
# `day0-cli docs`. Included from tests/CMakeLists.txt: paths are relative to tests/.
# The document test opens the encrypted fixture with its password through poppler directly.
pkg_check_modules(DAY0_TEST_POPPLER REQUIRED IMPORTED_TARGET poppler-cpp)
day0_add_test(test_knowledge_document SOURCES knowledge/test_document.cpp LABEL unit
  LIBS day0_knowledge PkgConfig::DAY0_TEST_POPPLER)
day0_add_test(test_knowledge_index SOURCES knowledge/test_index.cpp LABEL unit LIBS day0_knowledge)
day0_add_test(test_knowledge_chunker SOURCES knowledge/test_chunker.cpp LABEL unit LIBS day0_knowledge)
day0_add_test(test_knowledge_gitignore SOURCES knowledge/test_gitignore.cpp LABEL unit LIBS day0_knowledge)
day0_add_test(test_knowledge_hostile SOURCES knowledge/test_hostile.cpp LABEL unit LIBS day0_knowledge)
day0_add_test(test_knowledge_cli SOURCES knowledge/test_docs_cli.cpp LABEL integration)
add_dependencies(test_knowledge_cli day0-cli)
day0_add_test(test_knowledge_query SOURCES knowledge/test_query.cpp LABEL unit LIBS day0_knowledge)
