/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * nixl_exporter_driver: stands in for libnixl's telemetry pipeline in front of one telemetry
 * exporter plugin, so end-to-end tests and benchmarks can run real exporter processes without
 * the agent.
 *
 * It dlopens <plugin-dir>/libtelemetry_exporter_<name>.so, creates --agents exporter instances
 * through the C ops table (ABI v3) with libnixl's 22-row event table, and gives each instance
 * its own "flush thread", as core does: the thread exports a deterministic workload in flushes
 * of at most --batch events (batch_begin, export_events, batch_end), then keeps flushing every
 * --flush-ms until the process is told to stop. Exporter configuration (ports, directories,
 * rank) comes from the environment, exactly as it would inside an agent.
 *
 * Workload of one instance (N = --events, B = --bytes, E = --errors, D = --dropped):
 *   agent_memory_registered = 1 MiB once, agent_memory_deregistered = 512 KiB once;
 *   N writes:  post time, transfer time, tx bytes = B, tx requests = 1;
 *   N reads:   post time, transfer time, rx bytes = B, rx requests = 1;
 *   E errors of each of the 12 statuses; one "events dropped" event of value D when D > 0;
 *   --trickle K more writes per flush while holding.
 * With --paths the bytes and request events carry a data path in their reserved word, as core
 * writes them for a backend that reports its path (issue 34): write i on UCX direct_memcpy
 * (even i) or ucp (odd i), read i on LIBFABRIC tcp; and the workload starts with one fallback
 * marker (a tx request event of value 0, path ucp, reason disabled_by_config). Without it the
 * word stays zero, so the benchmarks that use this driver measure what they measured before.
 * Transfer times are i-dependent (10 us .. 20 ms) so histograms fill several buckets.
 *
 * Readiness: after every instance has exported its workload, --ready-file is written atomically
 * (temp file + rename) with one JSON line. Stop: SIGTERM, SIGINT or SIGHUP, end of standard
 * input with --until-stdin-eof, or --hold-seconds elapsed (0: stop right after the workload).
 * At exit one JSON line goes to stdout: pid, events exported and the export cost per event (time
 * inside the flush brackets, batch_begin to batch_end, divided by the events).
 *
 * Exit codes: 0 ok; 2 bad arguments; 3 the exporter declined to run here (create returned
 * NOT_ALLOWED, e.g. its port is taken); 4 the plugin could not be loaded or created;
 * 5 export_events failed.
 */
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "nixl_telemetry_exporter_plugin.h"
#include "nixl_xfer_path.h"

