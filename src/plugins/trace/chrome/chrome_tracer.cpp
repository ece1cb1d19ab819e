/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libtrace_backend_chrome.so: the agent's spans as a Trace Event Format JSON file that
 * Perfetto (ui.perfetto.dev) and chrome://tracing open. See docs/tracing.md §7.
 *
 * Each agent gets one nixlChromeTracer; all of them write into the process's one session
 * (chrome_session.h). An event is copied on the calling thread into its thread's ring as a
 * compact binary record (chrome_record.h), or dropped and counted when the ring is full; the
 * session's writer thread formats the JSON.
 */
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "chrome_json.h"
#include "chrome_record.h"
#include "chrome_session.h"
#include "nixl_trace_backend_sdk.h"

namespace {

constexpr const char *kDirVar = "NIXL_TRACE_DIR";
constexpr const char *kBufferVar = "NIXL_TRACE_CHROME_BUFFER_BYTES";
constexpr const char *kFlushVar = "NIXL_TRACE_CHROME_FLUSH_MS";
constexpr const char *kMaxBytesVar = "NIXL_TRACE_CHROME_MAX_BYTES";


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
    // 0 lifts the limit; a server left tracing for hours would otherwise fill its disk (the
    // benchmarks write 10-20 GB a minute).
    if (auto m = nixlSdk::configUnsigned(kMaxBytesVar, 0, uint64_t{1} << 62)) {
        c.maxFileBytes = *m;
    }
    return c;
}

class nixlChromeTracer final : public nixlTraceBackendBase {
public:
    // A span whose request completed inside it is one record, formatted as the span, the
    // completion mark and the flow between them.
    static constexpr bool foldsCompletion = true;

    explicit nixlChromeTracer(const nixlTraceBackendContext &ctx)
        : session_(nixlChromeSession::acquire(readConfig())) {
        auto agent = std::make_unique<nixlChromeAgent>();
        nixlChromeJson::appendEscaped(agent->escaped, ctx.agentName);
        agent->names.reserve(ctx.names.size());
        for (const nixl_trace_name_t &n : ctx.names) {
            nixlChromeAgent::name info;
            const std::string_view v = n.name == nullptr ? std::string_view() : n.name;
            nixlChromeJson::appendEscaped(info.escaped, v);
            info.flowStart = v == nixlChromeRecord::kPostWrite || v == nixlChromeRecord::kPostRead;
            info.flowEnd = v == nixlChromeRecord::kComplete;
            agent->names.push_back(std::move(info));
        }
        agent->keys.reserve(ctx.keys.size());
        for (const nixl_trace_key_t &k : ctx.keys) {
            std::string escaped;
            nixlChromeJson::appendEscaped(escaped,
                                          k.key == nullptr ? std::string_view() :
                                                             std::string_view(k.key, k.len));
            agent->keys.push_back(std::move(escaped));
        }
        tables_.nameCount = static_cast<uint32_t>(agent->names.size());
        tables_.keyCount = static_cast<uint32_t>(agent->keys.size());
        agentIndex_ = session_->addAgent(std::move(agent));
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
        if (ev.complete_ns != 0 && ev.size >= sizeof(nixl_trace_event_t) &&
            ev.complete_name_id >= tables_.nameCount) [[unlikely]] {
            // A completion whose name the record cannot carry as an id: a mark of its own.
            nixl_trace_event_t m{};
            m.size = sizeof(m);
            m.name_id = NIXL_TRACE_NAME_DYNAMIC;
            m.kind = ev.complete_kind;
            m.name = ev.complete_name;
            m.parent_span_id = ev.span_id;
            m.correlation_id = ev.correlation_id;
            m.begin_ns = ev.complete_ns;
            write(m, false);
        }
        write(ev, true);
    }

    void
    mark(const nixl_trace_event_t &ev) noexcept override {
        write(ev, false);
    }

private:
    // The calling thread only copies the event into its ring (chrome_record.h); the writer
    // thread formats it.
    void
    write(const nixl_trace_event_t &ev, bool span) noexcept {
        if (ev.size < sizeof(nixl_trace_event_t)) {
            session_->countDrop(); // a core that built a smaller event: fields are missing
            return;
        }
        nixlChromeRing *r = session_->ring();
        if (r == nullptr) [[unlikely]] {
            session_->countDrop();
            return;
        }
        session_->commit(*r, ev, span, agentIndex_, tables_);
    }

    std::shared_ptr<nixlChromeSession> session_;
    nixlChromeRecord::tables tables_; // sizes of the create-time name and key tables
    uint32_t agentIndex_ = 0; // in the session's agent tables
};

} // namespace

NIXL_TRACE_BACKEND_PLUGIN_DEFINE(nixlChromeTracer, "chrome", "1.0.0")
