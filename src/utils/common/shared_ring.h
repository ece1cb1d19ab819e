/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file shared_ring.h
 * @brief A single-producer single-consumer ring of fixed-size items in a memory-mapped file, the
 *        transport of the BUFFER telemetry exporter (format: docs/telemetry-ring.md, layout
 *        version 6).
 *
 * File layout (little-endian LP64, byte offsets; checked by static_asserts below and at import
 * by examples/python/telemetry_reader.py):
 *
 *   0    u64 write_pos        producer line (bytes 0..255): written by the producer only
 *   8    u64 capacity         number of slots, a power of two >= 2
 *   16   i32 version          = 6; at offset 16 in every layout version (4, 5 and 6)
 *   20   i32 expected_version = 6; the version the writer was built for
 *   24   u64 mask             capacity - 1
 *   32   u64 lost_events      producer-owned: pushes refused because the ring was full
 *   40   ...                  zero padding up to 256
 *   256  u64 read_pos         consumer line (bytes 256..511): written by the consumer only
 *   264  ...                  zero padding up to 512
 *   512  T slots[capacity]
 *
 * Positions are slot indices in [0, capacity). The ring is empty when write_pos == read_pos and
 * full when (write_pos + 1) & mask == read_pos, so it holds at most capacity - 1 items (the
 * "usable capacity"); one slot stays free to tell full from empty without a shared counter.
 *
 * Why it is fast:
 *  - write_pos and read_pos sit on their own 256-byte lines, so a store by one side never
 *    invalidates the line the other side writes (no false sharing). 256 is hard-coded rather
 *    than std::hardware_destructive_interference_size so the file layout does not depend on the
 *    compiler, its flags or the CPU (256 covers ARM parts with 256-byte coherence granules and
 *    x86's adjacent-line prefetch).
 *  - Each side keeps a private copy of its own position, of the mask, and of the opposing
 *    position. The opposing position only ever moves forward, so a stale copy can only make the
 *    ring look fuller (producer) or emptier (consumer) than it is: never wrong, merely
 *    conservative. It is reloaded, with one acquire load, only when the ring looks full or
 *    empty, so in steady state a push or pop touches the shared lines once (its own release
 *    store) instead of pulling the other core's line on every call.
 *  - pushBatch/popBatch publish many items with a single release store.
 *
 * Attaching: create() (re)initialises the header of a new or existing file; attach() maps an
 * existing one after checking, in this order and before mapping anything: the file is large
 * enough to hold the version field, the version is 6 ("version mismatch: expected 6, got N"), the
 * file holds a whole header, capacity is a power of two with mask == capacity - 1, and the file
 * size is exactly 512 + capacity * sizeof(T). Every failure is returned as a message naming the
 * file; nothing is mapped, nothing crashes. All cached values are seeded from the header on both
 * paths, so a consumer that re-attaches to a live ring resumes at the stored read_pos.
 */
#ifndef NIXL_SRC_UTILS_COMMON_SHARED_RING_H
#define NIXL_SRC_UTILS_COMMON_SHARED_RING_H

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/**
 * Layout version of the ring file; bumped by any change to the header or slot layout, or to the
 * numbering of the event types the slots carry (6: issue 12's agent_trace_phases_dropped took
 * type 20 and moved events-dropped to 21; header and slots are as in 5).
 */
inline constexpr int32_t NIXL_SHARED_RING_VERSION = 6;

/**
 * The producer's check of a file it is about to reset (issue 29 item 6): only a file of this
 * process's uid with one link. O_NOFOLLOW already refuses a symlink, but a hard link planted at
 * the ring's path would make the reset overwrite the file it links to; a file of another uid is
 * not ours to reset. False, with error naming the file and the cause.
 */
inline bool
nixlSharedRingFileIsOwn(const std::string &path, const struct stat &st, std::string &error) {
    if (st.st_nlink != 1) {
        error = "ring file " + path + ": has " + std::to_string(st.st_nlink) +
            " links (a hard link to another file?); refused";
        return false;
    }
    if (st.st_uid != ::geteuid()) {
        error = "ring file " + path + ": owned by uid " + std::to_string(st.st_uid) +
            ", not this process's " + std::to_string(::geteuid()) + "; refused";
        return false;
    }
    return true;
}

/**
 * Opens a ring file for one side, as both ring classes do: the producer creates it (or reuses
 * what is there; O_NOFOLLOW refuses a symlink), the consumer opens an existing one. The
 * descriptor (O_CLOEXEC) is returned once fstat (into st) shows a regular file; otherwise -1,
 * with error naming the file and the cause and nothing left open.
 */
inline int
nixlSharedRingOpenFile(const std::string &path,
                       bool create,
                       mode_t mode,
                       struct stat &st,
                       std::string &error) {
    const int fd = create ? ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, mode) :
                            ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        error = "ring file " + path + (create ? ": cannot create: " : ": cannot open: ") +
            std::strerror(e);
        return -1;
    }
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        error = "ring file " + path + ": not a regular file";
        ::close(fd);
        return -1;
    }
    return fd;
}

