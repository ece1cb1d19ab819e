/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "mp_store_reader.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <thread>

#include "mp_fd.h"

namespace nixlPromMp {

namespace {

    bool
    validBounds(const double *b, uint32_t n) noexcept {
        for (uint32_t i = 0; i < n; ++i) {
            if (!std::isfinite(b[i]) || b[i] <= 0 || (i > 0 && b[i] <= b[i - 1])) {
                return false;
            }
        }
        return true;
    }

    constexpr off_t
    slotOffset(uint32_t i) noexcept {
        return static_cast<off_t>(sizeof(nixlMpStoreHeader) + size_t{i} * sizeof(nixlMpStoreSlot));
    }

    void
    takeSlot(const nixlMpStoreSlot &s, uint32_t buckets, nixlMpSlotSnapshot *out) {
        out->counter = s.counter;
        out->gauge = s.gauge;
        out->buckets.assign(s.buckets, s.buckets + buckets + 1);
        std::copy(std::begin(s.buckets), std::end(s.buckets), out->words.begin());
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
