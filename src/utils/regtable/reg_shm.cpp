/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "reg_shm.h"

#include <cctype>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reg_layout.h"

namespace nixlReg {

namespace {

    constexpr size_t max_tag = 8;

    /** Tables mapped in this process, by name. */
    std::mutex &
    mapsLock() {
        static std::mutex m;
        return m;
    }

    std::map<std::string, std::weak_ptr<regMapping>> &
    maps() {
        static std::map<std::string, std::weak_ptr<regMapping>> m;
        return m;
    }

} // namespace

regMapping::~regMapping() {
    if (base != nullptr) {
        ::munmap(base, bytes);
    }
}

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

std::shared_ptr<regMapping>
findMapping(const std::string &name) {
    std::lock_guard<std::mutex> g(mapsLock());
    auto it = maps().find(name);
    return it != maps().end() ? it->second.lock() : nullptr;
}

void
rememberMapping(const std::string &name, const std::shared_ptr<regMapping> &m) {
    std::lock_guard<std::mutex> g(mapsLock());
    maps()[name] = m;
}

void
releaseMapping(const std::string &name, std::shared_ptr<regMapping> &m) {
    {
        std::lock_guard<std::mutex> g(mapsLock());
        auto it = maps().find(name);
        if (it != maps().end() && it->second.use_count() <= 1) {
            maps().erase(it); // m holds the last reference
        }
    }
    m.reset();
}

} // namespace nixlReg
