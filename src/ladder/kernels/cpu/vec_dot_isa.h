// Internal to kernels/cpu: each per-ISA file overwrites the entries it speeds
// up in a table that starts as a copy of the path below it.
#pragma once

#include "ladder/kernels/cpu/vec_dot.h"

namespace ladder::kernels::cpu::detail {

void install_scalar_kernels(CpuKernels& kernels);  // tensor's reference code
void install_avx2_kernels(CpuKernels& kernels);    // AVX2 + FMA + F16C
void install_avx512_kernels(CpuKernels& kernels);  // AVX-512 F/BW/VL + VNNI
void install_avx2_quantizers(CpuKernels& kernels);
// Multi-row kernels (gemm_avx2.cpp, gemm_avx512.cpp), each matching the vec_dot
// its table holds for that dtype; installed right after that table's vec_dots.
void install_avx2_gemm(CpuKernels& kernels);
void install_avx512_gemm(CpuKernels& kernels);
// The types whose vec_dot and multi-row kernel come from one per-block step
// (block_dots_avx2.cpp); the avx512 table keeps them.
void install_avx2_block_kernels(CpuKernels& kernels);

}  // namespace ladder::kernels::cpu::detail
