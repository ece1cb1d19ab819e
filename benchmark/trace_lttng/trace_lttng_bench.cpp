/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * The chrome trace file against LTTng-UST (see benchmark/README.md, "trace_lttng_bench").
 *
 * One process, one posting thread, agents with TEST backends (trace_phases on). For each paced
 * rate (transfers/s) the same loop runs once per tracer, each with its own agent pair made with
 * NIXL_TRACE_BACKENDS set to it:
 *   off     no trace plugin: the baseline
 *   null    the do-nothing plugin (null_tracer.cpp): core's own tracing work
 *   chrome  libtrace_backend_chrome.so, its file in a private directory
 *   lttng   the LTTng-UST plugin (lttng_tracer.cpp) with a session of a session daemon started
 *           and stopped by this benchmark, its trace in the same temporary directory
 * so every tracer receives the same events per transfer: the post span, the completion mark
 * (folded into the span's call, §5 of docs/tracing.md) and the TEST backend's three phases.
 *
 * Per transfer the loop waits for its slot (a busy wait: pacing, not synchronisation), then
 * times postXferReq and the getXferStatus calls until it completes. Printed per rate and tracer:
 * the achieved rate, p50/p99/p99.9/max of that time, the added ns against "off" (p50 and mean),
 * and the share of the transfers' events that reached the file (chrome: read back from the
 * closed file; lttng: counted in the trace by babeltrace2; null: received by the plugin).
 * When the session daemon cannot run, one line says why and the lttng column is left out.
 * Both tracers run with their defaults, except the chrome file's size limit (lifted, as an
 * LTTng session has none): 4 MiB ring per thread and a 100 ms longest drain interval against
 * LTTng-UST's per-user channel of 4 x 512 KiB sub-buffers per CPU in discard mode.
 */
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../agent_trace_files.h"
#include "nixl.h"
#include "scoped_env.h"

namespace fs = std::filesystem;

namespace {

constexpr size_t kDescs = 1;
constexpr size_t kDescLen = 4096;
constexpr uint64_t kWarmup = 64;
constexpr int kEventsPerTransfer = 5; // post span, completion mark, three TEST phases

struct options {
    std::vector<uint64_t> rates{100000, 200000, 1000000};
    double seconds = 1.5;
    uint64_t transfers = 0; ///< fixed count per point instead of seconds * rate
    std::vector<std::string> tracers{"off", "null", "chrome", "lttng"};
    bool json = false;
    bool check = false;
    bool keep = false;
};

std::vector<std::string>
split(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) {
        if (!item.empty()) {
            out.push_back(item);
        }
    }
    return out;
}

void
usage() {
    std::fprintf(stderr,
                 "usage: trace_lttng_bench [--rates 100000,200000,1000000] [--seconds 1.5]\n"
                 "       [--transfers N] [--tracers off,null,chrome,lttng] [--json] [--check]"
                 " [--keep]\n");
}

