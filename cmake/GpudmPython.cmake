# The Python package's prerequisites, looked for before any library is declared: the module is a
# shared object over the same static libraries as run_experiment, so they are compiled position-
# independent exactly when it will be built (python/CMakeLists.txt builds it). Sets
# GPUDM_HAVE_PYTHON, GPUDM_PYTHON_MISSING_REASON, Python_EXECUTABLE (the project's venv by default:
# scripts/python-env.sh; GPUDM_VENV in the environment names another) and nanobind_DIR.
set(GPUDM_HAVE_PYTHON OFF)
set(reason "")
if(NOT GPUDM_BUILD_PYTHON)
  set(reason "configured with GPUDM_BUILD_PYTHON=OFF")
else()
  if(DEFINED ENV{GPUDM_VENV})
    set(venv "$ENV{GPUDM_VENV}")
  else()
    set(venv "${PROJECT_SOURCE_DIR}/.venv")
  endif()
  if(NOT Python_EXECUTABLE AND EXISTS "${venv}/bin/python")
    set(Python_EXECUTABLE "${venv}/bin/python" CACHE FILEPATH "the project's venv (scripts/python-env.sh)")
  endif()
  find_package(Python 3.9 COMPONENTS Interpreter Development.Module)
  if(NOT Python_FOUND)
    set(reason "no Python 3.9+ with its headers (Debian: python3-dev)")
  else()
    if(NOT nanobind_DIR)
      execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir OUTPUT_VARIABLE nb_dir
                      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE nb_rc)
      if(nb_rc EQUAL 0)
        set(nanobind_DIR "${nb_dir}" CACHE PATH "nanobind's CMake folder" FORCE)
      endif()
    endif()
    find_package(nanobind CONFIG QUIET)
    if(NOT nanobind_FOUND)
      set(reason "nanobind not found for ${Python_EXECUTABLE} (scripts/install-deps.sh makes .venv with it)")
    endif()
  endif()
endif()
if(reason STREQUAL "")
  set(GPUDM_HAVE_PYTHON ON)
  set(GPUDM_PYTHON_MISSING_REASON "(${Python_EXECUTABLE}, nanobind ${nanobind_VERSION})")
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  # ... with no ELF symbol interposition assumed and our symbols hidden (the module exports only its
  # init function), so calls and data are bound as in an executable. Measured at one commit by the
  # CPU perf gate (scripts/perf_regression.sh HEAD, the base built with GPUDM_BUILD_PYTHON=OFF):
  # GMT's generations +2.6-3.2 % with PIC alone, +1.6-1.9 % with hidden symbols; subtree +0.4 %,
  # vfdt 0 %.
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fno-semantic-interposition> $<$<COMPILE_LANGUAGE:CXX>:-fvisibility=hidden>)
  endif()
else()
  set(GPUDM_PYTHON_MISSING_REASON "(${reason})")
endif()
unset(reason)
