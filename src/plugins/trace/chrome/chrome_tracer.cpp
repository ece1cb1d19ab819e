/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtrace_backend_chrome.so: the agent's spans as a Trace Event Format JSON file that
 * Perfetto (ui.perfetto.dev) and chrome://tracing open. See docs/tracing_chrome.md.
 *
 * Each agent gets one nixlChromeTracer; all of them write into the process's one session
 * (chrome_session.h). An event is formatted on the calling thread into that thread's reusable
 * line buffer and copied into its ring, or dropped and counted when the ring is full.
 */
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "chrome_json.h"
#include "chrome_session.h"
#include "nixl_trace_backend_sdk.h"

namespace {

constexpr const char *kDirVar = "NIXL_TRACE_DIR";
constexpr const char *kBufferVar = "NIXL_TRACE_CHROME_BUFFER_BYTES";
constexpr const char *kFlushVar = "NIXL_TRACE_CHROME_FLUSH_MS";

// The spans and the mark that a flow links: a request's post and its completion.
constexpr std::string_view kPostWrite = "nixl::postXferReq.write";
constexpr std::string_view kPostRead = "nixl::postXferReq.read";
constexpr std::string_view kComplete = "nixl::xfer.complete";

constexpr std::string_view kKindNames[NIXL_TRACE_KIND_COUNT] = {
    "Generic", "Compute", "MemoryR", "MemoryW", "CommSend", "CommRecv", "CommColl", "Metadata"};

std::string_view
kindName(uint32_t kind) noexcept {
    return kind < NIXL_TRACE_KIND_COUNT ? kKindNames[kind] : kKindNames[0];
}

nixlChromeConfig
readConfig() {
    nixlChromeConfig c;
    auto dir = nixlSdk::configString(kDirVar);
    if (!dir || dir->empty()) {
        throw std::runtime_error(std::string("chrome: ") + kDirVar +
                                 " is not set; set it to the directory for the trace files "
                                 "(this agent runs without the chrome trace plugin)");
    }
    c.dir = std::move(*dir);
    if (auto b = nixlSdk::configUnsigned(kBufferVar, 4096, 1ull << 30)) {
        c.bufferBytes = static_cast<size_t>(*b);
    }
    if (auto f = nixlSdk::configMilliseconds(kFlushVar, 1, 3600000)) {
        c.flushInterval = *f;
    }
    return c;
}

class nixlChromeTracer : public nixlTraceBackendBase {
public:
    explicit nixlChromeTracer(const nixlTraceBackendContext &ctx)
        : session_(nixlChromeSession::acquire(readConfig())) {
        nixlChromeJson::appendEscaped(agent_, ctx.agentName);
        names_.reserve(ctx.names.size());
        for (const nixl_trace_name_t &n : ctx.names) {
            nameInfo info;
            const std::string_view v = n.name == nullptr ? std::string_view() : n.name;
            nixlChromeJson::appendEscaped(info.escaped, v);
            info.flowStart = v == kPostWrite || v == kPostRead;
            info.flowEnd = v == kComplete;
            names_.push_back(std::move(info));
        }
        session_->addAgent(agent_);
    }

    ~nixlChromeTracer() override {
        // "Flushes what it holds": this agent's events are in the file when destroy returns
        // (the last agent's release closes the file, which writes everything).
        if (session_.use_count() > 1) {
            session_->flush();
        }
    }

    void
    spanEnd(const nixl_trace_event_t &ev) noexcept override {
        write(ev, true);
    }

    void
    mark(const nixl_trace_event_t &ev) noexcept override {
        write(ev, false);
    }

private:
    struct nameInfo {
        std::string escaped;
        bool flowStart = false;
        bool flowEnd = false;
    };

    void
    write(const nixl_trace_event_t &ev, bool span) noexcept {
        if (ev.size < sizeof(nixl_trace_event_t)) {
            session_->countDrop(); // a core that built a smaller event: fields are missing
            return;
        }
        nixlChromeSession::threadState *st = session_->thread();
        if (st == nullptr) {
            session_->countDrop();
            return;
        }
        try {
            format(*st, ev, span);
        }
        catch (...) {
            session_->countDrop(); // the line could not grow (out of memory)
            return;
        }
        session_->commit(*st);
    }

    // The event's name (already escaped when it is in the table) and whether it starts or
    // ends a flow.
    std::string_view
    nameOf(const nixl_trace_event_t &ev, bool &flowStart, bool &flowEnd) const noexcept {
        if (ev.name_id < names_.size()) {
            const nameInfo &n = names_[ev.name_id];
            flowStart = n.flowStart;
            flowEnd = n.flowEnd;
            return n.escaped;
        }
        const std::string_view v = ev.name == nullptr ? std::string_view() : ev.name;
        flowStart = v == kPostWrite || v == kPostRead;
        flowEnd = v == kComplete;
        return v;
    }

