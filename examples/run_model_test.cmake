# run_model_test.cmake - the example_run_model test (see CMakeLists.txt).
# Every step must succeed; the first failure stops the test with its output.
function(step what)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok ${out}")
endfunction()

set(PREFIX ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
foreach(f include/nrt/nrt.h include/nrt/nrt_status.h include/nrt/nrt_experimental.h
          include/nrt/nrt_async.h lib/libnrt.a bin/kmgr-model)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "install did not put ${f} under the prefix")
  endif()
endforeach()
file(GLOB shared ${PREFIX}/lib/libnrt.so*)
if(NOT shared)
  message(FATAL_ERROR "install did not put libnrt.so under the prefix")
endif()

separate_arguments(san UNIX_COMMAND "${SAN_FLAGS}")
string(REPLACE ";" " " san "${SAN_FLAGS}")
separate_arguments(san UNIX_COMMAND "${san}")
step("compile run_model.c against the prefix"
     ${CC} ${san} ${SOURCE} -I${PREFIX}/include -L${PREFIX}/lib -lnrt -pthread
     -Wl,-rpath,${PREFIX}/lib -o ${WORK_DIR}/run_model)

step("kmgr-model create" ${PREFIX}/bin/kmgr-model create -o model.bin --name example
     --input a:u8:16 --input b:u8:5 --output x:u8:16 --output y:u8:7)
step("write inputs" ${CHECKER} gen ${WORK_DIR} 16 5)
step("run_model" ${WORK_DIR}/run_model model.bin a in0.bin b in1.bin)
step("check outputs" ${CHECKER} check ${WORK_DIR} 2 16 5 2 x:16 y:7)
