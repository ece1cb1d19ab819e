/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file chrome_session.h
 * @brief The process's trace file and its writer: per-thread byte rings filled by the event
 *        path, drained by one background thread into nixl-trace-<pid>-<start>.json.
 *
 * One session per process at a time, shared by every agent that uses the plugin (acquire()).
 * File layout (see docs/tracing_chrome.md): "[\n", then one event per line, each line a JSON
 * object followed by ",\n"; a session closed normally ends with a last event and "]\n". Lines
 * reach the file only whole and only through one writev() per batch of whole lines, so a
 * reader that keeps everything up to the last '\n' after a kill has only whole events.
 */
#ifndef NIXL_TRACE_CHROME_SESSION_H
#define NIXL_TRACE_CHROME_SESSION_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/types.h>
#include <sys/uio.h>

#include "chrome_json.h"

/**
 * Single-producer single-consumer ring of bytes holding whole lines. The producer is one
 * thread's event path, the consumer the session's writer thread. push() never blocks: a line
 * that does not fit is refused whole.
 */
class nixlChromeRing {
public:
    explicit nixlChromeRing(size_t capacity); // a power of two
    nixlChromeRing(const nixlChromeRing &) = delete;
    nixlChromeRing &
    operator=(const nixlChromeRing &) = delete;

    /** Producer: copies the whole of [p, p+n) in, or nothing (returns false). */
    bool
    push(const char *p, size_t n) noexcept;

    /** Consumer: the bytes published so far, as up to two spans; returns their total. */
    size_t
    readable(iovec out[2], int &count) const noexcept;

    /** Consumer: releases n bytes read through readable(). */
    void
    consume(size_t n) noexcept;

    /** Set (under the session registry lock) when the producing thread has exited. */
    std::atomic<bool> orphaned{false};

private:
    std::unique_ptr<char[]> data_;
    const size_t capacity_;
    alignas(64) std::atomic<uint64_t> head_{0}; // written by the producer
    uint64_t cachedTail_ = 0; // producer's last view of tail_
    alignas(64) std::atomic<uint64_t> tail_{0}; // written by the consumer
};

/** Options of the session, read by the first agent (see chrome_tracer.cpp). */
struct nixlChromeConfig {
    std::string dir; // NIXL_TRACE_DIR
    size_t bufferBytes = 1u << 20; // per thread, rounded up to a power of two
    std::chrono::milliseconds flushInterval{100};
};

/**
 * The process's trace file. Thread safety: thread() and commit() are called from any thread
 * concurrently and never block (the registration of a thread's ring, once per thread, takes a
 * mutex); addAgent() and flush() may block briefly; the destructor (last release) stops the
 * writer and must not run concurrently with event calls.
 */
class nixlChromeSession {
public:
    /** What a thread holds for the session: its ring and its reusable line buffer. */
    struct threadState {
        uint64_t sessionId = 0;
        nixlChromeRing *ring = nullptr;
        nixlChromeLine line; // the event being formatted; grows to the largest line, then reused
        std::string pidTid; // "\"pid\":P,\"tid\":T"
        ~threadState();
    };

    /**
     * The process's session: the live one, or a new one (directory checked or created, file
     * created, writer started). Throws std::runtime_error naming NIXL_TRACE_DIR, the path and
     * the reason when the directory or file is refused.
     */
    static std::shared_ptr<nixlChromeSession>
    acquire(const nixlChromeConfig &cfg);

    ~nixlChromeSession();
    nixlChromeSession(const nixlChromeSession &) = delete;
    nixlChromeSession &
    operator=(const nixlChromeSession &) = delete;

    /** The calling thread's state for this session, registering its ring on first use;
     *  nullptr when that registration cannot allocate (the event is then dropped). */
    threadState *
    thread() noexcept;

    /** Queues st.line (whole lines) on the thread's ring, or drops and counts it. */
    void
    commit(threadState &st) noexcept {
        if (!st.ring->push(st.line.data(), st.line.size())) {
            dropped_.fetch_add(1, std::memory_order_relaxed);
        }
    }

    void
    countDrop() noexcept {
        dropped_.fetch_add(1, std::memory_order_relaxed);
    }

    /** Records an agent's name (escaped JSON string body) in the process labels. */
    void
    addAgent(const std::string &escapedName);

    /** Returns once everything committed before the call is in the file (or dropped). */
    void
    flush();

    uint64_t
    dropped() const noexcept {
        return dropped_.load(std::memory_order_relaxed);
    }

    const std::string &
    path() const noexcept {
        return path_;
    }

    const std::string &
    dir() const noexcept {
        return dir_;
    }

    uint32_t
    pid() const noexcept {
        return pid_;
    }

    explicit nixlChromeSession(const nixlChromeConfig &cfg); // use acquire()

private:
    void
    run();
    void
    cycle(bool final);
    bool
    writeAll(std::vector<iovec> &iov);

    const uint64_t id_;
    const uint32_t pid_;
    const pid_t creatorPid_; // a forked child must not join a thread it does not have
    const size_t ringBytes_;
    const std::chrono::milliseconds interval_;
    std::string dir_;
    std::string path_;
    int fd_ = -1;
    bool broken_ = false; // a write failed after a partial line: nothing more is written
    bool writeErrorLogged_ = false;
    std::atomic<uint64_t> dropped_{0};
    uint64_t droppedWritten_ = 0;

    // Rings of this session; guarded by the process-wide registry mutex (chrome_session.cpp).
    std::vector<nixlChromeRing *> rings_;

    std::mutex mu_; // guards the fields below
    std::condition_variable cv_;
    std::condition_variable flushedCv_;
    bool stop_ = false;
    uint64_t flushRequested_ = 0;
    uint64_t flushDone_ = 0;
    std::vector<std::string> agents_;
    std::string pendingMeta_; // control lines (process labels) for the next cycle

    // Writer-thread scratch, reused every cycle.
    std::vector<nixlChromeRing *> snapshot_;
    std::vector<size_t> taken_;
    std::vector<iovec> iov_;
    std::vector<iovec> orig_; // writeAll's copy of the batch before it advances it
    std::string meta_;
    std::string tailLine_;
    std::thread writer_;
};

#endif // NIXL_TRACE_CHROME_SESSION_H
