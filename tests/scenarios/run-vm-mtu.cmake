# cmake -DFABEMU=... -DFABRIC=roce|infiniband|iwarp -DMTU=1024|2048|4096 -DOUT=... -DCACHE=...
#   -P run-vm-mtu.cmake
# Real endpoints at every path MTU a fabric offers: two VMs run rping -S MTU and
# ib_write_bw at that MTU across the emulated fabric; every command must pass and no
# frame may fail to reach a tap. Needs root, /dev/net/tun and QEMU; skips elsewhere.
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
find_program(QEMU qemu-system-x86_64)
if(NOT uid STREQUAL "0" OR NOT EXISTS /dev/net/tun OR NOT QEMU)
  message("FABEMU-SKIP: VM endpoints need root, /dev/net/tun and qemu-system-x86_64")
  return()
endif()
set(DEVICE rxe)
set(BWOPTS "-x 1 -m ${MTU}")
if(FABRIC STREQUAL "iwarp")
  set(DEVICE siw)
  set(BWOPTS "-R") # rdma_cm, as iWARP requires; siw takes the path MTU from its netdev
endif()
file(READ ${CMAKE_CURRENT_LIST_DIR}/data/vm-mtu.yaml.in text)
string(CONFIGURE "${text}" text @ONLY)
file(MAKE_DIRECTORY ${OUT})
file(WRITE ${OUT}.yaml "${text}")
include(${CMAKE_CURRENT_LIST_DIR}/guest-side.cmake)
fabemu_run_once_more("${FABRIC} at MTU ${MTU}" rc said
  ${FABEMU} run ${OUT}.yaml --out ${OUT} --force --cache ${CACHE} --quiet)
if(NOT EXISTS ${OUT}/summary.json)
  message(FATAL_ERROR "${FABRIC} at MTU ${MTU}: fabemu run exited ${rc} and wrote no results")
endif()
file(READ ${OUT}/summary.json summary)
string(JSON edge GET "${summary}" edge)
# Frames the edges could not write to a tap: what a tap narrower than the path MTU
# gives. (The InfiniBand gateway's ib_multicast drops are the guests' IPv6 multicast.)
string(JSON writeErrors ERROR_VARIABLE none GET "${summary}" edge drops tap_write_error)
if(NOT rc EQUAL 0 OR (writeErrors AND NOT writeErrors EQUAL 0))
  message(FATAL_ERROR "${FABRIC} at MTU ${MTU}: fabemu run exited ${rc}; edge counters ${edge}")
endif()
