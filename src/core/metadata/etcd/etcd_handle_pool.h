/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_handle_pool.h
 * @brief Idle curl easy handles of the etcd client, kept so the next request reuses their
 *        connection cache (no new TCP/TLS set-up per request).
 *
 * Thread safety: acquire and release may be called from any number of threads at once; a
 * handle belongs to the thread that acquired it until it releases it.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_HANDLE_POOL_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_HANDLE_POOL_H

#include <mutex>
#include <vector>

class nixlEtcdHandlePool {
public:
    nixlEtcdHandlePool() = default;
    ~nixlEtcdHandlePool();

    nixlEtcdHandlePool(const nixlEtcdHandlePool &) = delete;
    nixlEtcdHandlePool &
    operator=(const nixlEtcdHandlePool &) = delete;

    /** An idle handle, else a new one; nullptr when curl cannot make one. */
    void *
    acquire();

    /** Gives h back, its options reset and its connections kept. */
    void
    release(void *h);

private:
    std::mutex mutex_;
    std::vector<void *> idle_;
};

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_HANDLE_POOL_H
