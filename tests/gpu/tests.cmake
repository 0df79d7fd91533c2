# GPU tests of the CUDA backend (label gpu; they exit 77, skipped, without a usable GPU), the
# kernels assembled for the release preset's oldest architecture, and the device-selection
# fallback that runs everywhere.
if(DAY0_CUDA)
  day0_add_test(test_cuda_ops SOURCES gpu/test_cuda_ops.cpp LABEL gpu
    LIBS day0_engine_internal day0_kernels CUDA::cudart_static)
  day0_add_test(test_cuda_moe_ops SOURCES gpu/test_cuda_moe_ops.cpp LABEL gpu
    LIBS day0_engine_internal day0_kernels CUDA::cudart_static)
  day0_add_test(test_cuda_gpt_oss SOURCES gpu/test_cuda_gpt_oss.cpp LABEL gpu
    LIBS day0_engine_internal day0_kernels CUDA::cudart_static)
  day0_add_test(test_cuda_sampling SOURCES gpu/test_cuda_sampling.cpp LABEL gpu
    LIBS day0_engine_internal day0_kernels CUDA::cudart_static)
  # glm5_next: the program against the CPU engine, and its kernel families against the CPU blocks.
  day0_add_test(test_cuda_glm5 SOURCES gpu/test_cuda_glm5.cpp LABEL gpu
    LIBS day0_engine_internal day0_kernels CUDA::cudart_static)
  day0_add_test(test_cuda_kda SOURCES gpu/test_cuda_kda.cpp LABEL gpu
    LIBS day0_engine_internal day0_kernels CUDA::cudart_static)
  day0_add_test(test_cuda_mla SOURCES gpu/test_cuda_mla.cpp LABEL gpu
    LIBS day0_engine_internal day0_kernels CUDA::cudart_static)
  day0_add_test(test_cuda_glm_moe SOURCES gpu/test_cuda_glm_moe.cpp LABEL gpu
    LIBS day0_engine_internal day0_kernels CUDA::cudart_static)

  # The release preset also builds the kernels for sm_80, sm_86 and sm_89, which this
  # configuration does not: each kernel source is assembled for sm_80 here (no GPU needed), so an
  # sm_90-only instruction outside an architecture guard fails a test rather than `make run`.
  get_target_property(day0_kernel_sources day0_kernels SOURCES)
  foreach(src IN LISTS day0_kernel_sources)
    get_filename_component(stem ${src} NAME_WE)
    add_test(NAME kernels_assemble_sm80_${stem}
      COMMAND ${CMAKE_CUDA_COMPILER} -cubin -arch=sm_80 -std=c++17 --expt-relaxed-constexpr --extended-lambda
              -I${PROJECT_SOURCE_DIR}/kernels -o ${CMAKE_BINARY_DIR}/tests/sm80_${stem}.cubin
              ${PROJECT_SOURCE_DIR}/kernels/${src})
    set_tests_properties(kernels_assemble_sm80_${stem} PROPERTIES LABELS build TIMEOUT 600)
  endforeach()
endif()
day0_add_test(test_device_selection SOURCES gpu/test_device_selection.cpp LABEL integration LIBS day0_engine_internal)
