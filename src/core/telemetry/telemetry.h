/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file telemetry.h
 * @brief An agent's telemetry pipeline: transfer path -> staging queue -> flush thread ->
 *        exporter (built-in BUFFER or NOP, or a plugin libtelemetry_exporter_<name>.so).
 *
 * The agent calls the record* functions from its API calls; they filter disabled types and
 * append to the bounded staging queue, nothing else (no allocation, no syscall of their own).
 * One flush thread per agent drains the queue every run interval and hands the events, in the
 * order they were recorded, to the exporter between batch_begin and batch_end, followed by one
 * AGENT_TELEMETRY_EVENTS_DROPPED event when events were lost: refused by the full queue since the
 * last flush, or refused by the exporter (non-success from export_events) in the previous flush.
 * Before that, one AGENT_TRACE_PHASES_DROPPED event carries the trace phases dropped since the
 * previous flush (addTracePhaseDrops), when there were any.
 * Destruction wakes the thread, which does a final flush, then destroys the exporter.
 *
 * Thread-safety: record*, wants and the counters from any thread; flushNow from any thread but
 * the flush thread; construction and destruction by the owner while no record* call runs.
 */
#ifndef NIXL_SRC_CORE_TELEMETRY_TELEMETRY_H
#define NIXL_SRC_CORE_TELEMETRY_TELEMETRY_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nixl_telemetry_exporter_plugin.h"
#include "nixl_types.h"
#include "telemetry/staging_queue.h"
#include "telemetry/telemetry_config.h"
#include "telemetry/telemetry_event.h"
#include "telemetry/telemetry_exporter.h"

/**
 * Longest ~nixlTelemetry waits for the flush thread's final flush. An exporter call still
 * running then is abandoned (thread detached, instance never destroyed) with one ERROR line.
 */
inline constexpr std::chrono::milliseconds nixl_telemetry_shutdown_wait{1000};

class nixlTelemetry {
public:
    /**
     * The pipeline of an agent whose telemetry is on, configured from the environment. Null
     * when the exporter answered NIXL_PLUGIN_ERR_NOT_ALLOWED at create (one WARN line; the
     * agent runs without exporting). Throws std::invalid_argument / std::runtime_error on
     * misconfiguration (see nixlTelemetryConfig::fromEnvironment, nixlFindTelemetryExporter)
     * or when create fails otherwise.
     */
    static std::unique_ptr<nixlTelemetry>
    create(const std::string &agent);

    /** As above with the settings and exporter given (tests pass their own operations). */
    static std::unique_ptr<nixlTelemetry>
    create(const std::string &agent,
           const nixlTelemetryConfig &cfg,
           const nixlTelemetryExporterRef &exporter);

    ~nixlTelemetry();

    nixlTelemetry(const nixlTelemetry &) = delete;
    nixlTelemetry &
    operator=(const nixlTelemetry &) = delete;

    /** True when events of this type are recorded (NIXL_TELEMETRY_ENABLED_METRICS). */
    bool
    wants(nixl_telemetry_event_type_t type) const noexcept {
        return enabled_[static_cast<size_t>(type)];
    }

    /** One event, if its type is enabled. Hot path. */
    void
    record(nixl_telemetry_event_type_t type, uint64_t value) noexcept {
        if (wants(type)) {
            queue_.tryPush(nixlTelemetryEvent(type, value));
        }
    }

    /**
     * Counts trace phases a backend recorded that could not be delivered (issue 12). Kept in an
     * atomic outside the staging queue, so that a backend that keeps failing never crowds out
     * real events; the flush emits the delta as agent_trace_phases_dropped_total. Any thread.
     */
    void
    addTracePhaseDrops(uint64_t n) noexcept {
        tracePhasesDropped_.fetch_add(n, std::memory_order_relaxed);
    }

    /**
     * A backend fell back to path for reason (nixl_xfer_path.h), counted once per connection:
     * a request event of value 0 carrying both in its reserved word, so that every request
     * total stays as it was. Off the hot path (prep time).
     */
    void
    recordPathFallback(nixl_xfer_op_t op, uint32_t path, uint32_t reason) noexcept {
        const auto type = op == NIXL_WRITE ? nixl_telemetry_event_type_t::AGENT_TX_REQUESTS_NUM :
                                             nixl_telemetry_event_type_t::AGENT_RX_REQUESTS_NUM;
        if (wants(type) && reason != 0) {
            const nixl_telemetry_event_abi_t ev{
                static_cast<uint32_t>(type),
                (path & NIXL_TELEMETRY_PATH_MASK) |
                    ((reason & 0xffu) << NIXL_TELEMETRY_FALLBACK_SHIFT),
                0u};
            queue_.tryPushWith(1, [&ev](size_t) { return ev; });
        }
    }

