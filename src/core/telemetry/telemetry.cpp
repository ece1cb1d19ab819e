/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "telemetry/telemetry.h"

#include <pthread.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

#include "common/fast_clock.h"
#include "common/nixl_log.h"
#include "plugin/core_services.h"

using nixlEnumStrings::statusStr;

namespace {

std::string
statusText(nixl_plugin_status_t st) {
    return statusStr(static_cast<nixl_status_t>(st));
}

/**
 * The current exception's what(), cut to 256 bytes with its length: it comes from a plugin and
 * may be of any size (the log sink escapes control bytes).
 */
std::string
thrownText() {
    constexpr size_t kMax = 256;
    std::string what;
    try {
        throw;
    }
    catch (const std::exception &e) {
        what = e.what();
    }
    catch (...) {
        return "an exception that is not a std::exception";
    }
    if (what.size() > kMax) {
        const size_t full = what.size();
        what.resize(kMax);
        what += "... (" + std::to_string(full) + " bytes)";
    }
    return what;
}

} // namespace

std::unique_ptr<nixlTelemetry>
nixlTelemetry::create(const std::string &agent) {
    const nixlTelemetryConfig cfg = nixlTelemetryConfig::fromEnvironment(agent);
    return create(agent, cfg, nixlFindTelemetryExporter(agent, cfg));
}

std::unique_ptr<nixlTelemetry>
nixlTelemetry::create(const std::string &agent,
                      const nixlTelemetryConfig &cfg,
                      const nixlTelemetryExporterRef &exporter) {
    std::unique_ptr<nixlTelemetry> t(new nixlTelemetry(agent, cfg, exporter));
    if (t->instance_ == nullptr) {
        return nullptr; // declined with NIXL_PLUGIN_ERR_NOT_ALLOWED; already logged
    }
    return t;
}

nixlTelemetry::nixlTelemetry(const std::string &agent,
                             const nixlTelemetryConfig &cfg,
                             const nixlTelemetryExporterRef &exporter)
    : agent_(agent),
      exporter_(exporter),
      enabled_(cfg.enabled),
      writeEvents_(enabledXferEvents(cfg.enabled, true)),
      readEvents_(enabledXferEvents(cfg.enabled, false)),
      interval_(cfg.runInterval),
      queue_(cfg.bufferSize) {
    nixl_telemetry_exporter_init_params_t params{};
    params.size = sizeof(params);
    // Lines read "telemetry exporter <name>: ..." and name the exporter's origin.
    params.core = nixlPluginCoreServices(
        nixlPluginServicesSpec{"telemetry exporter", exporter_.name, exporter_.origin});
    params.agent_name = nixl_plugin_str_t{agent_.data(), agent_.size()};
    params.max_events_buffered = cfg.bufferSize;
    params.event_types = nixlTelemetryEventTable();
    params.event_type_count = static_cast<uint32_t>(nixl_telemetry_event_type_count);

    nixl_telemetry_exporter_t *instance = nullptr;
    nixl_plugin_status_t st = NIXL_PLUGIN_ERR_UNKNOWN;
    std::string thrown;
    try {
        st = exporter_.ops->create(&params, &instance);
    }
    catch (...) {
        // A C ABI function must not throw: a failure, named after what it threw.
        thrown = thrownText();
        st = NIXL_PLUGIN_ERR_UNKNOWN;
        instance = nullptr;
    }
    if (!thrown.empty()) {
        const std::string msg = "agent " + agent_ + ": " + cfg.exporterOrigin +
            ": telemetry exporter " + exporter_.name + " (" + exporter_.origin +
            ") failed to start: create threw across the plugin ABI: ";
        // Escaped once each: by the log sink in the line, here in the exception's text.
        NIXL_ERROR << msg << thrown;
        throw std::runtime_error(msg + nixl::log::escaped(thrown));
    }
    if (st == NIXL_PLUGIN_ERR_NOT_ALLOWED) {
        if (instance != nullptr) {
            instance_ = instance;
            destroyInstance();
        }
        NIXL_WARN << "agent " << agent_ << ": telemetry exporter " << exporter_.name << " ("
                  << cfg.exporterOrigin << ") declined to run here; telemetry events of this "
                  << "agent are not exported";
        return;
    }
    if (st != NIXL_PLUGIN_SUCCESS || instance == nullptr) {
        if (st == NIXL_PLUGIN_SUCCESS && instance == nullptr) {
            st = NIXL_PLUGIN_ERR_UNKNOWN;
        }
        // The exporter logged the cause (its contract); the exception carries our side.
        throw std::runtime_error("agent " + agent_ + ": " + cfg.exporterOrigin +
                                 ": telemetry exporter " + exporter_.name + " (" +
                                 exporter_.origin + ") failed to start: " + statusText(st));
    }
    instance_ = instance;
    try {
        thread_ = std::thread([this, g = guard_] { run(g); });
    }
    catch (...) {
        destroyInstance();
        throw;
    }
    NIXL_DEBUG << "agent " << agent_ << ": telemetry to exporter " << exporter_.name << " ("
               << exporter_.origin << "), " << cfg.bufferSize << " staged events, every "
               << interval_.count() << " ms";
}

