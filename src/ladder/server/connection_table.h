// Who holds the server's connections, and who makes room when it is full.
// Below capacity everyone gets in. At capacity a newcomer whose address
// holds less than its fair share (capacity / addresses connected) takes the
// place of the oldest connection, not busy with a request, of the address
// furthest over its share; otherwise the newcomer is refused. So one
// address (a proxy, or a single client) may use every place while nobody
// else wants one, but thousands of idle or trickling connections from one
// address cannot lock the others out. Event-loop thread only.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>

namespace ladder::server {

class TableMember {
public:
    virtual ~TableMember() = default;
    // Idle between requests, or still sending one: closing it loses no work.
    virtual bool evictable() const = 0;
    // Closes the connection; it calls ConnectionTable::remove itself.
    virtual void evict() = 0;
};

class ConnectionTable {
public:
    explicit ConnectionTable(int64_t capacity) : capacity_(capacity) {}

    // False: refused (the caller closes it). May evict a member first.
    bool admit(const std::string& address, TableMember* member);
    void remove(TableMember* member);

    int64_t size() const { return size_; }
    int64_t capacity() const { return capacity_; }
    int64_t n_addresses() const { return static_cast<int64_t>(by_address_.size()); }
    int64_t n_evicted() const { return n_evicted_; }
    int64_t n_refused() const { return n_refused_; }

    // Every member (stop: close them all).
    template <typename Visit>
    void for_each(Visit visit) const {
        for (const auto& [address, members] : by_address_) {
            for (TableMember* member : members) visit(member);
        }
    }

private:
    // The addresses connected, counting address whether or not it is.
    int64_t n_addresses_with(const std::string& address) const;
    // Evicts one evictable member of an address over share; false if none.
    bool make_room(const std::string& newcomer, int64_t share);

    int64_t capacity_;
    int64_t size_ = 0;
    int64_t n_evicted_ = 0;
    int64_t n_refused_ = 0;
    struct Place {
        std::string address;
        std::list<TableMember*>::iterator in_list;
    };
    std::unordered_map<std::string, std::list<TableMember*>> by_address_;  // oldest first
    std::unordered_map<TableMember*, Place> place_of_;
};

}  // namespace ladder::server