std::optional<options>
parse(int argc, char **argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "trace_lttng_bench: %s needs a value\n", a.c_str());
                return std::nullopt;
            }
            return std::string(argv[++i]);
        };
        try {
            if (a == "--rates") {
                auto v = value();
                if (!v) {
                    return std::nullopt;
                }
                o.rates.clear();
                for (const std::string &r : split(*v)) {
                    o.rates.push_back(std::stoull(r));
                }
            } else if (a == "--seconds") {
                auto v = value();
                if (!v) {
                    return std::nullopt;
                }
                o.seconds = std::stod(*v);
            } else if (a == "--transfers") {
                auto v = value();
                if (!v) {
                    return std::nullopt;
                }
                o.transfers = std::stoull(*v);
            } else if (a == "--tracers") {
                auto v = value();
                if (!v) {
                    return std::nullopt;
                }
                o.tracers = split(*v);
            } else if (a == "--json") {
                o.json = true;
            } else if (a == "--check") {
                o.check = true;
            } else if (a == "--keep") {
                o.keep = true;
            } else {
                std::fprintf(stderr, "trace_lttng_bench: unknown option %s\n", a.c_str());
                return std::nullopt;
            }
        }
        catch (const std::exception &) {
            std::fprintf(stderr, "trace_lttng_bench: bad value for %s\n", a.c_str());
            return std::nullopt;
        }
    }
    if (o.rates.empty() || o.seconds <= 0 || o.tracers.empty() ||
        std::find(o.rates.begin(), o.rates.end(), 0) != o.rates.end()) {
        std::fprintf(stderr, "trace_lttng_bench: rates and seconds must be positive\n");
        return std::nullopt;
    }
    for (const std::string &t : o.tracers) {
        if (t != "off" && t != "null" && t != "chrome" && t != "lttng") {
            std::fprintf(stderr, "trace_lttng_bench: unknown tracer %s\n", t.c_str());
            return std::nullopt;
        }
    }
    if (std::find(o.tracers.begin(), o.tracers.end(), "off") == o.tracers.end()) {
        o.tracers.insert(o.tracers.begin(), "off"); // the baseline of every added figure
    }
    return o;
}

/**
 * Runs a shell command, its output (or only its stderr when out is set, stdout then going to
 * out) appended to log; true when it exits 0.
 */
bool
run(const std::string &cmd, const std::string &log, const std::string &out = "") {
    const std::string full =
        cmd + (out.empty() ? " >>" + log + " 2>&1" : " >" + out + " 2>>" + log);
    const int rc = std::system(full.c_str());
    return rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
}

/** The last non-empty line of a file (the reason a tool gave up), or "". */
std::string
lastLine(const std::string &path) {
    std::ifstream in(path);
    std::string line, last;
    while (std::getline(in, line)) {
        if (!line.empty()) {
            last = line;
        }
    }
    return last;
}

/** Whether prog is an executable file in $PATH. */
bool
inPath(const std::string &prog) {
    const char *path = std::getenv("PATH");
    std::stringstream in(path != nullptr ? path : "");
    std::string dir;
    while (std::getline(in, dir, ':')) {
        if (!dir.empty() && ::access((dir + "/" + prog).c_str(), X_OK) == 0) {
            return true;
        }
    }
    return false;
}

/**
 * A session daemon started for this benchmark (lttng-sessiond --sig-parent as a child, so its
 * pid is known and it is stopped by pid), with LTTNG_HOME in the temporary directory, and one
 * recording session per measured point. Not thread-safe: main thread only.
 */
class lttngDaemon {
public:
    explicit lttngDaemon(const std::string &root) : home_(root + "/lttng"), log_(home_ + "/log") {}

    ~lttngDaemon() {
        stop();
    }

