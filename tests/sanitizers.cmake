# Sanitizer builds (DAY0_SANITIZE, the asan and tsan presets): every test gets the sanitizer
# options, so ctest run in any sanitizer build folder reports the same way; the tests that
# exercise threads get the label `tsan` (make test-tsan runs those). Included last from
# tests/CMakeLists.txt, after every test is declared.
if(NOT DAY0_SANITIZE)
  return()
endif()

set(_day0_supp ${PROJECT_SOURCE_DIR}/tools/sanitizers)
# halt_on_error: the first report fails the test; detect_stack_use_after_return: stack frames
# outlive their calls in lambdas handed to other threads, which is where such bugs hide.
set(_day0_sanitizer_env
  "ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:print_stacktrace=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
  "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"
  "LSAN_OPTIONS=suppressions=${_day0_supp}/lsan.supp:print_suppressions=0"
  # Instrumented code runs up to ~10 times slower (ASan at -O1 against -O2 on the chat template
  # step loop): tests that bound their own run time stretch the bound by this factor.
  "DAY0_TEST_TIME_SCALE=10")
# history_size=7: TSan keeps the longest access history it can, so the earlier access of a report
# has its stack (which the suppressions are matched against) instead of "failed to restore".
# The GUI tests under TSan also get ignore_noninstrumented_modules (memory accesses that
# interceptors such as memcpy and free make for Qt and glib are not checked: TSan cannot see the
# Qt atomics that order them; their pthread locks are still followed and every access made by
# Day0 code is checked) and the Qt hand-off suppressions of tools/sanitizers/tsan-qt.supp. The
# other tests keep every check: libstdc++'s std::string members copy through those interceptors.
set(_day0_tsan_options "halt_on_error=1:second_deadlock_stack=1:history_size=7:print_suppressions=0")
set(_day0_tsan_env "TSAN_OPTIONS=${_day0_tsan_options}:suppressions=${_day0_supp}/tsan.supp")
set(_day0_tsan_gui_env
  "TSAN_OPTIONS=${_day0_tsan_options}:ignore_noninstrumented_modules=1:suppressions=${_day0_supp}/tsan-qt.supp")
# A report in a child process (day0 --selftest, day0-cli run by a test) may not change the exit
# code the test sees, so its summary line fails the test as well.
set(_day0_sanitizer_failure "SUMMARY: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|ThreadSanitizer)")

# test_sanitizer_setup: the suppressions excuse only Qt. sanitizer_probe reproduces what they
# name, and a leak and a race of its own that must still be reported.
if(DAY0_BUILD_GUI)
  add_executable(sanitizer_probe sanitizers/sanitizer_probe.cpp)
  target_link_libraries(sanitizer_probe PRIVATE Qt6::Quick Qt6::Qml Qt6::Gui)
  target_compile_definitions(sanitizer_probe PRIVATE DAY0_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  set_target_properties(sanitizer_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  day0_add_test(test_sanitizer_setup SOURCES sanitizers/test_sanitizer_setup.cpp LABEL unit)
  if("thread" IN_LIST DAY0_SANITIZE)
    set(_day0_probe_sanitizer thread)
  else()
    set(_day0_probe_sanitizer address)
  endif()
  target_compile_definitions(test_sanitizer_setup PRIVATE
    DAY0_SANITIZER_PROBE="$<TARGET_FILE:sanitizer_probe>" DAY0_TEST_SANITIZER="${_day0_probe_sanitizer}")
  add_dependencies(test_sanitizer_setup sanitizer_probe)
endif()

# The tests labelled tsan (make test-tsan): those that run more than one thread.
#  - Without Qt in between: the engine thread and its compute pool (sessions, generation,
#    cancellation within a step), the HTTP server with concurrent and dropped clients, the remote
#    client, the history store's writer thread (also killed mid-write), the knowledge index
#    searched from one thread while another indexes, and the command line that drives them. Their tsan.supp only ignores what the Qt test harness's libraries do inside
#    themselves (the watchdog thread).
#  - Through Qt (_day0_tsan_gui_tests): the engine bridge and the controllers with the real engine
#    and SQLite (test_gui_chat: streaming, Stop, errors, loading on a pool thread), remote engines
#    and the app's own server (test_gui_remote: hang-ups, cancellation over HTTP), the view-models
#    (test_gui_models), folders indexed in the background and cancelled (test_gui_knowledge).
#    Qt's queued calls and thread pool order their hand-offs inside the uninstrumented
#    libQt6Core; tsan-qt.supp names only the frames that touch the hand-off's own storage
#    (docs/reliability.md).
# Left out: test_gui_window, day0_selftest and test_gui_smoke render QML, whose loader and
# image-reader threads are Qt's own and synchronise only inside Qt; the soak tests (1000
# generations, minutes under TSan; their engine and bridge paths are the ones above).
set(_day0_threaded_tests
  "^(test_engine_session|test_device_selection|test_cli_engine|test_(remote_client|openai_server|openai_server_images)|test_storage_(store|crash)|test_history_cli|test_knowledge_index|test_sanitizer_setup)$")
set(_day0_tsan_gui_tests "^test_gui_(chat|remote|models|knowledge)$")

get_property(_day0_tests DIRECTORY PROPERTY TESTS)
foreach(_day0_test IN LISTS _day0_tests)
  set_property(TEST ${_day0_test} APPEND PROPERTY ENVIRONMENT ${_day0_sanitizer_env})
  set_property(TEST ${_day0_test} APPEND PROPERTY FAIL_REGULAR_EXPRESSION "${_day0_sanitizer_failure}")
  if(_day0_test MATCHES "${_day0_tsan_gui_tests}")
    set_property(TEST ${_day0_test} APPEND PROPERTY ENVIRONMENT ${_day0_tsan_gui_env})
    set_property(TEST ${_day0_test} APPEND PROPERTY LABELS tsan)
  else()
    set_property(TEST ${_day0_test} APPEND PROPERTY ENVIRONMENT ${_day0_tsan_env})
    if(_day0_test MATCHES "${_day0_threaded_tests}")
      set_property(TEST ${_day0_test} APPEND PROPERTY LABELS tsan)
    endif()
  endif()
endforeach()
