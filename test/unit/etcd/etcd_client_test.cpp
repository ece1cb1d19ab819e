/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The etcd client and metadata operations against real etcd servers on 127.0.0.1 (one member
// shared by the single-member tests; fresh clusters for failover, TLS and auth). Waits are on
// conditions (events, counters) with generous deadlines; nothing asserts on durations.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "etcd_client.h"
#include "etcd_metadata.h"
#include "../../common/etcd_server.h"

namespace {

using namespace std::chrono_literals;
using nixl_test::etcdCluster;

// Long enough for a busy 2-core machine; only ever reached when something is broken.
constexpr auto event_deadline = 60s;

/** Collects watch events; wait() blocks until a predicate over them holds. */
class eventLog {
public:
    void
    add(const std::vector<nixlEtcdEvent> &evs) {
        {
            std::lock_guard lock(m_);
            events_.insert(events_.end(), evs.begin(), evs.end());
        }
        cv_.notify_all();
    }

    template<typename Pred>
    bool
    wait(Pred pred, std::chrono::seconds timeout = event_deadline) {
        std::unique_lock lock(m_);
        return cv_.wait_for(lock, timeout, [&] { return pred(events_); });
    }

    std::vector<nixlEtcdEvent>
    snapshot() {
        std::lock_guard lock(m_);
        return events_;
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::vector<nixlEtcdEvent> events_;
};

bool
hasEvent(const std::vector<nixlEtcdEvent> &evs,
         nixl_etcd_event_type_t type,
         const std::string &key,
         const std::string *value = nullptr) {
    for (const auto &e : evs) {
        if (e.type == type && e.kv.key == key && (value == nullptr || e.kv.value == *value)) {
            return true;
        }
    }
    return false;
}

/** Waits until pred() holds, polling (for counters without a notification). */
template<typename Pred>
bool
pollUntil(Pred pred, std::chrono::seconds timeout = event_deadline) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

nixlEtcdConfig
configFor(const std::string &endpoints, const std::string &ns = "/nixl-test/") {
    nixlEtcdConfig cfg;
    std::string err;
    EXPECT_TRUE(nixlEtcdConfig::parseEndpoints(endpoints, false, cfg.endpoints, err)) << err;
    cfg.nameSpace = ns;
    cfg.requestTimeout = 20s; // elections on a busy machine; failures return long before
    return cfg;
}

class EtcdSingle : public ::testing::Test {
protected:
    static void
    SetUpTestSuite() {
        server_ = new etcdCluster(etcdCluster::options{});
    }

    static void
    TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
    }

    static etcdCluster *server_;
};

etcdCluster *EtcdSingle::server_ = nullptr;

TEST_F(EtcdSingle, PutGetDeleteKeepBytesUntouched) {
    nixlEtcdClient c(configFor(server_->endpoints()));
    // Not a valid blob, not UTF-8: every byte value, and a large value.
    std::string bytes;
    for (int i = 0; i < 256; ++i) {
        bytes += static_cast<char>(i);
    }
    const std::string big(1 << 20, '\xa5');
    ASSERT_EQ(c.put("/t1/a", bytes), NIXL_SUCCESS);
    ASSERT_EQ(c.put("/t1/b", big), NIXL_SUCCESS);
    ASSERT_EQ(c.put("/t1/c", ""), NIXL_SUCCESS);
    ASSERT_EQ(c.put(std::string("/t1/\xff\x00k", 6), "x"), NIXL_SUCCESS);
    std::optional<nixlEtcdKv> kv;
    int64_t rev = 0;
    ASSERT_EQ(c.get("/t1/a", kv, &rev), NIXL_SUCCESS);
    ASSERT_TRUE(kv.has_value());
    EXPECT_EQ(kv->value, bytes);
    EXPECT_GT(rev, 0);
    ASSERT_EQ(c.get("/t1/b", kv), NIXL_SUCCESS);
    ASSERT_TRUE(kv.has_value());
    EXPECT_EQ(kv->value, big);
    ASSERT_EQ(c.get("/t1/c", kv), NIXL_SUCCESS);
    ASSERT_TRUE(kv.has_value());
    EXPECT_EQ(kv->value, "");
    ASSERT_EQ(c.get("/t1/missing", kv), NIXL_SUCCESS);
    EXPECT_FALSE(kv.has_value());

    std::vector<nixlEtcdKv> kvs;
    ASSERT_EQ(c.getPrefix("/t1/", kvs), NIXL_SUCCESS);
    ASSERT_EQ(kvs.size(), 4u);
    EXPECT_EQ(kvs[0].key, "/t1/a");
    EXPECT_EQ(kvs[3].key, std::string("/t1/\xff\x00k", 6));

    int64_t deleted = -1;
    ASSERT_EQ(c.deleteKey("/t1/a", &deleted), NIXL_SUCCESS);
    EXPECT_EQ(deleted, 1);
    ASSERT_EQ(c.deleteKey("/t1/a", &deleted), NIXL_SUCCESS);
    EXPECT_EQ(deleted, 0);
    ASSERT_EQ(c.deletePrefix("/t1/", &deleted), NIXL_SUCCESS);
    EXPECT_EQ(deleted, 3);
    ASSERT_EQ(c.getPrefix("/t1/", kvs), NIXL_SUCCESS);
    EXPECT_TRUE(kvs.empty());
}

TEST_F(EtcdSingle, UserIsIgnoredWhenTheClusterHasNoAuthentication) {
    auto cfg = configFor(server_->endpoints());
    cfg.user = "someone";
    cfg.password = "pw";
    nixlEtcdClient c(cfg);
    ASSERT_EQ(c.put("/t11/k", "v"), NIXL_SUCCESS);
    std::optional<nixlEtcdKv> kv;
    ASSERT_EQ(c.get("/t11/k", kv), NIXL_SUCCESS);
    ASSERT_TRUE(kv.has_value());
}

TEST_F(EtcdSingle, ValueTooLargeForTheServerIsRefused) {
    nixlEtcdClient c(configFor(server_->endpoints()));
    // etcd's default request limit is 1.5 MiB.
    EXPECT_EQ(c.put("/t2/huge", std::string(3 << 20, 'x')), NIXL_ERR_INVALID_PARAM);
}

TEST_F(EtcdSingle, WatchSeesPutsAndDeletesInOrder) {
    nixlEtcdClient c(configFor(server_->endpoints()));
    eventLog log;
    nixlEtcdWatch w(c, "/t3/", nixlEtcdClient::prefixEnd("/t3/"), 0,
                    [&](const std::vector<nixlEtcdEvent> &e) { log.add(e); });
    ASSERT_TRUE(w.waitCreated(event_deadline));
    ASSERT_EQ(c.put("/t3/k", "v1"), NIXL_SUCCESS);
    ASSERT_EQ(c.put("/t3/k", "v2"), NIXL_SUCCESS);
    ASSERT_EQ(c.put("/t3x", "outside"), NIXL_SUCCESS);
    ASSERT_EQ(c.deleteKey("/t3/k"), NIXL_SUCCESS);
    ASSERT_TRUE(log.wait([](auto &e) { return e.size() >= 3; }));
    const auto evs = log.snapshot();
    ASSERT_EQ(evs.size(), 3u);
    EXPECT_EQ(evs[0].type, nixl_etcd_event_type_t::PUT);
    EXPECT_EQ(evs[0].kv.value, "v1");
    EXPECT_EQ(evs[1].type, nixl_etcd_event_type_t::PUT);
    EXPECT_EQ(evs[1].kv.value, "v2");
    EXPECT_EQ(evs[2].type, nixl_etcd_event_type_t::DELETE);
    EXPECT_EQ(evs[2].kv.key, "/t3/k");
    EXPECT_LT(evs[0].kv.modRevision, evs[1].kv.modRevision);
    EXPECT_LT(evs[1].kv.modRevision, evs[2].kv.modRevision);
}

TEST_F(EtcdSingle, WatchFromAPastRevisionReplays) {
    nixlEtcdClient c(configFor(server_->endpoints()));
    std::optional<nixlEtcdKv> kv;
    int64_t rev = 0;
    ASSERT_EQ(c.get("/t4/k", kv, &rev), NIXL_SUCCESS);
    ASSERT_EQ(c.put("/t4/k", "early"), NIXL_SUCCESS);
    eventLog log;
    nixlEtcdWatch w(c, "/t4/k", "", rev + 1, [&](const auto &e) { log.add(e); });
    const std::string early = "early";
    ASSERT_TRUE(log.wait(
        [&](auto &e) { return hasEvent(e, nixl_etcd_event_type_t::PUT, "/t4/k", &early); }));
}

TEST_F(EtcdSingle, LeaseExpiresWithoutKeepalive) {
    nixlEtcdClient c(configFor(server_->endpoints()));
    int64_t id = 0;
    int64_t ttl = 0;
    ASSERT_EQ(c.leaseGrant(2, id, &ttl), NIXL_SUCCESS);
    EXPECT_GE(ttl, 2);
    ASSERT_EQ(c.put("/t5/k", "v", id), NIXL_SUCCESS);
    int64_t now_ttl = 0;
    ASSERT_EQ(c.leaseKeepAlive(id, now_ttl), NIXL_SUCCESS);
    EXPECT_GT(now_ttl, 0);
    eventLog log;
    nixlEtcdWatch w(c, "/t5/k", "", 0, [&](const auto &e) { log.add(e); });
    ASSERT_TRUE(w.waitCreated(event_deadline));
    ASSERT_TRUE(
        log.wait([](auto &e) { return hasEvent(e, nixl_etcd_event_type_t::DELETE, "/t5/k"); }));
    std::optional<nixlEtcdKv> kv;
    ASSERT_EQ(c.get("/t5/k", kv), NIXL_SUCCESS);
    EXPECT_FALSE(kv.has_value());
    EXPECT_EQ(c.leaseKeepAlive(id, now_ttl), NIXL_ERR_NOT_FOUND);
    EXPECT_EQ(c.leaseRevoke(id), NIXL_ERR_NOT_FOUND);
}

TEST_F(EtcdSingle, RevokeDeletesTheLeasesKeys) {
    nixlEtcdClient c(configFor(server_->endpoints()));
    int64_t id = 0;
    ASSERT_EQ(c.leaseGrant(60, id), NIXL_SUCCESS);
    ASSERT_EQ(c.put("/t6/k", "v", id), NIXL_SUCCESS);
    ASSERT_EQ(c.leaseRevoke(id), NIXL_SUCCESS);
    std::optional<nixlEtcdKv> kv;
    ASSERT_EQ(c.get("/t6/k", kv), NIXL_SUCCESS);
    EXPECT_FALSE(kv.has_value());
    EXPECT_EQ(c.put("/t6/k", "v", id), NIXL_ERR_NOT_FOUND); // lease gone: refused
}

TEST_F(EtcdSingle, MetadataPublishFetchWatchRemove) {
    const auto cfg = configFor(server_->endpoints(), "/t7");
    nixlEtcdMetadata a("A", cfg);
    nixlEtcdMetadata b("B", cfg);
    ASSERT_EQ(a.publish("metadata", "x"), NIXL_ERR_NOT_ALLOWED); // before start
    ASSERT_EQ(a.start(), NIXL_SUCCESS);
    ASSERT_EQ(b.start(), NIXL_SUCCESS);
    EXPECT_NE(a.leaseId(), 0);

    // The prefix key exists from start(), attached to the lease: NIXL's layout.
    std::optional<nixlEtcdKv> kv;
    ASSERT_EQ(a.client().get("/t7/A/", kv), NIXL_SUCCESS);
    ASSERT_TRUE(kv.has_value());
    EXPECT_EQ(kv->lease, a.leaseId());

    const std::string blob("\x00\x01not-a-blob\xff", 13);
    ASSERT_EQ(a.publish(nixl_etcd_metadata_label, blob), NIXL_SUCCESS);
    ASSERT_EQ(a.publish("part1", "partial"), NIXL_SUCCESS);
    ASSERT_EQ(a.client().get("/t7/A/metadata", kv), NIXL_SUCCESS);
    ASSERT_TRUE(kv.has_value());
    EXPECT_EQ(kv->lease, a.leaseId());

    std::string got;
    int64_t rev = 0;
    ASSERT_EQ(b.fetch("A", nixl_etcd_metadata_label, 1s, got, &rev), NIXL_SUCCESS);
    EXPECT_EQ(got, blob);
    ASSERT_EQ(b.fetch("A", "part1", 1s, got), NIXL_SUCCESS);
    EXPECT_EQ(got, "partial");
    EXPECT_EQ(b.fetch("A", "never", 200ms, got), NIXL_ERR_NOT_FOUND);
    EXPECT_EQ(b.fetch("a/b", "x", 200ms, got), NIXL_ERR_INVALID_PARAM);

    // Fetch waits for a label published later (whether the publish lands before or after
    // the fetch's watch starts, it is found).
    std::string later;
    nixl_status_t later_st = NIXL_ERR_UNKNOWN;
    std::thread fetcher([&] { later_st = b.fetch("A", "late", event_deadline, later); });
    ASSERT_EQ(a.publish("late", "arrived"), NIXL_SUCCESS);
    fetcher.join();
    EXPECT_EQ(later_st, NIXL_SUCCESS);
    EXPECT_EQ(later, "arrived");

    // B watches A from the revision it read; A's invalidation deletes A's prefix.
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::pair<nixl_etcd_event_type_t, std::string>> seen;
    ASSERT_EQ(
        b.watchAgent(
            "A",
            rev,
            [&](const std::string &agent, nixl_etcd_event_type_t t, const std::string &label) {
                EXPECT_EQ(agent, "A");
                std::lock_guard lock(m);
                seen.emplace_back(t, label);
                cv.notify_all();
            }),
        NIXL_SUCCESS);
    ASSERT_EQ(a.removeLocal(), NIXL_SUCCESS);
    auto deleted = [&](const std::string &label) {
        for (const auto &s : seen) {
            if (s.first == nixl_etcd_event_type_t::DELETE && s.second == label) {
                return true;
            }
        }
        return false;
    };
    {
        std::unique_lock lock(m);
        ASSERT_TRUE(cv.wait_for(lock, event_deadline, [&] {
            return deleted("") && deleted("metadata") && deleted("part1") && deleted("late");
        }));
    }
    std::vector<nixlEtcdKv> left;
    ASSERT_EQ(a.client().getPrefix("/t7/A/", left), NIXL_SUCCESS);
    EXPECT_TRUE(left.empty());
    b.unwatchAgent("A");
    b.unwatchAgent("nobody");
}

TEST_F(EtcdSingle, KeepaliveHoldsTheLease) {
    auto cfg = configFor(server_->endpoints(), "/t8");
    // Keepalives every 2 s: a 4 s stall of this process (busy machine) is needed to lose it.
    cfg.leaseTtl = 6s;
    nixlEtcdMetadata a("A", cfg);
    ASSERT_EQ(a.start(), NIXL_SUCCESS);
    ASSERT_EQ(a.publish("metadata", "blob"), NIXL_SUCCESS);
    const int64_t lease = a.leaseId();
    // Keepalives go every third of the TTL: four of them span more than the TTL, so without
    // them the key would be gone by now.
    ASSERT_TRUE(pollUntil([&] { return a.keepalives() >= 4; }));
    std::optional<nixlEtcdKv> kv;
    ASSERT_EQ(a.client().get("/t8/A/metadata", kv), NIXL_SUCCESS);
    ASSERT_TRUE(kv.has_value());
    EXPECT_EQ(kv->lease, lease);
}

TEST_F(EtcdSingle, LostLeaseIsGrantedAgainAndKeysRewritten) {
    auto cfg = configFor(server_->endpoints(), "/t9");
    cfg.leaseTtl = 3s;
    nixlEtcdMetadata a("A", cfg);
    nixlEtcdMetadata b("B", cfg);
    ASSERT_EQ(a.start(), NIXL_SUCCESS);
    ASSERT_EQ(a.publish("metadata", "blob"), NIXL_SUCCESS);
    const int64_t first = a.leaseId();
    // Someone (an operator, or etcd after an outage longer than the TTL) ends the lease.
    ASSERT_EQ(b.client().leaseRevoke(first), NIXL_SUCCESS);
    // The keepalive thread notices, grants a new lease and writes the key again: B's fetch
    // (get, else watch) sees it come back.
    std::string got;
    ASSERT_EQ(b.fetch("A", "metadata", event_deadline, got), NIXL_SUCCESS);
    EXPECT_EQ(got, "blob");
    ASSERT_TRUE(pollUntil([&] { return a.leaseRegrants() >= 1; }));
    EXPECT_NE(a.leaseId(), first);

    // Lost again, and a publish comes before the keepalive notices: publish grants the new
    // lease itself and succeeds.
    ASSERT_EQ(b.client().leaseRevoke(a.leaseId()), NIXL_SUCCESS);
    ASSERT_EQ(a.publish("part", "p"), NIXL_SUCCESS);
    ASSERT_EQ(b.fetch("A", "metadata", event_deadline, got), NIXL_SUCCESS);
    EXPECT_EQ(got, "blob");
    ASSERT_EQ(b.fetch("A", "part", event_deadline, got), NIXL_SUCCESS);
    EXPECT_EQ(got, "p");
}

TEST_F(EtcdSingle, KilledProcessDisappearsWhenItsLeaseExpires) {
    auto cfg = configFor(server_->endpoints(), "/t10");
    cfg.leaseTtl = 2s;
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        close(ready[0]);
        int rc = 1;
        {
            nixlEtcdMetadata c("C", cfg);
            if (c.start() == NIXL_SUCCESS && c.publish("metadata", "child") == NIXL_SUCCESS) {
                rc = 0;
            }
            const char byte = rc == 0 ? 'y' : 'n';
            (void)!write(ready[1], &byte, 1);
            if (rc == 0) {
                for (;;) {
                    pause(); // until SIGKILL: no clean-up, no revoke
                }
            }
        }
        _exit(rc);
    }
    close(ready[1]);
    char byte = 0;
    ASSERT_EQ(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    ASSERT_EQ(byte, 'y');

    nixlEtcdMetadata w("W", cfg);
    std::string got;
    int64_t rev = 0;
    ASSERT_EQ(w.fetch("C", "metadata", 5s, got, &rev), NIXL_SUCCESS);
    EXPECT_EQ(got, "child");
    std::mutex m;
    std::condition_variable cv;
    bool gone = false;
    ASSERT_EQ(
        w.watchAgent("C",
                     rev,
                     [&](const std::string &, nixl_etcd_event_type_t t, const std::string &label) {
                         if (t == nixl_etcd_event_type_t::DELETE && label == "metadata") {
                             std::lock_guard lock(m);
                             gone = true;
                             cv.notify_all();
                         }
                     }),
        NIXL_SUCCESS);
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    std::unique_lock lock(m);
    EXPECT_TRUE(cv.wait_for(lock, event_deadline, [&] { return gone; }));
}

// --- etcd unreachable ------------------------------------------------------------------------

TEST(EtcdUnreachable, NothingListeningFailsAtOnceWithAClearError) {
    const uint16_t port = nixl_test::pickFreePort(); // nothing listens there
    auto cfg = configFor("127.0.0.1:" + std::to_string(port));
    cfg.requestTimeout = 2s;
    nixlEtcdClient c(cfg);
    std::optional<nixlEtcdKv> kv;
    EXPECT_EQ(c.put("/k", "v"), NIXL_ERR_BACKEND);
    EXPECT_EQ(c.get("/k", kv), NIXL_ERR_BACKEND);
    int64_t id = 0;
    EXPECT_EQ(c.leaseGrant(5, id), NIXL_ERR_BACKEND);
    nixlEtcdMetadata md("A", cfg);
    EXPECT_EQ(md.start(), NIXL_ERR_BACKEND);
    std::string blob;
    EXPECT_EQ(md.fetch("B", "metadata", 200ms, blob), NIXL_ERR_BACKEND);
}

/** A loopback socket that accepts connections into its backlog and never answers. */
class silentListener {
public:
    silentListener() {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(sa);
        EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)), 0);
        EXPECT_EQ(listen(fd_, 16), 0);
        EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr *>(&sa), &len), 0);
        port_ = ntohs(sa.sin_port);
    }

    ~silentListener() {
        close(fd_);
    }

    uint16_t
    port() const {
        return port_;
    }