    /** Starts the daemon; on failure returns the reason (one line). */
    std::optional<std::string>
    start() {
        if (!inPath("lttng-sessiond") || !inPath("lttng")) {
            return std::string("lttng-sessiond or lttng not in PATH (Debian: lttng-tools)");
        }
        if (!inPath("babeltrace2")) {
            return std::string("babeltrace2 not in PATH (Debian: babeltrace2), events cannot "
                               "be counted");
        }
        std::error_code ec;
        fs::create_directories(home_, ec);
        ::setenv("LTTNG_HOME", home_.c_str(), 1);
        // The application side waits this long, when the plugin loads, for the daemon to hand
        // it the session's event rules (LTTng-UST's default, 3 s, can pass on a busy machine
        // and the point's first events would then go nowhere).
        ::setenv("LTTNG_UST_REGISTER_TIMEOUT", "30000", 0);
        sigset_t usr1, old;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &usr1, &old);
        pid_ = ::fork();
        if (pid_ == 0) {
            pthread_sigmask(SIG_SETMASK, &old, nullptr);
            const int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
            if (fd >= 0) {
                ::dup2(fd, 1);
                ::dup2(fd, 2);
            }
            ::execlp("lttng-sessiond", "lttng-sessiond", "--no-kernel", "--sig-parent",
                     static_cast<char *>(nullptr));
            ::_exit(127);
        }
        if (pid_ < 0) {
            pthread_sigmask(SIG_SETMASK, &old, nullptr);
            return std::string("fork failed: ") + std::strerror(errno);
        }
        // Ready is SIGUSR1 from the daemon; an exit first is a failure (e.g. one already runs).
        std::optional<std::string> why;
        const timespec slice{0, 100 * 1000 * 1000};
        for (int i = 0;; ++i) {
            if (sigtimedwait(&usr1, nullptr, &slice) == SIGUSR1) {
                break;
            }
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                why = "lttng-sessiond exited: " + lastLine(log_);
                break;
            }
            if (i == 200) {
                why = std::string("lttng-sessiond not ready after 20 s");
                break;
            }
        }
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
        if (why) {
            stop();
        }
        return why;
    }

    /** Creates, configures and starts the session of one point; false: see the log. */
    bool
    begin(const std::string &session) {
        session_ = session;
        out_ = home_ + "/" + session;
        return run("lttng create " + session_ + " --output=" + out_, log_) &&
            run("lttng enable-event -u -s " + session_ + " 'nixl_trace:*'", log_) &&
            run("lttng start " + session_, log_);
    }

    /**
     * Stops the session, reads its discarded-event count (lttng list), destroys it, counts
     * the events of its trace (babeltrace2's counter sink) and removes it. false: counting
     * failed.
     */
    bool
    end(uint64_t &events, uint64_t &discarded) {
        events = 0;
        discarded = 0;
        bool ok = run("lttng stop " + session_, log_);
        const std::string list = home_ + "/list.txt";
        const std::string count = home_ + "/count.txt";
        fs::remove(list);
        fs::remove(count);
        ok = ok && run("lttng list " + session_, log_, list);
        // Counted once the session is destroyed: its trace is then complete on disk.
        const bool destroyed = run("lttng destroy " + session_, log_);
        ok = ok && destroyed &&
            run("babeltrace2 " + out_ + " -c sink.utils.counter", log_, count);
        if (ok) {
            std::ifstream l(list);
            std::string line;
            while (std::getline(l, line)) {
                const size_t at = line.find("Discarded events:");
                if (at != std::string::npos) {
                    discarded += std::stoull(line.substr(at + 17));
                }
            }
            std::ifstream c(count);
            bool found = false;
            while (std::getline(c, line)) {
                std::istringstream ls(line);
                uint64_t n = 0;
                std::string what;
                std::string kind;
                // The sink prints a block every 10000 events; the last block is the total.
                if (ls >> n >> what >> kind && what == "Event" && kind == "messages") {
                    events = n;
                    found = true;
                }
            }
            ok = found;
        }
        std::error_code ec;
        fs::remove_all(out_, ec);
        return ok;
    }

    const std::string &
    log() const {
        return log_;
    }

    /** SIGTERM to the daemon (its consumer daemon goes with it), then waits for it. */
    void
    stop() {
        if (pid_ <= 0) {
            return;
        }
        ::kill(pid_, SIGTERM);
        int status = 0;
        for (int i = 0; i < 100; ++i) {
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return;
            }
            ::usleep(50 * 1000); // waiting for a process to exit, not for the measurement
        }
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }

private:
    std::string home_;
    std::string log_;
    std::string session_;
    std::string out_;
    pid_t pid_ = -1;
};


/**
 * Two agents with TEST backends (trace phases on) made with NIXL_TRACE_BACKENDS=tracer, and a
 * prepared WRITE of one descriptor. Not thread-safe: one posting thread.
 */
