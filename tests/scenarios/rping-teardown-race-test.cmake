# cmake -P rping-teardown-race-test.cmake
# What fabemu_rping_teardown_race() takes for rping's teardown race, and what it does not.
include(${CMAKE_CURRENT_LIST_DIR}/rping-teardown-race.cmake)

function(ping_lines who last result)
  set(text "")
  foreach(i RANGE ${last})
    string(APPEND text "    | ${who}ping data: rdma-ping-${i}: ABCDEFG\n")
  endforeach()
  set(${result} "${text}" PARENT_SCOPE)
endfunction()

function(expect name want text)
  fabemu_rping_teardown_race("${text}" got)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${name}: expected ${want}, got ${got}")
  endif()
  message("ok: ${name}")
endfunction()

set(head "h0: rping -s -a 10.0.0.1 -C 10 -v -S 4096: exit 0\nh1: rping -c -a 10.0.0.1 -C 10 -v -S 4096: exit 255\n")
set(race "    | client DISCONNECT EVENT...\n    | rdma_get_cm_event: Bad file descriptor\n")
ping_lines("" 9 all)
ping_lines("" 8 short)
ping_lines("server " 9 server)

# The last CI's failure, in short: ten pings, the DISCONNECT, then the closed channel.
expect("every ping, then the closed channel" TRUE "${head}${all}${race}")
# The client stopped one ping short: the fabric may have lost something.
expect("a ping short" FALSE "${head}${short}${race}")
# Only the server's lines carry the last ping.
expect("the server's pings only" FALSE "${head}${server}${race}")
# Every ping, but the client failed some other way.
expect("another failure" FALSE "${head}${all}    | cq completion failed status 12\n")
# The closed channel without the DISCONNECT before it.
expect("no DISCONNECT first" FALSE
  "${head}${all}    | rdma_get_cm_event: Bad file descriptor\n")
# A count of 20 wants rdma-ping-19.
string(REPLACE "-C 10" "-C 20" head20 "${head}")
expect("the count read from the command" FALSE "${head20}${all}${race}")
