/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file nixl.h
 * @brief nixlAgent: the one object an application uses to move data.
 *
 * An agent owns data backends (createBackend), registers memory with them (registerMem),
 * exchanges metadata with peer agents (getLocalMD / loadRemoteMD), and posts one-sided READ and
 * WRITE transfers between local and remote descriptor lists, optionally followed by a
 * notification delivered to the peer after the data is visible there.
 *
 * Typical flow:
 * @code
 *   nixlAgent agent("A", nixlAgentConfig(true));
 *   nixlBackendH *ucx;
 *   agent.createBackend("UCX", {}, ucx);
 *   agent.registerMem(descs);
 *   agent.getLocalMD(blob);             // hand blob to the peer
 *   agent.loadRemoteMD(peer_blob, peer);
 *   agent.createXferReq(NIXL_WRITE, local, remote, peer, req);
 *   agent.postXferReq(req);
 *   while (agent.getXferStatus(req) == NIXL_IN_PROG) {}
 *   agent.releaseXferReq(req);
 * @endcode
 *
 * Thread safety is chosen by nixlAgentConfig::syncMode, see nixl_thread_sync_t.
 */
#ifndef NIXL_SRC_API_CPP_NIXL_H
#define NIXL_SRC_API_CPP_NIXL_H

#include <chrono>
#include <memory>

#include "nixl_descriptors.h"
#include "nixl_params.h"
#include "nixl_types.h"

class nixlAgent {
private:
    const std::unique_ptr<nixlAgentData> data;
    /** libnixl's own tests and benchmarks look inside (not part of the API). */
    friend class nixlAgentInternals;

public:
    /** Throws std::invalid_argument for an empty name, std::runtime_error for a bad setup. */
    nixlAgent(const std::string &name, const nixlAgentConfig &cfg);
    nixlAgent(nixlAgent &&) noexcept = delete;
    nixlAgent &
    operator=(nixlAgent &&) noexcept = delete;
    /** Releases every request, memory registration, remote metadata and backend. */
    ~nixlAgent();

    /** Names of backend plugins found in the plugin directory or already loaded. */
    nixl_status_t
    getAvailPlugins(std::vector<nixl_backend_t> &plugins);

    /** Default parameters and memory kinds of a plugin, without creating a backend. */
    nixl_status_t
    getPluginParams(const nixl_backend_t &type,
                    nixl_mem_list_t &mems,
                    nixl_b_params_t &params) const;

    /** Memory kinds and effective parameters of a created backend. */
    nixl_status_t
    getBackendParams(const nixlBackendH *backend,
                     nixl_mem_list_t &mems,
                     nixl_b_params_t &params) const;

    /** Loads plugin `type` and creates its backend; one backend per type per agent. */
    nixl_status_t
    createBackend(const nixl_backend_t &type,
                  const nixl_b_params_t &params,
                  nixlBackendH *&backend);

    /** Registers every descriptor with each capable (or hinted) backend. */
    nixl_status_t
    registerMem(const nixl_reg_dlist_t &descs, const nixl_opt_args_t *extra_params = nullptr);

    /** Deregisters descriptors; each must equal a registered one exactly. */
    nixl_status_t
    deregisterMem(const nixl_reg_dlist_t &descs, const nixl_opt_args_t *extra_params = nullptr);

    /** Asks exactly one hinted backend about the given memory. */
    nixl_status_t
    queryMem(const nixl_reg_dlist_t &descs,
             std::vector<nixl_query_resp_t> &resp,
             const nixl_opt_args_t *extra_params) const;

    /** Connects eagerly to a remote agent whose metadata is loaded. */
    nixl_status_t
    makeConnection(const std::string &remote_agent,
                   const nixl_opt_args_t *extra_params = nullptr);

    /**
     * Prepares one side of later makeXferReq calls. agent_name NIXL_INIT_AGENT means the local
     * side; any other name (the agent's own name for loopback) means the target side.
     */
    nixl_status_t
    prepXferDlist(const std::string &agent_name,
                  const nixl_xfer_dlist_t &descs,
                  nixlDlistH *&dlist_hndl,
                  const nixl_opt_args_t *extra_params = nullptr) const;

    /** Local-side shortcut of prepXferDlist. */
    nixl_status_t
    prepXferDlist(const nixl_xfer_dlist_t &descs,
                  nixlDlistH *&dlist_hndl,
                  const nixl_opt_args_t *extra_params = nullptr) const;

    /**
     * Builds a reusable request from prepared lists and index selections. Contiguous runs are
     * merged into one descriptor unless extra_params->skipDescMerge.
     */
    nixl_status_t
    makeXferReq(const nixl_xfer_op_t &operation,
                const nixlDlistH *local_side,
                const std::vector<int> &local_indices,
                const nixlDlistH *remote_side,
                const std::vector<int> &remote_indices,
                nixlXferReqH *&req_hndl,
                const nixl_opt_args_t *extra_params = nullptr) const;