class tracedPair {
public:
    tracedPair(const std::string &prefix, const std::string &tracer)
        : env_("NIXL_TRACE_BACKENDS", tracer == "off" ? "" : tracer.c_str()),
          initiatorName_(prefix + "_initiator"),
          targetName_(prefix + "_target"),
          initiator_(initiatorName_, nixlAgentConfig(false)),
          target_(targetName_, nixlAgentConfig(false)),
          src_(kDescLen, 0x5a),
          dst_(kDescLen, 0),
          srcReg_(DRAM_SEG),
          dstReg_(DRAM_SEG) {}

    ~tracedPair() {
        if (req_ != nullptr) {
            initiator_.releaseXferReq(req_);
        }
        if (localH_ != nullptr) {
            initiator_.releasedDlistH(localH_);
        }
        if (remoteH_ != nullptr) {
            initiator_.releasedDlistH(remoteH_);
        }
        if (loaded_) {
            initiator_.invalidateRemoteMD(targetName_);
        }
        if (dstRegistered_) {
            target_.deregisterMem(dstReg_);
        }
        if (srcRegistered_) {
            initiator_.deregisterMem(srcReg_);
        }
    }

    /** Backends, registrations, metadata and the prepared request; false: one line printed. */
    bool
    setup() {
        nixl_b_params_t params{{"trace_phases", "true"}};
        nixlBackendH *ib = nullptr;
        nixlBackendH *tb = nullptr;
        srcReg_.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(src_.data()), kDescLen, 0, ""));
        dstReg_.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(dst_.data()), kDescLen, 0, ""));
        if (!step(initiator_.createBackend("TEST", params, ib), "initiator createBackend") ||
            !step(target_.createBackend("TEST", params, tb), "target createBackend") ||
            !step(initiator_.registerMem(srcReg_), "initiator registerMem")) {
            return false;
        }
        srcRegistered_ = true;
        if (!step(target_.registerMem(dstReg_), "target registerMem")) {
            return false;
        }
        dstRegistered_ = true;
        nixl_blob_t md;
        std::string name;
        if (!step(target_.getLocalMD(md), "getLocalMD") ||
            !step(initiator_.loadRemoteMD(md, name), "loadRemoteMD")) {
            return false;
        }
        loaded_ = true;
        nixl_xfer_dlist_t local(DRAM_SEG);
        nixl_xfer_dlist_t remote(DRAM_SEG);
        local.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(src_.data()), kDescLen, 0));
        remote.addDesc(nixlBasicDesc(reinterpret_cast<uintptr_t>(dst_.data()), kDescLen, 0));
        const std::vector<int> idx{0};
        return step(initiator_.prepXferDlist(NIXL_INIT_AGENT, local, localH_), "prep local") &&
            step(initiator_.prepXferDlist(targetName_, remote, remoteH_), "prep remote") &&
            step(initiator_.makeXferReq(NIXL_WRITE, localH_, idx, remoteH_, idx, req_),
                 "makeXferReq");
    }

    /** One transfer, posted and polled to completion; false when it failed. */
    bool
    transfer() {
        nixl_status_t st = initiator_.postXferReq(req_);
        while (st == NIXL_IN_PROG) {
            st = initiator_.getXferStatus(req_);
        }
        return st == NIXL_SUCCESS;
    }

    bool
    dataArrived() const {
        return dst_ == src_;
    }

    const std::string &
    initiatorName() const {
        return initiatorName_;
    }

private:
    static bool
    step(nixl_status_t st, const char *what) {
        if (st != NIXL_SUCCESS) {
            std::fprintf(stderr, "trace_lttng_bench: %s: %s\n", what,
                         nixlEnumStrings::statusStr(st).c_str());
            return false;
        }
        return true;
    }

    nixl_test::scopedEnv env_; // before the agents: read when they are constructed
    std::string initiatorName_;
    std::string targetName_;
    nixlAgent initiator_;
    nixlAgent target_;
    std::vector<uint8_t> src_;
    std::vector<uint8_t> dst_;
    nixl_reg_dlist_t srcReg_;
    nixl_reg_dlist_t dstReg_;
    bool srcRegistered_ = false;
    bool dstRegistered_ = false;
    bool loaded_ = false;
    nixlDlistH *localH_ = nullptr;
    nixlDlistH *remoteH_ = nullptr;
    nixlXferReqH *req_ = nullptr;
};