private:
    int fd_ = -1;
    uint16_t port_ = 0;
};

TEST(EtcdUnreachable, SilentServerIsBoundedByTheRequestTimeout) {
    silentListener silent;
    auto cfg = configFor("127.0.0.1:" + std::to_string(silent.port()));
    cfg.requestTimeout = 500ms;
    nixlEtcdClient c(cfg);
    EXPECT_EQ(c.put("/k", "v"), NIXL_ERR_BACKEND); // returns: the test would hang otherwise
}

/** A loopback HTTP server that answers every request with 200 and a body that is not JSON. */
class garbageServer {
public:
    garbageServer() {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(sa);
        EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)), 0);
        EXPECT_EQ(listen(fd_, 16), 0);
        EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr *>(&sa), &len), 0);
        port_ = ntohs(sa.sin_port);
        thread_ = std::thread([this] {
            for (;;) {
                const int c = accept(fd_, nullptr, nullptr);
                if (c < 0) {
                    return; // shut down
                }
                char buf[4096];
                (void)!read(c, buf, sizeof(buf));
                static constexpr char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n"
                                                "Connection: close\r\n\r\n<html>x</>";
                (void)!write(c, reply, sizeof(reply) - 1);
                close(c);
            }
        });
    }

    ~garbageServer() {
        shutdown(fd_, SHUT_RDWR);
        thread_.join();
        close(fd_);
    }

    uint16_t
    port() const {
        return port_;
    }

