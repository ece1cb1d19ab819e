/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file test_backend.h
 * @brief The TEST backend: moves DRAM data between agents of one process with memcpy, so every
 *        agent path can be exercised end to end without a network stack.
 *
 * Parameters (createBackend; getPluginParams lists the defaults):
 *  - async ("false"): "true" makes postXfer return NIXL_IN_PROG; the copy and the notification
 *    then happen in the checkXfer that follows async_polls checkXfer calls answered IN_PROG.
 *  - async_polls ("1"): see async.
 *  - fail_post_at ("0"): the Nth postXfer call of the engine fails with NIXL_ERR_BACKEND.
 *  - fail_register_at ("0"): the Nth registerMem call fails with NIXL_ERR_BACKEND.
 *  - disconnect_after ("0"): after N accepted posts to one remote, further posts to it, and
 *    checks of its running requests, report NIXL_ERR_REMOTE_DISCONNECT until it is reconnected.
 *  - fail_release ("false"): "true" makes releaseReqH of a running request fail, so the caller
 *    keeps it.
 *  - fail_create ("false"): "true" makes creation fail.
 *  - trace_phases ("true"): "false" records no trace phases even when the agent traces (the
 *    agent_overhead benchmark measures the agent's own spans apart from a backend's phases).
 *  - hold_notifs ("false"): "true" makes getNotifs and the transfer calls meet inside the
 *    engine, to prove they run concurrently: each getNotifs call waits, before draining, until
 *    a postXfer and a checkXfer of this engine returned after it entered, and postXfer waits
 *    until some getNotifs call has entered. A caller that serialises them (an exclusive lock
 *    around both) would deadlock, so each wait gives up after hold_deadline with
 *    NIXL_ERR_BACKEND and one log line instead. Tests only.
 * 0 means "never" for the counters. Unknown keys are kept and reported back by
 * getCustomParams; invalid values fail creation.
 */
#ifndef NIXL_SRC_PLUGINS_BACKEND_TEST_TEST_BACKEND_H
#define NIXL_SRC_PLUGINS_BACKEND_TEST_TEST_BACKEND_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nixl_backend_sdk.h"
#include "test_registry.h"

/** @brief A remote agent as one engine knows it, from its connection info. */
struct nixlTestPeer {
    std::string name;
    uint64_t token;
    /** nullptr when the engine named by the connection info did not exist when it was loaded. */
    std::shared_ptr<nixlTestEndpoint> endpoint;
    /** Posts to this peer that were accepted (SUCCESS or IN_PROG). */
    std::atomic<uint64_t> acceptedPosts{0};
    /** Once set, transfers to this peer report NIXL_ERR_REMOTE_DISCONNECT. */
    std::atomic<bool> dropped{false};

    nixlTestPeer(std::string name, uint64_t token, std::shared_ptr<nixlTestEndpoint> endpoint)
        : name(std::move(name)),
          token(token),
          endpoint(std::move(endpoint)) {}
};

/** @brief Metadata of one of the engine's own registrations. */
class nixlTestLocalMD : public nixlBackendMD {
public:
    explicit nixlTestLocalMD(std::shared_ptr<nixlTestRegion> region)
        : nixlBackendMD(true),
          region(std::move(region)) {}

    const std::shared_ptr<nixlTestRegion> region;
};

/** @brief Metadata of a registration of a peer (or, for loopback, of the engine itself). */
class nixlTestRemoteMD : public nixlBackendMD {
public:
    nixlTestRemoteMD(std::string agent, uint64_t token, std::shared_ptr<nixlTestRegion> region)
        : nixlBackendMD(false),
          agent(std::move(agent)),
          token(token),
          region(std::move(region)) {}

    const std::string agent;
    const uint64_t token;
    const std::shared_ptr<nixlTestRegion> region;
};

/**
 * @brief A prepared transfer. Everything a post needs was resolved and validated at prep time,
 *        so posting allocates nothing unless a notification is sent.
 */
class nixlTestReqH : public nixlBackendReqH {
public:
    enum class state_t { IDLE, RUNNING, DONE, FAILED };

    /** One descriptor pair, as resolved addresses. */
    struct segment_t {
        char *dst;
        const char *src;
        size_t len;
        size_t index; ///< descriptor index, for log lines
        std::shared_ptr<nixlTestRegion> remote; ///< checked live before every copy
    };

    nixl_xfer_op_t op = NIXL_WRITE;
    std::string remoteAgent;
    std::shared_ptr<nixlTestPeer> peer;
    std::vector<segment_t> segments;
    size_t descCount = 0;
    size_t totalBytes = 0;
    /** Core's trace context of the request (set at each post), for the phases it records. */
    const nixl_be_trace_ctx_t *traceCtx = nullptr;

    /**
     * Serialises post, check and release of this request. Core never posts one request from two
     * threads, but status polls of one request may come from several.
     */
    std::mutex lock;
    state_t state = state_t::IDLE;
    nixl_status_t failure = NIXL_SUCCESS;
    uint64_t pollsLeft = 0;
    bool notifPending = false;
    std::string notifMsg;
};

/** @brief The TEST engine; one per agent backend. */
class nixlTestEngine : public nixlBackendEngine {
public:
    explicit nixlTestEngine(const nixlBackendInitParams *init_params);
    ~nixlTestEngine() override;

    /** Defaults reported by getPluginParams. */
    static nixl_b_params_t
    pluginOptions();
    static nixl_mem_list_t
    pluginMems();

    bool
    supportsRemote() const override {
        return true;
    }

    bool
    supportsLocal() const override {
        return true;
    }

