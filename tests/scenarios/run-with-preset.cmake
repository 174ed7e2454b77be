# cmake -DFABEMU=... -DSCENARIO=... -DPRESET=paper|nvidia|hpcc -DOUT=... -P run-with-preset.cmake
# Runs a shipped RoCEv2 scenario with DCQCN in one of its variants: its expect block
# may miss (another congestion control changes the figures), but no flow may fail,
# and no congestion drop may appear where PFC is on.
execute_process(COMMAND ${FABEMU} run ${SCENARIO} --out ${OUT} --force --quiet
    --set fabric.cc=dcqcn --set fabric.dcqcn=${PRESET}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 AND NOT rc EQUAL 3)
  message(FATAL_ERROR "fabemu run ${SCENARIO} with dcqcn ${PRESET} exited ${rc}:\n${out}${err}")
endif()
file(READ ${OUT}/summary.json summary)
string(JSON failed GET "${summary}" flow_stats failed)
string(JSON completed GET "${summary}" flow_stats completed)
string(JSON count GET "${summary}" flow_stats count)
string(JSON drops GET "${summary}" totals congestion_drops)
file(READ ${OUT}/scenario.resolved.yaml resolved)
message("dcqcn ${PRESET}: ${completed} of ${count} flows completed, ${failed} failed, "
  "${drops} congestion drops")
if(NOT failed EQUAL 0)
  message(FATAL_ERROR "${failed} flow(s) failed with dcqcn ${PRESET}:\n${err}")
endif()
if(resolved MATCHES "pfc: true" AND NOT drops EQUAL 0)
  message(FATAL_ERROR "${drops} congestion drops with PFC on and dcqcn ${PRESET}")
endif()
