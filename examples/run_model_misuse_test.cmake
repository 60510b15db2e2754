# run_model_misuse_test.cmake - run_model against what a model or the
# environment can do to it (see CMakeLists.txt), with the build tree's
# run_model and kmgr-model:
#   names  outputs named '../NAME' and '/ABS/NAME' are refused with one line
#          and exit 2, and no file appears outside the working directory;
#   async  with NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS set, the outputs
#          written are the completed execution's (checked against the
#          compute formula), in several runs;
#   files  outputs whole or not at all (a failed write under ulimit -f leaves
#          every old NAME.out), and an unknown INPUT_NAME refused;
#   bad    a container that does not parse, at the default log level: two
#          lines, the library's reason once and run_model's own, exit 2.
function(run_step what expect_rc)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK_DIR}/run
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "${expect_rc}")
    message(FATAL_ERROR "${what}: exit ${rc}, want ${expect_rc}:\n${out}\n${err}")
  endif()
  set(step_err "${err}" PARENT_SCOPE)
  message(STATUS "${what}: exit ${rc} ${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/run)

if(MODE STREQUAL "names")
  foreach(bad "../escaped" "${WORK_DIR}/absolute" ".hidden")
    file(REMOVE ${WORK_DIR}/escaped.out ${WORK_DIR}/absolute.out ${WORK_DIR}/run/.hidden.out)
    run_step("kmgr-model create (output '${bad}')" 0
             ${KMGR_MODEL} create -o model.bin --name misuse --input a:u8:16
             --output ok:u8:16 --output ${bad}:u8:7)
    run_step("run_model (output '${bad}')" 2 ${RUN_MODEL} model.bin)
    string(FIND "${step_err}" "is not a plain file name" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "run_model did not name the refused output:\n${step_err}")
    endif()
    string(REGEX MATCHALL "\n" lines "${step_err}")
    list(LENGTH lines n)
    if(NOT n EQUAL 1)
      message(FATAL_ERROR "want one error line, got ${n}:\n${step_err}")
    endif()
    foreach(f ${WORK_DIR}/escaped.out ${WORK_DIR}/absolute.out ${WORK_DIR}/run/.hidden.out
              ${WORK_DIR}/run/ok.out)
      if(EXISTS ${f})
        message(FATAL_ERROR "run_model wrote ${f} for a model with output '${bad}'")
      endif()
    endforeach()
  endforeach()
elseif(MODE STREQUAL "async")
  run_step("kmgr-model create" 0 ${KMGR_MODEL} create -o model.bin --name asyncx
           --input a:u8:4096 --input b:u8:1000 --output x:u8:4096 --output y:u8:3000)
  run_step("write inputs" 0 ${CHECKER} gen ${WORK_DIR}/run 4096 1000)
  set(ENV{NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS} 4)
  foreach(i RANGE 1 5)
    file(REMOVE ${WORK_DIR}/run/x.out ${WORK_DIR}/run/y.out)
    run_step("run_model (implicit async, run ${i})" 0
             ${RUN_MODEL} model.bin a in0.bin b in1.bin)
    run_step("check outputs (run ${i})" 0
             ${CHECKER} check ${WORK_DIR}/run 2 4096 1000 2 x:4096 y:3000)
  endforeach()
elseif(MODE STREQUAL "files")
  # whole or nothing: under `ulimit -f 3` (sh: 3 blocks of 512 bytes) output y
  # (1000 bytes) can be written, x (4096) cannot; neither old x.out nor old y.out may
  # change, no temporary file may stay
  run_step("kmgr-model create" 0 ${KMGR_MODEL} create -o model.bin --name files
           --input a:u8:4096 --input b:u8:1000 --output y:u8:1000 --output x:u8:4096)
  run_step("write inputs" 0 ${CHECKER} gen ${WORK_DIR}/run 4096 1000)
  file(WRITE ${WORK_DIR}/run/x.out "old x")
  file(WRITE ${WORK_DIR}/run/y.out "old y")
  run_step("run_model (ulimit -f 3)" 1 sh -c "ulimit -f 3 && exec \"$0\" \"$@\""
           ${RUN_MODEL} model.bin a in0.bin b in1.bin)
  file(READ ${WORK_DIR}/run/x.out x)
  file(READ ${WORK_DIR}/run/y.out y)
  if(NOT x STREQUAL "old x" OR NOT y STREQUAL "old y")
    message(FATAL_ERROR "a failed run changed the old outputs: x.out '${x}', y.out '${y}'")
  endif()
  file(GLOB left ${WORK_DIR}/run/.run_model-*)
  if(left)
    message(FATAL_ERROR "temporary files left: ${left}")
  endif()
  # an INPUT_NAME the model does not have: refused, one line, exit 2
  run_step("run_model (unknown input)" 2 ${RUN_MODEL} model.bin nosuch in0.bin)
  string(FIND "${step_err}" "'nosuch' is not an input" at)
  string(REGEX MATCHALL "\n" lines "${step_err}")
  list(LENGTH lines n)
  if(at EQUAL -1 OR NOT n EQUAL 1)
    message(FATAL_ERROR "want one line naming 'nosuch', got:\n${step_err}")
  endif()
  # and without the limit both outputs are replaced
  run_step("run_model" 0 ${RUN_MODEL} model.bin a in0.bin b in1.bin)
  run_step("check outputs" 0 ${CHECKER} check ${WORK_DIR}/run 2 4096 1000 2 y:1000 x:4096)
elseif(MODE STREQUAL "bad")
  file(WRITE ${WORK_DIR}/run/bad.model "not a model container, 64 bytes of it ........")
  unset(ENV{KMGR_LOG_LEVEL})
  run_step("run_model (a bad container)" 2 ${RUN_MODEL} bad.model)
  string(REGEX MATCHALL "\n" lines "${step_err}")
  list(LENGTH lines n)
  string(FIND "${step_err}" "bad field 'magic'" why)
  string(FIND "${step_err}" "run_model: nrt_load bad.model" what)
  if(NOT n EQUAL 2 OR why EQUAL -1 OR what EQUAL -1)
    message(FATAL_ERROR "want the reason and run_model's line, got ${n} lines:\n${step_err}")
  endif()
else()
  message(FATAL_ERROR "MODE must be names, async, files or bad")
endif()
