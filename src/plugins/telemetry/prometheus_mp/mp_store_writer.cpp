/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "mp_store_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "mp_fd.h"
#include "nixl_plugin_sdk_common.h"

namespace nixlPromMp {

namespace {

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

} // namespace

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
        roles_.push_back(r.pathRole);
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
nixlMpStoreWriter::record(uint32_t type, uint64_t value, uint32_t reserved) noexcept {
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
    if (reserved != 0 && roles_[type] != nixlProm::pathRole_t::NONE) {
        recordPathLocked(*s, roles_[type], reserved, value);
    }
    __atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
    return true;
}

void
nixlMpStoreWriter::recordPathLocked(nixlMpStoreSlot &s,
                                    nixlProm::pathRole_t role,
                                    uint32_t reserved,
                                    uint64_t value) noexcept {
    const uint32_t path = NIXL_TELEMETRY_PATH_OF(reserved);
    const uint32_t reason = NIXL_TELEMETRY_FALLBACK_OF(reserved);
    if (path == NIXL_XFER_PATH_UNKNOWN || path >= NIXL_XFER_PATH_COUNT) {
        return; // unknown, or newer than this plugin: only in the row's total
    }
    if (reason == NIXL_PATH_FALLBACK_NONE) {
        storeData(&s.buckets[path], load(&s.buckets[path]) + value);
        return;
    }
    const bool requests =
        role == nixlProm::pathRole_t::TX_REQUESTS || role == nixlProm::pathRole_t::RX_REQUESTS;
    if (!requests || value != 0) {
        return; // not a fallback marker (nixl_xfer_path.h)
    }
    const uint32_t why = reason < NIXL_PATH_FALLBACK_COUNT ? reason :
                                                             uint32_t{NIXL_PATH_FALLBACK_OTHER};
    const size_t w = kFallbackWord(nixlProm::pathBackendIndex(path), why);
    storeData(&s.buckets[w], load(&s.buckets[w]) + 1);
}

void
nixlMpStoreWriter::touch() noexcept {
    __atomic_store_n(&header()->lastUpdateNs, monotonicNs(), __ATOMIC_RELAXED);
}

} // namespace nixlPromMp