    bool
    supportsNotif() const override {
        return true;
    }

    nixl_mem_list_t
    getSupportedMems() const override {
        return pluginMems();
    }

    nixl_status_t
    registerMem(const nixlBlobDesc &mem, const nixl_mem_t &nixl_mem, nixlBackendMD *&out) override;
    nixl_status_t
    deregisterMem(nixlBackendMD *meta) override;
    nixl_status_t
    connect(const std::string &remote_agent) override;
    nixl_status_t
    disconnect(const std::string &remote_agent) override;
    nixl_status_t
    unloadMD(nixlBackendMD *input) override;

    nixl_status_t
    getPublicData(const nixlBackendMD *meta, std::string &str) const override;
    nixl_status_t
    getConnInfo(std::string &str) const override;
    nixl_status_t
    loadRemoteConnInfo(const std::string &remote_agent,
                       const std::string &remote_conn_info) override;
    nixl_status_t
    loadRemoteMD(const nixlBlobDesc &input,
                 const nixl_mem_t &nixl_mem,
                 const std::string &remote_agent,
                 nixlBackendMD *&output) override;
    nixl_status_t
    loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) override;

    nixl_status_t
    prepXfer(const nixl_xfer_op_t &operation,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args = nullptr) const override;
    nixl_status_t
    postXfer(const nixl_xfer_op_t &operation,
             const nixl_meta_dlist_t &local,
             const nixl_meta_dlist_t &remote,
             const std::string &remote_agent,
             nixlBackendReqH *&handle,
             const nixl_opt_b_args_t *opt_args = nullptr) const override;
    nixl_status_t
    checkXfer(nixlBackendReqH *handle) const override;
    nixl_status_t
    releaseReqH(nixlBackendReqH *handle) const override;

    nixl_status_t
    getNotifs(notif_list_t &notif_list) override;
    nixl_status_t
    genNotif(const std::string &remote_agent, const std::string &msg) const override;

    nixl_status_t
    queryMem(const std::vector<nixlBlobDesc> &descs,
             std::vector<nixl_query_resp_t> &resp) const override;
    nixl_status_t
    estimateXferCost(const nixl_xfer_op_t &operation,
                     const nixl_meta_dlist_t &local,
                     const nixl_meta_dlist_t &remote,
                     const std::string &remote_agent,
                     nixlBackendReqH *const &handle,
                     std::chrono::microseconds &duration,
                     std::chrono::microseconds &err_margin,
                     nixl_cost_t &method) const override;

private:
    struct config_t {
        bool async = false;
        uint64_t asyncPolls = 1;
        uint64_t failPostAt = 0;
        uint64_t failRegisterAt = 0;
        uint64_t disconnectAfter = 0;
        bool failRelease = false;
        bool failCreate = false;
        bool tracePhases = true; ///< record trace phases when the agent traces
        bool holdNotifs = false; ///< hold_notifs (see the file comment)
    };

    /** The meeting point of hold_notifs: what getNotifs and the transfer calls wait for. */
    struct notifHold_t {
        std::mutex lock;
        std::condition_variable cv;
        uint64_t entered = 0; ///< getNotifs calls that entered so far
        uint64_t posts = 0; ///< postXfer calls returned so far
        uint64_t checks = 0; ///< checkXfer calls returned so far
    };

    /** How long a hold_notifs wait lasts before it reports the deadlock it found. */
    static constexpr std::chrono::seconds hold_deadline{60};

    /** hold_notifs: postXfer waits until some getNotifs call entered; false on the deadline. */
    bool
    awaitDrainer() const;
    /** hold_notifs: counts a returned postXfer (post true) or checkXfer. */
    void
    noteReturn(bool post) const;
    /** hold_notifs: getNotifs enters and waits for a post and a check; false on the deadline. */
    bool
    holdDrain();

    nixl_status_t
    postXferNow(nixlTestReqH *req,
                const nixl_xfer_op_t &operation,
                const nixl_meta_dlist_t &local,
                const nixl_meta_dlist_t &remote,
                const std::string &remote_agent,
                const nixl_opt_b_args_t *opt_args) const;
    nixl_status_t
    checkXferNow(nixlTestReqH *req) const;

    /** Whether this engine records trace phases: the agent traces and trace_phases is on. */
    bool
    phasesOn() const noexcept {
        return traceSink_ != nullptr && cfg_.tracePhases;
    }

    bool
    loadConfig();

    std::shared_ptr<nixlTestPeer>
    findPeer(const std::string &name) const;

    /** Copies the data of req and delivers notif (if any); req.lock is held. */
    nixl_status_t
    runCopy(nixlTestReqH &req, const std::string *notif) const;

    config_t cfg_;
    const std::shared_ptr<nixlTestEndpoint> self_;
    std::string connInfo_;
    bool published_ = false;

    /** Written by control calls only; read concurrently by prep and genNotif. */
    mutable std::shared_mutex peersLock_;
    std::unordered_map<std::string, std::shared_ptr<nixlTestPeer>> peers_;

    /** Metadata the engine handed out, so that a stale or foreign pointer is refused. */
    mutable std::mutex mdLock_;
    std::unordered_map<const nixlBackendMD *, std::unique_ptr<nixlTestLocalMD>> localMds_;
    std::unordered_map<const nixlBackendMD *, std::unique_ptr<nixlTestRemoteMD>> remoteMds_;

    mutable notifHold_t hold_;

    mutable std::atomic<uint64_t> postCalls_{0};
    std::atomic<uint64_t> registerCalls_{0};
};

#endif // NIXL_SRC_PLUGINS_BACKEND_TEST_TEST_BACKEND_H
