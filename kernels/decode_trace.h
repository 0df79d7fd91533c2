#pragma once
// Development timeline of the decode kernels: active only in builds with -DDAY0_DECODE_TRACE
// (decode_trace.cuh); otherwise init returns false and dump prints nothing.
namespace day0::kernels {
bool decode_trace_init();
// Prints, for the last `steps` decode steps, each kernel kind's average phases, then one step's
// launches as a timeline.
void decode_trace_dump(int steps);
}  // namespace day0::kernels
