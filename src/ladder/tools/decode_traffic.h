// One decoded token's traffic at a given context: the weights (read once per
// step and shared by every sequence in it), the KV cache its attention reads
// (its own sequence's, so it grows with the batch) and its ops. Pure
// arithmetic on the model's tensor table and KV shape.
#pragma once

#include <cstdint>

#include "ladder/tools/fit_model.h"
#include "ladder/tools/model_traffic.h"

namespace ladder::tools {

struct DecodeTraffic {
    int64_t context = 0;               // tokens in each sequence's cache, the new one included
    double weight_bytes_per_step = 0;  // whatever the batch
    double kv_bytes_per_token = 0;     // K and V one token's attention reads
    double matmul_ops_per_token = 0;
    double attention_ops_per_token = 0;  // q.k and p.v over the attended positions

    double ops_per_token() const { return matmul_ops_per_token + attention_ops_per_token; }
};

// K and V are counted in F16, as ladder's cache stores them; a sliding-window
// layer reads at most its window. context must be positive (checked).
DecodeTraffic decode_traffic(const ModelTraffic& weights, const FitModel& shape, int64_t context);

}  // namespace ladder::tools
