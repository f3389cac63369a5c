// A value that is read-only once built and held by pointer, so that copies
// share it instead of duplicating it: the n choices of an API request (up to
// 256 engine requests) point at one list of stop strings, not 256.
#pragma once

#include <memory>
#include <utility>

namespace ladder::util {

template <typename T>
class Shared {
public:
    // An empty T, allocating nothing.
    Shared() = default;
    // Implicit, so that a field of this type is assigned like a plain T.
    Shared(T value) : value_(std::make_shared<const T>(std::move(value))) {}

    const T& operator*() const { return value_ ? *value_ : empty(); }
    const T* operator->() const { return &**this; }

private:
    static const T& empty() {
        static const T kEmpty{};
        return kEmpty;
    }

    std::shared_ptr<const T> value_;
};

}  // namespace ladder::util
