# Helpers shared by every FabricEmu target: warnings, ns-3 modules, tests.
include_guard(GLOBAL)

# -Wall -Wextra on our own code; ns-3's headers come in as system headers.
function(fabemu_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
    $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>) # clang (scripts/fuzz) has no -Wshadow=local
  if(FABEMU_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  # ns-3 logging and asserts are compiled into Debug builds only.
  target_compile_definitions(${target} PRIVATE $<$<CONFIG:Debug>:NS3_LOG_ENABLE NS3_ASSERT_ENABLE>)
endfunction()

# A program that runs simulations (fabemu, the benchmarks) links FABEMU_ALLOCATOR's malloc.
function(fabemu_allocator target)
  if(NOT FABEMU_ALLOCATOR STREQUAL "system")
    target_link_libraries(${target} PRIVATE PkgConfig::FABEMU_MALLOC)
  endif()
endfunction()

# fabemu_ns3_module(NAME <name> [LOADED_LATER] SOURCES <files...> LIBRARIES <targets...>)
# An ns-3 module of ours: a shared library named fabemu-<name>, laid out as
# ns-3 modules are (model/, helper/), linking Debian's imported ns3:: targets.
# Other code includes its headers as "ns3/<name>.h"; the rest of the tree's
# headers go by their path from the repository root ("emulator/edge/edge-port.h").
# Shared, not static, so that every TypeId registers itself at load time and
# is reachable by name from scenarios and --set.
function(fabemu_ns3_module)
  cmake_parse_arguments(M "LOADED_LATER" "NAME" "SOURCES;LIBRARIES" ${ARGN})
  set(target fabemu-${M_NAME})
  add_library(${target} SHARED ${M_SOURCES})
  add_library(fabemu::${M_NAME} ALIAS ${target})
  # Its headers are included as ns-3's own are, "ns3/<name>.h": build/include/ns3
  # holds a link to each (ns-3's build copies them there), so no model/ or helper/
  # folder is on anyone's include path.
  set(incdir "${PROJECT_BINARY_DIR}/include")
  file(MAKE_DIRECTORY "${incdir}/ns3")
  file(GLOB headers CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/model/*.h"
    "${CMAKE_CURRENT_SOURCE_DIR}/helper/*.h")
  foreach(h ${headers})
    get_filename_component(name "${h}" NAME)
    if(EXISTS "/usr/include/ns3/${name}")
      message(FATAL_ERROR "${h}: ns-3 has a header of that name; rename ours")
    endif()
    file(CREATE_LINK "${h}" "${incdir}/ns3/${name}" SYMBOLIC)
  endforeach()
  target_include_directories(${target} PUBLIC "${incdir}")
  target_link_libraries(${target} PUBLIC ${M_LIBRARIES})
  # Thread-local state touched per packet (pooled events, the schedulers' hints) is read
  # at a fixed offset from the thread pointer, not through __tls_get_addr (2 % of a
  # fabric's instructions): these libraries are loaded with the program. LOADED_LATER
  # marks one that a plugin brings in (dlopen), whose thread-locals glibc places wherever
  # it can: those keep the general model.
  if(NOT M_LOADED_LATER)
    target_compile_options(${target} PRIVATE -ftls-model=initial-exec)
  endif()
  fabemu_warnings(${target})
endfunction()

# fabemu_test(NAME <name> LABEL unit|sim|e2e [NS3] SOURCES <files...> LIBRARIES <targets...>)
# One doctest executable, registered with CTest under its label. NS3 gives it
# a main that sets ns-3's time resolution to picoseconds first.
function(fabemu_test)
  cmake_parse_arguments(T "NS3" "NAME;LABEL;TIMEOUT" "SOURCES;LIBRARIES;ARGS" ${ARGN})
  set(target test-${T_NAME})
  if(T_NS3)
    set(main "${PROJECT_SOURCE_DIR}/tests/ns3-doctest-main.cc")
    list(APPEND T_LIBRARIES ns3::libcore)
  else()
    set(main "${PROJECT_SOURCE_DIR}/tests/doctest-main.cc")
  endif()
  add_executable(${target} ${T_SOURCES} "${main}")
  target_link_libraries(${target} PRIVATE doctest::doctest ${T_LIBRARIES})
  target_compile_definitions(${target} PRIVATE
    FABEMU_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data"
    FABEMU_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  fabemu_warnings(${target})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  math(EXPR T_TIMEOUT "${T_TIMEOUT} * ${FABEMU_TIMEOUT_SCALE}")
  add_test(NAME ${T_NAME} COMMAND ${target} ${T_ARGS})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABEL}" TIMEOUT ${T_TIMEOUT}
    # doctest prints this line when a test case skips itself (see tests/skip.h).
    SKIP_REGULAR_EXPRESSION "FABEMU-SKIP:")
endfunction()