namespace {

// NIXL 1.4's event types, in enum order (nixl-api.md 4.1). Core passes this table at create
// time; the driver passes the same so plugins see what they will see inside an agent.
const nixl_telemetry_event_info_t kEventTable[] = {
    {0, NIXL_TELEMETRY_CAT_BYTES, "agent_tx_bytes", nullptr, "Bytes sent by completed writes"},
    {1, NIXL_TELEMETRY_CAT_BYTES, "agent_rx_bytes", nullptr, "Bytes received by completed reads"},
    {2, NIXL_TELEMETRY_CAT_COUNT, "agent_tx_requests_num", nullptr, "Completed write requests"},
    {3, NIXL_TELEMETRY_CAT_COUNT, "agent_rx_requests_num", nullptr, "Completed read requests"},
    {4, NIXL_TELEMETRY_CAT_BYTES, "agent_memory_registered", nullptr, "Memory registered"},
    {5, NIXL_TELEMETRY_CAT_BYTES, "agent_memory_deregistered", nullptr, "Memory deregistered"},
    {6, NIXL_TELEMETRY_CAT_DURATION_US, "agent_xfer_time", nullptr,
     "Time from post to observed completion"},
    {7, NIXL_TELEMETRY_CAT_DURATION_US, "agent_xfer_post_time", nullptr,
     "Time from post to the backend's post returning"},
    {8, NIXL_TELEMETRY_CAT_ERROR, "agent_err_not_posted", "not_posted", "Errors"},
    {9, NIXL_TELEMETRY_CAT_ERROR, "agent_err_invalid_param", "invalid_param", "Errors"},
    {10, NIXL_TELEMETRY_CAT_ERROR, "agent_err_backend", "backend", "Errors"},
    {11, NIXL_TELEMETRY_CAT_ERROR, "agent_err_not_found", "not_found", "Errors"},
    {12, NIXL_TELEMETRY_CAT_ERROR, "agent_err_mismatch", "mismatch", "Errors"},
    {13, NIXL_TELEMETRY_CAT_ERROR, "agent_err_not_allowed", "not_allowed", "Errors"},
    {14, NIXL_TELEMETRY_CAT_ERROR, "agent_err_repost_active", "repost_active", "Errors"},
    {15, NIXL_TELEMETRY_CAT_ERROR, "agent_err_unknown", "unknown", "Errors"},
    {16, NIXL_TELEMETRY_CAT_ERROR, "agent_err_not_supported", "not_supported", "Errors"},
    {17, NIXL_TELEMETRY_CAT_ERROR, "agent_err_remote_disconnect", "remote_disconnect", "Errors"},
    {18, NIXL_TELEMETRY_CAT_ERROR, "agent_err_canceled", "canceled", "Errors"},
    {19, NIXL_TELEMETRY_CAT_ERROR, "agent_err_no_telemetry", "no_telemetry", "Errors"},
    {20, NIXL_TELEMETRY_CAT_COUNT, "agent_trace_phases_dropped", nullptr,
     "Backend trace phases that could not be delivered"},
    {21, NIXL_TELEMETRY_CAT_DROPPED, "agent_telemetry_events_dropped", nullptr,
     "Telemetry events lost before the exporter"},
};
constexpr uint32_t kEventCount = sizeof(kEventTable) / sizeof(kEventTable[0]);
static_assert(kEventCount == 22, "NIXL 1.4's 21 event types and issue 12's trace-phase counter");

enum : uint32_t {
    TX_BYTES = 0,
    RX_BYTES = 1,
    TX_REQUESTS = 2,
    RX_REQUESTS = 3,
    MEM_REGISTERED = 4,
    MEM_DEREGISTERED = 5,
    XFER_TIME = 6,
    XFER_POST_TIME = 7,
    FIRST_ERROR = 8,
    LAST_ERROR = 19,
    TRACE_PHASES_DROPPED = 20,
    EVENTS_DROPPED = 21,
};

enum exitCode : int {
    EXIT_OK = 0,
    EXIT_USAGE = 2,
    EXIT_DECLINED = 3,
    EXIT_LOAD = 4,
    EXIT_EXPORT = 5,
};

// Command-line settings; written once by parseArgs, then only read.
struct nixlDriverOptions {
    std::string pluginDir;
    std::string exporter = "prometheus_mp";
    std::string agentName;
    unsigned agents = 1;
    uint64_t events = 100;
    uint64_t bytes = 4096;
    uint64_t errors = 1;
    uint64_t dropped = 0;
    uint64_t trickle = 0;
    size_t batch = 4096; // NIXL_TELEMETRY_BUFFER_SIZE's default
    unsigned flushMs = 100;
    double holdSeconds = -1; // < 0: until a signal (or stdin EOF)
    bool untilStdinEof = false;
    bool paths = false; ///< --paths: the path word in bytes and request events
    std::string readyFile;
    int logLevel = NIXL_PLUGIN_LOG_WARN;
};

void
usage(FILE *out) {
    std::fputs(
        "usage: nixl_exporter_driver [options]\n"
        "  --plugin-dir DIR      folder of libtelemetry_exporter_<name>.so ($NIXL_PLUGIN_DIR)\n"
        "  --exporter NAME       exporter plugin name (prometheus_mp)\n"
        "  --agent-name NAME     agent name (driver-<pid>); with --agents K > 1, NAME-<k>\n"
        "  --agents K            exporter instances in this process, one thread each (1)\n"
        "  --events N            writes and reads per instance (100)\n"
        "  --bytes B             bytes per transfer (4096)\n"
        "  --errors E            errors of each status per instance (1)\n"
        "  --dropped D           one 'events dropped' event of value D if D > 0 (0)\n"
        "  --trickle K           writes per flush while holding (0)\n"
        "  --batch S             events per flush (4096, core's default staging size)\n"
        "  --flush-ms MS         flush interval while holding (100)\n"
        "  --hold-seconds S      stop S seconds after the workload; 0: at once (forever)\n"
        "  --until-stdin-eof     also stop when standard input closes\n"
        "  --paths               data paths and one fallback in the events (issue 34)\n"
        "  --ready-file PATH     written once the workload is exported\n"
        "  --log-level L         trace|debug|info|warn|error (warn)\n",
        out);
}

bool
parseU64(const char *s, uint64_t *out) {
    if (s == nullptr || *s == '\0' || *s == '-') {
        return false;
    }
    char *end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s, &end, 10);
    if (errno != 0 || end == nullptr || *end != '\0') {
        return false;
    }
    *out = v;
    return true;
}