    /** Builds a request directly from two descriptor lists of equal shape. */
    nixl_status_t
    createXferReq(const nixl_xfer_op_t &operation,
                  const nixl_xfer_dlist_t &local_descs,
                  const nixl_xfer_dlist_t &remote_descs,
                  const std::string &remote_agent,
                  nixlXferReqH *&req_hndl,
                  const nixl_opt_args_t *extra_params = nullptr) const;

    /** Backend estimate of how long a request takes. */
    nixl_status_t
    estimateXferCost(const nixlXferReqH *req_hndl,
                     std::chrono::microseconds &duration,
                     std::chrono::microseconds &err_margin,
                     nixl_cost_t &method,
                     const nixl_opt_args_t *extra_params = nullptr) const;

    /**
     * Starts (or restarts, after completion) a request. Returns NIXL_SUCCESS when it finished
     * inline, NIXL_IN_PROG otherwise. Non-null extra_params replace the stored notification.
     */
    nixl_status_t
    postXferReq(nixlXferReqH *req_hndl, const nixl_opt_args_t *extra_params = nullptr) const;

    /** Polls a posted request: NIXL_IN_PROG, NIXL_SUCCESS or an error. */
    nixl_status_t
    getXferStatus(nixlXferReqH *req_hndl) const;

    /** Timing and size of a completed request; NIXL_ERR_NO_TELEMETRY when telemetry is off. */
    nixl_status_t
    getXferTelemetry(const nixlXferReqH *req_hndl, nixl_xfer_telem_t &telemetry) const;

    /** The backend a request runs on. */
    nixl_status_t
    queryXferBackend(const nixlXferReqH *req_hndl, nixlBackendH *&backend) const;

    /** Frees a request, aborting it if it still runs (NIXL_ERR_REPOST_ACTIVE if it cannot). */
    nixl_status_t
    releaseXferReq(nixlXferReqH *req_hndl) const;

    /** Device-API view of remote buffers (not supported by the bundled backends). */
    nixl_status_t
    prepMemView(const nixl_remote_dlist_t &dlist,
                nixlMemViewH &mvh,
                const nixl_opt_args_t *extra_params = nullptr) const;

    /** Device-API view of local buffers (not supported by the bundled backends). */
    nixl_status_t
    prepMemView(const nixl_local_dlist_t &dlist,
                nixlMemViewH &mvh,
                const nixl_opt_args_t *extra_params = nullptr) const;

    void
    releaseMemView(nixlMemViewH mvh) const;

    /** Frees a list made by prepXferDlist (the name is NIXL's). */
    nixl_status_t
    releasedDlistH(nixlDlistH *dlist_hndl) const;

    /**
     * Appends received notifications, keyed by sender, to notif_map (never clears it). In RW
     * mode it shares the reader lock with the transfer calls, so draining does not stall
     * posting threads; concurrent calls each get different notifications (every one is
     * delivered to exactly one call) and must pass different maps.
     */
    nixl_status_t
    getNotifs(nixl_notifs_t &notif_map, const nixl_opt_args_t *extra_params = nullptr);

    /** Sends a notification that is not tied to a transfer. */
    nixl_status_t
    genNotif(const std::string &remote_agent,
             const nixl_blob_t &msg,
             const nixl_opt_args_t *extra_params = nullptr) const;

    /** Full local metadata: connection info and every remote-capable registration. */
    nixl_status_t
    getLocalMD(nixl_blob_t &str) const;

    /** Metadata for some registered descriptors (or only connection info for an empty list). */
    nixl_status_t
    getLocalPartialMD(const nixl_reg_dlist_t &descs,
                      nixl_blob_t &str,
                      const nixl_opt_args_t *extra_params = nullptr) const;

    /** Loads (and merges) a peer's metadata; agent_name receives the peer's name. */
    nixl_status_t
    loadRemoteMD(const nixl_blob_t &remote_metadata, std::string &agent_name);

    /** Forgets a peer's metadata and disconnects from it. */
    nixl_status_t
    invalidateRemoteMD(const std::string &remote_agent);

    nixl_status_t
    sendLocalMD(const nixl_opt_args_t *extra_params = nullptr) const;

    nixl_status_t
    sendLocalPartialMD(const nixl_reg_dlist_t &descs,
                       const nixl_opt_args_t *extra_params = nullptr) const;

    nixl_status_t
    fetchRemoteMD(const std::string remote_name, const nixl_opt_args_t *extra_params = nullptr);

    nixl_status_t
    invalidateLocalMD(const nixl_opt_args_t *extra_params = nullptr) const;

    nixl_status_t
    checkRemoteMD(const std::string remote_name, const nixl_xfer_dlist_t &descs) const;
};

#endif // NIXL_SRC_API_CPP_NIXL_H