struct pointResult {
    std::string tracer;
    uint64_t rate = 0;
    uint64_t transfers = 0; ///< measured (the warm-up is not)
    double achieved = 0; ///< transfers/s of the measured loop
    double mean = 0, p50 = 0, p99 = 0, p999 = 0, max = 0; ///< ns per transfer
    uint64_t expected = 0; ///< events of every transfer posted, warm-up included
    int64_t reached = -1; ///< events that reached the file (null: the plugin); -1 unknown
    uint64_t discarded = 0; ///< lttng: the channel's discarded-event count
    bool ok = false;
};

double
percentile(const std::vector<uint32_t> &sorted, double q) {
    if (sorted.empty()) {
        return 0;
    }
    const size_t at = std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()));
    return sorted[at];
}

/** The paced loop of one point; fills the timing fields of r. */
bool
measure(tracedPair &pair, uint64_t rate, uint64_t n, pointResult &r) {
    using clock = std::chrono::steady_clock;
    for (uint64_t i = 0; i < kWarmup; ++i) {
        if (!pair.transfer()) {
            return false;
        }
    }
    std::vector<uint32_t> ns(n);
    const auto period = std::chrono::duration<double, std::nano>(1e9 / double(rate));
    const auto start = clock::now();
    double sum = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const auto slot =
            start + std::chrono::duration_cast<clock::duration>(period * double(i));
        auto t0 = clock::now();
        while (t0 < slot) { // the pace: a busy wait for this transfer's slot
            t0 = clock::now();
        }
        const bool ok = pair.transfer();
        const auto t1 = clock::now();
        if (!ok) {
            std::fprintf(stderr, "trace_lttng_bench: a transfer failed (%s, %lu/s)\n",
                         r.tracer.c_str(), static_cast<unsigned long>(rate));
            return false;
        }
        const auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
        ns[i] = static_cast<uint32_t>(std::min<int64_t>(d, UINT32_MAX));
        sum += double(ns[i]);
    }
    const double secs = std::chrono::duration<double>(clock::now() - start).count();
    std::sort(ns.begin(), ns.end());
    r.transfers = n;
    r.achieved = secs > 0 ? double(n) / secs : 0;
    r.mean = n > 0 ? sum / double(n) : 0;
    r.p50 = percentile(ns, 0.50);
    r.p99 = percentile(ns, 0.99);
    r.p999 = percentile(ns, 0.999);
    r.max = ns.empty() ? 0 : ns.back();
    return pair.dataArrived();
}

/** A counter exported by one of the benchmark's plugins, looked up once it is loaded. */
uint64_t
pluginCounter(const std::string &lib, const char *symbol) {
    void *h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (h == nullptr) {
        return 0;
    }
    auto *fn = reinterpret_cast<uint64_t (*)()>(::dlsym(h, symbol));
    const uint64_t v = fn != nullptr ? fn() : 0;
    ::dlclose(h);
    return v;
}

std::string
exeDir() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(".") : p.parent_path().string();
}

double
fraction(const pointResult &r) {
    return r.reached < 0 || r.expected == 0 ? -1 : double(r.reached) / double(r.expected);
}

} // namespace

