# Limits: the memory plan checked before a model is accepted, and the bounds on requests.
target_sources(day0_engine PRIVATE
  limits/memory_plan.cpp
  limits/model_plan.cpp
  limits/request_limits.cpp
)
