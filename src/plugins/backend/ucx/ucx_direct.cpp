/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX backend's direct path (nixlUcxDirectPath, ucx_path.h): process_vm_readv/writev
// between same-host peers, memcpy between agents of one process.
#include "ucx_internal.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <sys/uio.h>

using nixlUcx::iov_batch;
using nixlUcx::inline_bytes;
using nixlUcx::step_budget;
using nixlUcx::thread_budget;
using nixlUcx::opName;
using nixlUcx::finishReq;
using nixlUcx::goneStatus;
using nixlUcx::wireLabel;

namespace {

/**
 * Moves n iovecs (bytes in all) of req: within one process (agents of one process) a plain
 * copy, no system call; else process_vm_writev/readv. Returns what the call returned (errno
 * set as it left it).
 */
ssize_t
moveIov(const nixlUcxReq &req,
        bool in_process,
        const struct iovec *liov,
        const struct iovec *riov,
        size_t n,
        size_t bytes) {
    if (!in_process) {
        return req.op == NIXL_WRITE ?
            ::process_vm_writev(req.conn->peer.pid, liov, n, riov, n, 0) :
            ::process_vm_readv(req.conn->peer.pid, liov, n, riov, n, 0);
    }
    for (size_t i = 0; i < n; ++i) {
        if (req.op == NIXL_WRITE) {
            std::memcpy(riov[i].iov_base, liov[i].iov_base, liov[i].iov_len);
        } else {
            std::memcpy(liov[i].iov_base, riov[i].iov_base, liov[i].iov_len);
        }
    }
    return static_cast<ssize_t>(bytes);
}

/** Slot 0 of a table whose engine was destroyed (see ~nixlUcxEngine). */
const nixlUcxRemoteMD table_closed{};

/**
 * The first of the n registrations a copy uses whose slot in the mapped table no longer names
 * it, or &table_closed when the peer engine closed its table.
 */
const nixlUcxRemoteMD *
firstStale(const nixlUcxReq &req,
           const nixlReg::nixlRegTable &tab,
           const nixlUcxRemoteMD *const *mds,
           size_t n) {
    std::atomic<uint64_t> *slots = tab.slots();
    // seq_cst loads: they must not move before the mark's enter (src/utils/regtable/reg_table.h).
    if (slots[0].load(std::memory_order_seq_cst) != req.conn->remoteNonce) {
        return &table_closed;
    }
    const nixlUcxRemoteMD *last = nullptr;
    for (size_t i = 0; i < n; ++i) {
        const nixlUcxRemoteMD *md = mds[i];
        if (md == last || md->slot == 0) {
            continue; // checked just now, or in no slot (over 1 Mi registrations: unchecked)
        }
        last = md;
        if (slots[md->slot].load(std::memory_order_seq_cst) != md->regId) {
            return md;
        }
    }
    return nullptr;
}

/** Appends len bytes of descriptor d of req, from offset off, as entry n of a copy batch. */
void
addIov(const nixlUcxReq &req,
       size_t d,
       size_t off,
       size_t len,
       struct iovec *liov,
       struct iovec *riov,
       const nixlUcxRemoteMD **rmds,
       size_t &n) {
    liov[n] = {reinterpret_cast<void *>(req.local[d].addr + off), len};
    riov[n] = {reinterpret_cast<void *>(req.remote[d].addr + off), len};
    // prepXfer checked the type; a static cast is enough here.
    rmds[n] = static_cast<const nixlUcxRemoteMD *>(
        reinterpret_cast<nixlBackendMD *>(req.remote[d].md));
    ++n;
}

/**
 * Enters a mark in tab and checks the registrations mds[0, n) inside it (the fence of
 * reg_table.h): null with the mark held, or what firstStale found with the mark left.
 */
const nixlUcxRemoteMD *
enterChecked(const nixlUcxReq &req,
             const nixlReg::nixlRegTable &tab,
             const nixlUcxRemoteMD *const *mds,
             size_t n,
             nixlReg::nixlRegTable::mark_t &mark) {
    mark = tab.enter();
    const nixlUcxRemoteMD *md = firstStale(req, tab, mds, n);
    if (md != nullptr) {
        nixlReg::nixlRegTable::leave(mark);
    }
    return md;
}

} // namespace

