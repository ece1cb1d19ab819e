/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_kv.h
 * @brief What etcd hands back: a key-value and a watch event, shared by the client's reads, the
 *        watch stream and the reply readers (etcd_internal.h).
 *
 * Thread safety: plain values; no shared state.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_KV_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_KV_H

#include <cstdint>
#include <string>

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

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_KV_H
