// CPU feature detection against the kernel's own view (/proc/cpuinfo), and the
// LADDER_CPU choice rules.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "ladder/kernels/cpu/cpu_features.h"
#include "ladder/kernels/cpu/vec_dot.h"
#include "ladder/util/error.h"

namespace ladder::kernels::cpu {
namespace cpu_features_test {

std::set<std::string> proc_cpuinfo_flags() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("flags", 0) != 0) continue;
        std::istringstream words(line.substr(line.find(':') + 1));
        std::set<std::string> flags;
        for (std::string w; words >> w;) flags.insert(w);
        return flags;
    }
    return {};
}

TEST(CpuFeatures, detection_agrees_with_proc_cpuinfo) {
    const auto flags = proc_cpuinfo_flags();
    if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo";
    const CpuFeatures& f = cpu_features();
    EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
    EXPECT_EQ(f.fma, flags.count("fma") == 1);
    EXPECT_EQ(f.f16c, flags.count("f16c") == 1);
    EXPECT_EQ(f.avx512f, flags.count("avx512f") == 1);
    EXPECT_EQ(f.avx512bw, flags.count("avx512bw") == 1);
    EXPECT_EQ(f.avx512vl, flags.count("avx512vl") == 1);
    EXPECT_EQ(f.avx512_vnni, flags.count("avx512_vnni") == 1);
    EXPECT_EQ(f.avx_vnni, flags.count("avx_vnni") == 1);
    EXPECT_EQ(f.avx512_bf16, flags.count("avx512_bf16") == 1);
}

TEST(CpuFeatures, unset_or_empty_env_picks_the_best_path) {
    const CpuFeatures& f = cpu_features();
    EXPECT_EQ(isa_from_env_value(nullptr, f), best_isa(f));
    EXPECT_EQ(isa_from_env_value("", f), best_isa(f));
    EXPECT_TRUE(isa_supported(best_isa(f), f));
}

TEST(CpuFeatures, env_names_each_path) {
    CpuFeatures all;
    all.avx2 = all.fma = all.f16c = true;
    all.avx512f = all.avx512bw = all.avx512vl = all.avx512_vnni = true;
    EXPECT_EQ(isa_from_env_value("scalar", all), Isa::Scalar);
    EXPECT_EQ(isa_from_env_value("avx2", all), Isa::Avx2);
    EXPECT_EQ(isa_from_env_value("avx512", all), Isa::Avx512);
}

TEST(CpuFeatures, rejects_unknown_env_value_with_the_choices) {
    try {
        isa_from_env_value("sse9", cpu_features());
        FAIL() << "expected InputError";
    } catch (const util::InputError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("sse9"), std::string::npos) << message;
        EXPECT_NE(message.find("scalar, avx2 or avx512"), std::string::npos) << message;
    }
}

TEST(CpuFeatures, rejects_path_the_cpu_lacks) {
    CpuFeatures avx2_only;
    avx2_only.avx2 = avx2_only.fma = avx2_only.f16c = true;
    EXPECT_THROW(isa_from_env_value("avx512", avx2_only), util::InputError);
    EXPECT_THROW(isa_from_env_value("avx2", CpuFeatures{}), util::InputError);
    EXPECT_EQ(best_isa(avx2_only), Isa::Avx2);
    EXPECT_EQ(best_isa(CpuFeatures{}), Isa::Scalar);
}

TEST(CpuFeatures, avx512_path_requires_vnni) {
    CpuFeatures no_vnni;
    no_vnni.avx2 = no_vnni.fma = no_vnni.f16c = true;
    no_vnni.avx512f = no_vnni.avx512bw = no_vnni.avx512vl = true;
    EXPECT_FALSE(isa_supported(Isa::Avx512, no_vnni));
    EXPECT_EQ(best_isa(no_vnni), Isa::Avx2);
}

TEST(CpuKernels, chosen_table_is_a_supported_path) {
    const CpuKernels& k = cpu_kernels();
    EXPECT_TRUE(isa_supported(k.isa, cpu_features()));
}

}  // namespace cpu_features_test
}  // namespace ladder::kernels::cpu
