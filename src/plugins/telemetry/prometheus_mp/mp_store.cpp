/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "mp_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "nixl_plugin_sdk_common.h"

namespace nixlPromMp {

namespace {

    uint64_t
    fnv1a(uint64_t h, const void *data, size_t len) noexcept {
        const auto *p = static_cast<const unsigned char *>(data);
        for (size_t i = 0; i < len; ++i) {
            h ^= p[i];
            h *= 0x100000001b3ull;
        }
        return h;
    }

    uint64_t
    fnv1aStr(uint64_t h, const char *s) noexcept {
        const std::string_view v = s == nullptr ? std::string_view() : std::string_view(s);
        const uint64_t len = v.size();
        h = fnv1a(h, &len, sizeof(len));
        return fnv1a(h, v.data(), v.size());
    }

    std::string
    errnoText(int err) {
        char buf[128];
        // GNU strerror_r returns the message, which may not be buf.
        return std::string(strerror_r(err, buf, sizeof(buf)));
    }

    /** Per-process constant that two runs sharing a pid cannot both have. */
    uint64_t
    runMarker() noexcept {
        static const uint64_t marker = [] {
            timespec ts{};
            clock_gettime(CLOCK_REALTIME, &ts);
            return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
                static_cast<uint64_t>(ts.tv_nsec);
        }();
        return marker;
    }

    void
    copyField(char *dst, size_t cap, const std::string &src) noexcept {
        const size_t n = std::min(cap - 1, src.size());
        std::memcpy(dst, src.data(), n);
        dst[n] = '\0';
    }

    uint64_t
    load(const uint64_t *p) noexcept {
        return __atomic_load_n(p, __ATOMIC_RELAXED);
    }

    void
    store(uint64_t *p, uint64_t v) noexcept {
        __atomic_store_n(p, v, __ATOMIC_RELAXED);
    }

    // Seqlock data stores. Release keeps the odd generation ahead of the data; the reader
    // (copySlots, through pread) orders its copies with fences between the reads.
    void
    storeData(uint64_t *p, uint64_t v) noexcept {
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
    }

    /** Closes an fd on scope exit unless released. */
    struct fdGuard {
        int fd = -1;
        ~fdGuard() {
            if (fd >= 0) {
                close(fd);
            }
        }
        int
        release() noexcept {
            const int f = fd;
            fd = -1;
            return f;
        }
    };

    bool
    validBounds(const double *b, uint32_t n) noexcept {
        for (uint32_t i = 0; i < n; ++i) {
            if (!std::isfinite(b[i]) || b[i] <= 0 || (i > 0 && b[i] <= b[i - 1])) {
                return false;
            }
        }
        return true;
    }

} // namespace

nixlMpSchema::nixlMpSchema(std::span<const nixl_telemetry_event_info_t> table) {
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv1a(h, &kLayoutVersion, sizeof(kLayoutVersion));
    const uint64_t count = table.size();
    h = fnv1a(h, &count, sizeof(count));
    rows.reserve(table.size());
    for (size_t i = 0; i < table.size(); ++i) {
        const nixl_telemetry_event_info_t &info = table[i];
        if (info.type != i) {
            throw std::runtime_error("prometheus_mp: event table row " + std::to_string(i) +
                                     " has type " + std::to_string(info.type) +
                                     "; core must pass rows in type order");
        }
        row r;
        r.category = info.category;
        r.names = nixlProm::namesFor(info);
        r.statusLabel = info.status_label == nullptr ? std::string() : info.status_label;
        h = fnv1a(h, &info.type, sizeof(info.type));
        h = fnv1a(h, &info.category, sizeof(info.category));
        h = fnv1aStr(h, info.name);
        h = fnv1aStr(h, info.status_label);
        rows.push_back(std::move(r));
    }
    hash = h;
}

uint64_t
monotonicNs() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string
sanitizeLabel(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    const auto *p = reinterpret_cast<const unsigned char *>(s.data());
    const size_t n = s.size();
    size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        if (c >= 0x20 && c < 0x7f) {
            out.push_back(static_cast<char>(c));
            ++i;
            continue;
        }
        size_t len = 0;
        unsigned char lo = 0x80, hi = 0xbf;
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            lo = c == 0xe0 ? 0xa0 : 0x80;
            hi = c == 0xed ? 0x9f : 0xbf;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            lo = c == 0xf0 ? 0x90 : 0x80;
            hi = c == 0xf4 ? 0x8f : 0xbf;
        }
        bool ok = len != 0 && i + len <= n && p[i + 1] >= lo && p[i + 1] <= hi;
        for (size_t k = 2; ok && k < len; ++k) {
            ok = p[i + k] >= 0x80 && p[i + k] <= 0xbf;
        }
        if (ok) {
            out.append(s.substr(i, len));
            i += len;
        } else {
            out.push_back('?');
            ++i;
        }
    }
    return out;
}

