// ConnectionTable: below capacity everyone gets in; at capacity a newcomer
// under its address's fair share displaces an idle connection of the
// address furthest over its own, and nobody's busy connection is touched.
#include "ladder/server/connection_table.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace ladder::server {
namespace {

class FakeConnection final : public TableMember {
public:
    FakeConnection(ConnectionTable& table, bool busy) : table_(table), busy_(busy) {}
    bool evictable() const override { return !busy_; }
    void evict() override {
        evicted = true;
        table_.remove(this);
    }
    bool evicted = false;

private:
    ConnectionTable& table_;
    bool busy_;
};

struct Fixture {
    explicit Fixture(int64_t capacity) : table(capacity) {}
    FakeConnection* connect(const std::string& address, bool busy = false) {
        connections.push_back(std::make_unique<FakeConnection>(table, busy));
        FakeConnection* connection = connections.back().get();
        return table.admit(address, connection) ? connection : nullptr;
    }
    ConnectionTable table;
    std::vector<std::unique_ptr<FakeConnection>> connections;
};

TEST(ConnectionTable, OneAddressMayUseEveryPlaceWhileNobodyElseWantsOne) {
    Fixture fixture(4);
    for (int i = 0; i < 4; ++i) EXPECT_NE(fixture.connect("10.0.0.1"), nullptr);
    EXPECT_EQ(fixture.table.size(), 4);
    EXPECT_EQ(fixture.connect("10.0.0.1"), nullptr) << "over capacity, at its own share";
    EXPECT_EQ(fixture.table.n_refused(), 1);
}

TEST(ConnectionTable, ANewcomerDisplacesTheOldestIdleConnectionOfTheBiggestAddress) {
    Fixture fixture(4);
    FakeConnection* oldest = fixture.connect("10.0.0.1");
    for (int i = 0; i < 3; ++i) fixture.connect("10.0.0.1");
    ASSERT_NE(fixture.connect("10.0.0.2"), nullptr);
    EXPECT_TRUE(oldest->evicted);
    EXPECT_EQ(fixture.table.size(), 4);
    EXPECT_EQ(fixture.table.n_evicted(), 1);
    // Two addresses: a share of 2 each. The second may take one more place
    // from the first (3 > 2), then no more (its share is full).
    ASSERT_NE(fixture.connect("10.0.0.2"), nullptr);
    EXPECT_EQ(fixture.connect("10.0.0.2"), nullptr);
    EXPECT_EQ(fixture.table.size(), 4);
}

TEST(ConnectionTable, BusyConnectionsAreNeverDisplaced) {
    Fixture fixture(3);
    for (int i = 0; i < 3; ++i) fixture.connect("10.0.0.1", /*busy=*/true);
    EXPECT_EQ(fixture.connect("10.0.0.2"), nullptr);
    EXPECT_EQ(fixture.table.size(), 3);
}

TEST(ConnectionTable, RemovingFreesThePlace) {
    Fixture fixture(2);
    FakeConnection* first = fixture.connect("a");
    fixture.connect("a");
    fixture.table.remove(first);
    EXPECT_EQ(fixture.table.size(), 1);
    EXPECT_NE(fixture.connect("a"), nullptr);
    fixture.table.remove(first);  // twice is harmless
    EXPECT_EQ(fixture.table.size(), 2);
}

}  // namespace
}  // namespace ladder::server
