/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// An engine's registration table in shared memory and its deregistration fence (reg_table.h
// says why the fence is correct).
#include "reg_table.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <random>
#include <string_view>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <unistd.h>


namespace nixlReg {

namespace {

    constexpr size_t reader_bytes = sizeof(regTableReader) * reg_table_readers;

    size_t
    tableBytes(size_t slots) {
        return reg_table_header_bytes + reader_bytes + slots * sizeof(uint64_t);
    }

    /** Slots are reserved in steps of this many bytes (one fallocate per 8 Ki slots). */
    constexpr size_t reserve_step = 64 * 1024;

    /** Bytes to reserve so that slots [0, upto) are backed: whole steps, at most the table. */
    size_t
    reserveBytes(size_t slots, size_t upto) {
        const size_t need = tableBytes(upto);
        const size_t stepped = (need + reserve_step - 1) / reserve_step * reserve_step;
        return std::min(stepped, tableBytes(slots));
    }

    /** Slots that reserved bytes cover (the inverse of tableBytes, at most slots). */
    size_t
    slotsIn(size_t bytes, size_t slots) {
        const size_t fixed = reg_table_header_bytes + reader_bytes;
        return bytes <= fixed ? 0 : std::min(slots, (bytes - fixed) / sizeof(uint64_t));
    }

    constexpr size_t max_tag = 8;

    bool
    wellFormedTag(std::string_view t) {
        if (t.empty() || t.size() > max_tag) {
            return false;
        }
        for (char c : t) {
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
                return false;
            }
        }
        return true;
    }

    /** "/nixl-<tag>-" and 32 hex digits from the system's random source: not guessable. */
    std::string
    randomName(const std::string &tag) {
        std::random_device rd;
        static const char hex[] = "0123456789abcdef";
        std::string n = "/nixl-" + tag + "-";
        for (int i = 0; i < 4; ++i) {
            uint32_t v = rd();
            for (int j = 0; j < 8; ++j) {
                n += hex[(v >> (4 * j)) & 0xf];
            }
        }
        return n;
    }

    /** A name as create() makes them; anything else is refused before shm_open sees it. */
    bool
    wellFormedName(const std::string &n) {
        static const std::string prefix = "/nixl-";
        if (n.size() < prefix.size() + 2 + 32 || n.compare(0, prefix.size(), prefix) != 0) {
            return false;
        }
        const size_t dash = n.size() - 33;
        if (n[dash] != '-' ||
            !wellFormedTag(std::string_view(n).substr(prefix.size(), dash - prefix.size()))) {
            return false;
        }
        for (size_t i = dash + 1; i < n.size(); ++i) {
            if (!std::isxdigit(static_cast<unsigned char>(n[i]))) {
                return false;
            }
        }
        return true;
    }

    /** A small per-thread number, so that threads of one engine start at different marks. */
    size_t
    markHint() {
        static std::atomic<size_t> next{0};
        thread_local size_t hint = next.fetch_add(1, std::memory_order_relaxed);
        return hint;
    }

    inline void
    cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }

    void
    resetMarks(regTableReader &r) {
        for (auto &m : r.marks) {
            uint64_t v = m.load(std::memory_order_acquire);
            if ((v & 1) != 0) {
                m.compare_exchange_strong(v, v + 1);
            }
        }
    }

    /**
     * Unlinks the tables of this uid whose engine's process exited without removing its own
     * (killed): they would otherwise hold their touched pages in /dev/shm until reboot.
     */
    void
    sweepStale(const procIdentity &self) {
        DIR *d = ::opendir("/dev/shm");
        if (d == nullptr) {
            return;
        }
        while (struct dirent *e = ::readdir(d)) {
            const std::string name = std::string("/") + e->d_name;
            if (!wellFormedName(name)) {
                continue;
            }
            int fd = ::shm_open(name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
            if (fd < 0) {
                continue;
            }
            struct stat st {};
            regTableHeader h {};
            const bool ours = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                st.st_uid == ::geteuid() &&
                ::pread(fd, &h, sizeof(h), 0) == static_cast<ssize_t>(sizeof(h)) &&
                h.magic == reg_table_magic && self.pidNs != 0 && h.pidNs == self.pidNs;
            ::close(fd);
            int pfd = -1;
            if (ours && h.pid != ::getpid() && processExited(h.pid, h.startTime, pfd)) {
                ::shm_unlink(name.c_str());
            }
            if (pfd >= 0) {
                ::close(pfd);
            }
        }
        ::closedir(d);
    }

    /** Tables mapped in this process, by name (see nixlRegTable::map_). */
    std::mutex &
    mapsLock() {
        static std::mutex m;
        return m;
    }

    std::map<std::string, std::weak_ptr<void>> &
    maps() {
        static std::map<std::string, std::weak_ptr<void>> m;
        return m;
    }

} // namespace

