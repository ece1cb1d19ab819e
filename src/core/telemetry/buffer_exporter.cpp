/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The BUFFER exporter: each agent's events go, in order, into the shared-memory ring
// $NIXL_TELEMETRY_DIR/<agent name> (utils/common/shared_ring.h, docs/telemetry-ring.md), where
// readers (examples/cpp/telemetry_reader, examples/python/telemetry_reader.py) poll them.
//
// Rules:
//  - capacity = max_events_buffered (NIXL_TELEMETRY_BUFFER_SIZE); a power of two >= 2, else create
//    fails with NIXL_PLUGIN_ERR_INVALID_PARAM. The ring holds capacity - 1 events at once.
//  - One producer per file: create takes flock(LOCK_EX) on the file and answers
//    NIXL_PLUGIN_ERR_NOT_ALLOWED (agent runs without exporting) while another live agent of the
//    same name holds it.
//  - The agent name must be one plain file name: not empty, not "." or "..", no '/' and no NUL
//    byte, at most NAME_MAX bytes. Any other name is rejected (INVALID_PARAM), never encoded or
//    truncated, so the file a reader opens is always exactly $NIXL_TELEMETRY_DIR/<agent name>.
//  - Events a full ring refuses are added to the header's lost_events counter and, once space
//    returns (checked at every batch_begin and export_events), reported in the ring as one event
//    of the table's NIXL_TELEMETRY_CAT_DROPPED type carrying how many were lost since the last
//    report. A refused DROPPED report from core is merged into that report by its value.
//    export_events still returns success in that case: the loss is already accounted here, and
//    an error would make core count it again.
//  - The ring file is written with pread/pwrite only (common/shared_ring_io.h), never mapped: no
//    truncation, rewrite or removal of the file by another process can raise SIGBUS in the
//    application. Every flush (batch_begin) checks the file; a damaged one is restored in place
//    (size and header, positions 0) with one warning per episode, and the events it held unread
//    are counted as lost and reported like any other loss.
#include "buffer_exporter.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/nixl_log.h"
#include "common/shared_ring_io.h"
#include "config/config.h"

namespace {

using eventRing = nixlSharedRingIo<nixl_telemetry_event_abi_t>;

static_assert(sizeof(nixl_telemetry_event_abi_t) == 16);
static_assert(offsetof(nixl_telemetry_event_abi_t, value) == 8);

constexpr char kDirVar[] = "NIXL_TELEMETRY_DIR";
constexpr char kSizeVar[] = "NIXL_TELEMETRY_BUFFER_SIZE";

// One log line through the core services when core gave them, else libnixl's own log.
void
logLine(const nixl_plugin_core_services_t *core,
        nixl_plugin_log_level_t level,
        const std::string &msg) noexcept {
    if (core != nullptr &&
        core->size >= offsetof(nixl_plugin_core_services_t, log) + sizeof(core->log) &&
        core->log != nullptr) {
        core->log(core->ctx, level, msg.data(), msg.size());
        return;
    }
    NIXL_LOG(static_cast<nixl::log::level>(level)) << msg;
}

// Why a name cannot be a file in the directory, or nullptr when it can.
const char *
badNameReason(std::string_view name) noexcept {
    if (name.empty()) {
        return "is empty";
    }
    if (name == "." || name == "..") {
        return "is a directory reference";
    }
    if (name.find('/') != std::string_view::npos) {
        return "contains '/'";
    }
    if (name.find('\0') != std::string_view::npos) {
        return "contains a NUL byte";
    }
    if (name.size() > NAME_MAX) {
        return "is longer than NAME_MAX bytes";
    }
    return nullptr;
}

/**
 * One agent's BUFFER exporter. Thread-safety: create/destroy from the agent's constructing
 * thread, export_events from its flush thread only (the exporter ABI contract); the ring's
 * consumer side belongs to the reader process.
 */
class nixlBufferExporter {
public:
    nixlBufferExporter(std::string agent,
                       const nixl_plugin_core_services_t *core,
                       int lock_fd,
                       std::unique_ptr<eventRing> ring,
                       bool has_dropped,
                       uint32_t dropped_type)
        : agent_(std::move(agent)),
          core_(core),
          lockFd_(lock_fd),
          ring_(std::move(ring)),
          hasDropped_(has_dropped),
          droppedType_(dropped_type) {}

