// One decoded token's traffic at a given context: the weights (read once per
// step and shared by every sequence in it), the KV cache its attention reads
// (its own sequence's, so it grows with the batch) and its ops. Pure
// arithmetic on the model's tensor table and KV shape.
#pragma once

#include <cstdint>
#include <string>

#include "ladder/tools/fit_model.h"
#include "ladder/tools/model_traffic.h"
#include "ladder/tools/storage_type.h"

namespace ladder::tools {

struct DecodeTraffic {
    int64_t context = 0;               // tokens in each sequence's cache, the new one included
    double weight_bytes_per_step = 0;  // whatever the batch
    double kv_bytes_per_token = 0;     // K and V one token's attention reads
    std::string kv_types;              // "f16", or "K q8_0, V f16" when they differ
    double matmul_ops_per_token = 0;
    double attention_ops_per_token = 0;  // q.k and p.v over the attended positions

    double ops_per_token() const { return matmul_ops_per_token + attention_ops_per_token; }
};

// The types the cache stores K and V in (--kv-cache-dtype; f16 by default).
struct KvCacheStorageTypes {
    StorageType key = storage_type(tensor::DType::F16);
    StorageType value = storage_type(tensor::DType::F16);
};

// K and V are counted in their cache types, each head's row rounded up to
// whole blocks; a sliding-window layer reads at most its window. context
// must be positive (checked).
DecodeTraffic decode_traffic(const ModelTraffic& weights, const FitModel& shape, int64_t context,
                             const KvCacheStorageTypes& kv_types = {});

}  // namespace ladder::tools