nixlTelemetry::~nixlTelemetry() {
    if (thread_.joinable()) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_one();
        // Bounded: an exporter call of the final flush that never returns must not hang the
        // agent's destructor.
        std::unique_lock<std::mutex> g(guard_->mutex);
        const bool done = guard_->changed.wait_for(g, nixl_telemetry_shutdown_wait, [this] {
            return guard_->exited;
        });
        if (!done) {
            // Our own code between two calls ends quickly: wait for the next call or the end.
            guard_->changed.wait(g, [this] { return guard_->exited || guard_->inCall; });
        }
        if (!guard_->exited) {
            // Stuck in the exporter: leave the thread there. It touches nothing of ours once
            // the call returns; the events it reads stay alive in the guard; the instance is
            // not destroyed under it, and the plugin is never unloaded (the loader keeps it).
            guard_->abandoned = true;
            guard_->keep = queue_.releaseDrained();
            g.unlock();
            thread_.detach();
            NIXL_ERROR << "agent " << agent_ << ": telemetry exporter " << exporter_.name
                       << " did not return from an operation within "
                       << nixl_telemetry_shutdown_wait.count()
                       << " ms at shutdown; its thread and instance are abandoned, events "
                       << "not yet exported are lost";
            instance_ = nullptr;
            return;
        }
        g.unlock();
        thread_.join();
    }
    if (instance_ != nullptr) {
        // On this thread, as the exporter contract says (docs/telemetry.md section 4).
        destroyInstance();
        if (carriedLost_ != 0) {
            NIXL_WARN << "agent " << agent_ << ": " << carriedLost_
                      << " telemetry events were lost at shutdown and could not be reported "
                      << "to exporter " << exporter_.name;
        }
        // A delta the final flush could not hand over (refused, or added after it ran).
        if (const uint64_t phases = tracePhasesDropped_.load(std::memory_order_relaxed);
            phases != 0 && wants(nixl_telemetry_event_type_t::AGENT_TRACE_PHASES_DROPPED)) {
            NIXL_WARN << "agent " << agent_ << ": " << phases
                      << " dropped trace phases were counted at shutdown and could not be "
                      << "reported to exporter " << exporter_.name;
        }
        const uint64_t lost = stagingDropped() + exporterRefused();
        if (lost != 0) {
            NIXL_INFO << "agent " << agent_ << ": telemetry lost " << lost << " events in total ("
                      << stagingDropped() << " to the full staging queue, " << exporterRefused()
                      << " refused by exporter " << exporter_.name << ")";
        }
    }
}

nixlTelemetry::xferEvents
nixlTelemetry::enabledXferEvents(const nixl_telemetry_metric_mask_t &enabled, bool write) noexcept {
    using type_t = nixl_telemetry_event_type_t;
    const type_t order[xferEvents::kValues] = {
        type_t::AGENT_XFER_POST_TIME,
        type_t::AGENT_XFER_TIME,
        write ? type_t::AGENT_TX_BYTES : type_t::AGENT_RX_BYTES,
        write ? type_t::AGENT_TX_REQUESTS_NUM : type_t::AGENT_RX_REQUESTS_NUM,
    };
    xferEvents set;
    for (size_t v = 0; v < xferEvents::kValues; ++v) {
        if (enabled[static_cast<size_t>(order[v])]) {
            set.type[set.count] = static_cast<uint32_t>(order[v]);
            set.value[set.count] = static_cast<uint8_t>(v);
            ++set.count;
        }
    }
    return set;
}

void
nixlTelemetry::pushTransferSubset(const xferEvents &set,
                                  uint64_t bytes,
                                  uint32_t path,
                                  uint64_t post_time,
                                  uint64_t xfer_time,
                                  uint32_t time_mark) noexcept {
    const uint64_t values[xferEvents::kValues] = {post_time, xfer_time, bytes, 1};
    queue_.tryPushWith(set.count, [&set, &values, path, time_mark](size_t i) {
        const uint8_t v = set.value[i];
        return nixl_telemetry_event_abi_t{set.type[i], v < 2 ? time_mark : path, values[v]};
    });
}

void
nixlTelemetry::flushNow() {
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t ticket = ++requested_;
    wake_.notify_one();
    done_.wait(lock, [&] { return served_ >= ticket || exited_; });
}

void
nixlTelemetry::run(const std::shared_ptr<flushGuard> &guard) noexcept {
    // Named so that it can be told apart in top -H, gdb and perf.
    pthread_setname_np(pthread_self(), "nixl_telemetry");
    std::unique_lock<std::mutex> lock(mutex_);
    try {
        while (true) {
            wake_.wait_for(lock, interval_, [this] { return stop_ || requested_ != served_; });
            const bool stopping = stop_;
            const uint64_t covered = requested_;
            lock.unlock();
            flushOnce();
            // Off the transfer path, and logarithmic in uptime: improves converted durations.
            nixlFastClock::refine();
            lock.lock();
            served_ = covered;
            if (stopping) {
                exited_ = true;
            }
            done_.notify_all();
            if (stopping) {
                lock.unlock();
                std::lock_guard<std::mutex> g(guard->mutex);
                guard->exited = true;
                guard->changed.notify_all();
                return;
            }
        }
    }
    catch (const abandonedExit &) {
        // Abandoned by the destructor: nothing of this object may be touched any more, and
        // mutex_ is not held (exporter calls run unlocked). Only the guard, ours, remains.
        (void)lock.release();
    }
}