bool
parseArgs(int argc, char **argv, nixlDriverOptions *o) {
    const char *env_dir = std::getenv("NIXL_PLUGIN_DIR");
    if (env_dir != nullptr) {
        o->pluginDir = env_dir;
    }
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h") {
            usage(stdout);
            std::exit(EXIT_OK);
        }
        if (a == "--until-stdin-eof") {
            o->untilStdinEof = true;
            continue;
        }
        if (a == "--paths") {
            o->paths = true;
            continue;
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "nixl_exporter_driver: option %s needs a value\n", argv[i]);
            return false;
        }
        const char *v = argv[++i];
        uint64_t n = 0;
        bool ok = true;
        if (a == "--plugin-dir") {
            o->pluginDir = v;
        } else if (a == "--exporter") {
            o->exporter = v;
        } else if (a == "--agent-name") {
            o->agentName = v;
        } else if (a == "--ready-file") {
            o->readyFile = v;
        } else if (a == "--agents") {
            ok = parseU64(v, &n) && n >= 1 && n <= 1024;
            o->agents = static_cast<unsigned>(n);
        } else if (a == "--events") {
            ok = parseU64(v, &o->events);
        } else if (a == "--bytes") {
            ok = parseU64(v, &o->bytes);
        } else if (a == "--errors") {
            ok = parseU64(v, &o->errors);
        } else if (a == "--dropped") {
            ok = parseU64(v, &o->dropped);
        } else if (a == "--trickle") {
            ok = parseU64(v, &o->trickle);
        } else if (a == "--batch") {
            ok = parseU64(v, &n) && n >= 1 && n <= (1u << 20);
            o->batch = static_cast<size_t>(n);
        } else if (a == "--flush-ms") {
            ok = parseU64(v, &n) && n >= 1 && n <= 60000;
            o->flushMs = static_cast<unsigned>(n);
        } else if (a == "--hold-seconds") {
            char *end = nullptr;
            o->holdSeconds = std::strtod(v, &end);
            ok = end != nullptr && *end == '\0' && o->holdSeconds >= 0;
        } else if (a == "--log-level") {
            const std::string_view l = v;
            const char *names[] = {"trace", "debug", "info", "warn", "error", "fatal"};
            ok = false;
            for (int k = 0; k < 6; ++k) {
                if (l == names[k]) {
                    o->logLevel = k;
                    ok = true;
                }
            }
        } else {
            std::fprintf(stderr, "nixl_exporter_driver: unknown option %s\n", argv[i]);
            usage(stderr);
            return false;
        }
        if (!ok) {
            std::fprintf(stderr, "nixl_exporter_driver: bad value '%s' for %s\n", v, argv[i]);
            return false;
        }
    }
    if (o->pluginDir.empty()) {
        std::fprintf(stderr, "nixl_exporter_driver: no --plugin-dir and NIXL_PLUGIN_DIR unset\n");
        return false;
    }
    if (o->agentName.empty()) {
        o->agentName = "driver-" + std::to_string(getpid());
    }
    return true;
}

