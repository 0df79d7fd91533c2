# The fast CPU kernels against the reference operators.
day0_add_test(test_cpu_kernels SOURCES engine/cpu/test_cpu_kernels.cpp LABEL unit LIBS day0_engine_internal)