template<typename Call>
void
nixlTelemetry::guardedCall(const char *what, Call &&call) {
    // Our own reference: guard_ dies with this object once the destructor abandoned us.
    const std::shared_ptr<flushGuard> g = guard_;
    {
        std::lock_guard<std::mutex> l(g->mutex);
        g->inCall = true;
        g->changed.notify_all();
    }
    std::string thrown;
    try {
        call();
    }
    catch (...) {
        thrown = thrownText();
    }
    std::lock_guard<std::mutex> l(g->mutex);
    g->inCall = false;
    if (g->abandoned) {
        throw abandonedExit{};
    }
    if (!thrown.empty()) {
        NIXL_ERROR << "agent " << agent_ << ": telemetry exporter " << exporter_.name << " ("
                   << exporter_.origin << "): " << what << " threw across the plugin ABI: "
                   << thrown;
    }
}

void
nixlTelemetry::destroyInstance() noexcept {
    try {
        exporter_.ops->destroy(instance_);
    }
    catch (...) {
        try {
            NIXL_ERROR << "agent " << agent_ << ": telemetry exporter " << exporter_.name
                       << " (" << exporter_.origin << "): destroy threw across the plugin ABI: "
                       << thrownText();
        }
        catch (...) {
        }
    }
    instance_ = nullptr;
}

nixl_plugin_status_t
nixlTelemetry::exportEvents(const nixl_telemetry_event_abi_t *events, size_t n) {
    nixl_plugin_status_t st = NIXL_PLUGIN_ERR_UNKNOWN;
    guardedCall("export_events",
                [&] { st = exporter_.ops->export_events(instance_, events, n); });
    if (st == NIXL_PLUGIN_SUCCESS) {
        exported_.fetch_add(n, std::memory_order_relaxed);
    }
    return st;
}

void
nixlTelemetry::flushOnce() {
    if (exporter_.ops->batch_begin != nullptr) {
        guardedCall("batch_begin", [this] { exporter_.ops->batch_begin(instance_); });
    }
    // The queue hands out bounded chunks; take them until it is empty. At most what the lanes
    // can hold per flush, so producers that refill as fast as we drain cannot keep this thread.
    uint64_t refused = 0;
    size_t budget = queue_.pendingBound();
    while (budget != 0) {
        const auto events = queue_.drainPending();
        if (events.empty()) {
            break;
        }
        if (exportEvents(events.data(), events.size()) != NIXL_PLUGIN_SUCCESS) {
            refused += events.size();
        }
        budget -= std::min(budget, events.size());
    }
    // Trace-phase drops live in an atomic, not the staging queue: one delta per flush.
    // exchange(0) hands each drop to exactly one flush; a delta the exporter refuses is put
    // back, so it is reported again next time rather than lost.
    if (const uint64_t phases = tracePhasesDropped_.exchange(0, std::memory_order_relaxed);
        phases != 0 && wants(nixl_telemetry_event_type_t::AGENT_TRACE_PHASES_DROPPED)) {
        const nixl_telemetry_event_abi_t ev =
            nixlTelemetryEvent(nixl_telemetry_event_type_t::AGENT_TRACE_PHASES_DROPPED, phases)
                .toAbi();
        if (exportEvents(&ev, 1) != NIXL_PLUGIN_SUCCESS) {
            tracePhasesDropped_.fetch_add(phases, std::memory_order_relaxed);
        }
    }
    // Taken after the drain: a drop that raced with it is reported now rather than next time.
    const uint64_t dropped = queue_.takeNumDropped();
    stagingDropped_.fetch_add(dropped, std::memory_order_relaxed);
    uint64_t lost = carriedLost_ + dropped;
    carriedLost_ = 0;
    if (lost != 0) {
        if (wants(nixl_telemetry_event_type_t::AGENT_TELEMETRY_EVENTS_DROPPED)) {
            const nixl_telemetry_event_abi_t ev =
                nixlTelemetryEvent(nixl_telemetry_event_type_t::AGENT_TELEMETRY_EVENTS_DROPPED,
                                   lost)
                    .toAbi();
            if (exportEvents(&ev, 1) != NIXL_PLUGIN_SUCCESS) {
                carriedLost_ += lost; // report it again next time; the report itself is no loss
            }
        }
        // Disabled DROPPED type: the operator chose not to see it; the totals still count it.
    }
    if (exporter_.ops->batch_end != nullptr) {
        guardedCall("batch_end", [this] { exporter_.ops->batch_end(instance_); });
    }
    if (refused != 0) {
        exporterRefused_.fetch_add(refused, std::memory_order_relaxed);
        carriedLost_ += refused;
    }
    flushes_.fetch_add(1, std::memory_order_relaxed);
}