    ~nixlBufferExporter() {
        ring_.reset();
        ::close(lockFd_); // releases the producer lock
    }

    nixlBufferExporter(const nixlBufferExporter &) = delete;
    nixlBufferExporter &
    operator=(const nixlBufferExporter &) = delete;

    /**
     * Start of a flush: checks that the file still is our ring (restoring it if someone
     * truncated or rewrote it), then writes the pending "events dropped" report if the ring has
     * room again.
     */
    void
    beginBatch() noexcept {
        checkFile();
        reportDropped();
    }

    nixl_plugin_status_t
    exportEvents(const nixl_telemetry_event_abi_t *events, size_t count) noexcept {
        // Report earlier losses first: they happened before these events.
        reportDropped();
        if (count == 0) {
            return NIXL_PLUGIN_SUCCESS;
        }
        std::string error;
        size_t pushed = 0;
        try {
            pushed = ring_->pushBatch(events, count, error);
        }
        catch (...) {
            // Only the error text of a failed write can throw (bad_alloc): count them lost.
        }
        if (pushed < count) {
            // A refused "events dropped" report from core is merged into ours (its value, not
            // one event), so the sum readers see stays exact; every other refused event is one
            // lost event, counted in the header.
            uint64_t lost = 0;
            for (size_t i = pushed; i < count; ++i) {
                if (hasDropped_ && events[i].type == droppedType_) {
                    pendingDropped_ += events[i].value;
                } else {
                    ++lost;
                }
            }
            countLost(lost);
            if (!lossLogged_) {
                // Once per episode of fullness (or of I/O errors): the counter carries the rest.
                lossLogged_ = true;
                warn(error.empty() ?
                         "ring file " + ring_->path() + " is full (" +
                             std::to_string(ring_->usableCapacity()) + " events, " + kSizeVar +
                             "); losing events until a reader drains it; lost_events in the "
                             "header counts them" :
                         error + "; losing events until writing succeeds again");
            }
        }
        return NIXL_PLUGIN_SUCCESS;
    }

private:
    void
    warn(const std::string &msg) noexcept {
        try {
            logLine(core_, NIXL_PLUGIN_LOG_WARN, "telemetry BUFFER, agent " + agent_ + ": " + msg);
        }
        catch (...) {
        }
    }

    void
    countLost(uint64_t lost) noexcept {
        pendingDropped_ += lost;
        try {
            std::string ignored; // an I/O error here is the one already being reported
            ring_->addLost(lost, ignored);
        }
        catch (...) {
        }
    }

    void
    reportDropped() noexcept {
        if (pendingDropped_ > 0 && hasDropped_) {
            const nixl_telemetry_event_abi_t dropped{droppedType_, 0, pendingDropped_};
            try {
                std::string error;
                if (ring_->pushBatch(&dropped, 1, error) == 1) {
                    pendingDropped_ = 0;
                    lossLogged_ = false;
                }
            }
            catch (...) {
                // Retried at the next flush.
            }
        }
    }

