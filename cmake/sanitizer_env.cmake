# Reads sanitizers/<tool>.options (one option per line, '#' comments) into
# the colon-joined strings the sanitizer runtimes take from the environment.
function(kmgr_read_options file out)
  set(opts "")
  if(EXISTS "${file}")
    file(STRINGS "${file}" lines)
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "#.*$" "" line "${line}")
      string(STRIP "${line}" line)
      if(NOT line STREQUAL "")
        string(REPLACE "@SRC@" "${CMAKE_SOURCE_DIR}" line "${line}")
        list(APPEND opts "${line}")
      endif()
    endforeach()
  endif()
  list(JOIN opts ":" joined)
  set(${out} "${joined}" PARENT_SCOPE)
endfunction()

foreach(tool asan ubsan tsan msan lsan)
  string(TOUPPER ${tool} T)
  kmgr_read_options("${CMAKE_SOURCE_DIR}/sanitizers/${tool}.options" KMGR_${T}_OPTIONS)
endforeach()
set(KMGR_TEST_ENV
    "ASAN_OPTIONS=${KMGR_ASAN_OPTIONS}"
    "UBSAN_OPTIONS=${KMGR_UBSAN_OPTIONS}"
    "TSAN_OPTIONS=${KMGR_TSAN_OPTIONS}"
    "MSAN_OPTIONS=${KMGR_MSAN_OPTIONS}"
    "LSAN_OPTIONS=${KMGR_LSAN_OPTIONS}"
    "LLVM_PROFILE_FILE=${CMAKE_BINARY_DIR}/profiles/%p-%m.profraw")
