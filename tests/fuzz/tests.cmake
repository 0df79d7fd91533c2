# Fuzz harnesses (one LLVMFuzzerTestOneInput per target), built two ways from the same sources:
#  - normally (gcc): each harness with fuzz/replay_main.cpp, which runs every file of the target's
#    seed corpus and regressions/ folder; ctest runs these as fast unit tests (fuzz_<name>);
#  - with -DDAY0_FUZZ=ON (clang only): libFuzzer binaries with ASan and UBSan, the engine and
#    storage libraries instrumented for coverage (`make fuzz`, docs/reliability.md).
option(DAY0_FUZZ "Build libFuzzer fuzzers (clang only) instead of the corpus replay tests" OFF)

set(DAY0_FUZZ_TARGETS safetensors model_config tokenizer chat_template image history_import)

if(DAY0_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "DAY0_FUZZ=ON needs clang (libFuzzer): configure with "
                        "-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++, or run `make fuzz`.")
  endif()
  if(DAY0_CUDA)
    message(FATAL_ERROR "DAY0_FUZZ=ON builds the CPU engine only: add -DDAY0_CUDA=OFF.")
  endif()
  # Errors of UBSan stop the run, so the fuzzer records them as crashes.
  set(_day0_fuzz_sanitize -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  foreach(lib day0_engine day0_storage)
    target_compile_options(${lib} PRIVATE -fsanitize=fuzzer-no-link ${_day0_fuzz_sanitize})
  endforeach()
  add_custom_target(fuzzers)
endif()

foreach(name IN LISTS DAY0_FUZZ_TARGETS)
  set(target fuzz_${name})
  add_executable(${target} fuzz/fuzz_${name}.cpp)
  if(name STREQUAL "history_import")
    target_link_libraries(${target} PRIVATE day0_storage)
  else()
    target_link_libraries(${target} PRIVATE day0_engine_internal)
  endif()
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(${target} PRIVATE DAY0_TEST_DATA_DIR="${DAY0_TEST_DATA_DIR}")
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz AUTOMOC OFF)
  if(DAY0_FUZZ)
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer ${_day0_fuzz_sanitize})
    target_link_options(${target} PRIVATE -fsanitize=fuzzer ${_day0_fuzz_sanitize})
    add_dependencies(fuzzers ${target})
  else()
    target_sources(${target} PRIVATE fuzz/replay_main.cpp)
    set(inputs ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${name}/corpus)
    if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${name}/regressions)
      list(APPEND inputs ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${name}/regressions)
    endif()
    add_test(NAME ${target} COMMAND ${target} ${inputs})
    set_tests_properties(${target} PROPERTIES LABELS unit TIMEOUT 120 ENVIRONMENT "DAY0_LOG_TO_FILE=0")
  endif()
endforeach()

# What the fuzzers found, as targeted tests.
if(NOT DAY0_FUZZ)
  day0_add_test(test_fuzz_findings SOURCES fuzz/test_fuzz_findings.cpp LABEL unit LIBS day0_engine_internal)
endif()