void
nixlUcxDirectPath::reportStale(nixlUcxReq &req, const nixlUcxRemoteMD &md) const {
    size_t desc = 0;
    while (desc < req.count && reinterpret_cast<nixlBackendMD *>(req.remote[desc].md) != &md) {
        ++desc;
    }
    NIXL_SDK_ERROR_LIMITED("agent " << host_.pathAgent() << ": UCX " << opName(req.op) << " to "
                            << req.remoteAgent << ", descriptor " << desc
                            << ": the remote registration of " << md.len << " bytes at 0x"
                            << std::hex << md.base << std::dec
                            << " was released (stale remote key) after " << req.copied
                            << " bytes; reload its metadata");
    finishReq(req, NIXL_ERR_NOT_FOUND);
}

bool
nixlUcxDirectPath::staleCheck(nixlUcxReq &req) const {
    if (req.conn->peerTable) {
        return true; // every copy checks the mapped table under the fence (stepLocked)
    }
    // Peers write 0 into a registration's slot when they release it, so one readv of the
    // slots tells whether every remote key of the request is still valid.
    uint64_t vals[iov_batch];
    struct iovec liov[iov_batch];
    struct iovec riov[iov_batch];
    for (size_t base = 0; base < req.remoteMds.size(); base += iov_batch) {
        size_t n = std::min(iov_batch, req.remoteMds.size() - base);
        for (size_t i = 0; i < n; ++i) {
            vals[i] = 0;
            liov[i] = {&vals[i], sizeof(uint64_t)};
            riov[i] = {reinterpret_cast<void *>(req.conn->remoteRegTable +
                                                req.remoteMds[base + i]->slot * sizeof(uint64_t)),
                       sizeof(uint64_t)};
        }
        ssize_t r = ::process_vm_readv(req.conn->peer.pid, liov, n, riov, n, 0);
        if (r != static_cast<ssize_t>(n * sizeof(uint64_t))) {
            int e = r < 0 ? errno : EFAULT;
            if (e == ESRCH || e == EFAULT) {
                // The process is gone, or (same process) its engine was destroyed.
                host_.pathLost(*req.conn, std::string("its registration table is unreadable: ") +
                             std::strerror(e));
                finishReq(req, NIXL_ERR_REMOTE_DISCONNECT);
            } else {
                NIXL_SDK_ERROR_LIMITED("agent " << host_.pathAgent() << ": UCX " << opName(req.op) << " to "
                                        << req.remoteAgent
                                        << ": cannot read its registration table: "
                                        << std::strerror(e));
                finishReq(req, NIXL_ERR_BACKEND);
            }
            return false;
        }
        for (size_t i = 0; i < n; ++i) {
            const nixlUcxRemoteMD *md = req.remoteMds[base + i];
            if (vals[i] != md->regId) {
                reportStale(req, *md);
                return false;
            }
        }
    }
    return true;
}

