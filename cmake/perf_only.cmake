# DPMU_PERF_ONLY: the layers the perf backend's dynpmu needs (docs/hardware.md
# "Building for a board"): arch, model, uarch, driver, monitor, the perf and
# regio-model backends, the analysis writers, and the stat, list and
# profiles commands. jansson is the one library; a cross build takes the
# target's static libjansson.a: DPMU_DEPS_ROOT is where
# scripts/arm64-jansson.sh unpacked Debian's libjansson-dev:arm64.
set(DPMU_DEPS_ROOT "" CACHE PATH "unpacked target packages (libjansson-dev:arm64)")
set(jhints /usr/lib/${CMAKE_SYSTEM_PROCESSOR}-linux-gnu)
if(DPMU_DEPS_ROOT)
  set(jhints ${DPMU_DEPS_ROOT}/usr/lib/${CMAKE_SYSTEM_PROCESSOR}-linux-gnu)
endif()
find_library(DPMU_JANSSON_LIB NAMES libjansson.a jansson HINTS ${jhints} NO_CMAKE_FIND_ROOT_PATH
  REQUIRED)
# jansson's two headers are architecture-independent (Debian ships them
# Multi-Arch: same in /usr/include); copy them rather than put the host's
# /usr/include on a cross compiler's path.
find_file(DPMU_JANSSON_H jansson.h HINTS ${DPMU_DEPS_ROOT}/usr/include /usr/include
  NO_CMAKE_FIND_ROOT_PATH REQUIRED)
get_filename_component(jdir ${DPMU_JANSSON_H} DIRECTORY)
file(COPY ${jdir}/jansson.h ${jdir}/jansson_config.h DESTINATION ${CMAKE_BINARY_DIR}/jansson-include)
add_library(dpmu_jansson INTERFACE)
target_include_directories(dpmu_jansson INTERFACE ${CMAKE_BINARY_DIR}/jansson-include)
target_link_libraries(dpmu_jansson INTERFACE ${DPMU_JANSSON_LIB})

include(cmake/embed.cmake)
dpmu_embed_data(dpmu_data ${CMAKE_SOURCE_DIR}/data)
dpmu_layer(arch DEPS dpmu_jansson dpmu_data m Threads::Threads)
dpmu_layer(model DEPS dpmu_arch)
dpmu_layer(uarch DEPS dpmu_model)
dpmu_layer(driver DEPS)
dpmu_layer(monitor DEPS dpmu_driver dpmu_arch)
add_library(dpmu_backend STATIC ${CMAKE_SOURCE_DIR}/src/backend/perf.c
  ${CMAKE_SOURCE_DIR}/src/backend/perf_sysfs.c ${CMAKE_SOURCE_DIR}/src/backend/regio_model.c)
target_link_libraries(dpmu_backend PUBLIC dpmu_monitor dpmu_model dpmu_driver)
set(an ${CMAKE_SOURCE_DIR}/src/analysis)
add_library(dpmu_analysis STATIC ${an}/table.c ${an}/metrics.c ${an}/advice.c ${an}/report.c
  ${an}/json.c ${an}/svg.c ${an}/om_series.c ${an}/openmetrics.c)
target_link_libraries(dpmu_analysis PUBLIC dpmu_monitor dpmu_jansson m)

set(t ${CMAKE_SOURCE_DIR}/tools/dynpmu)
add_executable(dynpmu ${t}/main.c ${t}/stat.c ${t}/list.c ${t}/list_perf.c ${t}/profiles.c
  ${t}/util.c ${t}/listen.c ${t}/perfonly/absent.c)
target_compile_definitions(dynpmu PRIVATE DPMU_PERF_ONLY=1)
target_link_libraries(dynpmu PRIVATE dpmu_analysis dpmu_backend dpmu_monitor dpmu_uarch
  dpmu_model dpmu_arch dpmu_driver Threads::Threads m)
if(DPMU_STATIC)
  target_link_options(dynpmu PRIVATE -static)
endif()