nixlRegTable::mapping::~mapping() {
    if (base != nullptr) {
        ::munmap(base, bytes);
    }
}

struct nixlRegTable::readerClaim {
    regTableReader *r = nullptr;
    uint64_t tag = 0;
    int index = -1;

    ~readerClaim() {
        // Every copy through the mappings sharing this record left its mark before their
        // connections (and so they) could go; the record is free for the next peer. A fence
        // that found the record's process gone may have freed it already: then this fails.
        uint64_t n = tag;
        r->owner.compare_exchange_strong(n, 0);
    }
};

nixlRegTable::~nixlRegTable() {
    // Before map_: the claim points into the mapping.
    claim_.reset();
    if (owner_ && !name_.empty()) {
        ::shm_unlink(name_.c_str());
    }
    if (fd_ >= 0) {
        ::close(fd_);
    }
    if (!name_.empty()) {
        std::lock_guard<std::mutex> g(mapsLock());
        auto it = maps().find(name_);
        if (it != maps().end() && it->second.use_count() <= 1) {
            maps().erase(it); // this object holds the last reference
        }
    }
    map_.reset();
}

std::unique_ptr<nixlRegTable>
nixlRegTable::create(const std::string &tag,
                     const procIdentity &self,
                     uint64_t nonce,
                     size_t slots,
                     std::string &why) {
    if (!wellFormedTag(tag)) {
        why = "table tag '" + tag + "' is not 1 to 8 lowercase letters or digits";
        return nullptr;
    }
    sweepStale(self);
    std::unique_ptr<nixlRegTable> t(new nixlRegTable());
    t->owner_ = true;
    t->bytes_ = tableBytes(slots);
    int fd = -1;
    for (int attempt = 0; attempt < 4 && fd < 0; ++attempt) {
        t->name_ = randomName(tag);
        fd = ::shm_open(t->name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
    void *p = MAP_FAILED;
    if (fd >= 0) {
        // The umask may only narrow 0600; fchmod makes it exact, since peers check it.
        // ftruncate only sizes the object: a store to a page tmpfs cannot back (/dev/shm full)
        // is a SIGBUS. So the pages written below (header, reader records, the first slots)
        // are reserved first; later slots are reserved as registrations reach them (reserve).
        int err = 0;
        const size_t first = reserveBytes(slots, 1);
        if (::fchmod(fd, 0600) != 0 || ::ftruncate(fd, static_cast<off_t>(t->bytes_)) != 0) {
            err = errno;
        } else if ((err = ::posix_fallocate(fd, 0, static_cast<off_t>(first))) == 0) {
            p = ::mmap(nullptr, t->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd,
                       0);
            err = p == MAP_FAILED ? errno : 0;
        }
        if (p == MAP_FAILED) {
            why = std::string("cannot size, reserve or map shared memory /dev/shm") + t->name_ +
                ": " + std::strerror(err);
            ::shm_unlink(t->name_.c_str());
            ::close(fd);
        } else {
            t->fd_ = fd; // kept to reserve later slots
            t->reservedBytes_ = first;
        }
    } else {
        why = std::string("cannot create shared memory: ") + std::strerror(errno);
    }
    if (p == MAP_FAILED) {
        // Private memory still serves the engine and process_vm_readv readers.
        t->name_.clear();
        p = ::mmap(nullptr, t->bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            why = std::string("cannot map the registration table: ") + std::strerror(errno);
            return nullptr;
        }
    }
    t->base_ = p;
    t->map_ = std::make_shared<mapping>();
    t->map_->base = p;
    t->map_->bytes = t->bytes_;
    auto *h = static_cast<regTableHeader *>(p);
    h->version = reg_table_version;
    h->readers = static_cast<uint32_t>(reg_table_readers);
    h->nonce = nonce;
    h->startTime = self.startTime;
    h->pid = self.pid;
    h->marks = static_cast<uint32_t>(reg_table_marks);
    h->slots = slots;
    h->pidNs = self.pidNs;
    // Private memory (no shm object) has every slot; a shm table what it reserved so far.
    std::atomic_ref<uint64_t>(h->backedSlots)
        .store(t->fd_ >= 0 ? slotsIn(t->reservedBytes_, slots) : slots,
               std::memory_order_release);
    t->readers_ = reinterpret_cast<regTableReader *>(static_cast<char *>(p) +
                                                     reg_table_header_bytes);
    t->slots_ = reinterpret_cast<std::atomic<uint64_t> *>(static_cast<char *>(p) +
                                                          reg_table_header_bytes + reader_bytes);
    t->nslots_ = slots;
    t->slots_[0].store(nonce, std::memory_order_release);
    // The magic last: a table is valid only once its header is complete.
    std::atomic_ref<uint64_t>(h->magic).store(reg_table_magic, std::memory_order_release);
    if (!t->name_.empty()) {
        std::lock_guard<std::mutex> g(mapsLock());
        maps()[t->name_] = std::static_pointer_cast<void>(t->map_);
    }
    return t;
}

std::unique_ptr<nixlRegTable>
nixlRegTable::open(const std::string &name,
                      uint64_t nonce,
                      const procIdentity &peer,
                      uint64_t slots,
                      const procIdentity &self,
                      uint64_t self_nonce,
                      std::string &why) {
    if (!wellFormedName(name)) {
        why = "table name is malformed";
        return nullptr;
    }
    if (slots == 0 || slots > (uint64_t(1) << 32)) {
        why = "table of " + std::to_string(slots) + " slots";
        return nullptr;
    }
    int fd = ::shm_open(name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) {
        why = "cannot open " + name + ": " + std::strerror(errno);
        return nullptr;
    }
    std::unique_ptr<nixlRegTable> t(new nixlRegTable());
    t->name_ = name;
    t->bytes_ = tableBytes(slots);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        why = "cannot fstat " + name + ": " + std::strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        why = name + " is not a regular file";
    } else if (st.st_uid != ::geteuid()) {
        why = name + " belongs to uid " + std::to_string(st.st_uid) + ", not to this uid " +
            std::to_string(::geteuid());
    } else if ((st.st_mode & 07777) != 0600) {
        char mode[8];
        std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
        why = name + " has mode " + mode + ", expected 0600";
    } else if (static_cast<uint64_t>(st.st_size) != t->bytes_) {
        why = name + " is " + std::to_string(st.st_size) + " bytes, expected " +
            std::to_string(t->bytes_);
    } else {
        // The checks above hold for the object itself; a mapping of it that an engine of this
        // process already has is the same memory.
        {
            std::lock_guard<std::mutex> g(mapsLock());
            auto it = maps().find(name);
            if (it != maps().end()) {
                t->map_ = std::static_pointer_cast<mapping>(it->second.lock());
            }
        }
        if (!t->map_) {
            void *p = ::mmap(nullptr, t->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p == MAP_FAILED) {
                why = "cannot map " + name + ": " + std::strerror(errno);
            } else {
                t->map_ = std::make_shared<mapping>();
                t->map_->base = p;
                t->map_->bytes = t->bytes_;
                std::lock_guard<std::mutex> g(mapsLock());
                maps()[name] = std::static_pointer_cast<void>(t->map_);
            }
        }
        if (t->map_) {
            t->base_ = t->map_->base;
        }
    }
    ::close(fd);
    if (t->base_ == nullptr) {
        return nullptr;
    }
    auto *h = static_cast<regTableHeader *>(t->base_);
    if (std::atomic_ref<uint64_t>(h->magic).load(std::memory_order_acquire) != reg_table_magic ||
        h->version != reg_table_version || h->readers != reg_table_readers ||
        h->marks != reg_table_marks) {
        why = name + " is not a registration table of this plugin version";
        return nullptr;
    }
    if (h->nonce != nonce || h->pid != peer.pid || h->startTime != peer.startTime ||
        h->slots != slots) {
        why = name + " belongs to another engine (nonce, pid or start time differ from the "
                     "connection info: a restarted peer or a stale table)";
        return nullptr;
    }
    t->readers_ = reinterpret_cast<regTableReader *>(static_cast<char *>(t->base_) +
                                                     reg_table_header_bytes);
    t->slots_ = reinterpret_cast<std::atomic<uint64_t> *>(
        static_cast<char *>(t->base_) + reg_table_header_bytes + reader_bytes);
    t->nslots_ = slots;
    if (!t->claimReader(self, self_nonce, nonce)) {
        why = name + " has no free reader record (" + std::to_string(reg_table_readers) +
            " peers mapped it)";
        return nullptr;
    }
    return t;
}

bool
nixlRegTable::claimReader(const procIdentity &self, uint64_t self_nonce, uint64_t owner_nonce) {
    // Records are keyed by the connection's identity, not by the agent name it was loaded
    // under: one record per (table, owner engine, reading engine), shared by all of that
    // engine's mappings of the table (a peer loaded again, or one blob loaded under 300 names,
    // reuses it). Taken at connect time, never on a transfer's path.
    using key_t = std::tuple<std::string, uint64_t, uint64_t>;
    static std::mutex held_lock;
    static std::map<key_t, std::weak_ptr<readerClaim>> held;
    std::lock_guard<std::mutex> g(held_lock);
    for (auto it = held.begin(); it != held.end();) {
        it = it->second.expired() ? held.erase(it) : std::next(it);
    }
    const key_t key{name_, owner_nonce, self_nonce};
    if (auto it = held.find(key); it != held.end()) {
        std::shared_ptr<readerClaim> c = it->second.lock();
        if (c && c->r->owner.load(std::memory_order_acquire) == c->tag) {
            claim_ = std::move(c);
            reader_ = claim_->index;
            return true;
        }
    }
    // A record released and claimed again gets another tag (the nonce is mixed with a count of
    // claims), so a late release of the old claim cannot free the new one.
    static std::atomic<uint64_t> claims{0};
    uint64_t tag = self_nonce ^ (claims.fetch_add(1) * 0x9e3779b97f4a7c15ull);
    tag = tag == 0 ? 1 : tag;
    for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 0; i < reg_table_readers; ++i) {
            regTableReader &r = readers_[i];
            uint64_t cur = r.owner.load(std::memory_order_acquire);
            if (cur != 0) {
                if (pass == 0) {
                    continue;
                }
                // Second pass: take over the record of a peer that exited.
                int pfd = -1;
                const bool gone = processExited(r.pid.load(std::memory_order_acquire),
                                                r.startTime.load(std::memory_order_acquire),
                                                pfd);
                if (pfd >= 0) {
                    ::close(pfd);
                }
                if (!gone) {
                    continue;
                }
                resetMarks(r);
            }
            if (r.owner.compare_exchange_strong(cur, tag)) {
                resetMarks(r);
                r.pid.store(self.pid, std::memory_order_release);
                r.startTime.store(self.startTime, std::memory_order_release);
                auto c = std::make_shared<readerClaim>();
                c->r = &r;
                c->tag = tag;
                c->index = static_cast<int>(i);
                held[key] = c;
                claim_ = std::move(c);
                reader_ = static_cast<int>(i);
                return true;
            }
        }
    }
    return false;
}

