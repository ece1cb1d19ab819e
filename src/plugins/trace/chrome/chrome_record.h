/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file chrome_record.h
 * @brief The binary record an event path queues in its thread's ring, and its decoder: the
 *        calling thread copies ids, times and attribute bytes; the writer thread formats JSON.
 *
 * Layout (host byte order, no alignment: both ends copy with memcpy):
 *   header (nixlChromeRecord::header, 64 bytes)
 *   [u64 time, u32 name id, u32 kind]  of the completion mark, when kFlagCompleted
 *   [name]                       when header.nameId == kDynamicName
 *   attrCount x { u8 type, key, value }  key: a u32 key-table id when type has kKeyInterned,
 *                                        else a string
 * where a string is { u32 full length, min(full length, kMaxStringBytes) bytes }, so a record
 * is bounded however long the strings were, and the writer still reports the cut bytes; an
 * int64 or double value is 8 bytes. Names and keys of the create-time tables travel as their id.
 * Stateless; encode() is called by a ring's producer, format() by its consumer.
 */
#ifndef NIXL_TRACE_CHROME_RECORD_H
#define NIXL_TRACE_CHROME_RECORD_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "chrome_json.h"
#include "nixl_trace_backend_plugin.h"

/** What the writer needs of an agent to format its records; owned by the session, immutable. */
struct nixlChromeAgent {
    struct name {
        std::string escaped; // JSON string body
        bool flowStart = false; // a post: a flow starts after its span
        bool flowEnd = false; // the completion mark: a flow ends before it
    };

    std::string escaped; // the agent's name, JSON string body
    std::vector<name> names; // by name table id
    std::vector<std::string> keys; // JSON string bodies, by key table id
};