/**
 * Sizes the ring file fd to exactly bytes and reserves every block of it, as both ring kinds'
 * producers do. Reserved now, a file system that fills up later cannot fail the ring's
 * writes one by one, nor turn a store to an unbacked page of a mapped sparse file into a
 * SIGBUS (issue 29 item 2): a full one refuses the ring here. False, with error naming path.
 */
inline bool
nixlSharedRingSizeFile(const std::string &path, int fd, size_t bytes, std::string &error) {
    if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
        const int e = errno;
        error = "ring file " + path + ": cannot resize to " + std::to_string(bytes) +
            " bytes: " + std::strerror(e);
        return false;
    }
    if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
        error = "ring file " + path + ": cannot reserve " + std::to_string(bytes) +
            " bytes: " + std::strerror(err);
        return false;
    }
    return true;
}

/**
 * The 512-byte header at the start of a ring file. Plain integers so the struct is standard
 * layout (offsetof works) and the same bytes can be read from C or Python; the positions and the
 * lost counter are accessed through std::atomic_ref.
 */
struct nixlSharedRingHeader {
    // Producer line.
    uint64_t writePos;
    uint64_t capacity;
    int32_t version;
    int32_t expectedVersion;
    uint64_t mask;
    uint64_t lostEvents;
    uint8_t padWrite[216];
    // Consumer line.
    alignas(256) uint64_t readPos;
    uint8_t padRead[248];
};

static_assert(std::is_standard_layout_v<nixlSharedRingHeader>);
static_assert(sizeof(nixlSharedRingHeader) == 512, "ring header must stay 512 bytes");
static_assert(alignof(nixlSharedRingHeader) == 256);
static_assert(offsetof(nixlSharedRingHeader, writePos) == 0);
static_assert(offsetof(nixlSharedRingHeader, capacity) == 8);
static_assert(offsetof(nixlSharedRingHeader, version) == 16, "version stays at 16 in every layout");
static_assert(offsetof(nixlSharedRingHeader, expectedVersion) == 20);
static_assert(offsetof(nixlSharedRingHeader, mask) == 24);
static_assert(offsetof(nixlSharedRingHeader, lostEvents) == 32);
static_assert(offsetof(nixlSharedRingHeader, padWrite) == 40);
static_assert(offsetof(nixlSharedRingHeader, readPos) == 256);
static_assert(offsetof(nixlSharedRingHeader, padRead) == 264);
// Two processes share these words, so the atomics must be address-free (lock-free).
static_assert(std::atomic_ref<uint64_t>::is_always_lock_free);
static_assert(std::atomic_ref<uint64_t>::required_alignment <= alignof(uint64_t));

/**
 * SPSC ring of T in a shared file.
 *
 * Thread-safety: at most one thread (in any process) pushes and at most one thread pops, at a
 * time, per ring file; push/pushBatch/addLost are the producer's, pop/popBatch the consumer's.
 * The two may run concurrently. size/empty/full/lost are observers, safe from any thread but
 * only a snapshot. Not copyable or movable (the caches are tied to the mapping).
 *
 * The file is mapped: if another process truncates it, the next access to a page past the new
 * end raises SIGBUS. Use it only on files no one else can shrink (e.g. private to the process,
 * as in benchmark/ring); the BUFFER exporter and the readers use nixlSharedRingIo
 * (shared_ring_io.h), the same protocol without a mapping.
 */