private:
    int fd_ = -1;
    uint16_t port_ = 0;
    std::thread thread_;
};

TEST(EtcdUnreachable, AServerThatIsNotEtcdIsSkipped) {
    garbageServer garbage;
    const std::string url = "127.0.0.1:" + std::to_string(garbage.port());
    {
        auto cfg = configFor(url);
        cfg.requestTimeout = 2s;
        nixlEtcdClient c(cfg);
        EXPECT_EQ(c.put("/k", "v"), NIXL_ERR_BACKEND);
        eventLog log;
        nixlEtcdWatch w(c, "/k", "", 0, [&](const auto &e) { log.add(e); });
        EXPECT_FALSE(w.waitCreated(200ms)); // never confirmed; stops cleanly
    }
    etcdCluster server(etcdCluster::options{});
    nixlEtcdClient c(configFor(url + "," + server.endpoints()));
    ASSERT_EQ(c.put("/g/k", "v"), NIXL_SUCCESS);
    EXPECT_EQ(c.currentEndpoint(), server.clientUrl(0));
}

TEST(EtcdUnreachable, DeadFirstEndpointFailsOverToTheLiveOne) {
    etcdCluster server(etcdCluster::options{});
    const uint16_t dead = nixl_test::pickFreePort();
    nixlEtcdClient c(configFor("127.0.0.1:" + std::to_string(dead) + "," + server.endpoints()));
    ASSERT_EQ(c.put("/u/k", "v"), NIXL_SUCCESS);
    EXPECT_EQ(c.currentEndpoint(), server.clientUrl(0)); // remembered
    std::optional<nixlEtcdKv> kv;
    ASSERT_EQ(c.get("/u/k", kv), NIXL_SUCCESS);
    ASSERT_TRUE(kv.has_value());
}

