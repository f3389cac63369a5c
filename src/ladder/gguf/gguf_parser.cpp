// Validated parsing of GGUF v2/v3: header, metadata (all value types, nested
// arrays), tensor infos, alignment and the data section layout. Every count
// and size from the file is checked against the bytes that remain before use.
#include "ladder/gguf/gguf_parser.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>

namespace ladder::gguf {

namespace {

constexpr uint64_t kMaxMetadataValues = uint64_t{1} << 23;
constexpr size_t kMaxPrintableChars = 80;
// Counts are bounded by the bytes left, but those include the tensor data of
// a multi-GB model: reserve at most this much up front and let real elements,
// each of which must be read from the file, grow the vector.
constexpr uint64_t kMaxReserve = 1 << 16;

// Smallest encoding of one value of a type, to bound element counts by the
// bytes left: a string is at least its length, an array its type and count.
uint64_t min_encoded_bytes(ValueType type) {
    if (type == ValueType::String) return 8;
    if (type == ValueType::Array) return 12;
    return value_type_size_bytes(type);
}

bool is_known_value_type(uint32_t id) { return id <= static_cast<uint32_t>(ValueType::Float64); }

// Rounds up to a multiple of a power-of-two alignment; false on overflow.
bool align_up(uint64_t offset, uint64_t alignment, uint64_t& aligned) {
    const uint64_t mask = alignment - 1;
    if (offset > std::numeric_limits<uint64_t>::max() - mask) return false;
    aligned = (offset + mask) & ~mask;
    return true;
}

}  // namespace

std::string printable(std::string_view text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (out.size() >= kMaxPrintableChars) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
            out += static_cast<char>(c);
        } else {
            out += fmt::format("\\x{:02x}", c);
        }
    }
    return out;
}

GgufParser::GgufParser(GgufFile& file)
    : file_(file), reader_(file.bytes_, file.name_), n_values_left_(kMaxMetadataValues) {}

void GgufParser::parse_into(GgufFile& file) {
    GgufParser parser(file);
    uint64_t n_tensors = 0;
    uint64_t n_kv = 0;
    parser.parse_header(n_tensors, n_kv);
    parser.parse_metadata(n_kv);
    parser.read_alignment();
    parser.parse_tensor_infos(n_tensors);
    parser.check_data_layout();
}

void GgufParser::parse_header(uint64_t& n_tensors, uint64_t& n_kv) {
    if (reader_.size() < 4) fail("not a GGUF file: only {} bytes long", reader_.size());
    const auto magic = reader_.read<uint32_t>("magic");
    if (magic != kMagic) {
        const auto m = file_.bytes_.first(4);
        fail("not a GGUF file: starts with bytes {:02x} {:02x} {:02x} {:02x}, expected 'GGUF'",
             m[0], m[1], m[2], m[3]);
    }
    const auto version = reader_.read<uint32_t>("version");
    if (version == 1) {
        fail(
            "GGUF version 1 is not supported (ladder reads versions 2 and 3); convert the "
            "model again with a current llama.cpp");
    }
    if (version != 2 && version != 3) {
        const uint32_t swapped = __builtin_bswap32(version);  // std::byteswap is C++23
        if (swapped >= 1 && swapped <= 3) fail("big-endian GGUF files are not supported");
        fail("unsupported GGUF version {} (ladder reads versions 2 and 3)", version);
    }
    file_.version_ = version;
    n_tensors = reader_.read<uint64_t>("tensor count");
    n_kv = reader_.read<uint64_t>("metadata count");
}

void GgufParser::parse_metadata(uint64_t n_kv) {
    // A key-value pair is at least a key length, a type and a one-byte value.
    constexpr uint64_t kMinEntryBytes = 8 + 4 + 1;
    if (n_kv > reader_.remaining() / kMinEntryBytes) {
        fail("header claims {} metadata entries, more than the {} bytes after it can hold", n_kv,
             reader_.remaining());
    }
    for (uint64_t i = 0; i < n_kv; ++i) {
        reader_.set_context(fmt::format("metadata entry #{}", i));
        const std::string_view key = reader_.read_string("key");
        if (key.empty()) fail("metadata entry #{} has an empty key", i);
        reader_.set_context(fmt::format("metadata key '{}'", printable(key)));
        const ValueType type = read_value_type("value type");
        Value value = parse_value(type, 0);
        const auto [it, inserted] = file_.metadata_.try_emplace(std::string(key), std::move(value));
        if (!inserted) fail("metadata key '{}' appears twice", printable(key));
        file_.metadata_keys_.push_back(it->first);
    }
}

