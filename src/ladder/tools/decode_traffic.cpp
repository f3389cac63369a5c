#include "ladder/tools/decode_traffic.h"

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::tools {

DecodeTraffic decode_traffic(const ModelTraffic& weights, const FitModel& shape, int64_t context,
                             const KvCacheStorageTypes& kv_types) {
    LADDER_CHECK(context > 0, "decode traffic needs a positive context");
    DecodeTraffic traffic;
    traffic.context = context;
    traffic.kv_types = kv_types.key.name == kv_types.value.name
                           ? kv_types.key.name
                           : "K " + kv_types.key.name + ", V " + kv_types.value.name;
    traffic.weight_bytes_per_step = static_cast<double>(weights.decode_bytes_per_token);
    traffic.matmul_ops_per_token = weights.decode_ops_per_token();
    const int64_t window = shape.sliding_window > 0 ? shape.sliding_window : context;
    for (const KvLayer& layer : shape.layers) {
        if (layer.n_kv_heads == 0) continue;
        const auto attended =
            static_cast<double>(layer.sliding ? std::min(context, window) : context);
        // MLA layers (value_length 0) keep no V: it is read back from K.
        const int32_t value_ops_length =
            layer.value_length > 0 ? layer.value_length : layer.key_length;
        const auto key_row = kv_types.key.bytes_for(static_cast<uint64_t>(layer.key_length));
        const auto value_row =
            layer.value_length > 0
                ? kv_types.value.bytes_for(static_cast<uint64_t>(layer.value_length))
                : 0;
        traffic.kv_bytes_per_token +=
            attended * layer.n_kv_heads * static_cast<double>(key_row + value_row);
        traffic.attention_ops_per_token += attended * 2.0 * shape.n_heads *
                                           static_cast<double>(layer.key_length + value_ops_length);
    }
    return traffic;
}

}  // namespace ladder::tools
