/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// What keeps the etcd traffic of a process independent of its number of peers, against a real
// etcd on 127.0.0.1: batched reads (getMany, fetchMany), the one namespace stream that carries
// every watched peer's deletions, the fallback to a watch of its own, and the bounded lease
// revoke of a clean exit. Waits are on conditions with generous deadlines; nothing asserts on
// durations.

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "etcd_client.h"
#include "etcd_metadata.h"
#include "../../common/etcd_server.h"

namespace {

using namespace std::chrono_literals;
using nixl_test::etcdCluster;

// Long enough for a busy 2-core machine; only ever reached when something is broken.
constexpr auto event_deadline = 60s;

nixlEtcdConfig
configFor(const std::string &endpoints, const std::string &ns) {
    nixlEtcdConfig cfg;
    std::string err;
    EXPECT_TRUE(nixlEtcdConfig::parseEndpoints(endpoints, false, cfg.endpoints, err)) << err;
    cfg.nameSpace = ns;
    cfg.requestTimeout = 20s;
    // Keepalives every 20 min: none of them falls inside a test's request count.
    cfg.leaseTtl = 3600s;
    return cfg;
}

uint64_t
requestsSoFar() {
    return nixlEtcdProcessTraffic().requests;
}

/** Deletions seen by watchAgent callbacks: agent -> labels. */
class deletionLog {
public:
    nixlEtcdMetadata::peer_event_cb_t
    callback() {
        return [this](const std::string &agent, nixl_etcd_event_type_t t, const std::string &l) {
            EXPECT_EQ(t, nixl_etcd_event_type_t::DELETE);
            std::lock_guard lock(m_);
            seen_[agent].insert(l);
            cv_.notify_all();
        };
    }

    bool
    waitFor(const std::string &agent, const std::string &label) {
        std::unique_lock lock(m_);
        return cv_.wait_for(lock, event_deadline, [&] { return seen_[agent].count(label) != 0; });
    }