bool
isStoreName(std::string_view name) noexcept {
    return name.size() > 10 && name.starts_with("nixl.") && name.ends_with(".mmap");
}

bool
isStagingName(std::string_view name) noexcept {
    return name.size() > 14 && name.starts_with(".nixl.") && name.ends_with(".staging");
}

nixlMpStoreWriter::nixlMpStoreWriter(const std::string &dir,
                             const nixlMpSchema &schema,
                             const std::vector<double> &boundsUs,
                             const nixlMpIdentity &id)
    : size_(storeSize(schema.slotCount())),
      boundsUs_(boundsUs) {
    if (boundsUs.size() > kMaxBuckets) {
        throw std::runtime_error("prometheus_mp: " + std::to_string(boundsUs.size()) +
                                 " histogram bounds, at most " + std::to_string(kMaxBuckets) +
                                 " fit a store");
    }
    categories_.reserve(schema.rows.size());
    for (const auto &r : schema.rows) {
        categories_.push_back(r.category);
    }
    const std::string stem = std::to_string(static_cast<long long>(id.pid)) + "." +
        std::to_string(runMarker()) + "." + std::to_string(id.instance);
    const std::string name = "nixl." + stem + ".mmap";
    const std::string staging = ".nixl." + stem + ".staging";

    fdGuard dirfd{open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (dirfd.fd < 0) {
        throw std::runtime_error("prometheus_mp: cannot open NIXL_TELEMETRY_MULTIPROC_DIR '" + dir +
                                 "': " + errnoText(errno));
    }

    // Nameless first (O_TMPFILE, then linkat), so no reader ever sees a store that is not yet
    // locked and initialised; a staging name and rename where that is not possible.
    for (const bool staged : {false, true}) {
        fdGuard fd{staged ? openat(dirfd.fd,
                                   staging.c_str(),
                                   O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC,
                                   0600) :
                            openat(dirfd.fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)};
        if (fd.fd < 0) {
            if (!staged) {
                continue; // filesystem without O_TMPFILE
            }
            throw std::runtime_error("prometheus_mp: cannot create a store in '" + dir +
                                     "': " + errnoText(errno));
        }
        auto fail = [&](const std::string &what) {
            const std::string msg = "prometheus_mp: " + what + " for store '" + dir + "/" + name +
                "': " + errnoText(errno);
            if (staged) {
                unlinkat(dirfd.fd, staging.c_str(), 0);
            }
            return std::runtime_error(msg);
        };
        if (flock(fd.fd, LOCK_EX | LOCK_NB) != 0) {
            // The store works, but a reader cannot tell when its writer is gone: never reaped.
            NIXL_SDK_WARN("prometheus_mp: cannot lock store in '"
                          << dir << "' (" << errnoText(errno)
                          << "); its series will not be dropped after this agent exits");
        }
        if (ftruncate(fd.fd, static_cast<off_t>(size_)) != 0) {
            throw fail("ftruncate");
        }
        // Every block backed before the mapping writes it: a store to an unbacked page of a
        // sparse file on a full file system is a SIGBUS, not an error (issue 29 item 2).
        if (const int err = posix_fallocate(fd.fd, 0, static_cast<off_t>(size_)); err != 0) {
            errno = err;
            throw fail("cannot reserve " + std::to_string(size_) + " bytes");
        }
        void *map = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd.fd, 0);
        if (map == MAP_FAILED) {
            throw fail("mmap");
        }
        auto *h = static_cast<nixlMpStoreHeader *>(map);
        h->layoutVersion = kLayoutVersion;
        h->slotCount = schema.slotCount();
        h->schemaHash = schema.hash;
        h->totalSize = size_;
        h->pid = id.pid;
        h->instance = id.instance;
        h->lastUpdateNs = monotonicNs();
        h->bucketCount = static_cast<uint32_t>(boundsUs.size());
        h->flags = id.hasLocalRank ? kFlagHasLocalRank : 0u;
        copyField(h->agentName, sizeof(h->agentName), id.agentName);
        copyField(h->hostname, sizeof(h->hostname), id.hostname);
        copyField(h->localRank, sizeof(h->localRank), id.localRank);
        std::copy(boundsUs.begin(), boundsUs.end(), h->bucketBoundsUs);
        __atomic_store_n(&h->magic, kStoreMagic, __ATOMIC_RELEASE);

        bool linked = false;
        if (!staged) {
            linked = linkat(fd.fd, "", dirfd.fd, name.c_str(), AT_EMPTY_PATH) == 0;
            if (!linked) {
                // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; the /proc/self/fd path does not.
                const std::string self = "/proc/self/fd/" + std::to_string(fd.fd);
                linked = linkat(AT_FDCWD,
                                self.c_str(),
                                dirfd.fd,
                                name.c_str(),
                                AT_SYMLINK_FOLLOW) == 0;
            }
        } else {
            linked = renameat(dirfd.fd, staging.c_str(), dirfd.fd, name.c_str()) == 0;
        }
        if (!linked) {
            munmap(map, size_);
            if (!staged) {
                continue; // e.g. no /proc: stage and rename instead
            }
            throw fail("publishing");
        }
        map_ = map;
        path_ = dir + "/" + name;
        fd_ = fd.release();
        return;
    }
}

