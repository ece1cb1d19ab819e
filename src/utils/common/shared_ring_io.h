/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file shared_ring_io.h
 * @brief One side of a ring file (layout of shared_ring.h, docs/telemetry-ring.md) driven only
 *        through pread/pwrite on its own descriptor: the file is never mapped, so nothing done
 *        to it by another process (truncate, shrink, rewrite, unlink) can raise SIGBUS here.
 *
 * Why not a mapping: a shared mapping of a file that another process can truncate faults with
 * SIGBUS on the first access to a page past the new end of file, and a regular file cannot be
 * protected against that (seals exist only for memfd, leases and locks do not stop truncate,
 * mandatory locking is gone from Linux). A system call on a truncated file only returns short
 * or extends it again. The BUFFER exporter (the producer) and both example readers (the
 * consumer) use this class; nixlSharedRing (mmap) stays for processes that own their file.
 *
 * Protocol (the same as nixlSharedRing, so the two interoperate on one file):
 *  - Producer: pwrite the slots, a full fence, pwrite write_pos (8 aligned bytes). It learns the
 *    consumer's position with pread and accepts only a value inside the window the consumer can
 *    have reached (between its last known value and write_pos); anything else is treated as
 *    damage.
 *  - Consumer: fstat + pread of the header every poll (size, version, capacity, mask and
 *    write_pos must still be those of a ring; anything else ends the reader with a message),
 *    a fence, pread of the slots, a full fence, pwrite read_pos.
 *  - verify() (producer, once per flush) reports a file that no longer is the ring it wrote:
 *    wrong size, a producer field it did not write, an impossible read_pos, or the file removed
 *    from its directory; reset() then rewrites size and header (positions 0), after which
 *    readers must re-attach.
 *
 * Thread-safety: one object is one side; its calls must not overlap (the exporter's flush
 * thread, or the reader's loop). Two objects on the same file in different threads or
 * processes follow the ring's SPSC rule (one producer, one consumer).
 */
#ifndef NIXL_SRC_UTILS_COMMON_SHARED_RING_IO_H
#define NIXL_SRC_UTILS_COMMON_SHARED_RING_IO_H

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/shared_ring.h"

template<typename T> class nixlSharedRingIo {
    using layout = nixlSharedRing<T>;

public:
    /** Bytes of the header verify()/popBatch() re-read: the producer fields and read_pos. */
    static constexpr size_t kCheckedBytes = offsetof(nixlSharedRingHeader, readPos) + 8;
    static constexpr size_t kHeaderSize = layout::kHeaderSize;

    /**
     * Producer: creates path (or reuses a regular file there), sizes it for capacity slots and
     * writes a fresh header. O_NOFOLLOW: a symlink at path is refused. Null, with error naming
     * the file and cause, on failure.
     */
    static std::unique_ptr<nixlSharedRingIo>
    create(const std::string &path, uint64_t capacity, std::string &error, mode_t mode = 0644) {
        if (!layout::validCapacity(path, capacity, error)) {
            return nullptr;
        }
        struct stat st {};
        const int fd = nixlSharedRingOpenFile(path, true, mode, st, error);
        if (fd < 0) {
            return nullptr;
        }
        std::unique_ptr<nixlSharedRingIo> ring(new nixlSharedRingIo(path, fd));
        if (!nixlSharedRingFileIsOwn(path, st, error)) {
            return nullptr;
        }
        ring->mask_ = capacity - 1;
        if (!ring->reset(error)) {
            return nullptr;
        }
        return ring;
    }

    /**
     * Consumer: opens an existing ring file after validating it (nixlSharedRing::openExisting)
     * and resumes at its stored read_pos. Null, with error, on failure.
     */
    static std::unique_ptr<nixlSharedRingIo>
    attach(const std::string &path, std::string &error) {
        nixlSharedRingHeader h{};
        const int fd = layout::openExisting(path, h, error);
        if (fd < 0) {
            return nullptr;
        }
        std::unique_ptr<nixlSharedRingIo> ring(new nixlSharedRingIo(path, fd));
        if (h.writePos > h.mask || h.readPos > h.mask) {
            error = "ring file " + path + ": write_pos " + std::to_string(h.writePos) +
                " or read_pos " + std::to_string(h.readPos) + " is outside the " +
                std::to_string(h.capacity) + "-slot ring";
            return nullptr;
        }
        ring->mask_ = h.mask;
        ring->lost_ = h.lostEvents;
        ring->pos_ = h.readPos & h.mask;
        ring->otherPos_ = h.writePos & h.mask;
        return ring;
    }

    ~nixlSharedRingIo() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }

    nixlSharedRingIo(const nixlSharedRingIo &) = delete;
    nixlSharedRingIo &
    operator=(const nixlSharedRingIo &) = delete;

    /**
     * Producer: true when the file still is the ring this producer writes. Else false, with
     * what describing the first difference found (for one log line); then call reset().
     */
    bool
    verify(std::string &what) {
        struct stat st {};
        if (::fstat(fd_, &st) != 0) {
            what = std::string("fstat failed: ") + std::strerror(errno);
            return false;
        }
        if (st.st_nlink == 0) {
            // Nothing to repair in place: readers cannot find this inode any more.
            what = "it was removed or replaced; a reader cannot find this ring until the agent "
                   "is re-created";
            removed_ = true;
            return false;
        }
        const uint64_t want = layout::fileSize(capacity());
        if (static_cast<uint64_t>(st.st_size) != want) {
            what = "its size changed to " + std::to_string(st.st_size) + " bytes (expected " +
                std::to_string(want) + ")";
            return false;
        }
        nixlSharedRingHeader h{};
        if (::pread(fd_, &h, kCheckedBytes, 0) != static_cast<ssize_t>(kCheckedBytes)) {
            what = "its header cannot be read back";
            return false;
        }
        if (h.version != NIXL_SHARED_RING_VERSION || h.expectedVersion != h.version ||
            h.capacity != capacity() || h.mask != mask_ || h.writePos != pos_ ||
            h.lostEvents != lost_) {
            what = "its header was overwritten (version " + std::to_string(h.version) +
                ", capacity " + std::to_string(h.capacity) + ", write_pos " +
                std::to_string(h.writePos) + ")";
            return false;
        }
        if (!acceptReadPos(h.readPos)) {
            what = "its read_pos " + std::to_string(h.readPos) +
                " is not a position a reader can have reached";
            return false;
        }
        otherPos_ = h.readPos;
        return true;
    }

    /** True once verify() found the file unlinked (reset() cannot help). */
    bool
    removed() const noexcept {
        return removed_;
    }

    /**
     * Producer: restores the file's size and writes a fresh header (positions 0, lost_events
     * kept). Events not yet read are gone: unreadLost() says how many at most.
     */
    bool
    reset(std::string &error) {
        const uint64_t cap = capacity();
        // The space is taken now (nixlSharedRingSizeFile): a full file system refuses the
        // ring here instead of failing the producer's writes one by one.
        if (!nixlSharedRingSizeFile(path_, fd_, layout::fileSize(cap), error)) {
            return false;
        }
        nixlSharedRingHeader h{};
        h.capacity = cap;
        h.mask = mask_;
        h.expectedVersion = NIXL_SHARED_RING_VERSION;
        h.lostEvents = lost_;
        // version 0 first, the rest, then the version: a reader attaching meanwhile refuses
        // the file instead of trusting a half-written header.
        if (!writeAt(&h, sizeof(h), 0, error)) {
            return false;
        }
        fullFence();
        const int32_t v = NIXL_SHARED_RING_VERSION;
        if (!writeAt(&v, sizeof(v), offsetof(nixlSharedRingHeader, version), error)) {
            return false;
        }
        pos_ = 0;
        otherPos_ = 0;
        return true;
    }

    /** Producer: events written and not known to be read (lost if the file is reset now). */
    uint64_t
    unread() const noexcept {
        return (pos_ - otherPos_) & mask_;
    }

    /**
     * Producer: appends up to n items in order with one publication; returns how many (0 when
     * full). An I/O error returns 0 and sets error; nothing is published then.
     */
    size_t
    pushBatch(const T *items, size_t n, std::string &error) {
        error.clear();
        const uint64_t w = pos_;
        uint64_t free = (otherPos_ - w - 1) & mask_;
        if (free < n) {
            uint64_t r = 0;
            if (readU64(offsetof(nixlSharedRingHeader, readPos), r) && acceptReadPos(r)) {
                otherPos_ = r;
            }
            free = (otherPos_ - w - 1) & mask_;
        }
        const size_t k = n < free ? n : static_cast<size_t>(free);
        if (k == 0) {
            return 0;
        }
        // The consumer's read_pos was read before we overwrite the slots it freed.
        fullFence();
        const size_t first = std::min<size_t>(k, mask_ + 1 - w);
        iovec iov[2] = {{const_cast<T *>(items), first * sizeof(T)},
                        {const_cast<T *>(items + first), (k - first) * sizeof(T)}};
        if (!writeVecAt(iov, 1, slotOffset(w), error) ||
            (k > first && !writeVecAt(iov + 1, 1, slotOffset(0), error))) {
            return 0;
        }
        // Slots before the position that publishes them.
        fullFence();
        const uint64_t next = (w + k) & mask_;
        if (!writeAt(&next, sizeof(next), offsetof(nixlSharedRingHeader, writePos), error)) {
            return 0;
        }
        pos_ = next;
        return k;
    }

    /** Producer: adds n to the header's lost_events; false with error on an I/O error. */
    bool
    addLost(uint64_t n, std::string &error) {
        lost_ += n;
        return writeAt(&lost_, sizeof(lost_), offsetof(nixlSharedRingHeader, lostEvents), error);
    }

    /**
     * Consumer: takes up to n oldest items into out and frees their slots; got says how many.
     * False, with error naming the file and what changed, when the file is no longer the ring
     * attach() validated (truncated, resized, header rewritten): the caller stops reading.
     */
    bool
    popBatch(T *out, size_t n, size_t &got, std::string &error) {
        got = 0;
        nixlSharedRingHeader h{};
        if (!recheck(h, error)) {
            return false;
        }
        lost_ = h.lostEvents;
        otherPos_ = h.writePos;
        const size_t avail = static_cast<size_t>((otherPos_ - pos_) & mask_);
        const size_t k = n < avail ? n : avail;
        if (k == 0) {
            return true;
        }
        // write_pos was read before the slots it publishes.
        acquireFence();
        const size_t first = std::min<size_t>(k, mask_ + 1 - pos_);
        if (!readAt(out, first * sizeof(T), slotOffset(pos_), error) ||
            (k > first && !readAt(out + first, (k - first) * sizeof(T), slotOffset(0), error))) {
            return false;
        }
        // Our reads of the slots before the position that lets the producer reuse them.
        fullFence();
        const uint64_t next = (pos_ + k) & mask_;
        if (!writeAt(&next, sizeof(next), offsetof(nixlSharedRingHeader, readPos), error)) {
            return false;
        }
        pos_ = next;
        got = k;
        return true;
    }

    /** lost_events as last written (producer) or read (consumer). */
    uint64_t
    lost() const noexcept {
        return lost_;
    }

    uint64_t
    capacity() const noexcept {
        return mask_ + 1;
    }

    uint64_t
    usableCapacity() const noexcept {
        return mask_;
    }

    const std::string &
    path() const noexcept {
        return path_;
    }

private:
    nixlSharedRingIo(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

    static void
    fullFence() noexcept {
#if defined(__SANITIZE_THREAD__)
        // g++ refuses atomic_thread_fence under -fsanitize=thread (-Werror=tsan); a seq_cst
        // read-modify-write is a full barrier there as well (x86: a locked instruction).
        static std::atomic<unsigned> barrier{0};
        barrier.fetch_add(0, std::memory_order_seq_cst);
#else
        std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
    }

    static void
    acquireFence() noexcept {
#if defined(__SANITIZE_THREAD__)
        fullFence(); // as above: no atomic_thread_fence under -fsanitize=thread
#else
        std::atomic_thread_fence(std::memory_order_acquire);
#endif
    }

    static off_t
    slotOffset(uint64_t index) noexcept {
        return static_cast<off_t>(kHeaderSize + index * sizeof(T));
    }

    // A read_pos the consumer can have reached: in [last known, write_pos] going forward. A
    // value outside it is a foreign write (or a torn read) and is never trusted.
    bool
    acceptReadPos(uint64_t r) const noexcept {
        return r <= mask_ && ((r - otherPos_) & mask_) <= ((pos_ - otherPos_) & mask_);
    }

    // Consumer: the file is still the ring attach() validated.
    bool
    recheck(nixlSharedRingHeader &h, std::string &error) {
        struct stat st {};
        if (::fstat(fd_, &st) != 0) {
            error = "ring file " + path_ + ": fstat failed: " + std::strerror(errno);
            return false;
        }
        const uint64_t want = layout::fileSize(capacity());
        if (static_cast<uint64_t>(st.st_size) != want) {
            error = "ring file " + path_ + ": changed while reading: size " +
                std::to_string(st.st_size) + " bytes, expected " + std::to_string(want) +
                " (truncated or re-created?)";
            return false;
        }
        if (::pread(fd_, &h, kCheckedBytes, 0) != static_cast<ssize_t>(kCheckedBytes)) {
            error = "ring file " + path_ + ": changed while reading: header cannot be read";
            return false;
        }
        if (h.version != NIXL_SHARED_RING_VERSION || h.capacity != capacity() ||
            h.mask != mask_ || h.writePos > mask_ || h.readPos != pos_) {
            error = "ring file " + path_ + ": header changed while reading (version " +
                std::to_string(h.version) + ", capacity " + std::to_string(h.capacity) +
                ", mask " + std::to_string(h.mask) + ", write_pos " +
                std::to_string(h.writePos) + "); re-attach if the agent was re-created";
            return false;
        }
        return true;
    }

    bool
    readU64(size_t off, uint64_t &v) noexcept {
        return ::pread(fd_, &v, sizeof(v), static_cast<off_t>(off)) ==
            static_cast<ssize_t>(sizeof(v));
    }

    bool
    readAt(void *buf, size_t len, off_t off, std::string &error) {
        const ssize_t got = ::pread(fd_, buf, len, off);
        if (got != static_cast<ssize_t>(len)) {
            error = "ring file " + path_ + ": changed while reading: " +
                (got < 0 ? std::string(std::strerror(errno)) :
                           "short read at byte " + std::to_string(off));
            return false;
        }
        return true;
    }

    bool
    writeAt(const void *buf, size_t len, size_t off, std::string &error) {
        iovec iov{const_cast<void *>(buf), len};
        return writeVecAt(&iov, 1, static_cast<off_t>(off), error);
    }

    bool
    writeVecAt(const iovec *iov, int n, off_t off, std::string &error) {
        size_t len = 0;
        for (int i = 0; i < n; ++i) {
            len += iov[i].iov_len;
        }
        const ssize_t put = ::pwritev(fd_, iov, n, off);
        if (put != static_cast<ssize_t>(len)) {
            error = "ring file " + path_ + ": cannot write " + std::to_string(len) +
                " bytes at " + std::to_string(off) + ": " +
                (put < 0 ? std::string(std::strerror(errno)) : "short write");
            return false;
        }
        return true;
    }

    std::string path_;
    int fd_ = -1;
    uint64_t mask_ = 0;
    uint64_t pos_ = 0; // own position, exact
    uint64_t otherPos_ = 0; // the other side's position, as last read
    uint64_t lost_ = 0;
    bool removed_ = false;
};

#endif // NIXL_SRC_UTILS_COMMON_SHARED_RING_IO_H
