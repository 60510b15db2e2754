# cmake -DBIN=program -DINPUTS=folder -DSIG=regex -P expect_failure.cmake
# Runs a kpt program over its regression inputs (libFuzzer, -runs=0) and
# passes when it fails and its output matches SIG (the kind of failure the
# fuzzer found).  A script, because an ASan report ends the process with
# SIGABRT (abort_on_error=1), which ctest counts as a failure whatever
# PASS_REGULAR_EXPRESSION says.
execute_process(COMMAND ${BIN} -runs=0 ${INPUTS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${BIN} passed on ${INPUTS}: the bug was not reproduced\n${out}")
endif()
if(NOT out MATCHES "${SIG}")
  message(FATAL_ERROR "${BIN} failed (${rc}), but not with \"${SIG}\":\n${out}")
endif()
message(STATUS "failed as it must (${rc}): ${CMAKE_MATCH_0}")
