/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "reg_readers.h"

#include <atomic>
#include <map>
#include <mutex>
#include <tuple>

#include <unistd.h>

namespace nixlReg {

regReaderClaim::~regReaderClaim() {
    // Every copy through the mappings sharing this record left its mark before their
    // connections (and so they) could go; the record is free for the next peer. A fence
    // that found the record's process gone may have freed it already: then this fails.
    uint64_t n = tag;
    r->owner.compare_exchange_strong(n, 0);
}

void
resetMarks(regTableReader &r) {
    for (auto &m : r.marks) {
        uint64_t v = m.load(std::memory_order_acquire);
        if ((v & 1) != 0) {
            m.compare_exchange_strong(v, v + 1);
        }
    }
}

std::shared_ptr<regReaderClaim>
claimReader(regTableReader *readers,
            const std::string &name,
            const procIdentity &self,
            uint64_t self_nonce,
            uint64_t owner_nonce) {
    // Taken at connect time, never on a transfer's path; keyed by identity (reg_readers.h).
    using key_t = std::tuple<std::string, uint64_t, uint64_t>;
    static std::mutex held_lock;
    static std::map<key_t, std::weak_ptr<regReaderClaim>> held;
    std::lock_guard<std::mutex> g(held_lock);
    for (auto it = held.begin(); it != held.end();) {
        it = it->second.expired() ? held.erase(it) : std::next(it);
    }
    const key_t key{name, owner_nonce, self_nonce};
    if (auto it = held.find(key); it != held.end()) {
        std::shared_ptr<regReaderClaim> c = it->second.lock();
        if (c && c->r->owner.load(std::memory_order_acquire) == c->tag) {
            return c;
        }
    }
    // A record released and claimed again gets another tag (the nonce is mixed with a count of
    // claims), so a late release of the old claim cannot free the new one.
    static std::atomic<uint64_t> claims{0};
    uint64_t tag = self_nonce ^ (claims.fetch_add(1) * 0x9e3779b97f4a7c15ull);
    tag = tag == 0 ? 1 : tag;
    for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 0; i < reg_table_readers; ++i) {
            regTableReader &r = readers[i];
            uint64_t cur = r.owner.load(std::memory_order_acquire);
            if (cur != 0) {
                if (pass == 0) {
                    continue;
                }
                // Second pass: take over the record of a peer that exited.
                int pfd = -1;
                const bool gone = processExited(r.pid.load(std::memory_order_acquire),
                                                r.startTime.load(std::memory_order_acquire),
                                                pfd);
                if (pfd >= 0) {
                    ::close(pfd);
                }
                if (!gone) {
                    continue;
                }
                resetMarks(r);
            }
            if (r.owner.compare_exchange_strong(cur, tag)) {
                resetMarks(r);
                r.pid.store(self.pid, std::memory_order_release);
                r.startTime.store(self.startTime, std::memory_order_release);
                auto c = std::make_shared<regReaderClaim>();
                c->r = &r;
                c->tag = tag;
                c->index = static_cast<int>(i);
                held[key] = c;
                return c;
            }
        }
    }
    return nullptr;
}

} // namespace nixlReg
