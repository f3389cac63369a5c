#include "ladder/server/connection_table.h"

#include <algorithm>
#include <vector>

namespace ladder::server {

bool ConnectionTable::admit(const std::string& address, TableMember* member) {
    if (size_ >= capacity_) {
        const auto mine = by_address_.find(address);
        const int64_t n_mine =
            mine == by_address_.end() ? 0 : static_cast<int64_t>(mine->second.size());
        const int64_t n_addresses = n_addresses_with(address);
        const int64_t share = std::max<int64_t>(1, capacity_ / n_addresses);
        if (n_mine >= share || !make_room(address, share)) {
            ++n_refused_;
            return false;
        }
    }
    std::list<TableMember*>& members = by_address_[address];
    members.push_back(member);
    place_of_[member] = {address, std::prev(members.end())};
    ++size_;
    return true;
}

void ConnectionTable::remove(TableMember* member) {
    const auto place = place_of_.find(member);
    if (place == place_of_.end()) return;
    const auto members = by_address_.find(place->second.address);
    members->second.erase(place->second.in_list);
    if (members->second.empty()) by_address_.erase(members);
    place_of_.erase(place);
    --size_;
}

int64_t ConnectionTable::n_addresses_with(const std::string& address) const {
    return n_addresses() + (by_address_.count(address) == 0 ? 1 : 0);
}

bool ConnectionTable::make_room(const std::string& newcomer, int64_t share) {
    // The addresses over their share, furthest first.
    std::vector<std::pair<size_t, const std::string*>> over;
    for (const auto& [address, members] : by_address_) {
        if (address != newcomer && static_cast<int64_t>(members.size()) > share) {
            over.emplace_back(members.size(), &address);
        }
    }
    std::sort(over.begin(), over.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [n_members, address] : over) {
        for (TableMember* member : by_address_.at(*address)) {
            if (!member->evictable()) continue;
            member->evict();  // removes itself
            ++n_evicted_;
            return true;
        }
    }
    return false;
}

}  // namespace ladder::server
