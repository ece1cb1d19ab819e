/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "mp_schema.h"

#include <stdexcept>

#include "mp_store_layout.h"

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

} // namespace

nixlMpSchema::nixlMpSchema(std::span<const nixl_telemetry_event_info_t> table,
                           nixlProm::nameStyle_t names)
    : seconds(names == nixlProm::nameStyle_t::LIBNIXL) {
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
        r.names = nixlProm::namesFor(info, names);
        r.statusLabel = info.status_label == nullptr ? std::string() : info.status_label;
        r.pathRole = nixlProm::pathRoleOf(info);
        h = fnv1a(h, &info.type, sizeof(info.type));
        h = fnv1a(h, &info.category, sizeof(info.category));
        h = fnv1aStr(h, info.name);
        h = fnv1aStr(h, info.status_label);
        rows.push_back(std::move(r));
    }
    hash = h;
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

} // namespace nixlPromMp
