/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// An engine's registration table in shared memory and its deregistration fence (reg_table.h
// says why the fence is correct).
#include "reg_table.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "reg_readers.h"
#include "reg_shm.h"


namespace nixlReg {

namespace {

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

} // namespace

void
nixlRegTable::attach(size_t slots) noexcept {
    char *base = static_cast<char *>(base_);
    readers_ = reinterpret_cast<regTableReader *>(base + reg_table_header_bytes);
    slots_ = reinterpret_cast<std::atomic<uint64_t> *>(base + reg_table_header_bytes +
                                                       reg_table_reader_bytes);
    nslots_ = slots;
}

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
        releaseMapping(name_, map_);
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
    t->map_ = std::make_shared<regMapping>();
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
    t->attach(slots);
    t->slots_[0].store(nonce, std::memory_order_release);
    // The magic last: a table is valid only once its header is complete.
    std::atomic_ref<uint64_t>(h->magic).store(reg_table_magic, std::memory_order_release);
    if (!t->name_.empty()) {
        rememberMapping(t->name_, t->map_);
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
        t->map_ = findMapping(name);
        if (!t->map_) {
            void *p = ::mmap(nullptr, t->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p == MAP_FAILED) {
                why = "cannot map " + name + ": " + std::strerror(errno);
            } else {
                t->map_ = std::make_shared<regMapping>();
                t->map_->base = p;
                t->map_->bytes = t->bytes_;
                rememberMapping(name, t->map_);
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
    t->attach(slots);
    t->claim_ = claimReader(t->readers_, name, self, self_nonce, nonce);
    if (!t->claim_) {
        why = name + " has no free reader record (" + std::to_string(reg_table_readers) +
            " peers mapped it)";
        return nullptr;
    }
    t->reader_ = t->claim_->index;
    return t;
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
