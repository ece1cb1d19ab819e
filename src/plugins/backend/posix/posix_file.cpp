/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "posix_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace {

struct mode_word_t {
    std::string_view word;
    int flag;
};

constexpr mode_word_t option_words[] = {
    {"direct", O_DIRECT},
    {"sync", O_SYNC},
    {"noatime", O_NOATIME},
    {"create", O_CREAT},
};

bool
isModeWord(std::string_view w) {
    std::string lower(w);
    for (char &c : lower) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (lower == "ro" || lower == "rw") {
        return true;
    }
    for (const auto &o : option_words) {
        if (lower == o.word) {
            return true;
        }
    }
    return false;
}

std::string
errnoText(int err) {
    return std::string(strerrorname_np(err) != nullptr ? strerrorname_np(err) : "errno") + " (" +
        std::strerror(err) + ")";
}

} // namespace

nixlPosixFileSpec
nixlPosixFileSpec::parse(std::string_view meta) {
    nixlPosixFileSpec spec;
    const size_t colon = meta.find(':');
    if (colon == std::string_view::npos) {
        return spec; // fd mode
    }
    const std::string_view head = meta.substr(0, colon);
    // Path mode is meant when any word of the head is a mode word; otherwise the metaInfo is
    // the application's own (fd mode).
    bool any_word = false;
    for (size_t pos = 0; pos <= head.size();) {
        size_t comma = head.find(',', pos);
        if (comma == std::string_view::npos) {
            comma = head.size();
        }
        any_word = any_word || isModeWord(head.substr(pos, comma - pos));
        pos = comma + 1;
    }
    if (!any_word) {
        return spec;
    }
    spec.kind = kind_t::BAD;
    const std::string_view path = meta.substr(colon + 1);
    const size_t first_end = std::min(head.find(','), head.size());
    const std::string_view access = head.substr(0, first_end);
    if (access == "ro") {
        spec.flags = O_RDONLY;
    } else if (access == "rw") {
        spec.flags = O_RDWR;
    } else {
        spec.why = "metaInfo '" + std::string(head) + ":...' must start with 'ro' or 'rw'";
        return spec;
    }
    int seen = 0;
    for (size_t pos = first_end + 1; pos <= head.size() && first_end < head.size();) {
        size_t comma = head.find(',', pos);
        if (comma == std::string_view::npos) {
            comma = head.size();
        }
        const std::string_view w = head.substr(pos, comma - pos);
        const mode_word_t *match = nullptr;
        for (const auto &o : option_words) {
            if (w == o.word) {
                match = &o;
            }
        }
        if (match == nullptr) {
            spec.why = "metaInfo mode '" + std::string(w) +
                "' is unknown (accepted: ro or rw, then any of direct, sync, noatime, create)";
            return spec;
        }
        if ((seen & match->flag) != 0) {
            spec.why = "metaInfo mode '" + std::string(w) + "' is given twice";
            return spec;
        }
        seen |= match->flag;
        pos = comma + 1;
    }
    if ((seen & O_CREAT) != 0 && access == "ro") {
        spec.why = "metaInfo mode 'create' needs 'rw'";
        return spec;
    }
    if (path.empty()) {
        spec.why = "metaInfo '" + std::string(head) + ":' has no path after the ':'";
        return spec;
    }
    if (path.find('\0') != std::string_view::npos) {
        // open(2) would stop at the NUL and open another file than the one named.
        spec.why = "metaInfo path contains a NUL byte";
        return spec;
    }
    spec.kind = kind_t::PATH;
    spec.flags |= seen | O_CLOEXEC;
    spec.path = std::string(path);
    return spec;
}

nixlPosixFileMD::~nixlPosixFileMD() {
    if (owned && fd >= 0) {
        ::close(fd);
    }
}

void
nixlPosixDirectAlignment(int fd, nixlPosixFileMD &md) {
    md.memAlign = 4096;
    md.offAlign = 4096;
#ifdef STATX_DIOALIGN
    struct statx stx {};
    if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
        (stx.stx_mask & STATX_DIOALIGN) != 0 && stx.stx_dio_mem_align != 0 &&
        stx.stx_dio_offset_align != 0) {
        md.memAlign = stx.stx_dio_mem_align;
        md.offAlign = stx.stx_dio_offset_align;
    }
#else
    (void)fd;
#endif
}

nixl_status_t
nixlPosixFileRegistry::add(const nixlBlobDesc &desc, nixlPosixFileMD *&out, std::string &why) {
    const nixlPosixFileSpec spec = nixlPosixFileSpec::parse(desc.metaInfo);
    if (spec.kind == nixlPosixFileSpec::kind_t::BAD) {
        why = spec.why;
        return NIXL_ERR_INVALID_PARAM;
    }
    auto md = std::make_unique<nixlPosixFileMD>();
    md->devId = desc.devId;
    std::lock_guard<std::mutex> lk(mu_);
    if (spec.kind == nixlPosixFileSpec::kind_t::FD) {
        if (desc.devId > static_cast<uint64_t>(INT32_MAX)) {
            why = "devId " + std::to_string(desc.devId) +
                " is not an fd (fd mode: metaInfo is not '<ro|rw>[,...]:<path>')";
            return NIXL_ERR_INVALID_PARAM;
        }
        md->fd = static_cast<int>(desc.devId);
        md->name = "fd " + std::to_string(md->fd);
        const int fl = ::fcntl(md->fd, F_GETFL);
        if (fl < 0) {
            why = md->name + " (fd mode): " + errnoText(errno);
            return NIXL_ERR_INVALID_PARAM;
        }
        md->direct = (fl & O_DIRECT) != 0;
    } else {
        if (auto it = byDev_.find(desc.devId); it != byDev_.end()) {
            why = "devId " + std::to_string(desc.devId) + " already names '" + it->second->name +
                "'; path-mode registrations need distinct devIds";
            return NIXL_ERR_INVALID_PARAM;
        }
        md->name = spec.path;
        int fd;
        do {
            fd = ::open(spec.path.c_str(), spec.flags, 0644);
        } while (fd < 0 && errno == EINTR);
        if (fd < 0) {
            const int err = errno;
            why = "open '" + spec.path + "': " + errnoText(err);
            if (err == EINVAL && (spec.flags & O_DIRECT) != 0) {
                why += "; the file system refuses O_DIRECT";
                return NIXL_ERR_NOT_SUPPORTED;
            }
            return NIXL_ERR_BACKEND;
        }
        md->fd = fd;
        md->owned = true;
        md->direct = (spec.flags & O_DIRECT) != 0;
    }
    if (md->direct) {
        nixlPosixDirectAlignment(md->fd, *md);
    }
    if (md->owned) {
        byDev_.emplace(desc.devId, md.get());
    }
    out = md.release();
    return NIXL_SUCCESS;
}

void
nixlPosixFileRegistry::remove(nixlPosixFileMD *md) {
    std::lock_guard<std::mutex> lk(mu_);
    if (md->owned) {
        auto it = byDev_.find(md->devId);
        if (it != byDev_.end() && it->second == md) {
            byDev_.erase(it);
        }
    }
    delete md;
}
