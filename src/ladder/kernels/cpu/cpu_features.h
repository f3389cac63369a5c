// What this x86-64 CPU can run (CPUID plus the OS's saved register state), and
// which instruction-set path the kernels use. Knows nothing of dtypes or kernels.
#pragma once

#include <string>
#include <string_view>

namespace ladder::kernels::cpu {

struct CpuFeatures {
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool avx512f = false;
    bool avx512bw = false;
    bool avx512vl = false;
    bool avx512_vnni = false;
    bool avx_vnni = false;
    bool avx512_bf16 = false;
};

// Read once from CPUID; a feature counts only when the OS also saves its registers.
const CpuFeatures& cpu_features();

// Space-separated names of the detected features, for logs and `ladder info`.
std::string describe(const CpuFeatures& features);

// The kernel paths. Avx2 needs AVX2+FMA+F16C; Avx512 needs those plus AVX-512
// F/BW/VL and VNNI (Cascade Lake, Ice Lake, Zen 4 and later): without VNNI the
// 512-bit integer paths are not faster than AVX2, so such CPUs run Avx2.
enum class Isa { Scalar, Avx2, Avx512 };

std::string_view isa_name(Isa isa);
bool isa_supported(Isa isa, const CpuFeatures& features);
Isa best_isa(const CpuFeatures& features);

// The path to run given the value of the LADDER_CPU environment variable
// (nullptr or empty: the best supported). Throws util::InputError for a name
// that is not scalar|avx2|avx512 or a path this CPU cannot run.
Isa isa_from_env_value(const char* value, const CpuFeatures& features);

}  // namespace ladder::kernels::cpu
