#include "ladder/model/model.h"

#include "ladder/kernels/cpu/attention.h"
#include "ladder/util/error.h"

namespace ladder::model {

void Model::set_kv_cache_types(const KvCacheTypes& types) {
    for (const tensor::DType type : {types.key, types.value}) {
        if (!kernels::cpu::kv_cache_type_supported(type)) {
            util::fail(
                "--kv-cache-dtype: the KV cache cannot hold {} (choose f16, bf16, q8_0 "
                "or q4_0)",
                tensor::dtype_name(type));
        }
        if (!tensor::row_bytes(type, config().head_dim)) {
            util::fail(
                "--kv-cache-dtype {}: the model's head_dim {} is not a multiple of the "
                "type's {}-value blocks",
                kv_cache_type_name(type), config().head_dim,
                tensor::dtype_traits(type).block_elements);
        }
    }
    kv_cache_types_ = types;
}

}  // namespace ladder::model
