#include "ladder/tokenizer/jinja/limits.h"

#include "ladder/tokenizer/jinja/error.h"

namespace ladder::tokenizer::jinja {

void Budget::step(int64_t n) {
    steps_ += n;
    if (steps_ > limits_.max_steps) {
        raise("the template ran more than {} steps (a loop that does not end?)", limits_.max_steps);
    }
}

void Budget::charge(size_t bytes) {
    if (bytes > limits_.max_output_bytes) {
        raise("the template built a string of {} bytes, more than the limit of {}", bytes,
              limits_.max_output_bytes);
    }
    bytes_built_ += bytes;
    if (bytes_built_ > limits_.max_bytes_built) {
        raise("the template built more than {} bytes of text", limits_.max_bytes_built);
    }
}

}  // namespace ladder::tokenizer::jinja