// Core services handed to the plugin: log lines go to stderr with the pid, so the harness can
// tell which rank said what. Called from plugin threads too, hence one write() per line.
int g_log_level = NIXL_PLUGIN_LOG_WARN;

void
coreLog(void *, int32_t level, const char *msg, size_t len) {
    if (level < g_log_level) {
        return;
    }
    static const char *const names[] = {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"};
    const char *lname = (level >= 0 && level <= 5) ? names[level] : "?";
    std::string line = "[exporter pid " + std::to_string(getpid()) + " " + lname + "] ";
    line.append(msg, len);
    line.push_back('\n');
    [[maybe_unused]] const ssize_t w = ::write(STDERR_FILENO, line.data(), line.size());
}

int32_t
coreLogEnabled(void *, int32_t level) {
    return level >= g_log_level ? 1 : 0;
}

const nixl_plugin_core_services_t kCore = {
    sizeof(nixl_plugin_core_services_t), nullptr, &coreLog, &coreLogEnabled,
    nullptr /* get_config: the SDK then reads options from the environment */,
    nullptr /* record_phases: backends only */};

// Stop request shared by the main thread (signals, stdin, deadline) and the flush threads.
// Thread-safe: every member is used under m.
struct nixlDriverStop {
    std::mutex m;
    std::condition_variable cv;
    bool stop = false;

    void
    set() {
        {
            std::lock_guard<std::mutex> g(m);
            stop = true;
        }
        cv.notify_all();
    }

    // Waits at most `ms`; true if stop was requested.
    bool
    waitFor(unsigned ms) {
        std::unique_lock<std::mutex> g(m);
        return cv.wait_for(g, std::chrono::milliseconds(ms), [this] { return stop; });
    }
};

// One exporter instance and its flush thread. Not thread-safe: runWorkload and hold run on that
// thread only (the only caller of the instance's batch/export ops, as in core); the main thread
// reads workloadExported() once the workload is signalled done (under the done mutex) and
// exported()/exportNs() only after joining the thread.
class nixlDriverAgent {
public:
    nixlDriverAgent(const nixl_telemetry_exporter_ops_t *ops,
                    nixl_telemetry_exporter_t *inst,
                    const nixlDriverOptions &o,
                    nixlDriverStop &stop)
        : ops_(ops),
          inst_(inst),
          opts_(o),
          stop_(stop) {}

    // Exports the workload; false when export_events failed (logged once).
    bool
    runWorkload() {
        std::vector<nixl_telemetry_event_abi_t> ev;
        ev.reserve(8 * opts_.events + 16 * opts_.errors + 4);
        ev.push_back(make(MEM_REGISTERED, 1u << 20));
        if (opts_.paths) {
            // One connection fell back, counted at prep as core does: value 0, sums unchanged.
            ev.push_back(nixl_telemetry_event_abi_t{
                TX_REQUESTS,
                NIXL_XFER_PATH_UCX_UCP |
                    (NIXL_PATH_FALLBACK_DISABLED_BY_CONFIG << NIXL_TELEMETRY_FALLBACK_SHIFT),
                0});
        }
        for (uint64_t i = 0; i < opts_.events; ++i) {
            appendTransfer(ev, i, true);
            appendTransfer(ev, i, false);
        }
        for (uint32_t t = FIRST_ERROR; t <= LAST_ERROR; ++t) {
            for (uint64_t k = 0; k < opts_.errors; ++k) {
                ev.push_back(make(t, 1));
            }
        }
        if (opts_.dropped > 0) {
            ev.push_back(make(EVENTS_DROPPED, opts_.dropped));
        }
        ev.push_back(make(MEM_DEREGISTERED, 1u << 19));
        const bool ok = exportAll(ev);
        workloadExported_ = exported_;
        return ok;
    }

    // Flushes every flushMs until stop, with --trickle writes per flush.
    bool
    hold() {
        std::vector<nixl_telemetry_event_abi_t> ev;
        ev.reserve(4 * opts_.trickle);
        uint64_t i = opts_.events;
        while (!stop_.waitFor(opts_.flushMs)) {
            ev.clear();
            for (uint64_t k = 0; k < opts_.trickle; ++k) {
                appendTransfer(ev, i++, true);
            }
            if (!exportAll(ev)) {
                return false;
            }
        }
        return true;
    }

    // Events of the workload alone; fixed once runWorkload returned.
    uint64_t
    workloadExported() const {
        return workloadExported_;
    }

    uint64_t
    exported() const {
        return exported_;
    }

    uint64_t
    exportNs() const {
        return exportNs_;
    }

private:
    static nixl_telemetry_event_abi_t
    make(uint32_t type, uint64_t value) {
        return nixl_telemetry_event_abi_t{type, 0, value};
    }

    // One completed transfer as core emits it: post time, transfer time, bytes, request.
    void
    appendTransfer(std::vector<nixl_telemetry_event_abi_t> &ev, uint64_t i, bool write) const {
        ev.push_back(make(XFER_POST_TIME, 1 + (i * 31) % 100));
        ev.push_back(make(XFER_TIME, 10 + (i * 7919) % 20000));
        uint32_t path = 0;
        if (opts_.paths) {
            path = !write   ? NIXL_XFER_PATH_LIBFABRIC_TCP :
                i % 2 == 0 ? NIXL_XFER_PATH_UCX_DIRECT_MEMCPY :
                             NIXL_XFER_PATH_UCX_UCP;
        }
        ev.push_back(nixl_telemetry_event_abi_t{write ? TX_BYTES : RX_BYTES, path, opts_.bytes});
        ev.push_back(nixl_telemetry_event_abi_t{write ? TX_REQUESTS : RX_REQUESTS, path, 1});
    }

    // Hands ev over as core's flush thread would: flushes of at most --batch events (core's
    // staging capacity), each batch_begin, one export_events, batch_end. Nothing to hand over
    // still makes one empty bracket, as core does every interval. The timed cost covers the
    // whole bracket, so work an exporter defers to batch_end is counted too.
    bool
    exportAll(const std::vector<nixl_telemetry_event_abi_t> &ev) {
        size_t off = 0;
        do {
            const size_t n = std::min(opts_.batch, ev.size() - off);
            const auto t0 = std::chrono::steady_clock::now();
            if (ops_->batch_begin != nullptr) {
                ops_->batch_begin(inst_);
            }
            const nixl_plugin_status_t st =
                n == 0 ? NIXL_PLUGIN_SUCCESS : ops_->export_events(inst_, ev.data() + off, n);
            if (ops_->batch_end != nullptr) {
                ops_->batch_end(inst_);
            }
            exportNs_ += static_cast<uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now() - t0)
                    .count());
            if (st != NIXL_PLUGIN_SUCCESS) {
                std::fprintf(stderr,
                             "nixl_exporter_driver: export_events of %zu events returned %d\n", n,
                             static_cast<int>(st));
                return false;
            }
            exported_ += n;
            off += n;
        } while (off < ev.size());
        return true;
    }

    const nixl_telemetry_exporter_ops_t *ops_;
    nixl_telemetry_exporter_t *inst_;
    const nixlDriverOptions &opts_;
    nixlDriverStop &stop_;
    uint64_t exported_ = 0;
    uint64_t exportNs_ = 0;
    uint64_t workloadExported_ = 0;
};

