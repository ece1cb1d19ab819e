/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file trace_names.h
 * @brief The vocabulary core's trace events use: span and mark names (NameId) with their kinds,
 *        and interned attribute keys (KeyId), as the tables every trace backend plugin receives
 *        at create (nixl_trace_backend_init_params_t names and keys). Not installed.
 *
 * Thread safety: constant tables in static storage; every function may be called from any
 * thread.
 */
#ifndef NIXL_SRC_CORE_TRACING_TRACE_NAMES_H
#define NIXL_SRC_CORE_TRACING_TRACE_NAMES_H

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>

#include "nixl_trace_backend_plugin.h"

namespace nixl::trace {

/** What a span or mark represents; values are those of nixl_trace_kind_t. */
enum class Kind : std::uint8_t {
    Generic = NIXL_TRACE_KIND_GENERIC,
    Compute = NIXL_TRACE_KIND_COMPUTE,
    MemoryR = NIXL_TRACE_KIND_MEMORY_R,
    MemoryW = NIXL_TRACE_KIND_MEMORY_W,
    CommSend = NIXL_TRACE_KIND_COMM_SEND,
    CommRecv = NIXL_TRACE_KIND_COMM_RECV,
    CommColl = NIXL_TRACE_KIND_COMM_COLL,
    Metadata = NIXL_TRACE_KIND_METADATA,
};

/**
 * The span and mark names core uses. The value is the name's id in the table every plugin
 * receives at create (nameTable()), so plugins can register names up front.
 */
enum class NameId : std::uint32_t {
    REGISTER_MEM = 0, ///< nixl::registerMem (MemoryW)
    DEREGISTER_MEM, ///< nixl::deregisterMem (Generic)
    MAKE_CONNECTION, ///< nixl::makeConnection (Generic)
    MAKE_XFER_REQ, ///< nixl::makeXferReq (Generic)
    CREATE_XFER_REQ, ///< nixl::createXferReq (Generic)
    POST_XFER_WRITE, ///< nixl::postXferReq.write (CommSend)
    POST_XFER_READ, ///< nixl::postXferReq.read (CommRecv)
    XFER_COMPLETE, ///< nixl::xfer.complete (Metadata), a mark
    GET_NOTIFS, ///< nixl::getNotifs (Metadata)
    GEN_NOTIF, ///< nixl::genNotif (Metadata)
    LOAD_REMOTE_MD, ///< nixl::loadRemoteMD (Metadata)
    FETCH_REMOTE_MD, ///< nixl::fetchRemoteMD (Metadata)
    PREP_MEM_VIEW, ///< nixl::prepMemView (MemoryR)
    RELEASE_MEM_VIEW, ///< nixl::releaseMemView (Generic)
    // Backend trace phases (nixl_be_trace_phase_t, in its order), marks the trace sink emits;
    // NIXL_BE_PHASE_OTHER has no entry: its label names it (NIXL_TRACE_NAME_DYNAMIC).
    BACKEND_SUBMIT, ///< nixl::backend.submit (CommSend), a mark
    BACKEND_WIRE_SUBMITTED, ///< nixl::backend.wire_submitted (CommSend), a mark
    BACKEND_WIRE_COMPLETED, ///< nixl::backend.wire_completed (CommSend), a mark
    BACKEND_NOTIF_SENT, ///< nixl::backend.notif_sent (Metadata), a mark
    BACKEND_NOTIF_RECEIVED, ///< nixl::backend.notif_received (Metadata), a mark
    BACKEND_REMOTE_OBSERVED, ///< nixl::backend.remote_observed (CommRecv), a mark
    COUNT
};

/**
 * The attribute keys core uses, interned: the value is the key's id in the table every plugin
 * receives at create (keyTable()), so a plugin measures, escapes or registers a key once.
 */
enum class KeyId : std::uint32_t {
    REMOTE_AGENT = 0, ///< "remote_agent"
    BYTES, ///< "bytes"
    TRACE_ID, ///< "trace_id"
    PARENT_ID, ///< "parent_id"
    STATUS, ///< "status"
    DESC_COUNT, ///< "desc_count"
    MEM_TYPE, ///< "mem_type"
    PHASE_BACKEND, ///< "nixl.phase.backend"
    PHASE_NAME, ///< "nixl.phase.name"
    PHASE_LABEL, ///< "nixl.phase.label"
    PHASE_TRACE_ID, ///< "nixl.phase.trace_id"
    COUNT
};

/** The key table passed to every plugin at create: entry i has id i. Static storage. */
std::span<const nixl_trace_key_t>
keyTable() noexcept;

namespace detail {
    /** The texts of KeyId, in its order (the key table's entries point at these). */
    inline constexpr const char *key_texts[] = {
        "remote_agent",
        "bytes",
        "trace_id",
        "parent_id",
        "status",
        "desc_count",
        "mem_type",
        "nixl.phase.backend",
        "nixl.phase.name",
        "nixl.phase.label",
        "nixl.phase.trace_id",
    };
    static_assert(std::size(key_texts) == static_cast<std::size_t>(KeyId::COUNT),
                  "one text per KeyId");

