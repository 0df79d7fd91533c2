# CUDA detection. DAY0_CUDA defaults to ON when nvcc is found (CUDA_HOME, /usr/local/cuda,
# or PATH); -DDAY0_CUDA=OFF builds the CPU-only engine. Architectures: DAY0_CUDA_ARCHITECTURES
# (or CMAKE_CUDA_ARCHITECTURES), release default sm_80, sm_86, sm_89, sm_90.
include(CheckLanguage)

if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
  foreach(candidate "$ENV{CUDA_HOME}/bin/nvcc" "/usr/local/cuda/bin/nvcc")
    if(EXISTS "${candidate}")
      set(CMAKE_CUDA_COMPILER "${candidate}" CACHE FILEPATH "CUDA compiler")
      break()
    endif()
  endforeach()
endif()

set(_day0_cuda_default OFF)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  set(_day0_cuda_default ON)
endif()
option(DAY0_CUDA "Build the CUDA backend" ${_day0_cuda_default})

set(DAY0_CUDA_ARCHITECTURES "80;86;89;90" CACHE STRING "CUDA architectures to compile for")
if(DAY0_CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    message(FATAL_ERROR "DAY0_CUDA=ON but no CUDA compiler was found. Install the CUDA toolkit "
                        "(/usr/local/cuda) or configure with -DDAY0_CUDA=OFF.")
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    set(CMAKE_CUDA_ARCHITECTURES ${DAY0_CUDA_ARCHITECTURES})
  endif()
  set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA 20 dialect for nvcc
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "Day0: CUDA ${CUDAToolkit_VERSION} for architectures ${CMAKE_CUDA_ARCHITECTURES}")
else()
  message(STATUS "Day0: building without CUDA (CPU backend only)")
endif()