ValueType GgufParser::read_value_type(const char* what) {
    const auto id = reader_.read<uint32_t>(what);
    if (!is_known_value_type(id)) fail("{} has unknown value type {}", reader_.context(), id);
    return static_cast<ValueType>(id);
}

Value GgufParser::parse_value(ValueType type, int depth) {
    switch (type) {
        case ValueType::UInt8: return Value::uint8(reader_.read<uint8_t>("a uint8 value"));
        case ValueType::Int8: return Value::int8(reader_.read<int8_t>("an int8 value"));
        case ValueType::UInt16: return Value::uint16(reader_.read<uint16_t>("a uint16 value"));
        case ValueType::Int16: return Value::int16(reader_.read<int16_t>("an int16 value"));
        case ValueType::UInt32: return Value::uint32(reader_.read<uint32_t>("a uint32 value"));
        case ValueType::Int32: return Value::int32(reader_.read<int32_t>("an int32 value"));
        case ValueType::UInt64: return Value::uint64(reader_.read<uint64_t>("a uint64 value"));
        case ValueType::Int64: return Value::int64(reader_.read<int64_t>("an int64 value"));
        case ValueType::Float32: return Value::float32(reader_.read<float>("a float32 value"));
        case ValueType::Float64: return Value::float64(reader_.read<double>("a float64 value"));
        case ValueType::Bool: {
            const auto byte = reader_.read<uint8_t>("a bool value");
            if (byte > 1) fail("{} has a bool stored as {}, not 0 or 1", reader_.context(), byte);
            return Value::boolean(byte == 1);
        }
        case ValueType::String: return Value::string(std::string(reader_.read_string("a string")));
        case ValueType::Array: return parse_array(depth);
    }
    fail("{} has unknown value type {}", reader_.context(), static_cast<uint32_t>(type));
}

Value GgufParser::parse_array(int depth) {
    if (depth >= kMaxArrayDepth) {
        fail("{} nests arrays more than {} deep", reader_.context(), kMaxArrayDepth);
    }
    const ValueType element_type = read_value_type("array element type");
    const auto count = reader_.read<uint64_t>("array length");
    if (count > reader_.remaining() / min_encoded_bytes(element_type)) {
        fail("{} claims an array of {} {} values at byte {}, more than the {} bytes left can hold",
             reader_.context(), count, value_type_name(element_type), reader_.position(),
             reader_.remaining());
    }
    if (count > n_values_left_) {
        fail("{} brings the metadata past {} array values, more than any model needs",
             reader_.context(), kMaxMetadataValues);
    }
    n_values_left_ -= count;
    std::vector<Value> elements;
    elements.reserve(std::min(count, kMaxReserve));
    for (uint64_t i = 0; i < count; ++i) elements.push_back(parse_value(element_type, depth + 1));
    return Value::array(element_type, std::move(elements));
}

void GgufParser::read_alignment() {
    const Value* value = file_.find("general.alignment");
    if (value == nullptr) return;
    const auto alignment = value->as_int();
    if (!alignment) {
        fail("general.alignment is a {}, expected an unsigned integer",
             value_type_name(value->type));
    }
    if (*alignment <= 0 || *alignment > std::numeric_limits<uint32_t>::max() ||
        !std::has_single_bit(static_cast<uint64_t>(*alignment))) {
        fail("general.alignment is {}, expected a nonzero power of two", *alignment);
    }
    file_.alignment_ = static_cast<uint64_t>(*alignment);
}

void GgufParser::parse_tensor_infos(uint64_t n_tensors) {
    // Name length, n_dims, one dim, type id and offset.
    constexpr uint64_t kMinInfoBytes = 8 + 4 + 8 + 4 + 8;
    if (n_tensors > reader_.remaining() / kMinInfoBytes) {
        fail("header claims {} tensors, more than the {} bytes after the metadata can hold",
             n_tensors, reader_.remaining());
    }
    file_.tensors_.reserve(std::min(n_tensors, kMaxReserve));
    for (uint64_t i = 0; i < n_tensors; ++i) {
        reader_.set_context(fmt::format("tensor info #{}", i));
        TensorInfo info = parse_tensor_info();
        const auto [it, inserted] = file_.tensor_index_.try_emplace(info.name, i);
        if (!inserted) fail("tensor '{}' appears twice", printable(info.name));
        file_.tensors_.push_back(std::move(info));
    }
    if (!align_up(reader_.position(), file_.alignment_, file_.data_offset_bytes_)) {
        fail("data section offset overflows");
    }
}

