include(${CMAKE_CURRENT_LIST_DIR}/rping-teardown-race.cmake)

# fabemu_guest_hang(OUTPUT RESULT)
#
# Sets RESULT to TRUE when a run's OUTPUT shows software in a guest that stopped
# making progress while the fabric had done all its part: some command was killed by
# its VM's agent at its timeout ("fabemu: killed at its timeout"), every expectation
# not met is about the commands, the fabric delivered or counted as dropped every
# frame the endpoints gave it (from = to + dropped) with none dropped for lack of
# buffer, and no edge dropped a frame. Seen twice in CI, in roce-vm-dcqcn: one
# ib_write_bw pair of two, server and client both still running after 2 minutes of a
# 12 s test, while the other pair and the fabric finished. A run that lost a frame, or
# missed an expectation about the fabric, is not this, and neither is a dead VM.
function(fabemu_guest_hang output result)
  set(${result} FALSE PARENT_SCOPE)
  if(NOT output MATCHES "\\| fabemu: killed at its timeout")
    return()
  endif()
  if(NOT output MATCHES "fabric: ([0-9]+) frames from endpoints, ([0-9]+) to endpoints, [0-9]+ ARP answered, ([0-9]+) dropped in switches \\(0 for lack of buffer\\)")
    return()
  endif()
  math(EXPR accounted "${CMAKE_MATCH_2} + ${CMAKE_MATCH_3}")
  if(NOT accounted EQUAL CMAKE_MATCH_1)
    return()
  endif()
  if(output MATCHES "\nedge drops: ")
    return()
  endif()
  # Every unmet expectation names a command ("expect commands.2.exit_code 0: -1 NOT MET").
  fabemu_unmet_all_match("${output}" "^expect commands\\." all)
  set(${result} ${all} PARENT_SCOPE)
endfunction()

# fabemu_perftest_untimed(OUTPUT RESULT)
#
# Sets RESULT to TRUE when a run's OUTPUT shows that perftest could not time a command
# (its CPU-frequency sampling failed in a busy TCG VM, so it printed 0.00 for every
# rate; fabemu prints "| untimed: ..." under the command), and every expectation not met
# is a command's metric ("expect commands.3.metrics.bw_average_mb_sec >1.2: null NOT
# MET"). The in-process e2e tests run such a case again too (emulate-e2e-test.cc).
function(fabemu_perftest_untimed output result)
  set(${result} FALSE PARENT_SCOPE)
  if(NOT output MATCHES "\\| untimed: perftest could not sample the CPU frequency")
    return()
  endif()
  fabemu_unmet_all_match("${output}"
    "^expect commands\\.[0-9*]+\\.metrics\\.[^ ]+ [^\n]*: null NOT MET$" all)
  set(${result} ${all} PARENT_SCOPE)
endfunction()

# fabemu_unmet_all_match(OUTPUT REGEX RESULT)
#
# Sets RESULT to TRUE when OUTPUT has at least one unmet expectation ("expect ... NOT
# MET") and every one of them matches REGEX.
function(fabemu_unmet_all_match output regex result)
  set(${result} FALSE PARENT_SCOPE)
  string(REGEX MATCHALL "expect [^\n]* NOT MET" unmet "${output}")
  if(NOT unmet)
    return()
  endif()
  foreach(line IN LISTS unmet)
    if(NOT line MATCHES "${regex}")
      return()
    endif()
  endforeach()
  set(${result} TRUE PARENT_SCOPE)
endfunction()

# fabemu_run_once_more(LABEL RC OUT COMMAND...)
#
# Runs COMMAND and prints what it said. Where that shows trouble inside a guest while
# the fabric did its part (rping's teardown race, a command that hung until its timeout,
# or a perftest that could not time itself), says so under LABEL and runs it once more; the second run's exit code is final. RC is set to the exit
# code, OUT to what the run said (standard output, then error).
function(fabemu_run_once_more label rc_var out_var)
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
