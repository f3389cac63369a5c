// CPUID and XGETBV decoding for the run-time kernel choice. Bit positions are
// from the Intel SDM, volume 2, CPUID leaf 1 and leaf 7.
#include "ladder/kernels/cpu/cpu_features.h"

#include <cpuid.h>

#include <cstdint>

#include "ladder/util/error.h"

namespace ladder::kernels::cpu {

namespace {

bool bit(uint32_t reg, int n) {
    return ((reg >> n) & 1u) != 0;
}

// XCR0 says which register states the OS saves on a context switch: a CPU may
// support AVX-512 while the kernel does not enable it.
uint64_t read_xcr0() {
    uint32_t eax = 0;
    uint32_t edx = 0;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (static_cast<uint64_t>(edx) << 32) | eax;
}

CpuFeatures detect() {
    CpuFeatures f;
    uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
    const bool osxsave = bit(ecx, 27);
    const bool avx = bit(ecx, 28);
    const bool fma = bit(ecx, 12);
    const bool f16c = bit(ecx, 29);
    if (!osxsave || !avx) return f;
    const uint64_t xcr0 = read_xcr0();
    const bool os_ymm = (xcr0 & 0x6) == 0x6;              // SSE and AVX state
    const bool os_zmm = os_ymm && (xcr0 & 0xE0) == 0xE0;  // opmask, ZMM0-15 high, ZMM16-31
    if (!os_ymm) return f;
    f.fma = fma;
    f.f16c = f16c;

    uint32_t max_leaf = 0;
    __get_cpuid(0, &max_leaf, &ebx, &ecx, &edx);
    if (max_leaf < 7) return f;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    const uint32_t max_subleaf = eax;
    f.avx2 = bit(ebx, 5);
    if (os_zmm) {
        f.avx512f = bit(ebx, 16);
        f.avx512bw = bit(ebx, 30);
        f.avx512vl = bit(ebx, 31);
        f.avx512_vnni = bit(ecx, 11);
    }
    if (max_subleaf >= 1) {
        __cpuid_count(7, 1, eax, ebx, ecx, edx);
        f.avx_vnni = bit(eax, 4);
        f.avx512_bf16 = os_zmm && bit(eax, 5);
    }
    return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = detect();
    return features;
}

std::string describe(const CpuFeatures& f) {
    std::string out;
    const auto add = [&out](bool has, const char* name) {
        if (!has) return;
        if (!out.empty()) out += ' ';
        out += name;
    };
    add(f.avx2, "avx2");
    add(f.fma, "fma");
    add(f.f16c, "f16c");
    add(f.avx512f, "avx512f");
    add(f.avx512bw, "avx512bw");
    add(f.avx512vl, "avx512vl");
    add(f.avx512_vnni, "avx512_vnni");
    add(f.avx_vnni, "avx_vnni");
    add(f.avx512_bf16, "avx512_bf16");
    return out.empty() ? std::string("none") : out;
}

std::string_view isa_name(Isa isa) {
    switch (isa) {
        case Isa::Scalar: return "scalar";
        case Isa::Avx2: return "avx2";
        case Isa::Avx512: return "avx512";
    }
    return "unknown";
}

bool isa_supported(Isa isa, const CpuFeatures& f) {
    const bool avx2 = f.avx2 && f.fma && f.f16c;
    switch (isa) {
        case Isa::Scalar: return true;
        case Isa::Avx2: return avx2;
        case Isa::Avx512: return avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512_vnni;
    }
    return false;
}

Isa best_isa(const CpuFeatures& features) {
    if (isa_supported(Isa::Avx512, features)) return Isa::Avx512;
    if (isa_supported(Isa::Avx2, features)) return Isa::Avx2;
    return Isa::Scalar;
}

Isa isa_from_env_value(const char* value, const CpuFeatures& features) {
    if (value == nullptr || value[0] == '\0') return best_isa(features);
    for (const Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
        if (isa_name(isa) != value) continue;
        if (!isa_supported(isa, features)) {
            util::fail("LADDER_CPU={} but this CPU lacks it (has: {})", value, describe(features));
        }
        return isa;
    }
    util::fail("LADDER_CPU={} is not a known kernel path (use scalar, avx2 or avx512)", value);
}

}  // namespace ladder::kernels::cpu
