#pragma once
// Which implementation the CPU backend's operators (cpu_ops.h) run.
//
//   reference  plain fp32 loops: the oracle every other path (GPU kernels, the fast CPU path)
//              is checked against.
//   fast       vectorised kernels for the best instruction set this CPU has: weights decoded
//              in registers (no float row in memory), rows dotted against blocks of tokens.
//              Activations stay fp32 and every weight is decoded exactly, so the fast path
//              differs from the reference only in the order of the sums.
//
// The default is fast; DAY0_CPU_KERNELS=reference selects the reference, and DAY0_CPU_ISA=
// portable|avx2|avx512 caps the instruction set (tests use both to cover every table).
#include <string>

namespace day0::cpu {

enum class KernelSet { reference, fast };
enum class Isa { portable, avx2, avx512 };

KernelSet kernel_set();
void set_kernel_set(KernelSet set);

// The instruction set the fast kernels use: the best one supported, capped by DAY0_CPU_ISA.
Isa kernel_isa();
// The best instruction set this CPU supports (and this build has kernels for).
Isa best_isa();
// Selects `isa`, or the best supported one below it; returns what was selected.
Isa set_kernel_isa(Isa isa);

const char* isa_name(Isa isa);
// "fast (avx512)", "reference": for logs and bench output.
std::string kernel_description();

}  // namespace day0::cpu