    /** The error event of a negative status (nothing for success or NIXL_IN_PROG). */
    void
    recordStatus(nixl_status_t status) noexcept {
        if (auto type = nixlTelemetryEventTypeForStatus(status)) {
            record(*type, 1);
        }
    }

    /**
     * A completed transfer, as one all-or-none batch of its enabled events: post time, transfer
     * time (µs), bytes (TX for NIXL_WRITE, RX for NIXL_READ) and one request. path (a
     * nixl_xfer_path_t, 0 unknown) goes into the reserved word of the bytes and request
     * events, for the per-path series (issue 34). Hot path.
     */
    [[gnu::always_inline]] void
    recordTransfer(nixl_xfer_op_t op,
                   uint64_t bytes,
                   uint64_t post_us,
                   uint64_t xfer_us,
                   uint32_t path = 0) noexcept {
        pushTransfer(op, bytes, path, 0u, noStamp, [post_us, xfer_us](uint64_t) {
            return xferTimes{post_us, xfer_us};
        });
    }

    /**
     * As recordTransfer, the two times given as nixlFastClock tick intervals: they are staged
     * as they are and converted to microseconds by the flush thread, so the transfer path does
     * no arithmetic on them (the agent's hot path). Hot path.
     */
    [[gnu::always_inline]] void
    recordTransferTicks(nixl_xfer_op_t op,
                        uint64_t bytes,
                        uint64_t post_ticks,
                        uint64_t xfer_ticks,
                        uint32_t path = 0) noexcept {
        pushTransfer(op, bytes, path, nixl_telemetry_internal::kSlotTicksToMicros, noStamp,
                     [post_ticks, xfer_ticks](uint64_t) {
                         return xferTimes{post_ticks, xfer_ticks};
                     });
    }

    /**
     * A transfer its post completed, begun at tick start: reads its end with now() (a
     * nixlFastClock::now(), called once), records it as recordTransferTicks with both intervals
     * end - start, and returns end. The clock is read after this thread's lane was found, right
     * before the events are written, not before the lookup: the TSC read barely overlaps with
     * neighbouring work on the VM we measure on, and placed there it cost 3 ns less per request
     * than right after the backend's call (docs/telemetry.md, section 7). path as in
     * recordTransfer. Hot path.
     */
    template<typename Now>
    [[gnu::always_inline]] uint64_t
    recordPostedTransferTicks(nixl_xfer_op_t op,
                              uint64_t bytes,
                              uint32_t path,
                              uint64_t start,
                              Now &&now) noexcept {
        return pushTransfer(op, bytes, path, nixl_telemetry_internal::kSlotTicksToMicros, now,
                            [start](uint64_t end) { return xferTimes{end - start, end - start}; });
    }

    /**
     * Wakes the flush thread and returns once a flush that started after this call finished
     * (or the thread stopped). For tests and orderly hand-over; never on the hot path.
     */
    void
    flushNow();

    const std::string &
    exporterName() const noexcept {
        return exporter_.name;
    }

    const nixlTelemetryStagingQueue &
    queue() const noexcept {
        return queue_;
    }

    /** Flushes completed so far. */
    uint64_t
    flushes() const noexcept {
        return flushes_.load(std::memory_order_relaxed);
    }

    /** Events handed to the exporter and accepted, DROPPED events included. */
    uint64_t
    exportedEvents() const noexcept {
        return exported_.load(std::memory_order_relaxed);
    }

    /** Events refused by the full staging queue, since construction. */
    uint64_t
    stagingDropped() const noexcept {
        return stagingDropped_.load(std::memory_order_relaxed);
    }

    /** Events refused by the exporter, since construction. */
    uint64_t
    exporterRefused() const noexcept {
        return exporterRefused_.load(std::memory_order_relaxed);
    }

private:
    /** The enabled events of a completed transfer of one direction, in recording order. */
    struct xferEvents {
        static constexpr size_t kValues = 4; ///< post us, transfer us, bytes, one request
        uint32_t type[kValues] = {};
        uint8_t value[kValues] = {}; ///< index into the values above
        size_t count = 0;
    };

    /** A transfer's post time and transfer time, µs or ticks. */
    struct xferTimes {
        uint64_t post;
        uint64_t xfer;
    };

    /** The stamp of a transfer whose times are known already. */
    static constexpr auto noStamp = []() noexcept { return uint64_t{0}; };

