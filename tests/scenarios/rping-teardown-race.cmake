# fabemu_rping_teardown_race(OUTPUT RESULT)
#
# Sets RESULT to TRUE when a run's OUTPUT shows rping's own teardown race and nothing
# else wrong with it: the client printed every ping it was asked for (-C N, so its last
# line of data is rdma-ping-(N-1)), then saw its DISCONNECT event, and then its CM thread
# read an event channel that main() had already closed ("rdma_get_cm_event: Bad file
# descriptor", exit 255). rping in Debian's rdma-core 44 has that race: its CM thread
# loops on rdma_get_cm_event() while main() destroys the channel after the last ping.
# Later rping stops the thread through an eventfd first. The data path has done all its
# work by then; a test that sees it may run once more. A client that stopped short of
# its last ping, or failed in any other way, is not this race.
function(fabemu_rping_teardown_race output result)
  set(${result} FALSE PARENT_SCOPE)
  if(NOT output MATCHES "client DISCONNECT EVENT\\.\\.\\.\n[^\n]*rdma_get_cm_event: Bad file descriptor")
    return()
  endif()
  if(NOT output MATCHES "rping -c [^\n]*-C ([0-9]+)")
    return()
  endif()
  math(EXPR last "${CMAKE_MATCH_1} - 1")
  # The client's lines read "| ping data: ..."; the server's "| server ping data: ...".
  if(output MATCHES "\\| ping data: rdma-ping-${last}: ")
    set(${result} TRUE PARENT_SCOPE)
  endif()
endfunction()

# fabemu_run_once_more_on_rping_race(LABEL RC OUT COMMAND...)
#
# Runs COMMAND and prints what it said. Where that shows rping's teardown race (above),
# or trouble inside a guest while the fabric did its part (guest-side.cmake: a command
# that hung until its timeout, or a perftest that could not time itself), says so under
# LABEL and runs it once more; the second run's exit code is final. RC is set to the exit
# code, OUT to what the run said (standard output, then error).
include(${CMAKE_CURRENT_LIST_DIR}/guest-side.cmake)
function(fabemu_run_once_more_on_rping_race label rc_var out_var)
  foreach(attempt 1 2)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    message("${out}${err}")
    if(attempt EQUAL 2)
      break()
    endif()
    fabemu_rping_teardown_race("${out}${err}" race)
    fabemu_guest_hang("${out}${err}" hang)
    fabemu_perftest_untimed("${out}${err}" untimed)
    if(race)
      message("${label}: the rping client ended in rping's own teardown race after its last "
        "ping (tests/scenarios/rping-teardown-race.cmake); running once more")
    elseif(hang AND rc EQUAL 1)
      message("${label}: a command hung in its VM until its timeout while the fabric "
        "delivered every frame (tests/scenarios/guest-side.cmake); running once more")
    elseif(untimed AND rc EQUAL 3)
      message("${label}: perftest could not time a command (its CPU-frequency sampling "
        "failed in a busy VM; tests/scenarios/guest-side.cmake); running once more")
    else()
      break()
    endif()
  endforeach()
  set(${rc_var} ${rc} PARENT_SCOPE)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
endfunction()
