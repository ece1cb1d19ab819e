/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file chrome_session.h
 * @brief The process's trace file and its writer: per-thread byte rings filled by the event
 *        path, drained and formatted by one background thread, written to
 *        nixl-trace-<pid>-<start>.json by a second one (the writer's I/O thread).
 *
 * One session per process at a time, shared by every agent that uses the plugin (acquire()).
 * File layout (see docs/tracing.md §7): "[\n", then one event per line, each line a JSON
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
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>
#include <sys/uio.h>

#include "chrome_json.h"
#include "chrome_record.h"
#include "chrome_ring.h"

/** Options of the session, read by the first agent (see chrome_tracer.cpp). */
struct nixlChromeConfig {
    std::string dir; // NIXL_TRACE_DIR
    // Per thread, rounded up to a power of two. 4 MiB: about 44 ms of one thread posting 200k
    // traced transfers/s (~470 record bytes each), the writer is woken at half (22 ms).
    size_t bufferBytes = size_t{4} << 20;
    std::chrono::milliseconds flushInterval{100};
    /** NIXL_TRACE_CHROME_MAX_BYTES: the file's size limit for event lines; 0 = none. */
    uint64_t maxFileBytes = uint64_t{1} << 30;
};

/**
 * The process's trace file. Thread safety: ring() and commit() are called from any thread
 * concurrently and never block (commit() may notify the writer, wakeWriter()) (the registration of a thread's ring, once per thread, takes a
 * mutex); addAgent() and flush() may block briefly (flush() until its lines are written); the
 * destructor (last release) stops the writer, which stops its I/O thread, and must not run
 * concurrently with event calls. The writer's fields are its own; those of the queue to the
 * I/O thread are guarded by ioMu_; writeAll()'s state is the I/O thread's.
 */
class nixlChromeSession {
public:
    /**
     * What a thread holds for the session: its ring. Its destructor hands the ring to the
     * writer when the thread exits; the event path reads a trivially destructible copy of the
     * two fields instead (initial-exec TLS, no guard and no __tls_get_addr call).
     */
    struct threadState {
        uint64_t sessionId = 0;
        nixlChromeRing *ring = nullptr;
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

    /** The calling thread's ring for this session, registering it on first use; nullptr
     *  when that registration cannot allocate (the event is then dropped). */
    nixlChromeRing *
    ring() noexcept;

    /** Queues the record of ev on the thread's ring, or drops and counts it. */
    void
    commit(nixlChromeRing &r, const nixl_trace_event_t &ev, bool span, uint32_t agent,
           const nixlChromeRecord::tables &t) noexcept {
        if (!nixlChromeEnqueue(r, ev, span, agent, t)) {
            r.countDrop();
        }
        if (r.needsWriter()) [[unlikely]] {
            wakeWriter();
        }
    }

    /**
     * A ring is half full: the writer is asked to drain now rather than at the end of its
     * timed wait, which it sized from the rate it saw (a burst after a quiet spell finds it in
     * a long wait). Called at most once per ring per drain, so the event path keeps no lock.
     * The empty critical section orders the flag against the writer's check-then-sleep (it
     * holds mu_ from its predicate until it sleeps): without it a wake landing in between was
     * lost and the writer slept its whole timed wait. mu_ is held only for bookkeeping, never
     * across a drain or a write, so this waits at most for such a short section.
     */
    void
    wakeWriter() noexcept {
        wakeRequested_.store(true, std::memory_order_release);
        { std::lock_guard<std::mutex> lk(mu_); }
        cv_.notify_one();
    }

    void
    countDrop() noexcept {
        dropped_.fetch_add(1, std::memory_order_relaxed);
    }

    /** Adds an agent's name to the process labels and keeps its table for the writer;
     *  returns the index its records carry. */
    uint32_t
    addAgent(std::unique_ptr<nixlChromeAgent> agent);

    /** Returns once everything committed before the call is in the file (or dropped). */
    void
    flush();

    /** Events dropped, as of the writer's last pass (rings' own counts are added there). */
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
    /** What a drain pass saw: the bytes of the fullest ring, and whether a ring dropped. */
    struct drained {
        size_t fullest = 0;
        bool dropped = false;
    };

    void
    run();
    drained
    cycle(bool final);
    const nixlChromeAgent *
    agent(uint32_t index);
    /** Writes out_ and clears it; event lines past the file limit are dropped and counted,
     *  unless `control` (the drop counter and the closing bracket always go out). */
    void
    writeOut(bool control = false);
    bool
    writeAll(std::vector<iovec> &iov);
    /** Writer thread: hands the whole lines of `lines` to the I/O thread (waits while the
     *  queue holds kIoQueueBytes), leaving `lines` an empty (recycled) buffer. */
    void
    queueWrite(nixlChromeLine &lines);
    /** Writer thread: returns once every queued byte went to writeAll. */
    void
    waitWritten();
    /** The I/O thread: writes the queued batches in order. */
    void
    ioRun();

    /** Formatted bytes that may wait for the I/O thread. */
    static constexpr size_t kIoQueueBytes = size_t{16} << 20;

    /**
     * Where events were lost and why, for the close-time log line. Each field has one writing
     * thread (named); the destructor reads them after both threads were joined.
     */
    struct lossStats {
        uint64_t ringFull = 0; // writer: events the producers dropped (their rings were full)
        uint64_t failedWrites = 0; // the writing thread (writeAll): events of failed writes
        uint64_t pastLimit = 0; // writer: event lines past NIXL_TRACE_CHROME_MAX_BYTES
        uint64_t passGapMaxNs = 0; // writer: longest time from one pass's start to the next's
        uint64_t ioWaits = 0; // writer: times it waited because the I/O queue was full
        uint64_t ioWaitMaxNs = 0; // writer: the longest of those waits
        uint64_t wakes = 0; // writer: passes started by a producer's wakeWriter()
        uint64_t writeMaxNs = 0; // I/O thread: the longest write of one batch
    };
    lossStats stats_;

    const uint64_t id_;
    const uint32_t pid_;
    const pid_t creatorPid_; // a forked child must not join a thread it does not have
    const size_t ringBytes_;
    const std::chrono::milliseconds interval_;
    const uint64_t maxFileBytes_; // 0: no limit
    std::string dir_;
    std::string path_;
    int fd_ = -1;
    bool broken_ = false; // a write failed after a partial line: nothing more is written
    bool writeErrorLogged_ = false;
    uint64_t fileBytes_ = 0; // written so far (I/O thread, and the constructor before it)
    uint64_t acceptedBytes_ = 0; // handed to the I/O thread so far (writer thread): the limit's
    bool capped_ = false; // the limit was reached: event lines are dropped from then on
    bool cappedCounterWritten_ = false; // the counter line of the cycle that reached it
    std::atomic<uint64_t> dropped_{0};
    uint64_t droppedWritten_ = 0;
    std::atomic<bool> wakeRequested_{false}; // a producer's ring is half full (wakeWriter)

    // Rings of this session; guarded by the process-wide registry mutex (chrome_session.cpp).
    std::vector<nixlChromeRing *> rings_;

    std::mutex mu_; // guards the fields below
    std::condition_variable cv_;
    std::condition_variable flushedCv_;
    bool stop_ = false;
    uint64_t flushRequested_ = 0;
    uint64_t flushDone_ = 0;
    std::vector<std::unique_ptr<nixlChromeAgent>> agents_; // kept for the session's life
    std::string pendingMeta_; // control lines (process labels) for the next cycle

    // Writer-thread scratch, reused every cycle.
    std::vector<nixlChromeRing *> snapshot_;
    std::vector<const nixlChromeAgent *> agentSnap_; // agents_ as of the last look
    std::vector<char> rec_; // the record being formatted
    nixlChromeLine out_; // formatted lines not yet written
    std::vector<iovec> iov_; // the I/O thread's (the constructor's before it starts)
    std::vector<iovec> orig_; // writeAll's copy of the batch before it advances it
    std::string meta_;
    std::thread writer_;

    // The I/O thread's queue (ioRun), guarded by ioMu_.
    std::mutex ioMu_;
    std::condition_variable ioCv_; // work queued, or stop
    std::condition_variable ioIdleCv_; // a batch written
    std::deque<nixlChromeLine> ioQueue_; // batches, handed over by swap (no copy)
    std::vector<nixlChromeLine> ioFree_; // written batches' buffers, reused
    size_t ioQueued_ = 0; // bytes in ioQueue_ and in the batch being written
    bool ioBusy_ = false;
    bool ioStop_ = false;
    bool ioInline_ = false; // no I/O thread could start
};

#endif // NIXL_TRACE_CHROME_SESSION_H