    /**
     * The transfer's enabled events straight into this thread's lane: calls stamp() once (see
     * nixlTelemetryStagingQueue::tryPushFixed) and times(stamp's value) for the two times,
     * which get time_mark in their reserved word (0, or kSlotTicksToMicros for tick
     * intervals), while the bytes and request events get path; returns stamp's value. Always inlined into the agent's post and status paths:
     * a call here went through the PLT (libnixl exports its inline functions) and saved six
     * registers, for a dozen stores.
     */
    template<typename Stamp, typename Times>
    [[gnu::always_inline]] uint64_t
    pushTransfer(nixl_xfer_op_t op,
                 uint64_t bytes,
                 uint32_t path,
                 uint32_t time_mark,
                 Stamp &&stamp,
                 Times &&times) noexcept {
        // The enabled types were worked out at construction; the events go straight into the
        // lane, without a staging copy of their own.
        const xferEvents &set = op == NIXL_WRITE ? writeEvents_ : readEvents_;
        if (set.count == xferEvents::kValues) [[likely]] {
            // Every type enabled (the default): four fixed writes, no index table.
            return queue_.tryPushFixed<xferEvents::kValues>(
                stamp, [&set, &times, bytes, path, time_mark](auto i, uint64_t v) {
                    if constexpr (i == 0) {
                        return nixl_telemetry_event_abi_t{set.type[0], time_mark, times(v).post};
                    } else if constexpr (i == 1) {
                        return nixl_telemetry_event_abi_t{set.type[1], time_mark, times(v).xfer};
                    } else if constexpr (i == 2) {
                        return nixl_telemetry_event_abi_t{set.type[2], path, bytes};
                    } else {
                        return nixl_telemetry_event_abi_t{set.type[3], path, 1u};
                    }
                });
        }
        const uint64_t v = stamp();
        if (set.count != 0) {
            const xferTimes t = times(v);
            pushTransferSubset(set, bytes, path, t.post, t.xfer, time_mark);
        }
        return v;
    }

    /** pushTransfer when only some of the four types are enabled. */
    void
    pushTransferSubset(const xferEvents &set,
                       uint64_t bytes,
                       uint32_t path,
                       uint64_t post_time,
                       uint64_t xfer_time,
                       uint32_t time_mark) noexcept;

    nixlTelemetry(const std::string &agent,
                  const nixlTelemetryConfig &cfg,
                  const nixlTelemetryExporterRef &exporter);

    /**
     * What the flush thread and the destructor share, outliving both: the destructor abandons
     * a thread stuck in an exporter call (see ~nixlTelemetry), and that thread, once the call
     * returns, must touch nothing of this object.
     */
    struct flushGuard {
        std::mutex mutex;
        std::condition_variable changed;
        bool inCall = false; ///< the flush thread is inside an exporter operation
        bool abandoned = false; ///< the destructor gave up on it
        bool exited = false; ///< run() returned normally
        std::vector<nixl_telemetry_event_abi_t> keep; ///< the events a stuck call reads
    };

    /** Thrown on the flush thread when its exporter call returns after abandonment. */
    struct abandonedExit {};

    void
    run(const std::shared_ptr<flushGuard> &guard) noexcept;

    void
    flushOnce();

    nixl_plugin_status_t
    exportEvents(const nixl_telemetry_event_abi_t *events, size_t n);

    /** Runs one exporter operation on the flush thread; throws abandonedExit (see above). */
    template<typename Call>
    void
    guardedCall(const char *what, Call &&call);

    /** destroy(instance_) with exceptions caught and logged; false when abandoned. */
    void
    destroyInstance() noexcept;

    std::shared_ptr<flushGuard> guard_ = std::make_shared<flushGuard>();

    const std::string agent_;
    const nixlTelemetryExporterRef exporter_;
    const nixl_telemetry_metric_mask_t enabled_;

    static xferEvents
    enabledXferEvents(const nixl_telemetry_metric_mask_t &enabled, bool write) noexcept;

    const xferEvents writeEvents_;
    const xferEvents readEvents_;
    const std::chrono::milliseconds interval_;
    nixlTelemetryStagingQueue queue_;

    nixl_telemetry_exporter_t *instance_ = nullptr; ///< null when the exporter declined

    // Flush-thread only.
    uint64_t carriedLost_ = 0; ///< lost events not yet reported in a DROPPED event

    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    bool stop_ = false; // mutex_
    bool exited_ = false; // mutex_
    uint64_t requested_ = 0; // mutex_: flushNow calls
    uint64_t served_ = 0; // mutex_: requests covered by a finished flush

    std::atomic<uint64_t> flushes_{0};
    std::atomic<uint64_t> exported_{0};
    std::atomic<uint64_t> stagingDropped_{0};
    std::atomic<uint64_t> exporterRefused_{0};
    /** Trace phases dropped (addTracePhaseDrops) and not yet emitted by a flush. */
    std::atomic<uint64_t> tracePhasesDropped_{0};

    std::thread thread_; // last: started once everything above exists
};

#endif // NIXL_SRC_CORE_TELEMETRY_TELEMETRY_H