void
nixlUcxDirectPath::stepLocked(nixlUcxReq &req, size_t budget) const {
    if (req.phase != nixlUcxReq::phase_t::DATA || req.cancelled) {
        return;
    }
    if (!req.conn->usable()) {
        finishReq(req, goneStatus(*req.conn));
        return;
    }
    if (cfg_.faultDirectHoldBytes != 0) {
        // Fault injection (tests only): copy no further, so that the request is still in
        // flight when the test kills the peer, however slowly this process runs.
        if (req.copied >= cfg_.faultDirectHoldBytes) {
            return;
        }
        budget = std::min<size_t>(budget, cfg_.faultDirectHoldBytes - req.copied);
    }
    struct iovec liov[iov_batch];
    struct iovec riov[iov_batch];
    const nixlUcxRemoteMD *rmds[iov_batch];
    size_t done = 0;
    while (done < budget && req.curDesc < req.count) {
        size_t n = 0;
        size_t bytes = 0;
        size_t d = req.curDesc;
        size_t off = req.curOff;
        while (n < iov_batch && d < req.count && done + bytes < budget) {
            const size_t len = req.local[d].len - off;
            if (len == 0) {
                ++d;
                off = 0;
                continue;
            }
            const size_t take = std::min(len, budget - done - bytes);
            addIov(req, d, off, take, liov, riov, rmds, n);
            bytes += take;
            if (take == len) {
                ++d;
                off = 0;
            } else {
                off += take;
            }
        }
        if (n == 0) {
            req.curDesc = d;
            req.curOff = off;
            break;
        }
        if (!req.wireTraced && host_.pathTracing()) {
            // The first copy of the post (a syscall, or memcpy within one process) hands the
            // data over: this path's wire.
            req.wireTraced = true;
            host_.pathPhase(req, NIXL_BE_PHASE_WIRE_SUBMITTED, wireLabel(req));
        }
        // With the peer's table mapped, each copy runs inside a mark and after a check of its
        // registrations (the fence of reg_table.h): a deregisterMem that returned has
        // seen every copy that passed the check end, and later checks fail.
        const nixlReg::nixlRegTable *tab = req.conn->peerTable.get();
        nixlReg::nixlRegTable::mark_t mark;
        if (tab != nullptr) {
            if (const nixlUcxRemoteMD *md = enterChecked(req, *tab, rmds, n, mark)) {
                if (md == &table_closed) {
                    host_.pathLost(*req.conn, "its engine closed its registration table");
                    finishReq(req, NIXL_ERR_REMOTE_DISCONNECT);
                } else {
                    reportStale(req, *md);
                }
                return;
            }
        }
        const ssize_t r =
            moveIov(req, tab != nullptr && req.conn->sameProcess, liov, riov, n, bytes);
        if (tab != nullptr) {
            nixlReg::nixlRegTable::leave(mark);
        }
        if (r <= 0) {
            int e = r < 0 ? errno : EFAULT;
            if (e == EINTR) {
                continue;
            }
            const size_t i = req.curDesc;
            if (e == ESRCH) {
                host_.pathLost(*req.conn, std::string(req.op == NIXL_WRITE ? "process_vm_writev" :
                                                                       "process_vm_readv") +
                                        ": no such process");
                finishReq(req, NIXL_ERR_REMOTE_DISCONNECT);
                return;
            }
            if (e == EFAULT) {
                NIXL_SDK_ERROR_LIMITED("agent " << host_.pathAgent() << ": UCX " << opName(req.op) << " to "
                                        << req.remoteAgent << ", descriptor " << i << " ("
                                        << req.local[i].len << " bytes, local 0x" << std::hex
                                        << req.local[i].addr << ", remote 0x"
                                        << req.remote[i].addr << std::dec
                                        << "): memory not accessible; the remote registration "
                                        << "was probably released (stale remote key)");
                finishReq(req, NIXL_ERR_NOT_FOUND);
                return;
            }
            NIXL_SDK_ERROR_LIMITED("agent " << host_.pathAgent() << ": UCX " << opName(req.op) << " to "
                                    << req.remoteAgent << ", descriptor " << i << ": "
                                    << (req.op == NIXL_WRITE ? "process_vm_writev" :
                                                               "process_vm_readv")
                                    << ": " << std::strerror(e));
            finishReq(req, NIXL_ERR_BACKEND);
            return;
        }
        // Advance the cursor by what was copied; a short count stops at the failing iovec,
        // which the next call then reports.
        size_t left = static_cast<size_t>(r);
        done += left;
        req.copied += left;
        while (left > 0) {
            const size_t len = req.local[req.curDesc].len - req.curOff;
            if (left >= len) {
                left -= len;
                ++req.curDesc;
                req.curOff = 0;
            } else {
                req.curOff += left;
                left = 0;
            }
        }
        while (req.curDesc < req.count && req.local[req.curDesc].len == req.curOff) {
            ++req.curDesc;
            req.curOff = 0;
        }
    }
    if (req.curDesc >= req.count) {
        finishDataLocked(req);
    } else if (cfg_.faultDirectHoldBytes != 0 && req.copied >= cfg_.faultDirectHoldBytes &&
               req.conn->peerTable && req.heldMark.m == nullptr) {
        req.heldMark = req.conn->peerTable->enter();
    }
}

void
nixlUcxDirectPath::finishDataLocked(nixlUcxReq &req) const {
    if (host_.pathTracing()) {
        host_.pathPhase(req, NIXL_BE_PHASE_WIRE_COMPLETED, wireLabel(req));
    }
    if (!req.hasNotif) {
        finishReq(req, NIXL_SUCCESS);
        return;
    }
    nixlUcxWorker &w = *req.lane->worker;
    std::lock_guard<std::mutex> g(w.lock);
    host_.pathSendNotifLocked(req);
    w.progressLocked();
}

size_t
nixlUcxDirectPath::stepActive() const {
    size_t total = 0;
    active_.sweep([&](nixlUcxReq &req) {
        if (!req.stepLock.try_lock()) {
            return false;
        }
        const size_t before = req.copied;
        stepLocked(req, thread_budget);
        total += req.copied - before;
        const bool drop = req.phase != nixlUcxReq::phase_t::DATA || req.cancelled ||
            req.status.load(std::memory_order_acquire) != NIXL_IN_PROG;
        req.stepLock.unlock();
        return drop;
    });
    return total;
}

