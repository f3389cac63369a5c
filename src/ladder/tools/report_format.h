// How fit and cost print numbers for people: thousands separators, GiB,
// dollars. One place, so the two reports read alike.
#pragma once

#include <cstdint>
#include <string>

namespace ladder::tools {

// 1234567 -> "1,234,567".
std::string with_commas(int64_t value);
// Bytes as "14.96 GiB".
std::string format_gib(uint64_t bytes);
// Bytes as KiB or MiB below a GiB, GiB above: "128.0 KiB".
std::string format_bytes(uint64_t bytes);
// "$0.0024" below a dollar (per-request costs stay readable), "$86,400.00" above.
std::string format_dollars(double value);

}  // namespace ladder::tools
