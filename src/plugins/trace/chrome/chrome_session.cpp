/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "chrome_session.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chrome_file.h"
#include "chrome_json.h"
#include "chrome_pace.h"
#include "nixl_plugin_sdk_common.h"

namespace {

// Process-wide: which session is live, and the registry of rings (registration, thread exit
// and the writer's snapshot). Never taken on the event path after a thread's first event.
std::mutex &
registryMutex() {
    static std::mutex mu;
    return mu;
}

std::weak_ptr<nixlChromeSession> liveSession; // guarded by registryMutex()
uint64_t liveSessionId = 0; // guarded by registryMutex()
std::atomic<uint64_t> nextSessionId{1};

thread_local nixlChromeSession::threadState tls;

/**
 * The event path's copy of tls's fields. initial-exec: one %fs-relative load instead of a
 * __tls_get_addr call (the plugin is dlopen'ed); its 16 bytes come from the static TLS surplus
 * glibc keeps for such libraries. Trivially destructible, so reading it needs no guard.
 */
struct fastThreadState {
    uint64_t sessionId;
    nixlChromeRing *ring;
};
thread_local fastThreadState fastTls __attribute__((tls_model("initial-exec"))) = {0, nullptr};

uint64_t
monotonicNs() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

size_t
roundUpPow2(size_t v) {
    size_t p = 4096;
    while (p < v) {
        p <<= 1;
    }
    return p;
}

} // namespace


nixlChromeSession::threadState::~threadState() {
    if (ring == nullptr) {
        return;
    }
    std::lock_guard<std::mutex> lk(registryMutex());
    if (sessionId == liveSessionId) {
        ring->orphaned.store(true, std::memory_order_release); // the writer drains and frees it
    }
    ring = nullptr;
    sessionId = 0;
    fastTls = fastThreadState{0, nullptr};
}

std::shared_ptr<nixlChromeSession>
nixlChromeSession::acquire(const nixlChromeConfig &cfg) {
    std::lock_guard<std::mutex> lk(registryMutex());
    if (auto s = liveSession.lock()) {
        if (s->dir_ != cfg.dir) {
            static std::atomic<bool> warned{false};
            if (!warned.exchange(true)) {
                NIXL_SDK_WARN("chrome: NIXL_TRACE_DIR='"
                              << cfg.dir << "' differs from the directory of this process's open "
                              << "trace file " << s->path_ << "; the process keeps one file");
            }
        }
        return s;
    }
    auto s = std::make_shared<nixlChromeSession>(cfg);
    liveSession = s;
    liveSessionId = s->id_;
    return s;
}

nixlChromeSession::nixlChromeSession(const nixlChromeConfig &cfg)
    : id_(nextSessionId.fetch_add(1)),
      pid_(static_cast<uint32_t>(getpid())),
      creatorPid_(getpid()),
      ringBytes_(roundUpPow2(cfg.bufferBytes)),
      interval_(cfg.flushInterval),
      maxFileBytes_(cfg.maxFileBytes),
      dir_(cfg.dir) {
    const int dirfd = nixlChromeFile::openDir(cfg.dir);
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    std::string name;
    for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
        name = nixlChromeFile::fileName(pid_, now, attempt);
        // O_EXCL: never reuse, truncate or follow whatever already has this name.
        fd_ = openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0600);
        if (fd_ < 0 && errno != EEXIST) {
            break;
        }
    }
    const int e = errno;
    close(dirfd);
    if (fd_ < 0) {
        nixlChromeFile::refuse(cfg.dir,
                               "cannot hold a new trace file " + name + ": " + std::strerror(e));
    }
    path_ = (std::filesystem::path(cfg.dir) / name).string();

    std::string head = "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":";
    nixlChromeJson::appendU64(head, pid_);
    head += ",\"tid\":0,\"args\":{\"name\":\"";
    nixlChromeJson::appendEscaped(head, program_invocation_short_name);
    head += " (pid ";
    nixlChromeJson::appendU64(head, pid_);
    head += ")\"}},\n";
    std::vector<iovec> iov{iovec{head.data(), head.size()}};
    if (!writeAll(iov)) {
        close(fd_);
        nixlChromeFile::refuse(cfg.dir, "trace file " + path_ + " cannot be written");
    }
    acceptedBytes_ = fileBytes_;
    meta_.reserve(4096);
    ioFree_.reserve(4); // the I/O thread keeps up to 4 under its lock: no allocation there
    try {
        writer_ = std::thread([this] { run(); });
    }
    catch (const std::exception &ex) {
        close(fd_);
        nixlChromeFile::refuse(
            cfg.dir, std::string("has its trace file but no writer thread: ") + ex.what());
    }
}

