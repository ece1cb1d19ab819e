/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "etcd_handle_pool.h"

#include <curl/curl.h>

void *
nixlEtcdHandlePool::acquire() {
    {
        std::lock_guard lock(mutex_);
        if (!idle_.empty()) {
            void *h = idle_.back();
            idle_.pop_back();
            return h;
        }
    }
    return curl_easy_init();
}

void
nixlEtcdHandlePool::release(void *h) {
    curl_easy_reset(static_cast<CURL *>(h)); // keeps the connection cache for the next request
    std::lock_guard lock(mutex_);
    idle_.push_back(h);
}

nixlEtcdHandlePool::~nixlEtcdHandlePool() {
    for (void *h : idle_) {
        curl_easy_cleanup(static_cast<CURL *>(h));
    }
}