template<typename T> class nixlSharedRing {
    static_assert(std::is_trivially_copyable_v<T>, "ring items are copied as bytes");
    static_assert(alignof(T) <= 256, "slots start at byte 512");

public:
    static constexpr size_t kHeaderSize = sizeof(nixlSharedRingHeader);

    /** Exact file size of a ring of capacity slots; 0 when it would overflow size_t. */
    static constexpr size_t
    fileSize(uint64_t capacity) noexcept {
        if (capacity > (SIZE_MAX - kHeaderSize) / sizeof(T)) {
            return 0;
        }
        return kHeaderSize + static_cast<size_t>(capacity) * sizeof(T);
    }

    /** Whether a new ring of path may have capacity slots (a power of two >= 2 whose file size
     *  fits size_t); false with error naming the file otherwise. */
    static bool
    validCapacity(const std::string &path, uint64_t capacity, std::string &error) {
        if (capacity < 2 || (capacity & (capacity - 1)) != 0 || fileSize(capacity) == 0) {
            error = "ring file " + path + ": capacity " + std::to_string(capacity) +
                " is not a power of two >= 2";
            return false;
        }
        return true;
    }

    /**
     * Creates path (or reuses an existing regular file) as a ring of capacity slots and resets
     * its header, dropping whatever it held. Opened O_CLOEXEC|O_NOFOLLOW, so a symlink at path
     * is refused. Returns null and sets error (naming the file and cause) on failure.
     */
    static std::unique_ptr<nixlSharedRing>
    create(const std::string &path, uint64_t capacity, std::string &error, mode_t mode = 0644) {
        if (!validCapacity(path, capacity, error)) {
            return nullptr;
        }
        struct stat st {};
        const int fd = nixlSharedRingOpenFile(path, true, mode, st, error);
        if (fd < 0) {
            return nullptr;
        }
        std::unique_ptr<nixlSharedRing> ring(new nixlSharedRing(path, fd));
        if (!nixlSharedRingFileIsOwn(path, st, error)) {
            return nullptr;
        }
        const size_t bytes = fileSize(capacity);
        // Every page backed before the mapping writes it (nixlSharedRingSizeFile).
        if (!nixlSharedRingSizeFile(path, fd, bytes, error) || !ring->map(bytes, error)) {
            return nullptr;
        }
        nixlSharedRingHeader *h = ring->header_;
        // A reader that attaches while we initialise sees version 0 and refuses the file; the
        // release store of the version publishes the rest of the header.
        std::atomic_ref<int32_t>(h->version).store(0, std::memory_order_relaxed);
        std::atomic_ref<uint64_t>(h->writePos).store(0, std::memory_order_relaxed);
        std::atomic_ref<uint64_t>(h->readPos).store(0, std::memory_order_relaxed);
        std::atomic_ref<uint64_t>(h->lostEvents).store(0, std::memory_order_relaxed);
        h->capacity = capacity;
        h->mask = capacity - 1;
        h->expectedVersion = NIXL_SHARED_RING_VERSION;
        std::memset(h->padWrite, 0, sizeof(h->padWrite));
        std::memset(h->padRead, 0, sizeof(h->padRead));
        std::atomic_ref<int32_t>(h->version).store(NIXL_SHARED_RING_VERSION,
                                                   std::memory_order_release);
        ring->seedCaches();
        return ring;
    }

    /**
     * Maps an existing ring file read-write (the consumer stores read_pos) after validating it
     * (see the file comment). Returns null and sets error on failure.
     */
    static std::unique_ptr<nixlSharedRing>
    attach(const std::string &path, std::string &error) {
        nixlSharedRingHeader h{};
        const int fd = openExisting(path, h, error);
        if (fd < 0) {
            return nullptr;
        }
        std::unique_ptr<nixlSharedRing> ring(new nixlSharedRing(path, fd));
        const size_t bytes = fileSize(h.capacity);
        if (!ring->map(bytes, error)) {
            return nullptr;
        }
        // The file may have changed between pread and mmap (a producer re-creating it): check
        // the mapped copy again, which is the one we trust from now on.
        if (ring->header_->capacity != h.capacity || ring->header_->mask != h.mask) {
            error = "ring file " + path + ": header changed while attaching";
            return nullptr;
        }
        ring->seedCaches();
        return ring;
    }

    /**
     * The consumer's first step, for both ring kinds: opens the existing ring file path and
     * reads its header into h (readHeader). The descriptor, or -1 with error set and nothing
     * left open.
     */
    static int
    openExisting(const std::string &path, nixlSharedRingHeader &h, std::string &error) {
        struct stat st {};
        const int fd = nixlSharedRingOpenFile(path, false, 0, st, error);
        if (fd >= 0 && !readHeader(path, fd, static_cast<uint64_t>(st.st_size), h, error)) {
            ::close(fd);
            return -1;
        }
        return fd;
    }

    /**
     * Reads the header of the open file fd (size bytes) with pread and validates it in the
     * documented order (version field present, version 6, whole header, capacity a power of two
     * with mask == capacity - 1, size == fileSize(capacity)). False, with error naming path and
     * the cause, when the file is not a version-6 ring of T. Never maps anything, so a short or
     * foreign file cannot raise SIGBUS. Used by openExisting().
     */
    static bool
    readHeader(const std::string &path,
               int fd,
               uint64_t size,
               nixlSharedRingHeader &h,
               std::string &error) {
        constexpr size_t kVersionEnd = offsetof(nixlSharedRingHeader, version) + sizeof(int32_t);
        if (size < kVersionEnd) {
            error = "ring file " + path + ": too small (" + std::to_string(size) +
                " bytes) to hold a ring header";
            return false;
        }
        const size_t want = size < kHeaderSize ? static_cast<size_t>(size) : kHeaderSize;
        if (::pread(fd, &h, want, 0) != static_cast<ssize_t>(want)) {
            error = "ring file " + path + ": cannot read the header: " + std::strerror(errno);
            return false;
        }
        if (h.version != NIXL_SHARED_RING_VERSION) {
            error = "ring file " + path + ": version mismatch: expected " +
                std::to_string(NIXL_SHARED_RING_VERSION) + ", got " + std::to_string(h.version);
            return false;
        }
        if (size < kHeaderSize) {
            error = "ring file " + path + ": too small (" + std::to_string(size) +
                " bytes) to hold the " + std::to_string(kHeaderSize) + "-byte header";
            return false;
        }
        if (h.capacity < 2 || (h.capacity & (h.capacity - 1)) != 0 ||
            h.mask != h.capacity - 1) {
            error = "ring file " + path + ": bad capacity " + std::to_string(h.capacity) +
                " (mask " + std::to_string(h.mask) + ")";
            return false;
        }
        const size_t bytes = fileSize(h.capacity);
        if (bytes == 0 || bytes != size) {
            error = "ring file " + path + ": capacity " + std::to_string(h.capacity) +
                " needs " + std::to_string(bytes) + " bytes but the file has " +
                std::to_string(size);
            return false;
        }
        return true;
    }

    ~nixlSharedRing() {
        if (base_ != nullptr) {
            ::munmap(base_, mappedBytes_);
        }
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }

    nixlSharedRing(const nixlSharedRing &) = delete;
    nixlSharedRing &
    operator=(const nixlSharedRing &) = delete;

    /** Producer: appends one item; false (nothing written) when the ring is full. */
    bool
    push(const T &item) noexcept {
        const uint64_t w = prod_.pos;
        const uint64_t next = (w + 1) & prod_.mask;
        if (next == prod_.otherPos) {
            // Looks full: refresh the consumer's position. Acquire pairs with the consumer's
            // release store, so its reads of the slot we are about to overwrite are done.
            prod_.otherPos = readPosRef().load(std::memory_order_acquire) & prod_.mask;
            if (next == prod_.otherPos) {
                return false;
            }
        }
        slots_[w] = item;
        // Release publishes the slot contents before the new position.
        writePosRef().store(next, std::memory_order_release);
        prod_.pos = next;
        return true;
    }

    /** Producer: appends up to n items in order with one publication; returns how many. */
    size_t
    pushBatch(const T *items, size_t n) noexcept {
        const uint64_t w = prod_.pos;
        const uint64_t mask = prod_.mask;
        uint64_t free = (prod_.otherPos - w - 1) & mask;
        if (free < n) {
            prod_.otherPos = readPosRef().load(std::memory_order_acquire) & mask;
            free = (prod_.otherPos - w - 1) & mask;
        }
        const size_t k = n < free ? n : static_cast<size_t>(free);
        if (k == 0) {
            return 0;
        }
        const size_t first = std::min<size_t>(k, mask + 1 - w);
        std::memcpy(static_cast<void *>(slots_ + w), items, first * sizeof(T));
        std::memcpy(static_cast<void *>(slots_), items + first, (k - first) * sizeof(T));
        const uint64_t next = (w + k) & mask;
        writePosRef().store(next, std::memory_order_release);
        prod_.pos = next;
        return k;
    }

    /** Consumer: takes the oldest item into out; false when the ring is empty. */
    bool
    pop(T &out) noexcept {
        const uint64_t r = cons_.pos;
        if (r == cons_.otherPos) {
            // Looks empty: refresh the producer's position. Acquire pairs with the producer's
            // release store, so the slot contents it published are visible.
            cons_.otherPos = writePosRef().load(std::memory_order_acquire) & cons_.mask;
            if (r == cons_.otherPos) {
                return false;
            }
        }
        out = slots_[r];
        const uint64_t next = (r + 1) & cons_.mask;
        // Release: our read of the slot happens before the producer may reuse it.
        readPosRef().store(next, std::memory_order_release);
        cons_.pos = next;
        return true;
    }

    /** Consumer: takes up to n oldest items with one publication; returns how many. */
    size_t
    popBatch(T *out, size_t n) noexcept {
        const uint64_t r = cons_.pos;
        const uint64_t mask = cons_.mask;
        uint64_t avail = (cons_.otherPos - r) & mask;
        if (avail < n) {
            cons_.otherPos = writePosRef().load(std::memory_order_acquire) & mask;
            avail = (cons_.otherPos - r) & mask;
        }
        const size_t k = n < avail ? n : static_cast<size_t>(avail);
        if (k == 0) {
            return 0;
        }
        const size_t first = std::min<size_t>(k, mask + 1 - r);
        std::memcpy(static_cast<void *>(out), slots_ + r, first * sizeof(T));
        std::memcpy(static_cast<void *>(out + first), slots_, (k - first) * sizeof(T));
        const uint64_t next = (r + k) & mask;
        readPosRef().store(next, std::memory_order_release);
        cons_.pos = next;
        return k;
    }

    /** Producer: adds n to the header's lost-events counter (events refused by a full ring). */
    void
    addLost(uint64_t n) noexcept {
        // Relaxed: a statistic; it orders nothing else. An RMW so misuse cannot lose counts.
        lostRef().fetch_add(n, std::memory_order_relaxed);
    }

    /** Total events the producer reported lost since the file was created. */
    uint64_t
    lost() const noexcept {
        return lostRef().load(std::memory_order_relaxed);
    }

    /** Items currently stored (a snapshot when the other side is running). */
    uint64_t
    size() const noexcept {
        const uint64_t w = writePosRef().load(std::memory_order_acquire);
        const uint64_t r = readPosRef().load(std::memory_order_acquire);
        return (w - r) & mask_;
    }

    bool
    empty() const noexcept {
        return size() == 0;
    }

    bool
    full() const noexcept {
        return size() == usableCapacity();
    }

    /** Slots in the file (a power of two). */
    uint64_t
    capacity() const noexcept {
        return mask_ + 1;
    }

    /** Items the ring can hold at once: capacity() - 1. */
    uint64_t
    usableCapacity() const noexcept {
        return mask_;
    }

    int32_t
    version() const noexcept {
        return std::atomic_ref<int32_t>(header_->version).load(std::memory_order_acquire);
    }

    const std::string &
    path() const noexcept {
        return path_;
    }

private:
    nixlSharedRing(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

    bool
    map(size_t bytes, std::string &error) {
        void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        if (p == MAP_FAILED) {
            error = "ring file " + path_ + ": cannot map " + std::to_string(bytes) +
                " bytes: " + std::strerror(errno);
            return false;
        }
        base_ = p;
        mappedBytes_ = bytes;
        header_ = static_cast<nixlSharedRingHeader *>(p);
        slots_ = reinterpret_cast<T *>(static_cast<char *>(p) + kHeaderSize);
        return true;
    }

    // Seeds every cached value from the header (create and attach alike), so a side that
    // (re)attaches mid-stream starts from the stored positions.
    void
    seedCaches() noexcept {
        mask_ = header_->mask;
        const uint64_t w = writePosRef().load(std::memory_order_acquire) & mask_;
        const uint64_t r = readPosRef().load(std::memory_order_acquire) & mask_;
        prod_.mask = mask_;
        prod_.pos = w;
        prod_.otherPos = r;
        cons_.mask = mask_;
        cons_.pos = r;
        cons_.otherPos = w;
    }

    std::atomic_ref<uint64_t>
    writePosRef() const noexcept {
        return std::atomic_ref<uint64_t>(header_->writePos);
    }

    std::atomic_ref<uint64_t>
    readPosRef() const noexcept {
        return std::atomic_ref<uint64_t>(header_->readPos);
    }

    std::atomic_ref<uint64_t>
    lostRef() const noexcept {
        return std::atomic_ref<uint64_t>(header_->lostEvents);
    }

    // One side's private state, on its own line so a producer thread and a consumer thread
    // sharing this object do not false-share either.
    struct alignas(256) sideState {
        uint64_t pos = 0; // own position, exact: only this side moves it
        uint64_t otherPos = 0; // opposing position, possibly stale (conservative)
        uint64_t mask = 0;
    };

    sideState prod_;
    sideState cons_;
    std::string path_;
    int fd_ = -1;
    void *base_ = nullptr;
    size_t mappedBytes_ = 0;
    nixlSharedRingHeader *header_ = nullptr;
    T *slots_ = nullptr;
    uint64_t mask_ = 0;
};

#endif // NIXL_SRC_UTILS_COMMON_SHARED_RING_H