namespace nixlChromeRecord {

inline constexpr uint8_t kSpan = 1;
inline constexpr uint8_t kMark = 2;
inline constexpr uint32_t kDynamicName = UINT32_MAX;

// The spans and the mark that a flow links: a request's post and its completion.
inline constexpr std::string_view kPostWrite = "nixl::postXferReq.write";
inline constexpr std::string_view kPostRead = "nixl::postXferReq.read";
inline constexpr std::string_view kComplete = "nixl::xfer.complete";

struct header {
    uint32_t size; // of the whole record, bytes
    uint8_t type; // kSpan or kMark
    uint8_t flags; // kFlagCompleted
    uint8_t pad[2];
    uint32_t agent; // the session's agent index
    uint32_t kind;
    uint32_t nameId; // table id, or kDynamicName (the name follows the header)
    uint32_t attrCount; // attributes written (those of unknown type are left out)
    uint64_t begin;
    uint64_t end;
    uint64_t spanId;
    uint64_t parentSpanId;
    uint64_t correlationId;
};
static_assert(sizeof(header) == 64);

inline bool
knownAttrType(uint32_t t) noexcept {
    return t == NIXL_TRACE_ATTR_INT64 || t == NIXL_TRACE_ATTR_DOUBLE ||
        t == NIXL_TRACE_ATTR_STRING;
}

inline size_t
storedLen(size_t full) noexcept {
    return full < nixlChromeJson::kMaxStringBytes ? full : nixlChromeJson::kMaxStringBytes;
}

inline std::string_view
cstr(const char *s) noexcept {
    return s == nullptr ? std::string_view() : std::string_view(s);
}

/** Attribute keys whose length size() hands to encode() (more are measured again). */
inline constexpr size_t kKeyLenCache = 16;

/** header.flags: the span carries its request's completion mark (a folded completion). */
inline constexpr uint8_t kFlagCompleted = 1;
/** Set in an attribute's type byte: the key travels as its u32 id in the key table. */
inline constexpr uint8_t kKeyInterned = 0x80;

/** What encode() needs of the agent's create-time tables. */
struct tables {
    uint32_t nameCount = 0;
    uint32_t keyCount = 0;
};

/** Whether ev's record carries the completion mark of the span (see kFlagCompleted). */
inline bool
folded(const nixl_trace_event_t &ev, bool span, const tables &t) noexcept {
    return span && ev.complete_ns != 0 && ev.complete_name_id < t.nameCount;
}

/**
 * Bytes of the record for ev. With keyLens (room for kKeyLenCache), it also keeps the length
 * of each dynamic attribute key for encode(), so a key is measured once per event, not once
 * per pass; an interned key (key_id in the table) is not measured at all.
 */
inline size_t
size(const nixl_trace_event_t &ev, bool span, const tables &t,
     size_t *keyLens = nullptr) noexcept {
    size_t n = sizeof(header);
    if (folded(ev, span, t)) {
        n += 16; // u64 time, u32 name id, u32 kind
    }
    if (ev.name_id >= t.nameCount) {
        n += 4 + storedLen(cstr(ev.name).size());
    }
    for (size_t i = 0; ev.attrs != nullptr && i < ev.attr_count; ++i) {
        const nixl_trace_attr_t &a = ev.attrs[i];
        if (!knownAttrType(a.type)) {
            continue;
        }
        if (a.key_id < t.keyCount) {
            n += 1 + 4;
        } else {
            const size_t keyLen = cstr(a.key).size();
            if (keyLens != nullptr && i < kKeyLenCache) {
                keyLens[i] = keyLen;
            }
            n += 1 + 4 + storedLen(keyLen);
        }
        n += a.type == NIXL_TRACE_ATTR_STRING ?
            4 + storedLen(a.value.str.data == nullptr ? 0 : a.value.str.len) :
            8;
    }
    return n;
}

/**
 * Writes the record of ev (whose size() is n) through put(offset, bytes, len), which copies
 * into the ring at offset bytes from the record's start. keyLens: what size() kept, or null.
 * put is taken by value: passed by reference, the lambda's captured destination pointer lived
 * in memory that every char store may alias, so it was reloaded after each field.
 */
template<typename Put>
void
encode(Put put, const nixl_trace_event_t &ev, bool span, uint32_t agent, const tables &t,
       size_t n, const size_t *keyLens = nullptr) noexcept {
    const bool nameInTable = ev.name_id < t.nameCount;
    const bool complete = folded(ev, span, t);
    // The header goes field by field straight to the ring: built on the stack and copied whole,
    // its 16-byte loads spanned the 4- and 8-byte stores just made (a store-forwarding stall,
    // most of this function's samples). attrCount is written last, once known.
    auto field = [&put](size_t off, const auto &v) { put(off, &v, sizeof(v)); };
    const uint32_t size32 = static_cast<uint32_t>(n);
    const uint8_t type = span ? kSpan : kMark;
    const uint8_t flags = complete ? kFlagCompleted : 0;
    const uint16_t pad = 0;
    const uint32_t nameId = nameInTable ? ev.name_id : kDynamicName;
    field(offsetof(header, size), size32);
    field(offsetof(header, type), type);
    field(offsetof(header, flags), flags);
    field(offsetof(header, pad), pad);
    field(offsetof(header, agent), agent);
    field(offsetof(header, kind), ev.kind);
    field(offsetof(header, nameId), nameId);
    field(offsetof(header, begin), ev.begin_ns);
    field(offsetof(header, end), ev.end_ns);
    field(offsetof(header, spanId), ev.span_id);
    field(offsetof(header, parentSpanId), ev.parent_span_id);
    field(offsetof(header, correlationId), ev.correlation_id);
    uint32_t attrCount = 0;
    size_t at = sizeof(header);
    if (complete) {
        put(at, &ev.complete_ns, 8);
        put(at + 8, &ev.complete_name_id, 4);
        put(at + 12, &ev.complete_kind, 4);
        at += 16;
    }
    auto putString = [&](const char *p, size_t full) {
        const uint32_t f = static_cast<uint32_t>(full > UINT32_MAX ? UINT32_MAX : full);
        put(at, &f, 4);
        const size_t s = storedLen(full);
        if (s > 0) {
            put(at + 4, p, s);
        }
        at += 4 + s;
    };
    if (!nameInTable) {
        const std::string_view name = cstr(ev.name);
        putString(name.data(), name.size());
    }
    for (size_t i = 0; ev.attrs != nullptr && i < ev.attr_count; ++i) {
        const nixl_trace_attr_t &a = ev.attrs[i];
        if (!knownAttrType(a.type)) {
            continue;
        }
        const bool interned = a.key_id < t.keyCount;
        const uint8_t type = static_cast<uint8_t>(a.type | (interned ? kKeyInterned : 0));
        put(at, &type, 1);
        ++at;
        if (interned) {
            put(at, &a.key_id, 4);
            at += 4;
        } else {
            const std::string_view key = keyLens != nullptr && i < kKeyLenCache ?
                std::string_view(a.key != nullptr ? a.key : "", keyLens[i]) :
                cstr(a.key);
            putString(key.data(), key.size());
        }
        if (a.type == NIXL_TRACE_ATTR_STRING) {
            putString(a.value.str.data, a.value.str.data == nullptr ? 0 : a.value.str.len);
        } else {
            put(at, &a.value, 8); // i64 and f64 share the union's first 8 bytes
            at += 8;
        }
        ++attrCount;
    }
    field(offsetof(header, attrCount), attrCount);
}

/**
 * Appends the JSON lines of one record (rec, n bytes, whole) to out: the event line and its
 * flow line, if any. pidTid is "\"pid\":P,\"tid\":T" of the ring's thread; agent may be null
 * (unknown index: the record is skipped). Returns false for a malformed record (nothing
 * appended).
 */
bool
format(nixlChromeLine &out, const char *rec, size_t n, const nixlChromeAgent *agent,
       std::string_view pidTid);

} // namespace nixlChromeRecord

#endif // NIXL_TRACE_CHROME_RECORD_H
