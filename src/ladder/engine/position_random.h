// Random numbers as a pure function of (seed, position, purpose): a
// counter-based generator (Philox4x64-10, Salmon et al., SC 2011). A draw
// never depends on how many came before it, so a token verified in a batch of
// drafted positions sees the very number plain decoding would have drawn for
// it, and a sequence recomputed after preemption draws the same again.
#pragma once

#include <array>
#include <cstdint>

namespace ladder::engine {

// The independent streams a position draws from. Speculative decoding with a
// draft model needs several numbers per position, none of which may be
// correlated with another (the proof that rejection sampling is lossless
// takes them independent).
enum class DrawPurpose : uint64_t {
    Sample = 0,          // the sampler's draw of the token (plain decoding and point-mass drafts)
    DraftAcceptance = 1, // rejection sampling: accept the draft with probability min(1, p/q)
    Residual = 2,        // rejection sampling: the draw from norm(max(0, p - q)) after a rejection
    DraftProposal = 3,   // the draft model's own draw of its proposal
};

// Philox4x64 with 10 rounds: four 64-bit words of output for a 256-bit
// counter under a 128-bit key. Pinned to Random123's known-answer vectors.
std::array<uint64_t, 4> philox4x64_10(std::array<uint64_t, 4> counter, std::array<uint64_t, 2> key);

// Uniform in [0, 1) from the top 53 bits of the first output word for
// counter (position, purpose, 0, 0) under key (seed, 0).
double position_uniform(uint64_t seed, int64_t position, DrawPurpose purpose);

}  // namespace ladder::engine