// --- three members ---------------------------------------------------------------------------

TEST(EtcdCluster, KilledMemberFailsOverRequestsAndWatches) {
    etcdCluster cluster(etcdCluster::options{.members = 3});
    auto cfg = configFor(cluster.endpoints());
    // Killing the leader costs an election, and a request caught in it times out inside the
    // cluster first (about 9 s here): room for several on a busy machine.
    cfg.requestTimeout = 60s;
    nixlEtcdClient c(cfg);
    ASSERT_EQ(c.put("/c/before", "1"), NIXL_SUCCESS);
    ASSERT_EQ(c.currentEndpoint(), cluster.clientUrl(0));

    eventLog log;
    nixlEtcdWatch w(
        c, "/c/", nixlEtcdClient::prefixEnd("/c/"), 0, [&](const auto &e) { log.add(e); });
    ASSERT_TRUE(w.waitCreated(event_deadline)); // on member 0, the preferred one
    ASSERT_EQ(c.put("/c/k1", "a"), NIXL_SUCCESS);
    const std::string a = "a";
    ASSERT_TRUE(
        log.wait([&](auto &e) { return hasEvent(e, nixl_etcd_event_type_t::PUT, "/c/k1", &a); }));

    cluster.kill(0);
    // Requests go to another member (after a new election if member 0 led).
    ASSERT_EQ(c.put("/c/k2", "b"), NIXL_SUCCESS);
    EXPECT_NE(c.currentEndpoint(), cluster.clientUrl(0));
    std::optional<nixlEtcdKv> kv;
    ASSERT_EQ(c.get("/c/before", kv), NIXL_SUCCESS);
    ASSERT_TRUE(kv.has_value());
    EXPECT_EQ(kv->value, "1");
    ASSERT_EQ(c.deleteKey("/c/k1"), NIXL_SUCCESS);
    // The watch reconnects elsewhere and resumes after the last revision it delivered:
    // the put and delete made while it was down arrive, nothing twice.
    const std::string b = "b";
    ASSERT_TRUE(log.wait([&](auto &e) {
        return hasEvent(e, nixl_etcd_event_type_t::PUT, "/c/k2", &b) &&
            hasEvent(e, nixl_etcd_event_type_t::DELETE, "/c/k1");
    }));
    const auto evs = log.snapshot();
    EXPECT_EQ(evs.size(), 3u);
    for (size_t i = 1; i < evs.size(); ++i) {
        EXPECT_LT(evs[i - 1].kv.modRevision, evs[i].kv.modRevision);
    }

    // The metadata layer over the surviving members.
    nixlEtcdMetadata md("A", configFor(cluster.endpoints(), "/cm"));
    ASSERT_EQ(md.start(), NIXL_SUCCESS);
    ASSERT_EQ(md.publish("metadata", "m"), NIXL_SUCCESS);
    std::string got;
    ASSERT_EQ(md.fetch("A", "metadata", 1s, got), NIXL_SUCCESS);
    EXPECT_EQ(got, "m");
}

