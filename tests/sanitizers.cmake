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
  "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${_day0_supp}/tsan.supp:print_suppressions=0"
  # Instrumented code runs up to ~10 times slower (ASan at -O1 against -O2 on the chat template
  # step loop): tests that bound their own run time stretch the bound by this factor.
  "DAY0_TEST_TIME_SCALE=10")

# The tests that run more than one thread without Qt in between: the engine thread and its
# compute pool (session, generation, cancellation), the HTTP server and remote client, the
# history store's writer thread, and the command line that drives them. Left out:
#  - the GUI tests (test_gui_*, day0_selftest): every hand-off between the GUI thread and the
#    engine, store and pool threads goes through Qt's queued calls, whose locks (futexes) and
#    reference counts live in the uninstrumented libQt6Core, so TSan reports each hand-off
#    (266 reports in test_gui_chat, every one with a Qt frame in an access stack). Silencing
#    them takes suppressions that match any stack through QtCore, which would hide Day0's own
#    races too; they stay out until Qt itself is built with -fsanitize=thread.
#  - test_storage_crash: it kills its writer 5-125 ms after starting it, before a
#    TSan-instrumented writer has opened the database.
set(_day0_threaded_tests
  "^(test_engine_session|test_device_selection|test_cli_engine|test_(remote_client|openai_server)|test_storage_store|test_history_cli)$")

get_property(_day0_tests DIRECTORY PROPERTY TESTS)
foreach(_day0_test IN LISTS _day0_tests)
  set_property(TEST ${_day0_test} APPEND PROPERTY ENVIRONMENT ${_day0_sanitizer_env})
  if(_day0_test MATCHES "${_day0_threaded_tests}")
    set_property(TEST ${_day0_test} APPEND PROPERTY LABELS tsan)
  endif()
endforeach()
