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
  "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${_day0_supp}/tsan.supp:print_suppressions=0")

# The tests that run more than one thread: the engine thread and its compute pool (session,
# generation, cancellation), the app's engine bridge and chat (GUI thread, pool threads, engine
# thread), the HTTP server and remote client, the history store's writer thread, and the
# command line that drives them.
set(_day0_threaded_tests
  "^(test_engine_session|test_device_selection|test_cli_engine|test_gui_(models|chat|window)|day0_selftest|test_(remote_client|openai_server)|test_storage_(store|crash)|test_history_cli)$")

get_property(_day0_tests DIRECTORY PROPERTY TESTS)
foreach(_day0_test IN LISTS _day0_tests)
  set_property(TEST ${_day0_test} APPEND PROPERTY ENVIRONMENT ${_day0_sanitizer_env})
  if(_day0_test MATCHES "${_day0_threaded_tests}")
    set_property(TEST ${_day0_test} APPEND PROPERTY LABELS tsan)
  endif()
endforeach()
