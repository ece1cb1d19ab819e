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
    appendFlow(nixlChromeLine &s, std::string_view pidTid, char ph, uint64_t id, uint64_t ts) {
        s.lit("{\"ph\":\"");
        s.ch(ph);
        if (ph == 's') {
            s.lit("\",\"bp\":\"e\"");
        } else {
            s.ch('"');
        }
        s.lit(",\"name\":\"nixl::xfer\",\"cat\":\"nixl.flow\",\"id\":\"");
        nixlChromeJson::appendHex(s, id);
        s.lit("\",");
        s.append(pidTid);
        s.lit(",\"ts\":");
        nixlChromeJson::appendMicros(s, ts);
        s.lit("},\n");
    }

    // The common start of an event line, up to and including its parent_span_id arg; the name
    // is escaped already, or (nameFull > escapedName.size() or raw) escaped here.
    void
    appendEventHead(nixlChromeLine &s, std::string_view pidTid, const nixlChromeAgent &agent,
                    bool span, std::string_view name, bool raw, size_t nameFull, uint32_t kind,
                    uint64_t begin, uint64_t end, uint64_t spanId, uint64_t parent, uint64_t corr) {
        if (span) {
            s.lit("{\"ph\":\"X\",\"name\":\"");
        } else {
            s.lit("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"");
        }
        if (raw) {
            nixlChromeJson::appendEscapedCut(s, name, nameFull);
        } else {
            s.append(name);
        }
        s.lit("\",\"cat\":\"");
        s.append(kindName(kind));
        s.lit("\",");
        s.append(pidTid);
        s.lit(",\"ts\":");
        nixlChromeJson::appendMicros(s, begin);
        if (span) {
            s.lit(",\"dur\":");
            nixlChromeJson::appendMicros(s, end > begin ? end - begin : 0);
        }
        s.lit(",\"args\":{\"agent\":\"");
        s.append(agent.escaped);
        s.ch('"');
        if (corr != 0) {
            s.lit(",\"correlation_id\":\"");
            nixlChromeJson::appendHex(s, corr);
            s.ch('"');
        }
        if (span) {
            s.lit(",\"span_id\":");
            nixlChromeJson::appendU64(s, spanId);
        }
        s.lit(",\"parent_span_id\":");
        nixlChromeJson::appendU64(s, parent);
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
    const bool completed = (h.flags & kFlagCompleted) != 0;
    uint64_t completeAt = 0;
    uint32_t completeName = 0;
    uint32_t completeKind = 0;
    if (completed) {
        completeAt = r.get<uint64_t>();
        completeName = r.get<uint32_t>();
        completeKind = r.get<uint32_t>();
        if (!r.ok || !span || completeName >= agent->names.size()) {
            return false;
        }
    }
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
        appendFlow(s, pidTid, 'f', h.correlationId, h.begin);
    }
    appendEventHead(s, pidTid, *agent, span, name, !escaped, nameFull, h.kind, h.begin, h.end,
                    h.spanId, h.parentSpanId, h.correlationId);
    for (uint32_t i = 0; i < h.attrCount; ++i) {
        const uint8_t typeByte = r.get<uint8_t>();
        const uint8_t type = typeByte & static_cast<uint8_t>(~kKeyInterned);
        s.lit(",\"");
        if ((typeByte & kKeyInterned) != 0) {
            const uint32_t id = r.get<uint32_t>();
            if (!r.ok || id >= agent->keys.size()) {
                r.ok = false;
                break;
            }
            s.append(agent->keys[id]);
        } else {
            size_t keyFull = 0;
            const std::string_view key = r.str(keyFull);
            if (!r.ok) {
                break;
            }
            nixlChromeJson::appendEscapedCut(s, key, keyFull);
        }
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
        appendFlow(s, pidTid, 's', h.correlationId, h.begin); // after the span: bound to it
    }
    if (completed) {
        // The completion mark the span carried, as a mark of its own (after the span, as the
        // file's order does not matter to viewers; its time is inside the span).
        const nixlChromeAgent::name &c = agent->names[completeName];
        if (c.flowEnd && h.correlationId != 0) {
            appendFlow(s, pidTid, 'f', h.correlationId, completeAt);
        }
        appendEventHead(s, pidTid, *agent, false, c.escaped, false, 0, completeKind, completeAt,
                        0, 0, h.spanId, h.correlationId);
        s.lit("}},\n");
    }
    return true;
}

} // namespace nixlChromeRecord