    bool
    waitAgents(size_t n, const std::string &label) {
        std::unique_lock lock(m_);
        return cv_.wait_for(lock, event_deadline, [&] {
            size_t k = 0;
            for (const auto &[agent, labels] : seen_) {
                k += labels.count(label);
            }
            return k >= n;
        });
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::map<std::string, std::set<std::string>> seen_;
};

class EtcdBatch : public ::testing::Test {
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

etcdCluster *EtcdBatch::server_ = nullptr;

TEST_F(EtcdBatch, GetManyReadsPresentAndAbsentKeysInOneRequest) {
    nixlEtcdClient c(configFor(server_->endpoints(), "/b1"));
    ASSERT_EQ(c.put("/b1/x", std::string("\0one", 4)), NIXL_SUCCESS);
    ASSERT_EQ(c.put("/b1/z", "three"), NIXL_SUCCESS);
    std::vector<std::optional<nixlEtcdKv>> out;
    int64_t rev = 0;
    const uint64_t before = requestsSoFar();
    ASSERT_EQ(c.getMany({"/b1/x", "/b1/y", "/b1/z"}, out, &rev), NIXL_SUCCESS);
    EXPECT_EQ(requestsSoFar() - before, 1u);
    ASSERT_EQ(out.size(), 3u);
    ASSERT_TRUE(out[0].has_value());
    EXPECT_EQ(out[0]->value, std::string("\0one", 4));
    EXPECT_FALSE(out[1].has_value());
    ASSERT_TRUE(out[2].has_value());
    EXPECT_EQ(out[2]->value, "three");
    EXPECT_GE(rev, out[2]->modRevision);

    std::vector<std::string> too_many(nixl_etcd_max_batch_keys + 1, "/b1/x");
    EXPECT_EQ(c.getMany(too_many, out), NIXL_ERR_INVALID_PARAM);
}

TEST_F(EtcdBatch, FetchManyDeliversEachAgentOnceAndWaitsForLatePublishers) {
    const auto cfg = configFor(server_->endpoints(), "/b2");
    nixlEtcdMetadata a("A", cfg), late("L", cfg), reader("R", cfg);
    ASSERT_EQ(a.start(), NIXL_SUCCESS);
    ASSERT_EQ(a.publish(nixl_etcd_metadata_label, "blob-A"), NIXL_SUCCESS);
    ASSERT_EQ(late.start(), NIXL_SUCCESS);

    std::mutex m;
    std::condition_variable cv;
    std::map<std::string, std::vector<nixlEtcdMetadata::fetch_result_t>> got;
    auto fetcher = std::async(std::launch::async, [&] {
        // "N" never publishes: its fetch ends at the timeout with NOT_FOUND, after L's arrived.
        reader.fetchMany({"A", "L", "N", "bad/name"}, nixl_etcd_metadata_label, 3s,
                         [&](nixlEtcdMetadata::fetch_result_t &r) {
                             std::lock_guard lock(m);
                             got[r.agent].push_back(r);
                             cv.notify_all();
                         });
    });
    {
        // A is there at the read: delivered before L publishes.
        std::unique_lock lock(m);
        ASSERT_TRUE(cv.wait_for(lock, event_deadline, [&] { return got.count("A") != 0; }));
    }
    ASSERT_EQ(late.publish(nixl_etcd_metadata_label, "blob-L"), NIXL_SUCCESS);
    ASSERT_EQ(fetcher.wait_for(event_deadline), std::future_status::ready);
    fetcher.get();

    ASSERT_EQ(got.size(), 4u);
    for (const auto &[agent, results] : got) {
        EXPECT_EQ(results.size(), 1u) << agent;
    }
    EXPECT_EQ(got["A"][0].status, NIXL_SUCCESS);
    EXPECT_EQ(got["A"][0].blob, "blob-A");
    EXPECT_EQ(got["L"][0].status, NIXL_SUCCESS);
    EXPECT_EQ(got["L"][0].blob, "blob-L");
    EXPECT_EQ(got["N"][0].status, NIXL_ERR_NOT_FOUND);
    EXPECT_EQ(got["bad/name"][0].status, NIXL_ERR_INVALID_PARAM);
}

TEST_F(EtcdBatch, RequestsDoNotGrowWithThePeersFetchedAndWatched) {
    constexpr size_t peers = 16;
    const auto cfg = configFor(server_->endpoints(), "/b3");
    std::vector<std::unique_ptr<nixlEtcdMetadata>> pub;
    std::vector<std::string> names;
    for (size_t i = 0; i < peers; ++i) {
        names.push_back("P" + std::to_string(i));
        pub.push_back(std::make_unique<nixlEtcdMetadata>(names.back(), cfg));
        ASSERT_EQ(pub.back()->start(), NIXL_SUCCESS);
        ASSERT_EQ(pub.back()->publish(nixl_etcd_metadata_label, "blob-" + names.back()),
                  NIXL_SUCCESS);
    }
    nixlEtcdMetadata reader("R", cfg);
    deletionLog log;
    const uint64_t before = requestsSoFar();
    size_t loaded = 0;
    reader.fetchMany(names, nixl_etcd_metadata_label, 5s,
                     [&](nixlEtcdMetadata::fetch_result_t &r) {
                         ASSERT_EQ(r.status, NIXL_SUCCESS) << r.agent;
                         EXPECT_EQ(r.blob, "blob-" + r.agent);
                         EXPECT_EQ(reader.watchAgent(r.agent, r.revision, log.callback()),
                                   NIXL_SUCCESS);
                         ++loaded;
                     });
    ASSERT_EQ(loaded, peers);
    // The namespace's deletion stream and one read, whatever the number of peers.
    EXPECT_EQ(requestsSoFar() - before, 2u);
    EXPECT_EQ(reader.ownWatches(), 0u);

    // Every peer's invalidation reaches the reader on that one stream.
    for (auto &p : pub) {
        ASSERT_EQ(p->removeLocal(), NIXL_SUCCESS);
    }
    ASSERT_TRUE(log.waitAgents(peers, nixl_etcd_metadata_label));
}

TEST_F(EtcdBatch, ADeletionBetweenTheReadAndTheWatchIsDelivered) {
    const auto cfg = configFor(server_->endpoints(), "/b4");
    nixlEtcdMetadata a("A", cfg), reader("R", cfg);
    ASSERT_EQ(a.start(), NIXL_SUCCESS);
    ASSERT_EQ(a.publish(nixl_etcd_metadata_label, "blob"), NIXL_SUCCESS);
    std::string blob;
    int64_t rev = 0;
    ASSERT_EQ(reader.fetch("A", nixl_etcd_metadata_label, 5s, blob, &rev), NIXL_SUCCESS);
    ASSERT_EQ(a.removeLocal(), NIXL_SUCCESS); // before the reader watches A
    deletionLog log;
    ASSERT_EQ(reader.watchAgent("A", rev, log.callback()), NIXL_SUCCESS);
    EXPECT_TRUE(log.waitFor("A", nixl_etcd_metadata_label));
    EXPECT_TRUE(log.waitFor("A", ""));
    reader.unwatchAgent("A");
}

TEST_F(EtcdBatch, AReadOlderThanTheSharedStreamGetsAWatchOfItsOwn) {
    const auto cfg = configFor(server_->endpoints(), "/b5");
    nixlEtcdMetadata a("A", cfg), reader("R", cfg);
    ASSERT_EQ(a.start(), NIXL_SUCCESS);
    ASSERT_EQ(a.publish(nixl_etcd_metadata_label, "blob"), NIXL_SUCCESS);
    // Read with the raw client (the reader's stream does not exist yet), then move the store
    // on: the stream the reader opens next starts after that read.
    std::optional<nixlEtcdKv> kv;
    int64_t rev = 0;
    ASSERT_EQ(reader.client().get(a.prefix() + nixl_etcd_metadata_label, kv, &rev),
              NIXL_SUCCESS);
    ASSERT_TRUE(kv.has_value());
    ASSERT_EQ(a.publish("other", "x"), NIXL_SUCCESS);
    deletionLog log;
    ASSERT_EQ(reader.watchAgent("A", rev, log.callback()), NIXL_SUCCESS);
    EXPECT_EQ(reader.ownWatches(), 1u);
    ASSERT_EQ(a.removeLocal(), NIXL_SUCCESS);
    EXPECT_TRUE(log.waitFor("A", nixl_etcd_metadata_label));
    reader.unwatchAgent("A");
}

// A hostile writer under the namespace once grew a reader's memory with long labels (RSS 24 ->
// 137 MB, issue 29 item 17): the deletion history stays within deleteHistoryMax entries and
// keeps no key over 512 bytes, while every deletion is still delivered to the watcher.
TEST_F(EtcdBatch, ManyLongLabelsKeepTheDeletionHistoryBounded) {
    auto cfg = configFor(server_->endpoints(), "/b7");
    cfg.deleteHistoryMax = 64;
    nixlEtcdMetadata a("H", cfg), reader("R", cfg);
    ASSERT_EQ(a.start(), NIXL_SUCCESS);
    deletionLog log;
    ASSERT_EQ(reader.watchAgent("H", 0, log.callback()), NIXL_SUCCESS);
    constexpr int labels = 200;
    auto label = [](int i) { return std::string(300, 'l') + std::to_string(i); };
    for (int i = 0; i < labels; ++i) {
        ASSERT_EQ(a.client().put(a.prefix() + label(i), "x"), NIXL_SUCCESS) << i;
    }
    const std::string huge(4096, 'h'); // a key past what the history keeps
    ASSERT_EQ(a.client().put(a.prefix() + huge, "x"), NIXL_SUCCESS);
    ASSERT_EQ(a.client().deletePrefix(a.prefix()), NIXL_SUCCESS); // one revision, 201 events
    for (int i = 0; i < labels; ++i) {
        ASSERT_TRUE(log.waitFor("H", label(i))) << i;
    }
    EXPECT_TRUE(log.waitFor("H", huge));
    EXPECT_LE(reader.deleteHistorySize(), cfg.deleteHistoryMax);
    EXPECT_GT(reader.deleteHistorySize(), 0u);
    reader.unwatchAgent("H");
}

// One deleterange of many keys is one watch response; past maxResponseBytes it once ended the
// stream at the same revision on every reconnect ("message larger than 67108864 bytes", issue
// 29 item 17). Watches ask the server to fragment such responses: every deletion arrives.
// Here the server fragments past 64 KiB + 512 KiB (etcd adds that much for gRPC overhead), so
// a fragment is under 1 MiB of JSON, the client takes messages of at most 1 MiB, and the
// deleterange's response is about 3 MB.
TEST(EtcdFragments, ADeleteRangeLargerThanAMessageIsDeliveredInFragments) {
    etcdCluster::options o;
    o.extraArgs = {"--max-request-bytes=65536"};
    etcdCluster server(o);
    auto cfg = configFor(server.endpoints(), "/f1");
    cfg.maxResponseBytes = 1024 * 1024;
    nixlEtcdMetadata a("H", cfg), reader("R", cfg);
    ASSERT_EQ(a.start(), NIXL_SUCCESS);
    deletionLog log;
    ASSERT_EQ(reader.watchAgent("H", 0, log.callback()), NIXL_SUCCESS);
    constexpr int keys = 600;
    auto label = [](int i) { return std::string(4000, 'k') + std::to_string(i); };
    for (int i = 0; i < keys; ++i) {
        ASSERT_EQ(a.client().put(a.prefix() + label(i), "x"), NIXL_SUCCESS) << i;
    }
    ASSERT_EQ(a.client().deletePrefix(a.prefix()), NIXL_SUCCESS);
    for (int i = 0; i < keys; ++i) {
        ASSERT_TRUE(log.waitFor("H", label(i))) << i;
    }
    reader.unwatchAgent("H");
}

TEST_F(EtcdBatch, ACleanExitDoesNotWaitTheRequestTimeoutForTheRevoke) {
    // A fresh server: this test freezes it.
    etcdCluster server(etcdCluster::options{});
    auto cfg = configFor(server.endpoints(), "/b6");
    cfg.requestTimeout = 600s;
    auto a = std::make_unique<nixlEtcdMetadata>("A", cfg);
    ASSERT_EQ(a->start(), NIXL_SUCCESS);
    ASSERT_EQ(a->publish(nixl_etcd_metadata_label, "blob"), NIXL_SUCCESS);
    // The member accepts the revoke's connection and never answers (what a stalled revoke
    // looks like from the client).
    server.freeze(0, true);
    auto gone = std::async(std::launch::async, [&] { a.reset(); });
    // Bounded by nixl_etcd_revoke_timeout, far below the request timeout; the deadline is only
    // reached when the bound is missing.
    const bool returned = gone.wait_for(120s) == std::future_status::ready;
    server.freeze(0, false);
    EXPECT_TRUE(returned);
    gone.wait();
}

} // namespace