bool
nixlRegTable::reserve(size_t slot, std::string &why) {
    if (fd_ < 0 || slot >= nslots_) {
        return fd_ < 0; // private memory needs no reservation; a slot past the end has none
    }
    std::lock_guard<std::mutex> g(reserveLock_);
    if (tableBytes(slot + 1) <= reservedBytes_) {
        return true;
    }
    const size_t upto = reserveBytes(nslots_, slot + 1);
    const int err = ::posix_fallocate(fd_, static_cast<off_t>(reservedBytes_),
                                      static_cast<off_t>(upto - reservedBytes_));
    if (err != 0) {
        why = "cannot reserve slot " + std::to_string(slot) + " of /dev/shm" + name_ + ": " +
            std::strerror(err);
        return false;
    }
    reservedBytes_ = upto;
    // Release: a reader that sees the new bound also sees the storage (and then the slot
    // value the owner publishes after this).
    std::atomic_ref<uint64_t>(static_cast<regTableHeader *>(base_)->backedSlots)
        .store(slotsIn(upto, nslots_), std::memory_order_release);
    return true;
}

bool
nixlRegTable::backed(uint64_t slot) const noexcept {
    if (slot >= nslots_) {
        return false;
    }
    return slot < std::atomic_ref<uint64_t>(static_cast<regTableHeader *>(base_)->backedSlots)
                      .load(std::memory_order_acquire);
}