// --- TLS and authentication ------------------------------------------------------------------

class EtcdTls : public ::testing::Test {
protected:
    void
    SetUp() override {
        char tmpl[] = "/tmp/nixl-etcd-certs-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        std::string err;
        ASSERT_TRUE(nixl_test::makeEtcdTestCertificates(dir_, certs_, err)) << err;
    }

    void
    TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

    nixlEtcdConfig
    tlsConfig(const etcdCluster &server) {
        auto cfg = configFor(server.endpoints());
        cfg.caFile = certs_.caFile;
        cfg.certFile = certs_.clientCert;
        cfg.keyFile = certs_.clientKey;
        return cfg;
    }

    std::string dir_;
    nixl_test::etcdTlsFiles certs_;
};

TEST_F(EtcdTls, ClientCertificateAuthentication) {
    etcdCluster server(etcdCluster::options{.tls = &certs_, .clientCertAuth = true});
    ASSERT_EQ(server.clientUrl(0).rfind("https://", 0), 0u);
    auto cfg = tlsConfig(server);
    cfg.requestTimeout = 5s;
    {
        nixlEtcdClient c(cfg);
        ASSERT_EQ(c.put("/tls/k", "v"), NIXL_SUCCESS);
        std::optional<nixlEtcdKv> kv;
        ASSERT_EQ(c.get("/tls/k", kv), NIXL_SUCCESS);
        ASSERT_TRUE(kv.has_value());
        EXPECT_EQ(kv->value, "v");
        eventLog log;
        nixlEtcdWatch w(c, "/tls/k", "", 0, [&](const auto &e) { log.add(e); });
        ASSERT_TRUE(w.waitCreated(event_deadline));
        ASSERT_EQ(c.deleteKey("/tls/k"), NIXL_SUCCESS);
        ASSERT_TRUE(log.wait(
            [](auto &e) { return hasEvent(e, nixl_etcd_event_type_t::DELETE, "/tls/k"); }));
    }
    {
        auto no_cert = cfg;
        no_cert.certFile.clear();
        no_cert.keyFile.clear();
        nixlEtcdClient c(no_cert);
        EXPECT_EQ(c.put("/tls/k", "v"), NIXL_ERR_BACKEND); // the server wants a certificate
    }
    {
        auto wrong_ca = cfg;
        wrong_ca.caFile = certs_.otherCaFile;
        nixlEtcdClient c(wrong_ca);
        EXPECT_EQ(c.put("/tls/k", "v"), NIXL_ERR_BACKEND); // server not trusted
    }
    {
        auto plain = cfg;
        plain.endpoints = {"http://" + server.clientUrl(0).substr(8)};
        nixlEtcdClient c(plain);
        EXPECT_EQ(c.put("/tls/k", "v"), NIXL_ERR_BACKEND);
    }
}

