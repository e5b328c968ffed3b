# One place for warning flags; applied per target with gpudm_warnings(<target>).
function(gpudm_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall --expt-relaxed-constexpr>)
endfunction()

# Compile definitions telling host code which backend kinds this build has.
function(gpudm_backend_defs target)
  if(GPUDM_HAVE_CUDA)
    target_compile_definitions(${target} PRIVATE GPUDM_HAVE_CUDA=1)
  endif()
  if(GPUDM_HAVE_OPENMP)
    target_compile_definitions(${target} PRIVATE GPUDM_HAVE_OPENMP=1)
  endif()
endfunction()

# Common properties of CUDA backend libraries.
function(gpudm_cuda_target target)
  set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
  if(GPUDM_CUDA_DEBUG_SYNC)
    target_compile_definitions(${target} PUBLIC GPUDM_CUDA_DEBUG_SYNC=1)
  endif()
  gpudm_warnings(${target})
endfunction()
