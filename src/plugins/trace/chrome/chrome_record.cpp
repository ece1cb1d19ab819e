/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "chrome_record.h"

namespace nixlChromeRecord {

namespace {

    constexpr std::string_view kKindNames[NIXL_TRACE_KIND_COUNT] = {
        "Generic", "Compute", "MemoryR", "MemoryW", "CommSend", "CommRecv", "CommColl", "Metadata"};

    std::string_view
    kindName(uint32_t kind) noexcept {
        return kind < NIXL_TRACE_KIND_COUNT ? kKindNames[kind] : kKindNames[0];
    }

    // Reads the record's fields in order; any read past its end marks it malformed.
    struct reader {
        const char *p;
        size_t left;
        bool ok = true;

        template<typename T>
        T
        get() noexcept {
            T v{};
            if (left < sizeof(T)) {
                ok = false;
                return v;
            }
            std::memcpy(&v, p, sizeof(T));
            p += sizeof(T);
            left -= sizeof(T);
            return v;
        }

        // A string: its stored bytes and its length before the cut.
        std::string_view
        str(size_t &full) noexcept {
            full = get<uint32_t>();
            const size_t s = storedLen(full);
            if (!ok || left < s) {
                ok = false;
                return {};
            }
            std::string_view v(p, s);
            p += s;
            left -= s;
            return v;
        }
    };

    // A flow event (Trace Event Format v1) whose id is the correlation id. The start ('s')
    // follows its post span at the span's begin and binds to the enclosing slice, the span
    // ("bp":"e"). The end ('f') goes just before its completion mark at the mark's time and
    // binds to the next slice on the thread, the mark: a mark has no enclosing span
    // (getXferStatus is not one), so enclosing binding would find nothing there.
    void
    appendFlow(nixlChromeLine &s, std::string_view pidTid, char ph, const header &h) {
        s.lit("{\"ph\":\"");
        s.ch(ph);
        if (ph == 's') {
            s.lit("\",\"bp\":\"e\"");
        } else {
            s.ch('"');
        }
        s.lit(",\"name\":\"nixl::xfer\",\"cat\":\"nixl.flow\",\"id\":\"");
        nixlChromeJson::appendHex(s, h.correlationId);
        s.lit("\",");
        s.append(pidTid);
        s.lit(",\"ts\":");
        nixlChromeJson::appendMicros(s, h.begin);
        s.lit("},\n");
    }

} // namespace

bool
format(nixlChromeLine &s, const char *rec, size_t n, const nixlChromeAgent *agent,
       std::string_view pidTid) {
    reader r{rec, n};
    const header h = r.get<header>();
    if (!r.ok || h.size != n || agent == nullptr) {
        return false;
    }
    const bool span = h.type == kSpan;
    std::string_view name;
    size_t nameFull = 0;
    bool flowStart = false;
    bool flowEnd = false;
    bool escaped = false;
    if (h.nameId != kDynamicName) {
        if (h.nameId >= agent->names.size()) {
            return false;
        }
        const nixlChromeAgent::name &e = agent->names[h.nameId];
        name = e.escaped;
        flowStart = e.flowStart;
        flowEnd = e.flowEnd;
        escaped = true;
    } else {
        name = r.str(nameFull);
        if (!r.ok) {
            return false;
        }
        flowStart = nameFull == name.size() && (name == kPostWrite || name == kPostRead);
        flowEnd = nameFull == name.size() && name == kComplete;
    }
    const size_t start = s.size();
    if (flowEnd && h.correlationId != 0) {
        appendFlow(s, pidTid, 'f', h);
    }
    if (span) {
        s.lit("{\"ph\":\"X\",\"name\":\"");
    } else {
        s.lit("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"");
    }
    if (escaped) {
        s.append(name);
    } else {
        nixlChromeJson::appendEscapedCut(s, name, nameFull);
    }
    s.lit("\",\"cat\":\"");
    s.append(kindName(h.kind));
    s.lit("\",");
    s.append(pidTid);
    s.lit(",\"ts\":");
    nixlChromeJson::appendMicros(s, h.begin);
    if (span) {
        s.lit(",\"dur\":");
        nixlChromeJson::appendMicros(s, h.end > h.begin ? h.end - h.begin : 0);
    }
    s.lit(",\"args\":{\"agent\":\"");
    s.append(agent->escaped);
    s.ch('"');
    if (h.correlationId != 0) {
        s.lit(",\"correlation_id\":\"");
        nixlChromeJson::appendHex(s, h.correlationId);
        s.ch('"');
    }
    if (span) {
        s.lit(",\"span_id\":");
        nixlChromeJson::appendU64(s, h.spanId);
    }
    s.lit(",\"parent_span_id\":");
    nixlChromeJson::appendU64(s, h.parentSpanId);
    for (uint32_t i = 0; i < h.attrCount; ++i) {
        const uint8_t type = r.get<uint8_t>();
        size_t keyFull = 0;
        const std::string_view key = r.str(keyFull);
        if (!r.ok) {
            break;
        }
        s.lit(",\"");
        nixlChromeJson::appendEscapedCut(s, key, keyFull);
        s.lit("\":");
        if (type == NIXL_TRACE_ATTR_INT64) {
            nixlChromeJson::appendI64(s, r.get<int64_t>());
        } else if (type == NIXL_TRACE_ATTR_DOUBLE) {
            nixlChromeJson::appendDouble(s, r.get<double>());
        } else {
            size_t full = 0;
            const std::string_view v = r.str(full);
            s.ch('"');
            nixlChromeJson::appendEscapedCut(s, v, full);
            s.ch('"');
        }
    }
    if (!r.ok || r.left != 0) {
        s.truncate(start); // a malformed record writes nothing
        return false;
    }
    s.lit("}},\n");
    if (flowStart && h.correlationId != 0) {
        appendFlow(s, pidTid, 's', h); // after the span: bound to it, the enclosing slice
    }
    return true;
}

} // namespace nixlChromeRecord