    // Someone else may have truncated, resized or rewritten the file (a reader cannot, by the
    // protocol): restore it so readers can attach again, and count what it held as lost.
    void
    checkFile() noexcept {
        if (ring_->removed()) {
            return; // reported once; nothing in the directory to repair
        }
        try {
            std::string what;
            if (ring_->verify(what)) {
                damageLogged_ = false;
                return;
            }
            if (ring_->removed()) {
                warn("ring file " + ring_->path() + ": " + what);
                return;
            }
            const uint64_t unread = ring_->unread();
            std::string error;
            if (!ring_->reset(error)) {
                if (!damageLogged_) {
                    damageLogged_ = true;
                    warn("ring file " + ring_->path() + " was changed by another process (" +
                         what + ") and cannot be restored: " + error);
                }
                return;
            }
            countLost(unread);
            if (!damageLogged_) {
                // Once per episode: a process that keeps truncating the file gets one line.
                damageLogged_ = true;
                warn("ring file " + ring_->path() + " was changed by another process (" + what +
                     "); restored it with an empty ring, up to " + std::to_string(unread) +
                     " unread events in it are counted as lost; readers must re-attach");
            }
        }
        catch (...) {
        }
    }

    std::string agent_;
    const nixl_plugin_core_services_t *core_;
    int lockFd_; // holds flock(LOCK_EX) on the ring file: one producer per file
    std::unique_ptr<eventRing> ring_;
    bool hasDropped_;
    uint32_t droppedType_;
    uint64_t pendingDropped_ = 0; // lost and not yet reported in the ring
    bool lossLogged_ = false;
    bool damageLogged_ = false;
};

nixl_plugin_status_t
createBuffer(const nixl_telemetry_exporter_init_params_t *params,
             nixl_telemetry_exporter_t **out) noexcept {
    if (out == nullptr || params == nullptr ||
        params->size < offsetof(nixl_telemetry_exporter_init_params_t, reserved)) {
        NIXL_ERROR << "telemetry BUFFER: create called with missing or short parameters";
        return NIXL_PLUGIN_ERR_INVALID_PARAM;
    }
    *out = nullptr;
    const nixl_plugin_core_services_t *core = params->core;
    try {
        const std::string agent = params->agent_name.data == nullptr ?
            std::string() :
            std::string(params->agent_name.data, params->agent_name.len);
        const std::string who = "telemetry BUFFER, agent '" + agent + "': ";

        // Environment, else configuration file; a bad file was reported by the agent already.
        std::optional<std::string> dir_value;
        try {
            dir_value = nixlConfig::getString(kDirVar);
        }
        catch (const std::invalid_argument &) {
            return NIXL_PLUGIN_ERR_INVALID_PARAM; // logged where it was found
        }
        const char *dir = dir_value ? dir_value->c_str() : nullptr;
        if (dir == nullptr || *dir == '\0') {
            logLine(core, NIXL_PLUGIN_LOG_ERROR,
                    who + kDirVar + " is not set; it names the directory of the ring file");
            return NIXL_PLUGIN_ERR_INVALID_PARAM;
        }
        if (const char *why = badNameReason(agent); why != nullptr) {
            logLine(core, NIXL_PLUGIN_LOG_ERROR,
                    who + "the agent name " + why + ", so it cannot name a ring file in " +
                        kDirVar + "=" + dir);
            return NIXL_PLUGIN_ERR_INVALID_PARAM;
        }
        const uint64_t capacity = params->max_events_buffered;
        if (capacity < 2 || (capacity & (capacity - 1)) != 0) {
            logLine(core, NIXL_PLUGIN_LOG_ERROR,
                    who + kSizeVar + "=" + std::to_string(capacity) +
                        " must be a power of two >= 2 for the ring exporter");
            return NIXL_PLUGIN_ERR_INVALID_PARAM;
        }

        // The "events dropped" row is the last of the table, found by category, never by number.
        bool has_dropped = false;
        uint32_t dropped_type = 0;
        if (params->event_types != nullptr) {
            for (uint32_t i = params->event_type_count; i > 0; --i) {
                if (params->event_types[i - 1].category == NIXL_TELEMETRY_CAT_DROPPED) {
                    has_dropped = true;
                    dropped_type = params->event_types[i - 1].type;
                    break;
                }
            }
        }
        if (!has_dropped) {
            logLine(core, NIXL_PLUGIN_LOG_WARN,
                    who + "the event table has no NIXL_TELEMETRY_CAT_DROPPED row; events lost "
                          "to a full ring are counted only in the ring header");
        }

        std::string path(dir);
        if (path.back() != '/') {
            path += '/';
        }
        path += agent;
        // One producer per file: a second live agent of the same name (in any process) must not
        // reset and interleave with the first one's ring. Taken before create() resets the
        // header; advisory, readers do not lock.
        const int lock_fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (lock_fd < 0) {
            logLine(core, NIXL_PLUGIN_LOG_ERROR,
                    who + "ring file " + path + ": cannot create: " + std::strerror(errno));
            return NIXL_PLUGIN_ERR_BACKEND;
        }
        if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
            const int err = errno;
            ::close(lock_fd);
            if (err == EWOULDBLOCK) {
                logLine(core, NIXL_PLUGIN_LOG_ERROR,
                        who + "ring file " + path +
                            " is in use by another live agent of the same name; this agent "
                            "runs without the BUFFER exporter");
                return NIXL_PLUGIN_ERR_NOT_ALLOWED;
            }
            logLine(core, NIXL_PLUGIN_LOG_ERROR,
                    who + "ring file " + path + ": cannot lock: " + std::strerror(err));
            return NIXL_PLUGIN_ERR_BACKEND;
        }
        std::string error;
        auto ring = eventRing::create(path, capacity, error);
        if (!ring) {
            ::close(lock_fd);
            logLine(core, NIXL_PLUGIN_LOG_ERROR, who + error);
            return NIXL_PLUGIN_ERR_BACKEND;
        }
        auto *exporter = new (std::nothrow) nixlBufferExporter(
            agent, core, lock_fd, std::move(ring), has_dropped, dropped_type);
        if (exporter == nullptr) {
            ::close(lock_fd);
            logLine(core, NIXL_PLUGIN_LOG_ERROR, who + "out of memory");
            return NIXL_PLUGIN_ERR_UNKNOWN;
        }
        *out = reinterpret_cast<nixl_telemetry_exporter_t *>(exporter);
        return NIXL_PLUGIN_SUCCESS;
    }
    catch (const std::exception &e) {
        logLine(core, NIXL_PLUGIN_LOG_ERROR,
                std::string("telemetry BUFFER: create failed: ") + e.what());
    }
    catch (...) {
        logLine(core, NIXL_PLUGIN_LOG_ERROR, "telemetry BUFFER: create failed");
    }
    return NIXL_PLUGIN_ERR_UNKNOWN;
}

