// The fit behind a measured profile: a step's seconds against its rows (a
// curve through points about a power of two apart), the positions its prompt
// and decode rows attend to, the distinct KV positions it reads and its logit
// rows (StepWork). Least squares on the relative error, so that a 7 ms
// decode step counts as much as a 400 ms prompt step: a request's TPOT is
// made of the former, its TTFT of the latter, and each should come out
// within the same share of what was measured.
#pragma once

#include <cstdint>
#include <span>

#include "ladder/tools/sim_profile.h"

namespace ladder::tools {

struct ObservedStep {
    StepWork work;
    double seconds = 0.0;
};

// Prices the fit takes as given instead of fitting them: each is taken off
// every step's seconds and has no column. For steps that do not tell a part
// from the curve: a served trace's decode batches have as many logit rows as
// rows, and its long decodes read about what they attend to, so the grid,
// whose steps set those apart, prices them.
struct HeldPrices {
    bool logit_rows = false;
    // The three attention prices together (context, the decode rows' own and
    // the KV read): they are fitted as one split.
    bool attention = false;
    // The held parts' prices; the others, and the rows curve, at 0.
    StepProfile prices;

    // Holds `profile`'s logit-row price; its attention prices.
    void hold_logit_rows_of(const StepProfile& profile);
    void hold_attention_of(const StepProfile& profile);
    // What the held parts cost of a step.
    double seconds(const StepWork& work) const { return prices.step_seconds(work); }
};

// Sets profile.row_costs, per_context_s, per_decode_context_s (where the
// steps have prompt and decode rows over contexts that tell the two prices
// apart from the curve), per_kv_read_s and per_logit_row_s. The curve has a
// point in each octave of row counts the steps have (about 1, 2, 4, ...), at
// the row count of that octave nearest its power of two. A fit that is not
// physical (a part below zero, a point at no cost) or not possible gives up,
// in turn, the KV read and the decode rows' own price (the parts the steps
// tell apart least). Then a part that fits below zero (noise, or a part the
// steps barely exercise) is left out and the rest fitted again, context
// before logit rows; so are the logit rows where with them a point of the
// curve comes out at no cost (the steps do not tell them from the curve:
// every octave has decodes only or prompts only). A point still at no cost
// is taken out of the curve. Throws util::InputError when fewer than two
// points are left (the steps have one row count, or the fit cannot tell the
// parts apart). Parts in `held` are not fitted: the profile gets their
// prices and the rest is fitted to what they leave of each step.
void fit_step_costs(std::span<const ObservedStep> steps, StepProfile& profile,
                    const HeldPrices& held = {});

}  // namespace ladder::tools
