# cmake -DFABEMU=... -DSCENARIO=... -DOUT=... -DCACHE=... -DVMS=0|1 [-DCHECK_PLOTS=...]
#   [-DPROGRESS=1] -P run-scenario.cmake
# Runs a shipped scenario through the real binary; it must meet its expectations
# (exit 0) and leave report.md and summary.json, and its plots must show their data. VM scenarios skip, with the
# reason, where there is no root, /dev/net/tun or QEMU.
if(VMS)
  execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
  find_program(QEMU qemu-system-x86_64)
  if(NOT uid STREQUAL "0")
    message("FABEMU-SKIP: ${SCENARIO} has VM endpoints; they need root (taps)")
    return()
  elseif(NOT EXISTS /dev/net/tun)
    message("FABEMU-SKIP: ${SCENARIO} has VM endpoints; there is no /dev/net/tun")
    return()
  elseif(NOT QEMU)
    message("FABEMU-SKIP: ${SCENARIO} has VM endpoints; qemu-system-x86_64 is not installed")
    return()
  endif()
endif()
# --force: OUT is this test's own folder, perhaps left by a fabemu that wrote no marker.
include(${CMAKE_CURRENT_LIST_DIR}/guest-side.cmake)
fabemu_run_once_more(${SCENARIO} rc said
  ${FABEMU} run ${SCENARIO} --out ${OUT} --force --cache ${CACHE})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fabemu run ${SCENARIO} exited ${rc} (3: expectations not met)")
endif()
# PROGRESS: a run that ends with its work, long before its duration, has progress lines
# (one every 5 s into a pipe) with the work done and the ETA at its pace, not to the duration.
if(PROGRESS)
  if(NOT said MATCHES "simulated [0-9.]+ ms in ([0-9.]+) s")
    message(FATAL_ERROR "no 'simulated ... in ... s' line")
  endif()
  set(wall ${CMAKE_MATCH_1})
  set(line "progress: [0-9]+% sim [0-9.]+/[0-9.]+ ms  work [0-9]+%  wall [0-9.]+ s  ETA ~[0-9]+ s")
  if(wall GREATER_EQUAL 6 AND NOT said MATCHES "${line}")
    message(FATAL_ERROR "a ${wall} s run printed no progress line with its work and ETA ~")
  endif()
endif()
foreach(f summary.json report.md scenario.resolved.yaml)
  if(NOT EXISTS ${OUT}/${f})
    message(FATAL_ERROR "${OUT}/${f} is missing")
  endif()
endforeach()
if(CHECK_PLOTS AND EXISTS ${OUT}/plots)
  execute_process(COMMAND ${CHECK_PLOTS} ${OUT} RESULT_VARIABLE prc OUTPUT_VARIABLE pout
    ERROR_VARIABLE perr)
  message("${pout}${perr}")
  if(NOT prc EQUAL 0)
    message(FATAL_ERROR "${OUT}: a plot does not show its data, or report.md is not for people")
  endif()
endif()