    /** Core's name table, in NameId order (entry i has id i); nameTable() hands it out. */
    inline constexpr nixl_trace_name_t names[] = {
        {0, NIXL_TRACE_KIND_MEMORY_W, "nixl::registerMem"},
        {1, NIXL_TRACE_KIND_GENERIC, "nixl::deregisterMem"},
        {2, NIXL_TRACE_KIND_GENERIC, "nixl::makeConnection"},
        {3, NIXL_TRACE_KIND_GENERIC, "nixl::makeXferReq"},
        {4, NIXL_TRACE_KIND_GENERIC, "nixl::createXferReq"},
        {5, NIXL_TRACE_KIND_COMM_SEND, "nixl::postXferReq.write"},
        {6, NIXL_TRACE_KIND_COMM_RECV, "nixl::postXferReq.read"},
        {7, NIXL_TRACE_KIND_METADATA, "nixl::xfer.complete"},
        {8, NIXL_TRACE_KIND_METADATA, "nixl::getNotifs"},
        {9, NIXL_TRACE_KIND_METADATA, "nixl::genNotif"},
        {10, NIXL_TRACE_KIND_METADATA, "nixl::loadRemoteMD"},
        {11, NIXL_TRACE_KIND_METADATA, "nixl::fetchRemoteMD"},
        {12, NIXL_TRACE_KIND_MEMORY_R, "nixl::prepMemView"},
        {13, NIXL_TRACE_KIND_GENERIC, "nixl::releaseMemView"},
        {14, NIXL_TRACE_KIND_COMM_SEND, "nixl::backend.submit"},
        {15, NIXL_TRACE_KIND_COMM_SEND, "nixl::backend.wire_submitted"},
        {16, NIXL_TRACE_KIND_COMM_SEND, "nixl::backend.wire_completed"},
        {17, NIXL_TRACE_KIND_METADATA, "nixl::backend.notif_sent"},
        {18, NIXL_TRACE_KIND_METADATA, "nixl::backend.notif_received"},
        {19, NIXL_TRACE_KIND_COMM_RECV, "nixl::backend.remote_observed"},
    };
    static_assert(std::size(names) == static_cast<std::size_t>(NameId::COUNT),
                  "one table entry per NameId");

    /** The table entry of a NameId below COUNT (core's own names: no range check). */
    inline const nixl_trace_name_t &
    entry(NameId id) noexcept {
        return names[static_cast<std::size_t>(id)];
    }
} // namespace detail

/** A key's text (NUL-terminated, static). Inline: a constant on the hot path, not a call. */
inline const char *
keyOf(KeyId id) noexcept {
    const auto i = static_cast<std::size_t>(id);
    return i < std::size(detail::key_texts) ? detail::key_texts[i] : "unknown";
}

/** The name table passed to every plugin at create: entry i has id i. Static storage. */
std::span<const nixl_trace_name_t>
nameTable() noexcept;

/** A name's text and kind, from the table. */
const char *
nameOf(NameId id) noexcept;

Kind
kindOf(NameId id) noexcept;

} // namespace nixl::trace

#endif // NIXL_SRC_CORE_TRACING_TRACE_NAMES_H