bool
writeReadyFile(const std::string &path, const nixlDriverOptions &o, uint64_t events) {
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    FILE *f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) {
        std::fprintf(stderr, "nixl_exporter_driver: cannot write ready file %s: %s\n",
                     tmp.c_str(), std::strerror(errno));
        return false;
    }
    std::fprintf(f, "{\"pid\": %d, \"agents\": %u, \"events_exported\": %llu}\n",
                 static_cast<int>(getpid()), o.agents, static_cast<unsigned long long>(events));
    const bool ok = std::fclose(f) == 0 && std::rename(tmp.c_str(), path.c_str()) == 0;
    if (!ok) {
        std::fprintf(stderr, "nixl_exporter_driver: cannot publish ready file %s: %s\n",
                     path.c_str(), std::strerror(errno));
    }
    return ok;
}

// Blocks until a stop signal, stdin EOF (if asked) or the hold deadline.
void
waitForStop(const nixlDriverOptions &o, int sfd) {
    if (o.holdSeconds == 0) {
        return;
    }
    const auto deadline = std::chrono::steady_clock::now() +
        std::chrono::duration<double>(o.holdSeconds < 0 ? 1e9 : o.holdSeconds);
    while (true) {
        pollfd fds[2] = {{sfd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
        const nfds_t nfds = o.untilStdinEof ? 2 : 1;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            return;
        }
        const int r = ::poll(fds, nfds, static_cast<int>(std::min<long long>(left, 1000)));
        if (r < 0 && errno != EINTR) {
            std::fprintf(stderr, "nixl_exporter_driver: poll: %s\n", std::strerror(errno));
            return;
        }
        if (r > 0 && (fds[0].revents & POLLIN) != 0) {
            signalfd_siginfo si;
            [[maybe_unused]] const ssize_t n = ::read(sfd, &si, sizeof(si));
            return;
        }
        if (r > 0 && nfds == 2 && fds[1].revents != 0) {
            char buf[256];
            const ssize_t n = ::read(STDIN_FILENO, buf, sizeof(buf));
            if (n <= 0) {
                return; // EOF or error: the parent is gone
            }
        }
    }
}

} // namespace

