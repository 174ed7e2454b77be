# cmake -P guest-side-test.cmake
# What fabemu_guest_hang() and fabemu_perftest_untimed() take for trouble inside a guest
# while the fabric did its part, and what they do not.
include(${CMAKE_CURRENT_LIST_DIR}/guest-side.cmake)

function(expect name want text)
  fabemu_guest_hang("${text}" got)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${name}: expected ${want}, got ${got}")
  endif()
  message("ok: ${name}")
endfunction()

# roce-vm-dcqcn's CI failure, as fabemu now prints it: one pair of two killed at its timeout.
set(cmds "h0: ib_write_bw -d rxe0 -x 1 -F -p 18515 -D 12: exit -1
    | ---------------------------------------------------------------------------------------
    | fabemu: killed at its timeout
h0: ib_write_bw -d rxe0 -x 1 -F -p 18516 -D 12: exit 0
h2: ib_write_bw -d rxe0 -x 1 -F -p 18515 -D 12 10.0.0.1: exit -1
    | fabemu: killed at its timeout
h3: ib_write_bw -d rxe0 -x 1 -F -p 18516 -D 12 10.0.0.1: exit 0
")
set(balanced "fabric: 49958 frames from endpoints, 49947 to endpoints, 4 ARP answered, 11 dropped in switches (0 for lack of buffer), 0 PFC frames, 4822 ECN marks
switch drops: 11 no_route
")
set(unmet "expect commands.*.exit_code 0: -1 NOT MET
expect totals.ecn_marks >0: 4822 ok
expect commands.2.metrics.bw_average_mb_sec >1.2: null NOT MET
")
expect("a pair killed at its timeout, every frame accounted for" TRUE
  "${cmds}${balanced}${unmet}")
# The host gave up before the guest's word came: no sign the guest ended it.
string(REPLACE "fabemu: killed at its timeout" "fabemu: endpoint h0: no answer from its agent in time"
  quiet "${cmds}")
expect("no word from the guest" FALSE "${quiet}${balanced}${unmet}")
# A frame the fabric neither delivered nor counted: the fabric may have stalled a flow.
string(REPLACE "49947 to endpoints" "49946 to endpoints" lost "${balanced}")
expect("a frame unaccounted for" FALSE "${cmds}${lost}${unmet}")
# Drops for lack of buffer: the fabric lost data.
string(REPLACE "(0 for lack of buffer)" "(2 for lack of buffer)" full "${balanced}")
expect("drops for lack of buffer" FALSE "${cmds}${full}${unmet}")
# An edge that dropped frames.
expect("edge drops" FALSE "${cmds}${balanced}edge drops: 3 dcqcn_queue_full\n${unmet}")
# An unmet expectation about the fabric, not only the commands.
expect("the fabric's expectation missed" FALSE
  "${cmds}${balanced}${unmet}expect totals.congestion_drops 0: 5 NOT MET\n")
# No fabric line at all (a run that ended before its account).
expect("no fabric account" FALSE "${cmds}${unmet}")

function(expect_untimed name want text)
  fabemu_perftest_untimed("${text}" got)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${name}: expected ${want}, got ${got}")
  endif()
  message("ok: ${name}")
endfunction()

# A local run's failure: h3's perftest could not time itself, so its metric is null.
set(untimed "h3: ib_write_bw -d rxe0 -x 1 -F -p 18516 -D 12 10.0.0.1: exit 0
    | untimed: perftest could not sample the CPU frequency (correlation r^2 < 0.9); its figures are not measurements
${balanced}expect commands.*.exit_code 0: 0 ok
expect commands.2.metrics.bw_average_mb_sec >1.2: 2.17 ok
")
expect_untimed("an untimed client, its metric null" TRUE
  "${untimed}expect commands.3.metrics.bw_average_mb_sec >1.2: null NOT MET\n")
# A metric measured and too low: a real result, not an untimed one.
expect_untimed("a measured metric too low" FALSE
  "${untimed}expect commands.3.metrics.bw_average_mb_sec >1.2: 0.4 NOT MET\n")
# Untimed, but a command also failed.
expect_untimed("and a command failed" FALSE
  "${untimed}expect commands.*.exit_code 0: 1 NOT MET\nexpect commands.3.metrics.bw_average_mb_sec >1.2: null NOT MET\n")
# Nothing untimed: a metric may be null for another reason (the command printed no table).
expect_untimed("null without the untimed line" FALSE
  "${cmds}${balanced}expect commands.3.metrics.bw_average_mb_sec >1.2: null NOT MET\n")

# fabemu_run_once_more: a run showing one of these runs a second time, and only then.
function(expect_runs name want_runs code text)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/guest-side-runs)
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  file(WRITE ${dir}/said "${text}")
  fabemu_run_once_more("${name}" rc out
    sh -c "echo run >> '${dir}/runs' && cat '${dir}/said' && exit ${code}")
  file(STRINGS ${dir}/runs runs)
  list(LENGTH runs n)
  file(REMOVE_RECURSE ${dir})
  if(NOT n EQUAL want_runs OR NOT rc EQUAL code)
    message(FATAL_ERROR "${name}: expected ${want_runs} run(s) and exit ${code}, got ${n} and ${rc}")
  endif()
  message("ok: ${name}")
endfunction()

expect_runs("a hang, exit 1: once more" 2 1 "${cmds}${balanced}${unmet}")
expect_runs("a hang's output, but exit 3: not again" 1 3 "${cmds}${balanced}${unmet}")
expect_runs("untimed, exit 3: once more" 2 3
  "${untimed}expect commands.3.metrics.bw_average_mb_sec >1.2: null NOT MET\n")
expect_runs("a lost frame, exit 1: not again" 1 1 "${cmds}${lost}${unmet}")