TEST(EtcdAuth, UserPasswordTokenAndRefresh) {
    etcdCluster server(etcdCluster::options{});
    server.enableAuth("rootpw");
    auto cfg = configFor(server.endpoints());
    cfg.requestTimeout = 10s;
    {
        nixlEtcdClient anonymous(cfg);
        EXPECT_EQ(anonymous.put("/auth/k", "v"), NIXL_ERR_NOT_ALLOWED);
    }
    {
        auto bad = cfg;
        bad.user = "root";
        bad.password = "wrong";
        nixlEtcdClient c(bad);
        EXPECT_EQ(c.put("/auth/k", "v"), NIXL_ERR_NOT_ALLOWED);
    }
    cfg.user = "root";
    cfg.password = "rootpw";
    nixlEtcdClient c(cfg);
    ASSERT_EQ(c.put("/auth/k", "v1"), NIXL_SUCCESS);
    eventLog log;
    nixlEtcdWatch w(
        c, "/auth/", nixlEtcdClient::prefixEnd("/auth/"), 0, [&](const auto &e) { log.add(e); });
    ASSERT_TRUE(w.waitCreated(event_deadline));

    // A restarted member forgets its tokens: the next request is refused with "invalid auth
    // token", the client authenticates again and the request goes through.
    server.restart(0);
    ASSERT_EQ(c.put("/auth/k", "v2"), NIXL_SUCCESS);
    std::optional<nixlEtcdKv> kv;
    ASSERT_EQ(c.get("/auth/k", kv), NIXL_SUCCESS);
    ASSERT_TRUE(kv.has_value());
    EXPECT_EQ(kv->value, "v2");
    // The watch reconnected (with a new token) and saw the put made after the restart.
    const std::string v2 = "v2";
    ASSERT_TRUE(log.wait(
        [&](auto &e) { return hasEvent(e, nixl_etcd_event_type_t::PUT, "/auth/k", &v2); }));

    nixlEtcdMetadata md("A", cfg);
    ASSERT_EQ(md.start(), NIXL_SUCCESS);
    ASSERT_EQ(md.publish("metadata", "m"), NIXL_SUCCESS);
}

} // namespace