int
main(int argc, char **argv) {
    nixlDriverOptions o;
    if (!parseArgs(argc, argv, &o)) {
        return EXIT_USAGE;
    }
    g_log_level = o.logLevel;

    // Stop signals are taken synchronously through a signalfd; blocked before any thread
    // (ours or the plugin's) starts so every thread inherits the mask.
    sigset_t stop_sigs;
    sigemptyset(&stop_sigs);
    sigaddset(&stop_sigs, SIGTERM);
    sigaddset(&stop_sigs, SIGINT);
    sigaddset(&stop_sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_sigs, nullptr);
    const int sfd = signalfd(-1, &stop_sigs, SFD_CLOEXEC);
    if (sfd < 0) {
        std::fprintf(stderr, "nixl_exporter_driver: signalfd: %s\n", std::strerror(errno));
        return EXIT_LOAD;
    }

    const std::string path =
        o.pluginDir + "/" + NIXL_TELEMETRY_EXPORTER_PLUGIN_PREFIX + o.exporter + ".so";
    void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        std::fprintf(stderr, "nixl_exporter_driver: cannot load %s: %s\n", path.c_str(),
                     dlerror());
        return EXIT_LOAD;
    }
    auto entry = reinterpret_cast<nixl_telemetry_exporter_plugin_entry_fn>(
        dlsym(lib, NIXL_TELEMETRY_EXPORTER_PLUGIN_ENTRY));
    const nixl_telemetry_exporter_plugin_t *plugin = entry == nullptr ? nullptr : entry();
    if (plugin == nullptr || plugin->hdr.abi_version != NIXL_TELEMETRY_EXPORTER_ABI_VERSION ||
        plugin->hdr.kind != NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER || plugin->ops == nullptr ||
        plugin->ops->size < sizeof(nixl_telemetry_exporter_ops_t)) {
        std::fprintf(stderr,
                     "nixl_exporter_driver: %s: no usable %s (want ABI version %u, got %u)\n",
                     path.c_str(), NIXL_TELEMETRY_EXPORTER_PLUGIN_ENTRY,
                     NIXL_TELEMETRY_EXPORTER_ABI_VERSION,
                     plugin == nullptr ? 0u : plugin->hdr.abi_version);
        return EXIT_LOAD;
    }
    const nixl_telemetry_exporter_ops_t *ops = plugin->ops;

    // Instance names outlive the instances: the plugin may keep the views until destroy.
    std::vector<std::string> names;
    for (unsigned k = 0; k < o.agents; ++k) {
        names.push_back(o.agents == 1 ? o.agentName : o.agentName + "-" + std::to_string(k));
    }
    std::vector<nixl_telemetry_exporter_t *> insts;
    int rc = EXIT_OK;
    for (unsigned k = 0; k < o.agents && rc == EXIT_OK; ++k) {
        nixl_telemetry_exporter_init_params_t p{};
        p.size = sizeof(p);
        p.core = &kCore;
        p.agent_name = nixl_plugin_str_t{names[k].data(), names[k].size()};
        p.max_events_buffered = 4096;
        p.event_types = kEventTable;
        p.event_type_count = kEventCount;
        nixl_telemetry_exporter_t *inst = nullptr;
        const nixl_plugin_status_t st = ops->create(&p, &inst);
        if (st == NIXL_PLUGIN_ERR_NOT_ALLOWED) {
            std::fprintf(stderr, "nixl_exporter_driver: exporter %s declined agent %s\n",
                         o.exporter.c_str(), names[k].c_str());
            rc = EXIT_DECLINED;
        } else if (st != NIXL_PLUGIN_SUCCESS || inst == nullptr) {
            std::fprintf(stderr,
                         "nixl_exporter_driver: exporter %s create for agent %s returned %d\n",
                         o.exporter.c_str(), names[k].c_str(), static_cast<int>(st));
            rc = EXIT_LOAD;
        } else {
            insts.push_back(inst);
        }
    }

    nixlDriverStop stop;
    std::vector<std::unique_ptr<nixlDriverAgent>> sims;
    std::vector<std::thread> threads;
    std::atomic<unsigned> done{0};
    std::atomic<bool> failed{false};
    std::mutex done_m;
    std::condition_variable done_cv;
    if (rc == EXIT_OK) {
        for (auto *inst : insts) {
            sims.push_back(std::make_unique<nixlDriverAgent>(ops, inst, o, stop));
        }
        for (auto &sim : sims) {
            threads.emplace_back([&, s = sim.get()] {
                const bool ok = s->runWorkload();
                {
                    std::lock_guard<std::mutex> g(done_m);
                    if (!ok) {
                        failed = true;
                    }
                    ++done;
                }
                done_cv.notify_all();
                if (ok && !s->hold()) {
                    failed = true;
                }
            });
        }
        {
            std::unique_lock<std::mutex> g(done_m);
            done_cv.wait(g, [&] { return done == sims.size(); });
        }
        uint64_t exported = 0;
        for (auto &sim : sims) {
            exported += sim->workloadExported();
        }
        if (failed) {
            rc = EXIT_EXPORT;
        } else if (!o.readyFile.empty() && !writeReadyFile(o.readyFile, o, exported)) {
            rc = EXIT_LOAD;
        } else {
            waitForStop(o, sfd);
        }
        stop.set();
        for (auto &t : threads) {
            t.join();
        }
        if (failed) {
            rc = EXIT_EXPORT;
        }
    }

    uint64_t exported = 0;
    uint64_t ns = 0;
    for (auto &sim : sims) {
        exported += sim->exported();
        ns += sim->exportNs();
    }
    for (auto *inst : insts) {
        ops->destroy(inst);
    }
    std::printf("{\"pid\": %d, \"exporter\": \"%s\", \"agents\": %u, \"events_exported\": %llu, "
                "\"export_ns\": %llu, \"ns_per_event\": %.2f, \"rc\": %d}\n",
                static_cast<int>(getpid()), o.exporter.c_str(), o.agents,
                static_cast<unsigned long long>(exported), static_cast<unsigned long long>(ns),
                exported == 0 ? 0.0 : static_cast<double>(ns) / static_cast<double>(exported),
                rc);
    std::fflush(stdout);
    // The library stays loaded: plugin threads may still be unwinding static state at exit.
    ::close(sfd);
    return rc;
}