nixlChromeSession::~nixlChromeSession() {
    {
        std::lock_guard<std::mutex> lk(registryMutex());
        if (liveSessionId == id_) {
            liveSessionId = 0;
        }
    }
    if (getpid() != creatorPid_) {
        // A forked child has no writer thread and shares the parent's open file: leave both.
        new std::thread(std::move(writer_)); // never joined, deliberately leaked
        close(fd_);
    } else {
        {
            std::lock_guard<std::mutex> lk(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        writer_.join();
        close(fd_);
        const uint64_t d = dropped();
        // Where the events went, so that a loss can be told from the log alone: rings full
        // with a writer that waited long for the file point at the disk, rings full with a
        // long pass gap and no such wait at the CPU.
        const auto ms = [](uint64_t ns) { return static_cast<double>(ns) / 1e6; };
        std::ostringstream why;
        why << "ring full " << stats_.ringFull << ", failed writes " << stats_.failedWrites
            << ", past the size limit " << stats_.pastLimit << "; writer's longest pass gap "
            << ms(stats_.passGapMaxNs) << " ms, waits for the I/O queue " << stats_.ioWaits
            << " (longest " << ms(stats_.ioWaitMaxNs) << " ms), longest write "
            << ms(stats_.writeMaxNs) << " ms, woken by half-full rings " << stats_.wakes;
        if (d > 0) {
            NIXL_SDK_WARN("chrome: " << d << " trace events were dropped (" << why.str()
                                     << "); the count is in " << path_
                                     << " as counter nixl.dropped_events");
        } else {
            NIXL_SDK_INFO("chrome: trace written to " << path_ << " (" << why.str() << ")");
        }
    }
    std::lock_guard<std::mutex> lk(registryMutex());
    for (nixlChromeRing *r : rings_) {
        delete r;
    }
    rings_.clear();
}

nixlChromeRing *
nixlChromeSession::ring() noexcept {
    if (fastTls.sessionId == id_) [[likely]] {
        return fastTls.ring;
    }
    threadState &st = tls;
    if (st.sessionId == id_) {
        fastTls = fastThreadState{st.sessionId, st.ring};
        return st.ring;
    }
    try {
        auto ring = std::make_unique<nixlChromeRing>(ringBytes_);
        const auto tid = static_cast<uint64_t>(gettid());
        std::string &pt = ring->pidTid;
        pt += "\"pid\":";
        nixlChromeJson::appendU64(pt, pid_);
        pt += ",\"tid\":";
        nixlChromeJson::appendU64(pt, tid);
        char name[32] = {};
        if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) {
            name[0] = '\0';
        }
        std::string &line = ring->threadLine;
        line += "{\"name\":\"thread_name\",\"ph\":\"M\",";
        line += pt;
        line += ",\"args\":{\"name\":\"";
        nixlChromeJson::appendEscaped(line, name);
        line += name[0] != '\0' ? " (tid " : "thread (tid ";
        nixlChromeJson::appendU64(line, tid);
        line += ")\"}},\n";
        std::lock_guard<std::mutex> lk(registryMutex());
        rings_.push_back(ring.get());
        st.ring = ring.release();
        st.sessionId = id_;
        fastTls = fastThreadState{st.sessionId, st.ring};
        return st.ring;
    }
    catch (...) {
        return nullptr;
    }
}

uint32_t
nixlChromeSession::addAgent(std::unique_ptr<nixlChromeAgent> agent) {
    std::lock_guard<std::mutex> lk(mu_);
    agents_.push_back(std::move(agent));
    pendingMeta_ += "{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":";
    nixlChromeJson::appendU64(pendingMeta_, pid_);
    pendingMeta_ += ",\"tid\":0,\"args\":{\"labels\":\"nixl agents: ";
    for (size_t i = 0; i < agents_.size(); ++i) {
        pendingMeta_ += i == 0 ? "" : ", ";
        pendingMeta_ += agents_[i]->escaped;
    }
    pendingMeta_ += "\"}},\n";
    return static_cast<uint32_t>(agents_.size() - 1);
}

void
nixlChromeSession::flush() {
    std::unique_lock<std::mutex> lk(mu_);
    const uint64_t ticket = ++flushRequested_;
    cv_.notify_all();
    flushedCv_.wait(lk, [&] { return flushDone_ >= ticket; });
}

void
nixlChromeSession::run() {
    // The file's writes run on a thread of their own, so that a slow write (a file system
    // throttling dirty pages can hold one for tens of ms) never stops the rings' draining.
    // Started and joined here: a forked child, which has neither thread, is unaffected.
    std::thread io;
    try {
        io = std::thread([this] { ioRun(); });
    }
    catch (const std::exception &ex) {
        ioInline_ = true; // no second thread: writes stay on this one
        NIXL_SDK_WARN("chrome: no I/O thread (" << ex.what() << "); the writer writes itself");
    }
    std::unique_lock<std::mutex> lk(mu_);
    // The timed wait: up to interval_ while the rings fill slowly, shorter (down to 1 ms) while
    // a ring would fill before it ends. It starts at a sixteenth of the interval (a new file's
    // first events find the writer soon) and at most doubles per pass. Only timed passes change
    // it, so a writer with a long interval still runs only on flush() and destroy.
    std::chrono::microseconds wait = nixlChromePace::first(interval_);
    auto last = std::chrono::steady_clock::now();
    for (;;) {
        // Woken by the wait, a flush(), the destructor or a half-full ring.
        // Woken early also by a producer whose ring is half full (wakeWriter()): such a pass
        // counts as timed, so the wait is sized again from what it found.
        cv_.wait_until(lk, std::chrono::steady_clock::now() + wait, [&] {
            return stop_ || flushRequested_ != flushDone_ ||
                wakeRequested_.load(std::memory_order_acquire);
        });
        if (stop_) {
            break;
        }
        const bool timed = flushRequested_ == flushDone_;
        if (wakeRequested_.exchange(false, std::memory_order_acq_rel)) {
            ++stats_.wakes;
        }
        const uint64_t ticket = flushRequested_;
        meta_.swap(pendingMeta_);
        lk.unlock();
        const auto start = std::chrono::steady_clock::now();
        stats_.passGapMaxNs = std::max<uint64_t>(
            stats_.passGapMaxNs,
            static_cast<uint64_t>(std::chrono::nanoseconds(start - last).count()));
        const drained d = cycle(false);
        if (timed) {
            wait = nixlChromePace::next(d.fullest, d.dropped, ringBytes_, start - last, wait,
                                        interval_);
        } else {
            waitWritten(); // a flush: its events are in the file when it returns
        }
        last = start;
        lk.lock();
        flushDone_ = ticket;
        flushedCv_.notify_all();
    }
    meta_.swap(pendingMeta_);
    lk.unlock();
    cycle(true);
    if (io.joinable()) {
        {
            std::lock_guard<std::mutex> iolk(ioMu_);
            ioStop_ = true;
        }
        ioCv_.notify_all();
        io.join();
    }
    lk.lock();
    flushDone_ = flushRequested_;
    flushedCv_.notify_all();
}

const nixlChromeAgent *
nixlChromeSession::agent(uint32_t index) {
    if (index >= agentSnap_.size()) {
        // An agent added since the last look: its records were queued after addAgent returned.
        // Its label line is still pending (added after this cycle took the pending lines):
        // write it ahead of the event, so no event in the file names an agent the labels lack
        // (a file that stops growing would otherwise never get the label).
        std::lock_guard<std::mutex> lk(mu_);
        out_.append(pendingMeta_);
        pendingMeta_.clear();
        agentSnap_.clear();
        for (const auto &a : agents_) {
            agentSnap_.push_back(a.get());
        }
    }
    return index < agentSnap_.size() ? agentSnap_[index] : nullptr;
}

void
nixlChromeSession::writeOut(bool control) {
    size_t n = out_.size();
    if (n == 0) {
        return;
    }
    if (!control && maxFileBytes_ != 0 && (capped_ || acceptedBytes_ + n > maxFileBytes_)) {
        // Whole lines only: keep what ends at the last newline that fits, count the rest.
        const uint64_t room =
            capped_ || acceptedBytes_ >= maxFileBytes_ ? 0 : maxFileBytes_ - acceptedBytes_;
        const void *nl = room == 0 ? nullptr : memrchr(out_.data(), '\n', static_cast<size_t>(room));
        const size_t keep = nl == nullptr ? 0 : static_cast<size_t>(static_cast<const char *>(nl) - out_.data()) + 1;
        iovec rest{const_cast<char *>(out_.data()) + keep, n - keep};
        const size_t cut = nixlChromeFile::countEvents(&rest, 1, true);
        stats_.pastLimit += cut;
        dropped_.fetch_add(cut, std::memory_order_relaxed);
        if (!capped_) {
            capped_ = true;
            NIXL_SDK_WARN("chrome: trace file " << path_ << " reached NIXL_TRACE_CHROME_MAX_BYTES ("
                                                << maxFileBytes_
                                                << " bytes); further events are dropped and "
                                                   "counted, the file stays valid");
        }
        n = keep;
    }
    if (n > 0) {
        acceptedBytes_ += n;
        out_.truncate(n);
        queueWrite(out_);
    }
    out_.clear();
}

void
nixlChromeSession::queueWrite(nixlChromeLine &lines) {
    const size_t n = lines.size();
    if (ioInline_) {
        std::vector<iovec> iov{iovec{const_cast<char *>(lines.data()), n}};
        writeAll(iov);
        lines.clear();
        return;
    }
    std::unique_lock<std::mutex> lk(ioMu_);
    // Bounded: past kIoQueueBytes the formatting waits for the I/O thread (the writer may
    // wait; producers never do, their rings fill and drop instead).
    const auto fits = [&] { return ioQueued_ == 0 || ioQueued_ + n <= kIoQueueBytes; };
    if (!fits()) {
        const auto t0 = std::chrono::steady_clock::now();
        ioIdleCv_.wait(lk, fits);
        ++stats_.ioWaits;
        stats_.ioWaitMaxNs = std::max<uint64_t>(
            stats_.ioWaitMaxNs, static_cast<uint64_t>(std::chrono::nanoseconds(
                                    std::chrono::steady_clock::now() - t0).count()));
    }
    // The batch changes hands by swap; the writer goes on with a written batch's buffer.
    ioQueue_.emplace_back();
    ioQueue_.back().swap(lines);
    if (!ioFree_.empty()) {
        lines.swap(ioFree_.back());
        ioFree_.pop_back();
    }
    lines.clear();
    ioQueued_ += n;
    ioCv_.notify_one();
}

void
nixlChromeSession::waitWritten() {
    std::unique_lock<std::mutex> lk(ioMu_);
    ioIdleCv_.wait(lk, [&] { return ioQueue_.empty() && !ioBusy_; });
}

void
nixlChromeSession::ioRun() {
    std::unique_lock<std::mutex> lk(ioMu_);
    for (;;) {
        ioCv_.wait(lk, [&] { return ioStop_ || !ioQueue_.empty(); });
        if (ioQueue_.empty()) {
            return; // stopped, and everything queued is written
        }
        nixlChromeLine buf;
        buf.swap(ioQueue_.front());
        ioQueue_.pop_front();
        ioBusy_ = true;
        lk.unlock();
        iov_.assign(1, iovec{const_cast<char *>(buf.data()), buf.size()});
        const auto t0 = std::chrono::steady_clock::now();
        writeAll(iov_);
        stats_.writeMaxNs = std::max<uint64_t>(
            stats_.writeMaxNs, static_cast<uint64_t>(std::chrono::nanoseconds(
                                   std::chrono::steady_clock::now() - t0).count()));
        lk.lock();
        ioBusy_ = false;
        ioQueued_ -= buf.size();
        if (ioFree_.size() < 4) {
            ioFree_.emplace_back();
            ioFree_.back().swap(buf);
        }
        ioIdleCv_.notify_all();
    }
}

nixlChromeSession::drained
nixlChromeSession::cycle(bool final) {
    // Lines are formatted here, on the writer thread, and written in batches of whole lines
    // of about this size (bounding the writer's buffer however much the rings hold).
    constexpr size_t kBatchBytes = 256 * 1024;
    snapshot_.clear();
    std::vector<bool> orphaned; // small; the writer may allocate
    {
        std::lock_guard<std::mutex> lk(registryMutex());
        snapshot_.assign(rings_.begin(), rings_.end());
        for (nixlChromeRing *r : snapshot_) {
            // Read under the lock that the exiting thread set it under: every record of that
            // thread is then visible to used() below.
            orphaned.push_back(r->orphaned.load(std::memory_order_acquire));
        }
    }
    out_.clear();
    out_.append(meta_);
    drained seen;
    for (nixlChromeRing *r : snapshot_) {
        if (!r->threadLineWritten) {
            out_.append(r->threadLine);
            r->threadLineWritten = true;
        }
        size_t n = r->used();
        seen.fullest = std::max(seen.fullest, n);
        size_t pos = 0; // past the ring's tail
        while (pos < n) {
            uint32_t size = 0;
            if (n - pos >= sizeof(nixlChromeRecord::header)) {
                r->peek(pos, &size, sizeof(size));
            }
            if (size < sizeof(nixlChromeRecord::header) || size > n - pos) {
                // Cannot happen (producers publish whole records); never loop on it.
                dropped_.fetch_add(1, std::memory_order_relaxed);
                pos = n; // released whole, as it was
                break;
            }
            rec_.resize(std::max<size_t>(rec_.size(), size));
            r->peek(pos, rec_.data(), size);
            uint32_t agentIndex = 0;
            std::memcpy(&agentIndex, rec_.data() + offsetof(nixlChromeRecord::header, agent),
                        sizeof(agentIndex));
            if (!nixlChromeRecord::format(out_, rec_.data(), size, agent(agentIndex),
                                          r->pidTid)) {
                dropped_.fetch_add(1, std::memory_order_relaxed);
            }
            pos += size;
            if (out_.size() >= kBatchBytes) {
                // Formatted: the producer may reuse the space while the batch is written.
                r->consume(pos);
                n -= pos;
                pos = 0;
                writeOut();
            }
        }
        r->consume(pos);
        // After the drain: an orphaned ring's last drops are visible (read under the lock).
        if (const uint64_t lost = r->takeDrops(); lost != 0) {
            stats_.ringFull += lost;
            dropped_.fetch_add(lost, std::memory_order_relaxed);
            seen.dropped = true;
        }
    }
    writeOut(); // the events (subject to the file limit); the counter below always goes out
    if (final) {
        waitWritten(); // the last counter includes the events of writes that failed
    }
    const uint64_t d = dropped();
    // Past the limit the counter is written once more (the cycle that reached it) and at the
    // end, so a capped file grows by at most two counter lines.
    if (final || (d != droppedWritten_ && !(capped_ && cappedCounterWritten_))) {
        cappedCounterWritten_ = capped_;
        // The drop count as a counter track, rewritten whenever it changed and at the end.
        out_.lit("{\"name\":\"nixl.dropped_events\",\"ph\":\"C\",\"pid\":");
        nixlChromeJson::appendU64(out_, pid_);
        out_.lit(",\"tid\":0,\"ts\":");
        nixlChromeJson::appendMicros(out_, monotonicNs());
        out_.lit(",\"args\":{\"dropped\":");
        nixlChromeJson::appendU64(out_, d);
        if (final) {
            out_.lit("}}\n]\n");
        } else {
            out_.lit("}},\n");
        }
        droppedWritten_ = d;
    }
    writeOut(true);
    meta_.clear();
    std::lock_guard<std::mutex> lk(registryMutex());
    for (size_t i = 0; i < snapshot_.size(); ++i) {
        if (orphaned[i]) {
            std::erase(rings_, snapshot_[i]);
            delete snapshot_[i];
        }
    }
    return seen;
}

bool
nixlChromeSession::writeAll(std::vector<iovec> &iov) {
    orig_.assign(iov.begin(), iov.end()); // iov is advanced below; a cut line is found in orig_
    size_t at = 0; // first iovec not fully written
    bool atLineStart = true;
    while (at < iov.size() && !broken_) {
        const int cnt = static_cast<int>(std::min<size_t>(iov.size() - at, IOV_MAX));
        const ssize_t w = writev(fd_, iov.data() + at, cnt);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            const int e = w < 0 ? errno : EIO;
            if (!writeErrorLogged_) {
                writeErrorLogged_ = true;
                NIXL_SDK_ERROR("chrome: writing trace file " << path_ << " failed: "
                                                             << std::strerror(e)
                                                             << "; its events are dropped");
            }
            // A line cut by the failure must stay the file's last: stop writing.
            broken_ = !atLineStart;
            break;
        }
        fileBytes_ += static_cast<uint64_t>(w);
        size_t left = static_cast<size_t>(w);
        while (left > 0) {
            iovec &v = iov[at];
            const size_t step = std::min(left, v.iov_len);
            atLineStart = static_cast<const char *>(v.iov_base)[step - 1] == '\n';
            v.iov_base = static_cast<char *>(v.iov_base) + step;
            v.iov_len -= step;
            left -= step;
            if (v.iov_len == 0) {
                ++at;
            }
        }
    }
    if (at < iov.size()) {
        // A line cut by the failure is lost too.
        const bool cutEvent = !atLineStart &&
            nixlChromeFile::cutLineIsEvent(orig_, at, orig_[at].iov_len - iov[at].iov_len);
        const size_t lost =
            nixlChromeFile::countEvents(iov.data() + at, iov.size() - at, atLineStart);
        stats_.failedWrites += lost + (cutEvent ? 1 : 0);
        dropped_.fetch_add(lost + (cutEvent ? 1 : 0), std::memory_order_relaxed);
        return false;
    }
    return true;
}