nixlMpStoreWriter::~nixlMpStoreWriter() {
    if (map_ != nullptr) {
        touch();
        munmap(map_, size_);
    }
    if (fd_ >= 0) {
        close(fd_); // releases the lock: readers now see the store as departed
    }
}

nixlMpStoreSlot *
nixlMpStoreWriter::slot(uint32_t i) const noexcept {
    return reinterpret_cast<nixlMpStoreSlot *>(static_cast<char *>(map_) + sizeof(nixlMpStoreHeader) +
                                           static_cast<size_t>(i) * sizeof(nixlMpStoreSlot));
}

bool
nixlMpStoreWriter::record(uint32_t type, uint64_t value) noexcept {
    if (type >= categories_.size()) {
        return false;
    }
    nixlMpStoreSlot *s = slot(type);
    const uint64_t seq = load(&s->seq);
    store(&s->seq, seq + 1);
    storeData(&s->counter, load(&s->counter) + value);
    switch (categories_[type]) {
    case NIXL_TELEMETRY_CAT_BYTES:
        storeData(&s->gauge, value);
        break;
    case NIXL_TELEMETRY_CAT_DURATION_US: {
        storeData(&s->gauge, value);
        // lower_bound: a value equal to a bound belongs to that bound's bucket (le semantics).
        const size_t idx = static_cast<size_t>(
            std::lower_bound(boundsUs_.begin(), boundsUs_.end(), static_cast<double>(value)) -
            boundsUs_.begin());
        storeData(&s->buckets[idx], load(&s->buckets[idx]) + 1);
        break;
    }
    default:
        break;
    }
    __atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
    return true;
}

void
nixlMpStoreWriter::touch() noexcept {
    __atomic_store_n(&header()->lastUpdateNs, monotonicNs(), __ATOMIC_RELAXED);
}

namespace {

    constexpr off_t
    slotOffset(uint32_t i) noexcept {
        return static_cast<off_t>(sizeof(nixlMpStoreHeader) + size_t{i} * sizeof(nixlMpStoreSlot));
    }

    void
    takeSlot(const nixlMpStoreSlot &s, uint32_t buckets, nixlMpSlotSnapshot *out) {
        out->counter = s.counter;
        out->gauge = s.gauge;
        out->buckets.assign(s.buckets, s.buckets + buckets + 1);
        out->torn = false;
        out->unsettled = false;
    }

    /**
     * Orders two preads as acquire loads would be ordered. g++ refuses atomic_thread_fence under
     * -fsanitize=thread (-Werror=tsan); a seq_cst read-modify-write orders at least as strongly.
     */
    static void
    readFence() noexcept {
#if defined(__SANITIZE_THREAD__)
        static std::atomic<unsigned> barrier{0};
        barrier.fetch_add(0, std::memory_order_seq_cst);
#else
        std::atomic_thread_fence(std::memory_order_acquire);
#endif
    }

    bool
    readExactly(int fd, void *buf, size_t len, off_t off) noexcept {
        return pread(fd, buf, len, off) == static_cast<ssize_t>(len);
    }

