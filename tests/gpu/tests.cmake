# GPU tests of the CUDA backend (label gpu; they exit 77, skipped, without a usable GPU), and
# the device-selection fallback that runs everywhere.
if(DAY0_CUDA)
  day0_add_test(test_cuda_ops SOURCES gpu/test_cuda_ops.cpp LABEL gpu
    LIBS day0_engine_internal day0_kernels CUDA::cudart_static)
  day0_add_test(test_cuda_moe_ops SOURCES gpu/test_cuda_moe_ops.cpp LABEL gpu
    LIBS day0_engine_internal day0_kernels CUDA::cudart_static)
  day0_add_test(test_cuda_gpt_oss SOURCES gpu/test_cuda_gpt_oss.cpp LABEL gpu
    LIBS day0_engine_internal day0_kernels CUDA::cudart_static)
endif()
day0_add_test(test_device_selection SOURCES gpu/test_device_selection.cpp LABEL integration LIBS day0_engine_internal)
