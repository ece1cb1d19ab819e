/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_kv.h
 * @brief What etcd hands back: a key-value and a watch event, shared by the client's reads, the
 *        watch stream and the reply readers (etcd_internal.h); and NIXL's key layout (an
 *        agent's prefix).
 *
 * Thread safety: plain values; no shared state.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_KV_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_KV_H

#include <cstdint>
#include <string>
#include <string_view>

/** One key-value as etcd returns it. */
struct nixlEtcdKv {
    std::string key;
    std::string value;
    int64_t createRevision = 0;
    int64_t modRevision = 0;
    int64_t version = 0;
    int64_t lease = 0;
};

enum class nixl_etcd_event_type_t { PUT, DELETE };

struct nixlEtcdEvent {
    nixl_etcd_event_type_t type = nixl_etcd_event_type_t::PUT;
    nixlEtcdKv kv; ///< for DELETE only key and modRevision are set
};

/** namespace + "/" + agent + "/": the prefix of every key of agent. */
inline std::string
nixlEtcdAgentPrefix(std::string_view name_space, std::string_view agent) {
    std::string p;
    p.reserve(name_space.size() + agent.size() + 2);
    p.append(name_space).append("/").append(agent).append("/");
    return p;
}

/** An agent name keys can carry: a '/' would let agent "A/x" appear under agent "A"'s prefix
 *  (and its watch). */
inline bool
nixlEtcdValidAgentName(std::string_view name) {
    return !name.empty() && name.find('/') == std::string_view::npos;
}

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_KV_H
