# run_model_misuse_test.cmake - run_model against what a model or the
# environment can do to it (see CMakeLists.txt), with the build tree's
# run_model and kmgr-model:
#   names  outputs named '../NAME' and '/ABS/NAME' are refused with one line
#          and exit 2, and no file appears outside the working directory;
#   async  with NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS set, the outputs
#          written are the completed execution's (checked against the
#          compute formula), in several runs.
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
else()
  message(FATAL_ERROR "MODE must be names or async")
endif()