// Issue 29 item 7: a PEM variable naming a FIFO or /proc/kmsg blocked curl's TLS set-up in
// open() forever (and ~nixlAgent with it). The files are now read once, non-blocking, at
// construction, which refuses anything but a regular file of at most 1 MiB, naming the variable
// and the file; curl gets the bytes and opens nothing. No server is needed: the refusal comes
// before any request (before the fix construction succeeded and the first request hung).
TEST_F(EtcdTls, PemFilesThatAreNotSmallRegularFilesAreRefusedAtConstruction) {
    const std::string fifo = dir_ + "/ca.fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const std::string big = dir_ + "/big.pem";
    {
        std::ofstream f(big);
        f << std::string((1 << 20) + 1, 'A');
    }
    auto expectRefused = [](nixlEtcdConfig cfg, const std::string &var, const std::string &file) {
        try {
            nixlEtcdClient c(std::move(cfg));
            ADD_FAILURE() << var << "=" << file << " was accepted";
        }
        catch (const std::invalid_argument &e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(var), std::string::npos) << what;
            EXPECT_NE(what.find(file), std::string::npos) << what;
        }
    };
    auto base = [] {
        nixlEtcdConfig cfg;
        cfg.endpoints = {"https://127.0.0.1:1"};
        return cfg;
    };
    {
        auto cfg = base();
        cfg.caFile = fifo;
        expectRefused(cfg, "NIXL_ETCD_CA_FILE", fifo);
    }
    {
        auto cfg = base();
        cfg.caFile = certs_.caFile;
        cfg.certFile = fifo;
        cfg.keyFile = certs_.clientKey;
        expectRefused(cfg, "NIXL_ETCD_CERT_FILE", fifo);
    }
    {
        auto cfg = base();
        cfg.caFile = certs_.caFile;
        cfg.certFile = certs_.clientCert;
        cfg.keyFile = big;
        expectRefused(cfg, "NIXL_ETCD_KEY_FILE", big);
    }
    if (access("/proc/kmsg", F_OK) == 0) {
        auto cfg = base();
        cfg.caFile = "/proc/kmsg";
        expectRefused(cfg, "NIXL_ETCD_CA_FILE", "/proc/kmsg");
    }
    {
        // The certificates themselves still load.
        auto cfg = base();
        cfg.caFile = certs_.caFile;
        cfg.certFile = certs_.clientCert;
        cfg.keyFile = certs_.clientKey;
        EXPECT_NO_THROW(nixlEtcdClient c(std::move(cfg)));
    }
}