nixlRegTable::mark_t
nixlRegTable::enter() const noexcept {
    regTableReader &r = readers_[reader_];
    size_t i = markHint() % reg_table_marks;
    for (unsigned spins = 0;; ++spins) {
        std::atomic<uint64_t> &m = r.marks[i];
        uint64_t v = m.load(std::memory_order_relaxed);
        if ((v & 1) == 0 && m.compare_exchange_strong(v, v + 1, std::memory_order_seq_cst)) {
            return {&m, v};
        }
        i = (i + 1) % reg_table_marks;
        if (spins >= reg_table_marks) {
            // More threads of this engine copy into the table than it has marks.
            std::this_thread::yield();
            spins = 0;
        }
    }
}

uint64_t
nixlRegTable::fenceWaits() const noexcept {
    return std::atomic_ref<uint64_t>(static_cast<regTableHeader *>(base_)->fenceWaits)
        .load(std::memory_order_relaxed);
}

bool
nixlRegTable::fence(uint64_t timeout_ms, std::string &who) const {
    // No standalone fence: the caller's store to the slot and the loads below are seq_cst,
    // which is what the argument in reg_table.h needs.
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (size_t i = 0; i < reg_table_readers; ++i) {
        regTableReader &r = readers_[i];
        const uint64_t owner = r.owner.load(std::memory_order_seq_cst);
        if (owner == 0) {
            continue; // a copier claims its record before its first enter (see the header)
        }
        int pfd = -1;
        bool gone = false;
        for (auto &m : r.marks) {
            const uint64_t v = m.load(std::memory_order_seq_cst);
            if ((v & 1) == 0 || gone) {
                continue;
            }
            std::atomic_ref<uint64_t>(static_cast<regTableHeader *>(base_)->fenceWaits)
                .fetch_add(1, std::memory_order_relaxed);
            unsigned spins = 0;
            while (m.load(std::memory_order_acquire) == v) {
                if (++spins < 4096) {
                    cpuRelax();
                    continue;
                }
                const int32_t pid = r.pid.load(std::memory_order_acquire);
                if (pid != ::getpid() &&
                    processExited(pid, r.startTime.load(std::memory_order_acquire), pfd)) {
                    gone = true;
                    break;
                }
                if (std::chrono::steady_clock::now() >= deadline) {
                    who = "pid " + std::to_string(pid) + " (reader " + std::to_string(i) +
                        ") is still copying after " + std::to_string(timeout_ms) + " ms";
                    if (pfd >= 0) {
                        ::close(pfd);
                    }
                    return false;
                }
                std::this_thread::yield();
            }
        }
        if (pfd >= 0) {
            ::close(pfd);
        }
        if (gone) {
            // Its copies ended with its last thread; free the record for other peers.
            resetMarks(r);
            uint64_t o = owner;
            r.owner.compare_exchange_strong(o, 0);
        }
    }
    return true;
}

} // namespace nixlReg