void
nixlUcxDirectPath::runBatch(nixlUcxReq &req, size_t begin, size_t end) const {
    if (!req.conn->usable()) {
        failSplit(req, goneStatus(*req.conn), "the connection is gone");
        return;
    }
    struct iovec liov[iov_batch];
    struct iovec riov[iov_batch];
    const nixlUcxRemoteMD *rmds[iov_batch];
    const nixlReg::nixlRegTable *tab = req.conn->peerTable.get();
    const bool inProcess = tab != nullptr && req.conn->sameProcess;
    size_t d = begin;
    size_t off = 0; // into descriptor d, after a short copy
    while (d < end) {
        // Another batch failed: the request fails with that error, the rest is not copied.
        if (req.splitErr.load(std::memory_order_relaxed) != NIXL_SUCCESS ||
            req.splitCancel.load(std::memory_order_relaxed)) {
            return;
        }
        size_t n = 0;
        size_t bytes = 0;
        for (size_t i = d; i < end && n < iov_batch; ++i) {
            const size_t skip = i == d ? off : 0;
            const size_t len = req.local[i].len - skip;
            if (len == 0) {
                continue;
            }
            addIov(req, i, skip, len, liov, riov, rmds, n);
            bytes += len;
        }
        if (n == 0) {
            return; // only empty descriptors left
        }
        // Inside a mark and after a check of the registrations, as stepLocked.
        nixlReg::nixlRegTable::mark_t mark;
        if (tab != nullptr) {
            if (const nixlUcxRemoteMD *md = enterChecked(req, *tab, rmds, n, mark)) {
                if (md == &table_closed) {
                    host_.pathLost(*req.conn, "its engine closed its registration table");
                    failSplit(req, NIXL_ERR_REMOTE_DISCONNECT, "the peer engine closed");
                    return;
                }
                size_t desc = begin;
                while (desc < end && reinterpret_cast<nixlBackendMD *>(req.remote[desc].md) !=
                                         static_cast<const nixlBackendMD *>(md)) {
                    ++desc;
                }
                std::ostringstream msg;
                msg << "descriptor " << desc << ": the remote registration of " << md->len
                    << " bytes at 0x" << std::hex << md->base << std::dec
                    << " was released (stale remote key); reload its metadata";
                failSplit(req, NIXL_ERR_NOT_FOUND, msg.str());
                return;
            }
        }
        const ssize_t r = moveIov(req, inProcess, liov, riov, n, bytes);
        if (tab != nullptr) {
            nixlReg::nixlRegTable::leave(mark);
        }
        if (r <= 0) {
            const int e = r < 0 ? errno : EFAULT;
            if (e == EINTR) {
                continue;
            }
            const char *call = req.op == NIXL_WRITE ? "process_vm_writev" : "process_vm_readv";
            if (e == ESRCH) {
                host_.pathLost(*req.conn, std::string(call) + ": no such process");
                failSplit(req, NIXL_ERR_REMOTE_DISCONNECT, "the peer process is gone");
                return;
            }
            std::ostringstream msg;
            msg << "descriptor " << d << " (" << req.local[d].len << " bytes, local 0x"
                << std::hex << req.local[d].addr << ", remote 0x" << req.remote[d].addr
                << std::dec << "): ";
            if (e == EFAULT) {
                msg << "memory not accessible; the remote registration was probably released "
                    << "(stale remote key)";
            } else {
                msg << call << ": " << std::strerror(e);
            }
            failSplit(req, e == EFAULT ? NIXL_ERR_NOT_FOUND : NIXL_ERR_BACKEND, msg.str());
            return;
        }
        req.splitBytes.fetch_add(static_cast<size_t>(r), std::memory_order_relaxed);
        // Advance by what was copied; a short count stops at the failing iovec, which the
        // next round then reports.
        size_t left = static_cast<size_t>(r);
        while (left > 0 && d < end) {
            const size_t len = req.local[d].len - off;
            if (left >= len) {
                left -= len;
                ++d;
                off = 0;
            } else {
                off += left;
                left = 0;
            }
        }
        while (d < end && req.local[d].len == off) {
            ++d;
            off = 0;
        }
    }
}

