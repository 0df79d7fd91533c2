# Model building blocks shared by architectures.
target_sources(day0_engine PRIVATE blocks/kda.cpp blocks/kda_core.cpp)
# The KDA recurrence is the hot loop of glm5_next prefill and decode on the CPU.
set_source_files_properties(blocks/kda_core.cpp PROPERTIES COMPILE_OPTIONS "-O3")