    // One line per event, plus a flow line after a post span or before a completion mark.
    void
    format(nixlChromeSession::threadState &st, const nixl_trace_event_t &ev, bool span) {
        nixlChromeLine &s = st.line;
        s.clear();
        bool flowStart = false;
        bool flowEnd = false;
        const std::string_view name = nameOf(ev, flowStart, flowEnd);
        if (flowEnd && ev.correlation_id != 0) {
            appendFlow(s, st, 'f', ev);
        }
        if (span) {
            s.lit("{\"ph\":\"X\",\"name\":\"");
        } else {
            s.lit("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"");
        }
        if (ev.name_id < names_.size()) {
            s.append(name); // escaped at create
        } else {
            nixlChromeJson::appendEscaped(s, name);
        }
        s.lit("\",\"cat\":\"");
        s.append(kindName(ev.kind));
        s.lit("\",");
        s.append(st.pidTid);
        s.lit(",\"ts\":");
        nixlChromeJson::appendMicros(s, ev.begin_ns);
        if (span) {
            s.lit(",\"dur\":");
            nixlChromeJson::appendMicros(s, ev.end_ns > ev.begin_ns ? ev.end_ns - ev.begin_ns : 0);
        }
        s.lit(",\"args\":{\"agent\":\"");
        s.append(agent_);
        s.ch('"');
        if (ev.correlation_id != 0) {
            s.lit(",\"correlation_id\":\"");
            nixlChromeJson::appendHex(s, ev.correlation_id);
            s.ch('"');
        }
        if (span) {
            s.lit(",\"span_id\":");
            nixlChromeJson::appendU64(s, ev.span_id);
        }
        s.lit(",\"parent_span_id\":");
        nixlChromeJson::appendU64(s, ev.parent_span_id);
        const nixl_trace_attr_t *a = ev.attrs;
        for (size_t i = 0; a != nullptr && i < ev.attr_count; ++i) {
            appendAttr(s, a[i]);
        }
        s.lit("}},\n");
        if (flowStart && ev.correlation_id != 0) {
            appendFlow(s, st, 's', ev); // after the span: bound to it, the enclosing slice
        }
    }

    // A flow event (Trace Event Format v1) whose id is the correlation id. The start ('s')
    // follows its post span at the span's begin and binds to the enclosing slice, the span
    // ("bp":"e"). The end ('f') goes just before its completion mark at the mark's time and
    // binds to the next slice on the thread, the mark: a mark has no enclosing span
    // (getXferStatus is not one), so enclosing binding would find nothing there.
    static void
    appendFlow(nixlChromeLine &s, const nixlChromeSession::threadState &st, char ph,
               const nixl_trace_event_t &ev) {
        s.lit("{\"ph\":\"");
        s.ch(ph);
        if (ph == 's') {
            s.lit("\",\"bp\":\"e\"");
        } else {
            s.ch('"');
        }
        s.lit(",\"name\":\"nixl::xfer\",\"cat\":\"nixl.flow\",\"id\":\"");
        nixlChromeJson::appendHex(s, ev.correlation_id);
        s.lit("\",");
        s.append(st.pidTid);
        s.lit(",\"ts\":");
        nixlChromeJson::appendMicros(s, ev.begin_ns);
        s.lit("},\n");
    }

    static void
    appendAttr(nixlChromeLine &s, const nixl_trace_attr_t &a) {
        if (a.type != NIXL_TRACE_ATTR_INT64 && a.type != NIXL_TRACE_ATTR_DOUBLE &&
            a.type != NIXL_TRACE_ATTR_STRING) {
            return; // a type this plugin does not know
        }
        s.lit(",\"");
        nixlChromeJson::appendEscaped(s, a.key == nullptr ? std::string_view() : a.key);
        s.lit("\":");
        switch (a.type) {
        case NIXL_TRACE_ATTR_INT64:
            nixlChromeJson::appendI64(s, a.value.i64);
            break;
        case NIXL_TRACE_ATTR_DOUBLE:
            nixlChromeJson::appendDouble(s, a.value.f64);
            break;
        default:
            s.ch('"');
            nixlChromeJson::appendEscaped(s, nixlTraceAttrString(a));
            s.ch('"');
            break;
        }
    }

    std::shared_ptr<nixlChromeSession> session_;
    std::string agent_; // escaped JSON string body
    std::vector<nameInfo> names_; // by name table id
};

} // namespace

NIXL_TRACE_BACKEND_PLUGIN_DEFINE(nixlChromeTracer, "chrome", "1.0.0")
