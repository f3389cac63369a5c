// Builds the per-ISA kernel tables and picks the one this process runs.
#include "ladder/kernels/cpu/vec_dot.h"

#include <cstdlib>

#include "ladder/kernels/cpu/vec_dot_isa.h"
#include "ladder/util/check.h"

namespace ladder::kernels::cpu {

namespace {

int slot(tensor::DType dtype) {
    const auto id = static_cast<uint32_t>(dtype);
    return id < CpuKernels::kDTypeSlots ? static_cast<int>(id) : -1;
}

struct KernelTables {
    CpuKernels scalar;
    CpuKernels avx2;
    CpuKernels avx512;
};

// Each table starts from the one below so a path lacking a kernel falls back to
// the best slower one. Only tables the CPU can run are filled in.
KernelTables build_tables() {
    const CpuFeatures& features = cpu_features();
    KernelTables t;
    detail::install_scalar_kernels(t.scalar);
    t.scalar.isa = Isa::Scalar;
    t.avx2 = t.scalar;
    t.avx512 = t.scalar;
    if (isa_supported(Isa::Avx2, features)) {
        detail::install_avx2_kernels(t.avx2);
        detail::install_avx2_gemm(t.avx2);
        detail::install_avx2_block_kernels(t.avx2);
        t.avx2.isa = Isa::Avx2;
        t.avx512 = t.avx2;
    }
    if (isa_supported(Isa::Avx512, features)) {
        detail::install_avx512_kernels(t.avx512);
        detail::install_avx512_gemm(t.avx512);
        t.avx512.isa = Isa::Avx512;
    }
    return t;
}

const KernelTables& tables() {
    static const KernelTables t = build_tables();
    return t;
}

}  // namespace

VecDotFn CpuKernels::vec_dot(tensor::DType weight_type) const {
    const int i = slot(weight_type);
    return i < 0 ? nullptr : vec_dot_by_weight[i];
}

QuantizeRowFn CpuKernels::quantize_row(tensor::DType activation_type) const {
    const int i = slot(activation_type);
    return i < 0 ? nullptr : quantize_by_type[i];
}

GemmFn CpuKernels::gemm(tensor::DType weight_type) const {
    const int i = slot(weight_type);
    return i < 0 ? nullptr : gemm_by_weight[i];
}

const CpuKernels& cpu_kernels_for(Isa isa) {
    LADDER_CHECK(isa_supported(isa, cpu_features()), "kernel path not supported by this CPU");
    switch (isa) {
        case Isa::Scalar: return tables().scalar;
        case Isa::Avx2: return tables().avx2;
        case Isa::Avx512: return tables().avx512;
    }
    return tables().scalar;
}

const CpuKernels& cpu_kernels() {
    // A throwing initializer leaves the static unset, so a bad LADDER_CPU is
    // reported again on the next call rather than silently replaced.
    static const CpuKernels& chosen =
        cpu_kernels_for(isa_from_env_value(std::getenv("LADDER_CPU"), cpu_features()));
    return chosen;
}

}  // namespace ladder::kernels::cpu
