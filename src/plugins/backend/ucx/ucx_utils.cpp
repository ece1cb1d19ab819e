/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "ucx_utils.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "common/nixl_text.h"
#include "nixl_plugin_config_parse.h"

namespace nixlUcx {

std::string_view
trim(std::string_view s) {
    return nixlConfigParse::trimBlanks(s);
}

namespace {

    /** Whether tls (UCX_TLS syntax, "^" excludes) enables one of the given names. */
    bool
    tlsEnables(std::string_view tls, std::initializer_list<std::string_view> names) {
        tls = trim(tls);
        if (tls.empty()) {
            return true; // unset means all
        }
        bool exclude = false;
        if (tls.front() == '^') {
            exclude = true;
            tls.remove_prefix(1);
        }
        bool named = false;
        for (const std::string_view item : nixlText::splitList(tls)) {
            for (std::string_view n : names) {
                named = named || item == n;
            }
        }
        return exclude ? !named : named;
    }

} // namespace

bool
tlsAllowsCma(std::string_view tls) {
    return tlsEnables(tls, {"all", "sm", "shm", "cma"});
}

bool
tlsAllowsShm(std::string_view tls) {
    std::string_view t = trim(tls);
    if (!t.empty() && t.front() == '^') {
        // Excluding some shared-memory transports leaves the others unless all are named.
        return !tlsEnables(t.substr(1), {"all", "sm", "shm"}) &&
            !(tlsEnables(t.substr(1), {"sysv"}) && tlsEnables(t.substr(1), {"posix"}) &&
              tlsEnables(t.substr(1), {"cma"}));
    }
    return tlsEnables(t, {"all", "sm", "shm", "sysv", "posix", "cma"});
}

bool
tlsAllowsMm(std::string_view tls) {
    std::string_view t = trim(tls);
    if (!t.empty() && t.front() == '^') {
        return !tlsEnables(t.substr(1), {"all", "sm", "shm", "mm"}) &&
            !(tlsEnables(t.substr(1), {"sysv"}) && tlsEnables(t.substr(1), {"posix"}));
    }
    return tlsEnables(t, {"all", "sm", "shm", "mm", "sysv", "posix", "xpmem"});
}

bool
parseBool(std::string_view s, bool &out) {
    // NIXL's words (y/yes/on/1/true/enable, n/no/off/0/false/disable), as every NIXL_* option.
    return nixlConfigParse::parseBool(trim(s), out);
}

bool
parseUnsigned(std::string_view s, uint64_t &out) {
    return nixlText::parseDecimal(trim(s), out);
}

nixl_status_t
statusFromUcs(ucs_status_t st, bool peer_lost) {
    switch (st) {
    case UCS_OK:
        return NIXL_SUCCESS;
    case UCS_INPROGRESS:
        return NIXL_IN_PROG;
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_REJECTED:
        return NIXL_ERR_REMOTE_DISCONNECT;
    case UCS_ERR_CANCELED:
        return peer_lost ? NIXL_ERR_REMOTE_DISCONNECT : NIXL_ERR_CANCELED;
    default:
        return peer_lost ? NIXL_ERR_REMOTE_DISCONNECT : NIXL_ERR_BACKEND;
    }
}

std::string
epTransports(ucp_ep_h ep) {
    char *buf = nullptr;
    size_t size = 0;
    FILE *f = ::open_memstream(&buf, &size);
    if (f == nullptr) {
        return "(unknown)";
    }
    ucp_ep_print_info(ep, f);
    std::fclose(f);
    std::string text(buf != nullptr ? buf : "", size);
    std::free(buf);
    // Lines look like "#   lane[0]:  3:sysv/memory.0 md[2]  -> md[2]/sysv/sysdev[255] am am_bw#0".
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        std::string_view line(text.data() + pos,
                              (eol == std::string::npos ? text.size() : eol) - pos);
        pos = eol == std::string::npos ? text.size() : eol + 1;
        size_t lane = line.find("lane[");
        if (lane == std::string_view::npos) {
            continue;
        }
        size_t colon = line.find(':', lane);
        if (colon == std::string_view::npos) {
            continue;
        }
        std::string_view rest = trim(line.substr(colon + 1));
        // "3:sysv/memory.0 md[2] -> ... am am_bw#0": resource index, transport/device, roles.
        size_t c2 = rest.find(':');
        size_t sp = rest.find(' ');
        if (c2 == std::string_view::npos || sp == std::string_view::npos || c2 > sp) {
            continue;
        }
        std::string_view tl = rest.substr(c2 + 1, sp - c2 - 1);
        size_t dot = tl.rfind('.');
        if (dot != std::string_view::npos) {
            tl = tl.substr(0, dot);
        }
        std::string_view roles;
        size_t arrow = rest.find("->");
        if (arrow != std::string_view::npos) {
            std::string_view after = trim(rest.substr(arrow + 2));
            size_t sp2 = after.find(' ');
            roles = sp2 == std::string_view::npos ? std::string_view() : trim(after.substr(sp2));
        }
        if (!out.empty()) {
            out += ' ';
        }
        out.append(tl);
        if (!roles.empty()) {
            out += '(';
            for (char c : roles) {
                out += c == ' ' ? ',' : c;
            }
            out += ')';
        }
    }
    return out.empty() ? std::string("(no lanes)") : out;
}

bool
mmKeySetByUser(std::string_view mm_key,
               const std::vector<std::pair<std::string, std::string>> &engine_config) {
    const std::string_view rest =
        mm_key.substr(mm_key.rfind("MM_", 0) == 0 ? 3 : 0);
    for (const char *tl : {"MM_", "SYSV_", "POSIX_", "XPMEM_"}) {
        const std::string key = std::string(tl) + std::string(rest);
        if (std::getenv(("UCX_" + key).c_str()) != nullptr) {
            return true;
        }
        for (const auto &[k, v] : engine_config) {
            if (k == key || k == "UCX_" + key) {
                return true;
            }
        }
    }
    return false;
}

bool
configValue(const ucp_config_t *config, const std::string &key, std::string &value) {
    char *buf = nullptr;
    size_t size = 0;
    FILE *f = ::open_memstream(&buf, &size);
    if (f == nullptr) {
        return false;
    }
    ucp_config_print(config, f, nullptr, UCS_CONFIG_PRINT_CONFIG);
    std::fclose(f);
    std::string text(buf != nullptr ? buf : "", size);
    std::free(buf);
    const std::string prefix = "UCX_" + key + "=";
    size_t pos = 0;
    while ((pos = text.find(prefix, pos)) != std::string::npos) {
        if (pos == 0 || text[pos - 1] == '\n') {
            size_t eol = text.find('\n', pos);
            value = std::string(trim(std::string_view(text).substr(
                pos + prefix.size(),
                eol == std::string::npos ? std::string::npos : eol - pos - prefix.size())));
            return true;
        }
        pos += prefix.size();
    }
    return false;
}

} // namespace nixlUcx
