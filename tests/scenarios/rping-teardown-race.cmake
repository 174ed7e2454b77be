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
