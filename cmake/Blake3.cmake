# BLAKE3: the official C implementation, shipped as source by Debian's librust-blake3-dev.
# Built with its own runtime CPU dispatch (SSE2/SSE4.1/AVX2/AVX-512 assembly kernels),
# so the binary runs on any x86-64 and uses the widest kernel the CPU offers.
file(GLOB _blake3_dirs LIST_DIRECTORIES true "/usr/share/cargo/registry/blake3-*/c")
list(SORT _blake3_dirs)
list(REVERSE _blake3_dirs)
find_path(BLAKE3_C_DIR blake3.h HINTS ${_blake3_dirs} NO_DEFAULT_PATH)
if(NOT BLAKE3_C_DIR)
  message(FATAL_ERROR "BLAKE3 C sources not found: run scripts/install-deps (librust-blake3-dev)")
endif()
message(STATUS "BLAKE3 C sources: ${BLAKE3_C_DIR}")

set(_b3 ${BLAKE3_C_DIR})
set(_blake3_sources ${_b3}/blake3.c ${_b3}/blake3_dispatch.c ${_b3}/blake3_portable.c)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  list(APPEND _blake3_sources
       ${_b3}/blake3_sse2_x86-64_unix.S ${_b3}/blake3_sse41_x86-64_unix.S
       ${_b3}/blake3_avx2_x86-64_unix.S ${_b3}/blake3_avx512_x86-64_unix.S)
else()
  set(_blake3_defs BLAKE3_NO_SSE2 BLAKE3_NO_SSE41 BLAKE3_NO_AVX2 BLAKE3_NO_AVX512)
endif()
add_library(blake3 STATIC ${_blake3_sources})
target_include_directories(blake3 SYSTEM PUBLIC ${_b3})
target_compile_definitions(blake3 PRIVATE ${_blake3_defs})
set_target_properties(blake3 PROPERTIES POSITION_INDEPENDENT_CODE ON)
# Third-party code: no project warnings; never instrument its assembly for fuzzing.
target_compile_options(blake3 PRIVATE -w)