// Every flush starts here, with or without events: an idle agent still gets its pending
// "events dropped" report out once a reader has made room.
void
batchBeginBuffer(nixl_telemetry_exporter_t *exporter) noexcept {
    if (exporter != nullptr) {
        reinterpret_cast<nixlBufferExporter *>(exporter)->beginBatch();
    }
}

void
destroyBuffer(nixl_telemetry_exporter_t *exporter) noexcept {
    // The file stays: readers may still be draining it (NIXL behaves the same).
    delete reinterpret_cast<nixlBufferExporter *>(exporter);
}

nixl_plugin_status_t
exportBuffer(nixl_telemetry_exporter_t *exporter,
             const nixl_telemetry_event_abi_t *events,
             size_t count) noexcept {
    if (exporter == nullptr || (events == nullptr && count > 0)) {
        return NIXL_PLUGIN_ERR_INVALID_PARAM;
    }
    return reinterpret_cast<nixlBufferExporter *>(exporter)->exportEvents(events, count);
}

constexpr nixl_telemetry_exporter_ops_t kOps = {
    sizeof(nixl_telemetry_exporter_ops_t), &createBuffer, &destroyBuffer, &batchBeginBuffer,
    &exportBuffer, nullptr};

} // namespace

const nixl_telemetry_exporter_ops_t *
nixlBufferExporterOps() noexcept {
    return &kOps;
}