    /**
     * The seqlock read through pread: the opening seq, a fence, the data, a fence, the closing
     * seq (the fences order the kernel's copies as acquire loads would). Consistent when both
     * seqs are equal and even. False in *ok when the file came back short.
     */
    bool
    reReadSlot(int fd, uint32_t i, nixlMpStoreSlot *copy, bool *ok) noexcept {
        uint64_t s1 = 0;
        uint64_t s2 = 0;
        *ok = readExactly(fd, &s1, sizeof(s1), slotOffset(i));
        readFence();
        *ok = *ok && readExactly(fd, copy, sizeof(*copy), slotOffset(i));
        readFence();
        *ok = *ok && readExactly(fd, &s2, sizeof(s2), slotOffset(i));
        return *ok && s1 == s2 && (s1 & 1u) == 0;
    }

    /**
     * Copies every slot under its seqlock within budget (see nixlMpReadBudget), through pread.
     * Three copies of the whole slot area, fenced: a slot whose seq is equal and even in the
     * first and the third takes its data from the second. A live writer's update takes
     * nanoseconds, so a few re-reads of one slot (yielding after the first 64) find it done; a
     * departed writer's odd seq never changes, so its slot is read once and marked torn. False
     * when the file came back short (truncated meanwhile).
     */
    bool
    copySlots(int fd,
              uint32_t count,
              uint32_t buckets,
              nixlMpStoreSnapshot *out,
              nixlMpReadBudget &budget) {
        const size_t bytes = size_t{count} * sizeof(nixlMpStoreSlot);
        std::vector<nixlMpStoreSlot> copies(3 * size_t{count});
        nixlMpStoreSlot *c0 = copies.data();
        nixlMpStoreSlot *c1 = c0 + count;
        nixlMpStoreSlot *c2 = c1 + count;
        if (!readExactly(fd, c0, bytes, slotOffset(0))) {
            return false;
        }
        readFence();
        if (!readExactly(fd, c1, bytes, slotOffset(0))) {
            return false;
        }
        readFence();
        if (!readExactly(fd, c2, bytes, slotOffset(0))) {
            return false;
        }
        out->slots.resize(count);
        for (uint32_t i = 0; i < count; ++i) {
            nixlMpSlotSnapshot *snap = &out->slots[i];
            ++budget.copies;
            if (c0[i].seq == c2[i].seq && (c0[i].seq & 1u) == 0) {
                takeSlot(c1[i], buckets, snap);
                continue;
            }
            if (out->departed) {
                takeSlot(c1[i], buckets, snap);
                snap->torn = true;
                ++budget.torn;
                continue;
            }
            bool consistent = false;
            nixlMpStoreSlot again{};
            for (uint64_t r = 0; !consistent && r < kSlotRetries && budget.retriesLeft > 0; ++r) {
                --budget.retriesLeft;
                if (r >= 64) {
                    std::this_thread::yield();
                }
                ++budget.copies;
                bool ok = true;
                consistent = reReadSlot(fd, i, &again, &ok);
                if (!ok) {
                    return false;
                }
            }
            if (consistent) {
                takeSlot(again, buckets, snap);
            } else {
                // Published as read: off by at most the events of one burst, and the
                // histogram's count is derived from its buckets, so it stays self-consistent.
                takeSlot(c1[i], buckets, snap);
                snap->unsettled = true;
                ++budget.unsettled;
            }
        }
        return true;
    }

} // namespace

int
openStoreFile(const std::string &path, nixlMpReadStatus *status, std::string *why) noexcept {
    try {
        const std::string notOurs = "not a regular file owned by uid " + std::to_string(geteuid());
        // lstat first: a FIFO or device named like a store is never opened at all.
        struct stat st{};
        if (lstat(path.c_str(), &st) != 0) {
            const int err = errno;
            *status = err == ENOENT ? nixlMpReadStatus::VANISHED : nixlMpReadStatus::UNREADABLE;
            *why = "cannot stat: " + errnoText(err);
            return -1;
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            *status = nixlMpReadStatus::FOREIGN;
            *why = notOurs;
            return -1;
        }
        // O_NONBLOCK: the name may have been replaced by a FIFO since lstat.
        const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
            const int err = errno;
            *status = err == ENOENT ? nixlMpReadStatus::VANISHED :
                err == ELOOP        ? nixlMpReadStatus::FOREIGN :
                                      nixlMpReadStatus::UNREADABLE;
            *why = "cannot open: " + errnoText(err);
            return -1;
        }
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            close(fd);
            *status = nixlMpReadStatus::FOREIGN;
            *why = notOurs;
            return -1;
        }
        return fd;
    }
    catch (...) {
        *status = nixlMpReadStatus::UNREADABLE;
        return -1;
    }
}