int
main(int argc, char **argv) {
    const std::optional<options> parsed = parse(argc, argv);
    if (!parsed) {
        usage();
        return 2;
    }
    const options &o = *parsed;
    const char *base = std::getenv("NIXL_PLUGIN_DIR");
    if (base == nullptr || *base == '\0') {
        std::fprintf(stderr, "trace_lttng_bench: NIXL_PLUGIN_DIR is not set (the directory of "
                             "libplugin_TEST.so and libtrace_backend_chrome.so)\n");
        return 2;
    }

    // Both trace files go under $TMPDIR (default /tmp): the same file system for both.
    const char *tmpdir = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
        "/nixl_lttng_bench_XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
        std::fprintf(stderr, "trace_lttng_bench: mkdtemp %s: %s\n", tmpl.c_str(),
                     std::strerror(errno));
        return 1;
    }
    const std::string root = tmpl;
    // The plugins the agents load: TEST and chrome from the build, null and lttng from here.
    const std::string plugins = root + "/plugins";
    const std::string own = exeDir();
    std::error_code ec;
    fs::create_directory(plugins, ec);
    std::map<std::string, std::string> lib; // tracer -> library file, when present
    auto link = [&](const std::string &dir, const std::string &file) {
        std::error_code lec;
        if (!fs::exists(dir + "/" + file, lec)) {
            return false;
        }
        fs::create_symlink(fs::absolute(dir + "/" + file, lec), plugins + "/" + file, lec);
        return !lec;
    };
    if (!link(base, "libplugin_TEST.so")) {
        std::fprintf(stderr, "trace_lttng_bench: no libplugin_TEST.so in %s\n", base);
        fs::remove_all(root, ec);
        return 2;
    }
    for (const auto &[tracer, dir] : std::map<std::string, std::string>{
             {"chrome", base}, {"null", own}, {"lttng", own}}) {
        const std::string file = "libtrace_backend_" + tracer + ".so";
        if (link(dir, file)) {
            lib[tracer] = plugins + "/" + file;
        }
    }
    ::setenv("NIXL_PLUGIN_DIR", plugins.c_str(), 1);
    const std::string chromeDir = root + "/chrome";
    ::setenv("NIXL_TRACE_DIR", chromeDir.c_str(), 1);
    // The file limit (1 GiB by default) would count as lost what the writer kept up with at
    // 1M/s; an LTTng session has no size limit by default either. A value set is kept.
    ::setenv("NIXL_TRACE_CHROME_MAX_BYTES", "0", 0);

    std::vector<std::string> wanted = o.tracers;
    if (std::find(wanted.begin(), wanted.end(), "lttng") != wanted.end() &&
        std::find(wanted.begin(), wanted.end(), "null") == wanted.end()) {
        // The LTTng count needs null's count of the events outside the loop (above).
        wanted.insert(wanted.begin() + 1, "null");
    }
    std::vector<std::string> tracers;
    std::unique_ptr<lttngDaemon> daemon;
    for (const std::string &t : wanted) {
        if (t != "off" && lib.count(t) == 0) {
            std::printf("%s: skipped: libtrace_backend_%s.so was not built\n", t.c_str(),
                        t.c_str());
            continue;
        }
        if (t == "lttng") {
            daemon = std::make_unique<lttngDaemon>(root);
            if (auto why = daemon->start()) {
                std::printf("lttng: skipped: the session daemon cannot run: %s\n", why->c_str());
                daemon.reset();
                continue;
            }
        }
        tracers.push_back(t);
    }

    std::vector<pointResult> results;
    std::map<uint64_t, uint64_t> nullExtra; ///< per rate: null's events outside the loop
    bool failed = false;
    for (const uint64_t rate : o.rates) {
        const uint64_t n = o.transfers != 0 ?
            o.transfers :
            std::max<uint64_t>(1, static_cast<uint64_t>(o.seconds * double(rate)));
        for (const std::string &t : tracers) {
            pointResult r;
            r.tracer = t;
            r.rate = rate;
            const std::string session = "nixl_bench_" + std::to_string(::getpid()) + "_" +
                std::to_string(rate);
            if (t == "lttng" && !daemon->begin(session)) {
                std::printf("lttng: %lu/s: the session did not start: %s\n",
                            static_cast<unsigned long>(rate), lastLine(daemon->log()).c_str());
                failed = true;
                continue;
            }
            // The null plugin's count around the pair's life and around the loop: what
            // setup and teardown trace (registrations, metadata) is not a transfer's event,
            // and the LTTng count has the same events to take off.
            auto nullCount = [&]() {
                return lib.count("null") != 0 ?
                    pluginCounter(lib["null"], "nixl_bench_null_events") :
                    0;
            };
            const uint64_t created = nullCount();
            const uint64_t tableBefore =
                t == "lttng" ? pluginCounter(lib[t], "nixl_bench_lttng_table_events") : 0;
            uint64_t loopBegin = 0, loopEnd = 0;
            {
                tracedPair pair("lt_" + t + "_" + std::to_string(rate), t);
                if (pair.setup()) {
                    loopBegin = nullCount();
                    r.ok = measure(pair, rate, n, r);
                    loopEnd = nullCount();
                }
                r.expected = (kWarmup + r.transfers) * kEventsPerTransfer;
            } // chrome: the file closes with the last agent using it, here
            if (t == "null") {
                r.reached = int64_t(loopEnd - loopBegin);
                nullExtra[rate] = (loopBegin - created) + (nullCount() - loopEnd);
            }
            if (t == "chrome") {
                const traceFileCounts c = countTraceFiles(chromeDir);
                const std::string name = "lt_chrome_" + std::to_string(rate) + "_initiator";
                auto it = c.transferEvents.find(name);
                r.reached = it == c.transferEvents.end() ? 0 : int64_t(it->second);
                r.discarded = c.dropped;
                for (const auto &e : fs::directory_iterator(chromeDir, ec)) {
                    std::error_code rec;
                    // Closed; moved away so the next count is of its own file. --keep keeps
                    // it, named by its rate, for a look at what the writer wrote.
                    if (o.keep) {
                        fs::rename(e.path(),
                                   root + "/chrome_" + std::to_string(rate) + ".json", rec);
                    } else {
                        fs::remove(e.path(), rec);
                    }
                }
            }
            if (t == "lttng") {
                uint64_t events = 0, discarded = 0;
                const uint64_t tables =
                    pluginCounter(lib[t], "nixl_bench_lttng_table_events") - tableBefore;
                if (daemon->end(events, discarded)) {
                    r.reached = int64_t(events) - int64_t(tables) - int64_t(nullExtra[rate]);
                    r.discarded = discarded;
                } else {
                    std::printf("lttng: %lu/s: the trace could not be counted: %s\n",
                                static_cast<unsigned long>(rate),
                                lastLine(daemon->log()).c_str());
                }
            }
            failed = failed || !r.ok;
            results.push_back(r);
        }
    }
    daemon.reset();

    // The table: per rate, every tracer against "off" of the same rate.
    std::printf("\ntrace file cost, one posting thread, TEST backend with phases (%d events per "
                "transfer), %s per point\n",
                kEventsPerTransfer,
                o.transfers != 0 ? (std::to_string(o.transfers) + " transfers").c_str() :
                                   (std::to_string(o.seconds) + " s").c_str());
    std::printf("%9s %-7s %10s %8s %8s %8s %9s %9s %9s %10s %9s\n", "rate/s", "tracer",
                "achieved/s", "p50_ns", "p99_ns", "p99.9_ns", "max_ns", "added_p50",
                "added_avg", "reached", "lost_cnt");
    auto find = [&](uint64_t rate, const std::string &t) -> const pointResult * {
        for (const pointResult &r : results) {
            if (r.rate == rate && r.tracer == t) {
                return &r;
            }
        }
        return nullptr;
    };
    for (const pointResult &r : results) {
        const pointResult *off = find(r.rate, "off");
        char reached[32] = "-";
        if (fraction(r) >= 0) {
            std::snprintf(reached, sizeof(reached), "%.4f", fraction(r));
        }
        std::printf("%9lu %-7s %10.0f %8.0f %8.0f %8.0f %9.0f %9.0f %9.0f %10s %9lu%s\n",
                    static_cast<unsigned long>(r.rate), r.tracer.c_str(), r.achieved, r.p50,
                    r.p99, r.p999, r.max, off != nullptr ? r.p50 - off->p50 : 0.0,
                    off != nullptr ? r.mean - off->mean : 0.0, reached,
                    static_cast<unsigned long>(r.discarded), r.ok ? "" : "  FAILED");
    }
    // The speed target's ratio: chrome's added cost over LTTng-UST's, same rate, same run.
    for (const uint64_t rate : o.rates) {
        const pointResult *off = find(rate, "off");
        const pointResult *c = find(rate, "chrome");
        const pointResult *l = find(rate, "lttng");
        if (off == nullptr || c == nullptr || l == nullptr) {
            continue;
        }
        const double la = l->mean - off->mean;
        const double ca = c->mean - off->mean;
        const double lp = l->p50 - off->p50;
        const double cp = c->p50 - off->p50;
        std::printf("%9lu chrome/lttng added cost: mean %.2fx, p50 %s\n",
                    static_cast<unsigned long>(rate), la > 0 ? ca / la : 0.0,
                    lp > 0 ? (std::to_string(cp / lp).substr(0, 4) + "x").c_str() :
                             "n/a (lttng adds nothing at p50)");
    }

    if (o.json) {
        // plot.py's shape: one line per rate and plotted tracer (chrome, the others as peers);
        // "block" is the paced rate, "iops" the achieved one, latencies the per-transfer cost.
        for (const uint64_t rate : o.rates) {
            const pointResult *c = find(rate, "chrome");
            auto fig = [&](const pointResult &r) {
                char buf[512];
                std::snprintf(buf, sizeof(buf),
                              "\"GBps\": %.6f, \"iops\": %.0f, \"p50_us\": %.4f, \"p99_us\": "
                              "%.4f, \"p999_us\": %.4f, \"max_us\": %.4f, \"avg_us\": %.4f, "
                              "\"reached\": %.6f",
                              r.achieved * kDescLen / 1e9, r.achieved, r.p50 / 1e3,
                              r.p99 / 1e3, r.p999 / 1e3, r.max / 1e3, r.mean / 1e3, fraction(r));
                return std::string(buf);
            };
            const pointResult *ours = c != nullptr ? c : find(rate, "off");
            if (ours == nullptr) {
                continue;
            }
            std::string line = "{\"bench\": \"trace_lttng\", \"op\": \"WRITE\", \"block\": " +
                std::to_string(rate) + ", \"batch\": 1, \"path\": \"" + ours->tracer + "\", " +
                fig(*ours) + ", \"peers\": [";
            bool first = true;
            for (const pointResult &r : results) {
                if (r.rate != rate || &r == ours) {
                    continue;
                }
                line += std::string(first ? "" : ", ") + "{\"name\": \"" + r.tracer + "\", " +
                    fig(r) + "}";
                first = false;
            }
            std::printf("%s]}\n", line.c_str());
        }
    }

    int rc = failed ? 1 : 0;
    if (o.check) {
        // Sanity only (no timing): every point ran, null received exactly the events of every
        // transfer, chrome and lttng wrote a share of them in (0, 1].
        for (const pointResult &r : results) {
            const double f = fraction(r);
            if (!r.ok || (r.tracer == "null" && f != 1.0) ||
                ((r.tracer == "chrome" || r.tracer == "lttng") && !(f > 0 && f <= 1.0))) {
                std::printf("check failed: %s at %lu/s (ok %d, reached %.4f)\n",
                            r.tracer.c_str(), static_cast<unsigned long>(r.rate), r.ok, f);
                rc = 1;
            }
        }
    }
    if (o.keep) {
        std::printf("kept %s\n", root.c_str());
    } else {
        fs::remove_all(root, ec);
    }
    return rc;
}
