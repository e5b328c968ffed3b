# The product's families: the one hand-written list. Everything CMake generates about families
# derives from it:
#   algorithms/CMakeLists.txt         gpudm_<f> libraries, runnable_families.inc (the runner's families)
#   backends/CMakeLists.txt           gpudm_<kind>_<f> libraries, registered_families.inc (register_all)
#   experiments/bench/CMakeLists.txt  bench_families.inc (gpudm_bench's cases)
# A family <f> is algorithms/<f>/CMakeLists.txt (library gpudm_<f>) + algorithms/<f>/family_<f>.cpp;
# gpudm_check_families() stops the configure when this list and those files disagree.
set(GPUDM_FAMILIES ceilings pittsburgh subtree gmt vfdt gp_rules)
# Shared algorithm code with backends of its own but no family of the runner: the rule engine
# (pittsburgh and gp_rules evaluate on it; its backends are registered as "rules" for its tests).
set(GPUDM_ENGINES rules)

# gpudm_units_with(<out> <path>): the engines and families, in that order, for which <path> exists
# once "<f>" in it is replaced by the unit's name.
function(gpudm_units_with out path)
  set(found "")
  foreach(f IN LISTS GPUDM_ENGINES GPUDM_FAMILIES)
    string(REPLACE "<f>" "${f}" p "${path}")
    if(EXISTS "${p}")
      list(APPEND found ${f})
    endif()
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# gpudm_write_list(<name> <macro> <items>...): generated/gpudm/<name>.inc with one line
# <macro>(<item>) per item, rewritten only when its text changes (its includers are not rebuilt
# at every configure).
function(gpudm_write_list name macro)
  set(text "")
  foreach(item IN LISTS ARGN)
    string(APPEND text "${macro}(${item})\n")
  endforeach()
  set(file ${PROJECT_BINARY_DIR}/generated/gpudm/${name}.inc)
  file(WRITE ${file}.tmp "${text}")
  configure_file(${file}.tmp ${file} COPYONLY)
endfunction()

# Every listed family exists, and every family in algorithms/ is listed.
function(gpudm_check_families)
  set(root ${PROJECT_SOURCE_DIR}/algorithms)
  foreach(f IN LISTS GPUDM_FAMILIES)
    if(NOT EXISTS ${root}/${f}/CMakeLists.txt OR NOT EXISTS ${root}/${f}/family_${f}.cpp)
      message(FATAL_ERROR "GPUDM_FAMILIES (cmake/GpudmFamilies.cmake) names '${f}', but algorithms/${f}/CMakeLists.txt "
                          "or algorithms/${f}/family_${f}.cpp is missing")
    endif()
  endforeach()
  file(GLOB family_files RELATIVE ${root} CONFIGURE_DEPENDS ${root}/*/family_*.cpp)
  foreach(file IN LISTS family_files)
    get_filename_component(dir ${file} DIRECTORY)
    if(NOT dir IN_LIST GPUDM_FAMILIES)
      message(FATAL_ERROR "algorithms/${file} defines a family that GPUDM_FAMILIES (cmake/GpudmFamilies.cmake) does "
                          "not list: add '${dir}' there")
    endif()
  endforeach()
endfunction()