void
nixlUcxDirectPath::finishSplit(nixlUcxReq &req) const {
    std::lock_guard<std::mutex> g(req.stepLock);
    req.copied = req.splitBytes.load(std::memory_order_relaxed);
    if (req.splitCancel.load(std::memory_order_acquire)) {
        return; // released: releaseReqH ends the request (no notification)
    }
    if (const nixl_status_t st = req.splitErr.load(std::memory_order_acquire);
        st != NIXL_SUCCESS) {
        finishReq(req, st);
        return;
    }
    if (!req.conn->usable()) {
        finishReq(req, goneStatus(*req.conn));
        return;
    }
    req.curDesc = req.count;
    finishDataLocked(req);
}

nixl_status_t
nixlUcxDirectPath::post(nixlUcxReq &req, const nixlUcxPostTrace &trace) const {
    {
        std::lock_guard<std::mutex> g(req.stepLock);
        if (!staleCheck(req)) {
            if (trace.batch != nullptr) {
                host_.pathRecord(trace.ctx, *trace.batch);
            }
            return req.status.load(std::memory_order_acquire);
        }
        if (req.split) {
            if (host_.pathTracing()) {
                req.wireTraced = true;
                host_.pathPhase(req, NIXL_BE_PHASE_WIRE_SUBMITTED, wireLabel(req));
            }
            host_.pathSubmit(req);
            // In progress even if the pool has finished it already (getXferStatus then says
            // so): a pooled post returns at once with the same answer however threads ran.
            return NIXL_IN_PROG;
        }
        // Small transfers complete inside the post, and larger ones copy a first slice now,
        // with or without a progress thread (handing the slice to the thread would cost a
        // wake-up and a core switch: docs/backends/ucx.md); check or the thread do the rest.
        req.phaseBatch = trace.batch;
        stepLocked(req, req.totalBytes <= inline_bytes ? inline_bytes : step_budget);
        req.phaseBatch = nullptr;
    }
    if (trace.batch != nullptr) {
        host_.pathRecord(trace.ctx, *trace.batch);
    }
    if (req.status.load(std::memory_order_acquire) != NIXL_IN_PROG) {
        host_.pathHousekeeping();
        return req.status.load(std::memory_order_acquire); // nothing left for the thread
    }
    if (cfg_.progressThread) {
        active_.add(&req);
    }
    host_.pathWake();
    return req.status.load(std::memory_order_acquire);
}

void
nixlUcxDirectPath::check(nixlUcxReq &req) const {
    if (req.split) {
        return; // the pool's threads copy it
    }
    std::unique_lock<std::mutex> g(req.stepLock, std::defer_lock);
    if (cfg_.progressThread ? g.try_lock() : (g.lock(), true)) {
        stepLocked(req, step_budget);
    }
}

void
nixlUcxDirectPath::detach(nixlUcxReq &req) const {
    active_.remove(&req);
}

nixl_status_t
nixlUcxDirectPath::releaseRunning(nixlUcxReq &req, nixlUcxWorker &w) const {
    {
        std::lock_guard<std::mutex> s(req.stepLock);
        req.cancelled = true;
        std::lock_guard<std::mutex> g(w.lock);
        w.ready.erase(std::remove(w.ready.begin(), w.ready.end(), &req), w.ready.end());
        if (req.notifSend != nullptr) {
            req.notifSend->req = nullptr; // the message still goes; nobody waits for it
        }
        if (req.tracked) {
            w.inflight.erase(&req);
            req.tracked = false;
        }
    }
    NIXL_SDK_WARN_LIMITED("agent " << host_.pathAgent() << ": UCX released a running "
                                   << opName(req.op) << " to " << req.remoteAgent << " after "
                                   << req.copied << " of " << req.totalBytes
                                   << " bytes; the rest is not copied"
                                   << (req.phase == nixlUcxReq::phase_t::NOTIF ?
                                           " (its notification was already on its way)" :
                                           "; no notification is sent"));
    delete &req;
    return NIXL_SUCCESS;
}

void
nixlUcxDirectPath::failSplit(nixlUcxReq &req, nixl_status_t st, const std::string &msg) const {
    nixl_status_t expected = NIXL_SUCCESS;
    if (req.splitErr.compare_exchange_strong(expected, st, std::memory_order_acq_rel)) {
        NIXL_SDK_ERROR_LIMITED("agent " << host_.pathAgent() << ": UCX " << opName(req.op)
                                        << " to " << req.remoteAgent << ": " << msg);
    }
}
