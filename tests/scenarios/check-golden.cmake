# cmake -DFABEMU=... -DSCENARIO=... -DOUT=... -DGOLDEN=FILE [-DUPDATE=1] -P check-golden.cmake
# Runs a shipped simulation and holds what it writes to the digests in GOLDEN:
# summary.json without its wall time, fct.txt, every CSV, every pcap and
# scenario.resolved.yaml must be byte-identical. A refactor keeps them; a
# deliberate model change rewrites them (tests/scenarios/update-golden) and says
# so in its commit message.
cmake_policy(SET CMP0057 NEW) # if(IN_LIST) below; -P scripts start with old policies
execute_process(COMMAND ${FABEMU} run ${SCENARIO} --out ${OUT} --force --quiet
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc MATCHES "^[013]$")
  message(FATAL_ERROR "fabemu run ${SCENARIO} exited ${rc}:\n${out}${err}")
endif()
file(GLOB files RELATIVE ${OUT} ${OUT}/*.csv ${OUT}/*.txt ${OUT}/*.pcap ${OUT}/scenario.resolved.yaml)
list(SORT files)
file(READ ${OUT}/summary.json summary)
string(JSON summary REMOVE "${summary}" wall_time_s)
string(SHA256 digest "${summary}")
set(got "${digest}  summary.json (without wall_time_s)\n")
foreach(f ${files})
  file(SHA256 ${OUT}/${f} digest)
  string(APPEND got "${digest}  ${f}\n")
endforeach()
if(UPDATE)
  file(WRITE ${GOLDEN} "${got}")
  message("wrote ${GOLDEN}")
  return()
endif()
if(NOT EXISTS ${GOLDEN})
  message(FATAL_ERROR "no golden digests at ${GOLDEN}: run tests/scenarios/update-golden")
endif()
file(READ ${GOLDEN} want)
if(NOT got STREQUAL want)
  string(REPLACE "\n" ";" gotLines "${got}")
  string(REPLACE "\n" ";" wantLines "${want}")
  set(changed "")
  foreach(line ${gotLines})
    if(NOT line IN_LIST wantLines)
      string(REGEX REPLACE "^[0-9a-f]+  " "" name "${line}")
      string(APPEND changed "  ${name}\n")
    endif()
  endforeach()
  message(FATAL_ERROR "${SCENARIO}: results differ from ${GOLDEN} in:\n${changed}"
    "Results of this run are in ${OUT}. If the change is a deliberate model fix, "
    "run tests/scenarios/update-golden and say so in the commit message.")
endif()
message("${SCENARIO}: byte-identical to ${GOLDEN}")
