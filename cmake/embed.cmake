# Embed every file under a data folder into a C table, so the command carries
# its built-in profiles and event catalogs: dpmu_embedded_find("profiles/x.json").
function(dpmu_embed_data target dir)
  file(GLOB_RECURSE files CONFIGURE_DEPENDS RELATIVE ${dir} ${dir}/*.json)
  set(out ${CMAKE_BINARY_DIR}/dpmu_embedded.c)
  set(abs "")
  foreach(f ${files})
    list(APPEND abs ${dir}/${f})
  endforeach()
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DDIR=${dir} -DOUT=${out} -P ${CMAKE_SOURCE_DIR}/cmake/embed_run.cmake
    DEPENDS ${abs} ${CMAKE_SOURCE_DIR}/cmake/embed_run.cmake
    COMMENT "embedding data/")
  add_library(${target} STATIC ${out})
endfunction()