TensorInfo GgufParser::parse_tensor_info() {
    TensorInfo info;
    info.name = std::string(reader_.read_string("tensor name"));
    if (info.name.empty()) fail("{} has an empty name", reader_.context());
    reader_.set_context(fmt::format("tensor '{}'", printable(info.name)));
    const std::string& context = reader_.context();

    const auto n_dims = reader_.read<uint32_t>("dimension count");
    if (n_dims == 0 || n_dims > kMaxDims) {
        fail("{} has {} dimensions, expected 1 to {}", context, n_dims, kMaxDims);
    }
    // Zero-sized dimensions are allowed, as ggml allows them: an empty tensor
    // has no data to read, and shape checks belong to the model loader.
    int64_t n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
        const auto dim = reader_.read<uint64_t>("dimension");
        if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
            __builtin_mul_overflow(n_elements, static_cast<int64_t>(dim), &n_elements)) {
            fail("{} has dimension {} of size {}: its element count overflows", context, d, dim);
        }
        info.shape.push_back(static_cast<int64_t>(dim));
    }
    info.n_elements = n_elements;

    const auto type_id = reader_.read<uint32_t>("type id");
    const auto traits = tensor::dtype_traits(type_id);
    if (!traits) fail("{} has unknown type id {}", context, type_id);
    info.dtype = traits->dtype;

    if (info.shape[0] % traits->block_elements != 0) {
        fail("{} has rows of {} elements, not a whole number of {} blocks of {}", context,
             info.shape[0], traits->name, traits->block_elements);
    }
    // Whole-block rows make the total a whole number of blocks too. Sized
    // here rather than with row_bytes so that the product is overflow-checked.
    const auto n_blocks = static_cast<uint64_t>(n_elements / traits->block_elements);
    if (__builtin_mul_overflow(n_blocks, static_cast<uint64_t>(traits->block_bytes),
                               &info.size_bytes)) {
        fail("{} has {} elements of {}: its size in bytes overflows", context, n_elements,
             traits->name);
    }

    info.offset_bytes = reader_.read<uint64_t>("data offset");
    if (info.offset_bytes % file_.alignment_ != 0) {
        fail("{} data offset {} is not a multiple of the alignment {}", context, info.offset_bytes,
             file_.alignment_);
    }
    return info;
}

void GgufParser::check_data_layout() {
    const uint64_t file_bytes = reader_.size();
    const uint64_t data_offset = file_.data_offset_bytes_;
    if (!file_.tensors_.empty() && data_offset > file_bytes) {
        fail("data section starts at byte {} beyond the file size {}", data_offset, file_bytes);
    }
    for (const TensorInfo& info : file_.tensors_) {
        uint64_t end = 0;
        if (__builtin_add_overflow(data_offset, info.offset_bytes, &end) ||
            __builtin_add_overflow(end, info.size_bytes, &end)) {
            fail("tensor '{}' data offset {} is beyond the file size {}", printable(info.name),
                 info.offset_bytes, file_bytes);
        }
        if (end > file_bytes) {
            fail("tensor '{}' data ends at byte {} beyond the file size {}", printable(info.name),
                 end, file_bytes);
        }
    }
    // Tensors may appear in any order, but two must never share bytes.
    std::vector<size_t> order(file_.tensors_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    const auto& tensors = file_.tensors_;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return tensors[a].offset_bytes < tensors[b].offset_bytes;
    });
    const TensorInfo* previous = nullptr;
    for (size_t index : order) {
        const TensorInfo& info = tensors[index];
        if (info.size_bytes == 0) continue;
        // No overflow: every end was checked against the file size above.
        if (previous != nullptr &&
            previous->offset_bytes + previous->size_bytes > info.offset_bytes) {
            fail("tensors '{}' and '{}' overlap in the data section", printable(previous->name),
                 printable(info.name));
        }
        previous = &info;
    }
}

}  // namespace ladder::gguf
