// Internal to gguf/: fills a GgufFile from its bytes, validating every field
// before it is used. Throws util::InputError naming the file and the field.
#pragma once

#include <string>
#include <string_view>

#include "ladder/gguf/byte_reader.h"
#include "ladder/gguf/gguf_file.h"

namespace ladder::gguf {

class GgufParser {
public:
    // Parses file.bytes_ into file's header, metadata and tensor infos.
    static void parse_into(GgufFile& file);

private:
    explicit GgufParser(GgufFile& file);

    void parse_header(uint64_t& n_tensors, uint64_t& n_kv);
    void parse_metadata(uint64_t n_kv);
    Value parse_value(ValueType type, int depth);
    Value parse_array(int depth);
    ValueType read_value_type(const char* what);
    void read_alignment();
    void parse_tensor_infos(uint64_t n_tensors);
    TensorInfo parse_tensor_info();
    void check_data_layout();

    template <typename... Args>
    [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
        util::fail("{}: {}", file_.name_, fmt::format(format, std::forward<Args>(args)...));
    }

    GgufFile& file_;
    ByteReader reader_;
    // Values still allowed in metadata arrays. Each element costs a Value
    // (~50 bytes) in memory, so file size alone would let a 1 GB file of
    // uint8 elements claim 50 GB; this bounds memory whatever the file says.
    uint64_t n_values_left_;
};

// A name or key as it may appear in a one-line message: control and non-ASCII
// bytes escaped as \xNN, long names cut with "...".
std::string printable(std::string_view text);

}  // namespace ladder::gguf