nixlMpReadStatus
readStore(const std::string &path,
          const nixlMpSchema &schema,
          nixlMpStoreSnapshot *out,
          std::string *why,
          nixlMpReadBudget *budget) noexcept {
    try {
        nixlMpReadBudget own;
        nixlMpReadBudget &bud = budget != nullptr ? *budget : own;
        out->path = path;
        out->departed = false;
        nixlMpReadStatus status = nixlMpReadStatus::OK;
        fdGuard fd{openStoreFile(path, &status, why)};
        if (fd.fd < 0) {
            return status;
        }
        struct stat st{};
        if (fstat(fd.fd, &st) != 0) {
            *why = "cannot stat: " + errnoText(errno);
            return nixlMpReadStatus::UNREADABLE;
        }
        // A shared lock succeeds only when no writer holds its exclusive one. Where flock is
        // unusable the store reads as held, so it is never reaped by mistake.
        out->departed = flock(fd.fd, LOCK_SH | LOCK_NB) == 0;
        const size_t expected = storeSize(schema.slotCount());
        if (st.st_size < static_cast<off_t>(sizeof(nixlMpStoreHeader))) {
            *why = "file of " + std::to_string(st.st_size) + " bytes is shorter than a header";
            return nixlMpReadStatus::REFUSED;
        }
        // pread, never mmap: a store truncated while we read it (by anyone) makes a read come
        // back short; a mapping would raise SIGBUS in the process serving the scrape.
        nixlMpStoreHeader hdr{};
        if (pread(fd.fd, &hdr, sizeof(hdr), 0) != static_cast<ssize_t>(sizeof(hdr))) {
            *why = "shrank while being read";
            return nixlMpReadStatus::REFUSED;
        }
        const nixlMpStoreHeader *h = &hdr;
        if (h->magic != kStoreMagic) {
            *why = "bad magic";
            return nixlMpReadStatus::REFUSED;
        }
        if (h->layoutVersion != kLayoutVersion) {
            *why = "store schema version " + std::to_string(h->layoutVersion) + ", expected " +
                std::to_string(kLayoutVersion);
            return nixlMpReadStatus::REFUSED;
        }
        if (h->slotCount != schema.slotCount() || h->schemaHash != schema.hash) {
            *why = "event schema of " + std::to_string(h->slotCount) +
                " slots differs from this exporter's " + std::to_string(schema.slotCount());
            return nixlMpReadStatus::REFUSED;
        }
        if (h->totalSize != expected || static_cast<size_t>(st.st_size) < expected) {
            // Both sizes: either one can be the one that differs.
            *why = "size " + std::to_string(h->totalSize) + " in the header and " +
                std::to_string(st.st_size) + " on disk, expected " + std::to_string(expected);
            return nixlMpReadStatus::REFUSED;
        }
        if (h->bucketCount > kMaxBuckets || !validBounds(h->bucketBoundsUs, h->bucketCount)) {
            *why = "invalid histogram bounds";
            return nixlMpReadStatus::REFUSED;
        }
        // At most size - 1 bytes, as the writer stores them, even when a damaged or foreign
        // store has no NUL in the field (the documented limits: 255, 127 and 63 bytes).
        out->id.agentName = sanitizeLabel(
            std::string_view(h->agentName, strnlen(h->agentName, kAgentNameLen - 1)));
        out->id.hostname =
            sanitizeLabel(std::string_view(h->hostname, strnlen(h->hostname, kHostnameLen - 1)));
        out->id.hasLocalRank = (h->flags & kFlagHasLocalRank) != 0;
        out->id.localRank = sanitizeLabel(
            std::string_view(h->localRank, strnlen(h->localRank, kLocalRankLen - 1)));
        out->id.pid = h->pid;
        out->id.instance = h->instance;
        out->lastUpdateNs = h->lastUpdateNs;
        out->boundsUs.assign(h->bucketBoundsUs, h->bucketBoundsUs + h->bucketCount);
        if (!copySlots(fd.fd, schema.slotCount(), h->bucketCount, out, bud)) {
            *why = "shrank while being read";
            return nixlMpReadStatus::REFUSED;
        }
        return nixlMpReadStatus::OK;
    }
    catch (const std::exception &e) {
        *why = e.what();
        return nixlMpReadStatus::UNREADABLE;
    }
}

} // namespace nixlPromMp
