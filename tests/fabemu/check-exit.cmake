# cmake -DCMD="fabemu;args" -DWANT=<code> -DMATCH=<regex> -P check-exit.cmake
# Runs the real binary and checks its exit code and output.
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL WANT)
  message(FATAL_ERROR "'${CMD}' exited ${rc}, want ${WANT}\nstdout: ${out}\nstderr: ${err}")
endif()
if(MATCH AND NOT "${out}${err}" MATCHES "${MATCH}")
  message(FATAL_ERROR "'${CMD}' output does not match '${MATCH}':\n${out}${err}")
endif()
