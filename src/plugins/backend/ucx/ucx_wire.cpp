/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "ucx_wire.h"

#include <array>
#include <bit>
#include <cstdio>
#include <cstring>

#include "codec/nixl_crc32c.h"
#include "nixl_trace_context.h"
#include "ucx_utils.h"

namespace nixlUcx {

namespace {

/** Longer than any name nixlReg::nixlRegTable::create makes (src/utils/regtable). */
constexpr size_t max_table_name = 255;
/** Magic, version, flags. */
constexpr size_t head_size = 8;
constexpr size_t trailer_size = sizeof(uint32_t);
/** UCX 1.13 accepts address versions 0 (v1) and 1 (v2); the version is the low 4 bits. */
constexpr uint8_t addr_version_mask = 0x0f;
constexpr uint8_t addr_version_max = 1;
/** Header byte(s) plus at least one more byte. */
constexpr size_t addr_min_len = 3;
/** A packed key's distance part: one system-device byte and 3 bytes per device. */
constexpr size_t rkey_max_tail = 1 + 3 * 64;
/** UCX's memory types fit in a few bits; anything above is damage. */
constexpr unsigned max_mem_type = 31;

std::string
hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%08x", v);
    return buf;
}

void
seal(std::string &s) {
    const uint32_t crc = crc32c(s.data(), s.size());
    s.append(reinterpret_cast<const char *>(&crc), sizeof(crc));
}

/**
 * Checks magic, version and checksum, in that order: a peer of another plugin version is told
 * so rather than being called corrupt. body is what the checksum covers, minus the head.
 */
bool
unseal(std::string_view in, uint32_t magic, std::string_view &body, std::string &why) {
    if (in.size() < head_size + trailer_size) {
        why = std::to_string(in.size()) + " bytes, too short";
        return false;
    }
    nixlUcxReader rd(in);
    uint32_t m = 0;
    uint16_t version = 0;
    uint16_t flags = 0;
    rd.get(m);
    rd.get(version);
    rd.get(flags);
    if (m != magic) {
        why = "bad magic " + hex32(m);
        return false;
    }
    if (version != wire_version) {
        why = "format version " + std::to_string(version) + ", expected " +
            std::to_string(wire_version) + " (another UCX plugin version, or damage)";
        return false;
    }
    uint32_t stored = 0;
    std::memcpy(&stored, in.data() + in.size() - trailer_size, sizeof(stored));
    const uint32_t computed = crc32c(in.data(), in.size() - trailer_size);
    if (stored != computed) {
        why = "checksum mismatch (stored " + hex32(stored) + ", computed " + hex32(computed) +
            "): damaged in transit or storage";
        return false;
    }
    if (flags != 0) {
        why = "flags " + std::to_string(flags) + ", expected 0";
        return false;
    }
    body = in.substr(head_size, in.size() - head_size - trailer_size);
    return true;
}

void
head(nixlUcxWriter &w, uint32_t magic) {
    w.put<uint32_t>(magic);
    w.put<uint16_t>(wire_version);
    w.put<uint16_t>(0);
}

} // namespace

uint32_t
crc32c(const void *data, size_t len, uint32_t crc) noexcept {
    return nixlCodec::crc32c(data, len, crc);
}

std::string
encodeConnInfo(const connInfoWire &in) {
    nixlUcxWriter w;
    head(w, conn_magic);
    w.put<uint64_t>(in.nonce);
    w.bytes(in.bootId);
    w.put<uint64_t>(in.pidNs);
    w.put<int32_t>(in.pid);
    w.put<uint64_t>(in.startTime);
    w.put<uint64_t>(in.regTable);
    w.put<uint64_t>(in.regSlots);
    w.put<uint32_t>(static_cast<uint32_t>(in.addrs.size()));
    for (const auto &a : in.addrs) {
        w.bytes(a);
    }
    w.bytes(in.regTableName);
    seal(w.str());
    return std::move(w.str());
}

std::string
encodePublicData(const publicDataWire &in) {
    nixlUcxWriter w;
    head(w, rkey_magic);
    w.put<uint16_t>(in.mem);
    w.put<uint64_t>(in.owner);
    w.put<uint64_t>(in.base);
    w.put<uint64_t>(in.len);
    w.put<uint32_t>(in.slot);
    w.put<uint64_t>(in.regId);
    w.bytes(in.rkey);
    seal(w.str());
    return std::move(w.str());
}

bool
decodeConnInfo(std::string_view in, connInfoWire &out, std::string &why) {
    std::string_view body;
    if (!unseal(in, conn_magic, body, why)) {
        return false;
    }
    nixlUcxReader rd(body);
    std::string_view boot;
    uint32_t n = 0;
    if (!(rd.get(out.nonce) && rd.bytes(boot) && rd.get(out.pidNs) && rd.get(out.pid) &&
          rd.get(out.startTime) && rd.get(out.regTable) && rd.get(out.regSlots) && rd.get(n))) {
        why = "truncated before the worker addresses";
        return false;
    }
    if (n == 0 || n > max_conn_workers) {
        why = std::to_string(n) + " worker addresses, expected 1.." +
            std::to_string(max_conn_workers);
        return false;
    }
    out.bootId = std::string(boot);
    out.addrs.clear();
    for (uint32_t i = 0; i < n; ++i) {
        std::string_view a;
        if (!rd.bytes(a)) {
            why = "truncated in worker address " + std::to_string(i);
            return false;
        }
        std::string sub;
        if (!checkWorkerAddress(a, sub)) {
            why = "worker address " + std::to_string(i) + ": " + sub;
            return false;
        }
        out.addrs.emplace_back(a);
    }
    std::string_view table;
    if (!rd.bytes(table) || table.size() > max_table_name) {
        why = "truncated or oversized registration table name";
        return false;
    }
    out.regTableName = std::string(table);
    if (!rd.atEnd()) {
        why = "trailing bytes after the registration table name";
        return false;
    }
    return true;
}

bool
decodePublicData(std::string_view in, publicDataWire &out, std::string &why) {
    std::string_view body;
    if (!unseal(in, rkey_magic, body, why)) {
        return false;
    }
    nixlUcxReader rd(body);
    std::string_view rkey;
    if (!(rd.get(out.mem) && rd.get(out.owner) && rd.get(out.base) && rd.get(out.len) && rd.get(out.slot) &&
          rd.get(out.regId) && rd.bytes(rkey))) {
        why = "truncated";
        return false;
    }
    if (!rd.atEnd()) {
        why = "trailing bytes after the remote key";
        return false;
    }
    out.rkey = std::string(rkey);
    return true;
}

bool
checkWorkerAddress(std::string_view addr, std::string &why) {
    if (addr.size() < addr_min_len) {
        why = std::to_string(addr.size()) + " bytes, too short for a UCP worker address";
        return false;
    }
    const uint8_t version = static_cast<uint8_t>(addr[0]) & addr_version_mask;
    if (version > addr_version_max) {
        why = "address version " + std::to_string(version) + ", UCX knows 0.." +
            std::to_string(addr_version_max);
        return false;
    }
    return true;
}

bool
parsePackedRkey(std::string_view rkey, rkeyLayout &out, std::string &why) {
    out = rkeyLayout{};
    constexpr size_t fixed = sizeof(uint64_t) + sizeof(uint8_t);
    if (rkey.size() < fixed) {
        why = std::to_string(rkey.size()) + " bytes, too short for a packed key";
        return false;
    }
    std::memcpy(&out.mdMap, rkey.data(), sizeof(out.mdMap));
    out.memType = static_cast<uint8_t>(rkey[sizeof(uint64_t)]);
    if (out.memType > max_mem_type) {
        why = "memory type " + std::to_string(out.memType);
        return false;
    }
    size_t pos = fixed;
    for (uint64_t m = out.mdMap; m != 0; m &= m - 1) {
        const int md = std::countr_zero(m);
        const size_t size = pos < rkey.size() ? static_cast<uint8_t>(rkey[pos]) : 0;
        if (pos >= rkey.size() || rkey.size() - pos - 1 < size) {
            why = "memory domain " + std::to_string(md) + "'s key runs past the " +
                std::to_string(rkey.size()) + " bytes";
            return false;
        }
        out.sizes[md] = static_cast<uint8_t>(size);
        pos += 1 + size;
    }
    out.packedLen = pos;
    if (rkey.size() - pos > rkey_max_tail) {
        why = std::to_string(rkey.size() - pos) + " bytes after the memory domain keys";
        return false;
    }
    return true;
}

bool
checkPackedRkey(std::string_view rkey, const rkeyLayout *local, std::string &why) {
    rkeyLayout l;
    if (!parsePackedRkey(rkey, l, why)) {
        return false;
    }
    if (local == nullptr) {
        return true;
    }
    if (l.memType != local->memType) {
        why = "memory type " + std::to_string(l.memType) + ", expected " +
            std::to_string(local->memType);
        return false;
    }
    // Domain indices are the packing process's. Only a key over the same set of domains comes
    // from a process configured like this one, where the same index is the same domain and so
    // has the same packed size; a peer with other transports or devices is walked, not compared.
    if (l.mdMap != local->mdMap) {
        return true;
    }
    for (uint64_t m = l.mdMap; m != 0; m &= m - 1) {
        const int md = std::countr_zero(m);
        if (l.sizes[md] != local->sizes[md]) {
            why = "memory domain " + std::to_string(md) + "'s key is " +
                std::to_string(l.sizes[md]) + " bytes, this UCX packs " +
                std::to_string(local->sizes[md]);
            return false;
        }
    }
    return true;
}

void
encodeNotifHeader(std::string &out, std::string_view sender, const uint8_t *trace) {
    if (trace == nullptr) {
        out.reserve(out.size() + sizeof(notif_magic) + sender.size());
        out.append(reinterpret_cast<const char *>(&notif_magic), sizeof(notif_magic));
        out.append(sender);
        return;
    }
    // Agent names longer than 64 KiB do not reach here: sendAm refuses them (see ucx_notif).
    const auto len = static_cast<uint16_t>(sender.size());
    out.reserve(out.size() + notif_v2_fixed + sender.size() + 1 + NIXL_BE_TRACE_CTX_WIRE_SIZE);
    out.append(reinterpret_cast<const char *>(&notif_magic_v2), sizeof(notif_magic_v2));
    out.push_back(static_cast<char>(notif_version));
    out.push_back(static_cast<char>(notif_flag_trace));
    out.append(reinterpret_cast<const char *>(&len), sizeof(len));
    out.append(sender);
    out.push_back(static_cast<char>(NIXL_BE_TRACE_CTX_WIRE_SIZE));
    out.append(reinterpret_cast<const char *>(trace), NIXL_BE_TRACE_CTX_WIRE_SIZE);
}

bool
decodeNotifHeader(std::string_view in, notifHeaderWire &out, std::string &why) {
    out = notifHeaderWire{};
    uint32_t magic = 0;
    if (in.size() < sizeof(magic)) {
        why = std::to_string(in.size()) + "-byte header, too short";
        return false;
    }
    std::memcpy(&magic, in.data(), sizeof(magic));
    if (magic == notif_magic) {
        out.version = 1;
        out.sender = in.substr(sizeof(magic));
        return true;
    }
    if (magic != notif_magic_v2) {
        why = "foreign header (magic " + hex32(magic) + ")";
        return false;
    }
    if (in.size() < notif_v2_fixed) {
        why = std::to_string(in.size()) + "-byte version-2 header, shorter than its " +
            std::to_string(notif_v2_fixed) + "-byte fixed part";
        return false;
    }
    const auto version = static_cast<uint8_t>(in[4]);
    const auto flags = static_cast<uint8_t>(in[5]);
    uint16_t len = 0;
    std::memcpy(&len, in.data() + 6, sizeof(len));
    if (version < notif_version) {
        why = "header version " + std::to_string(version) + " under the version-2 magic";
        return false;
    }
    if (in.size() - notif_v2_fixed < len) {
        why = "sender name of " + std::to_string(len) + " bytes runs past the " +
            std::to_string(in.size()) + "-byte header";
        return false;
    }
    out.version = version;
    out.sender = in.substr(notif_v2_fixed, len);
    if ((flags & notif_flag_trace) == 0) {
        return true;
    }
    out.traceSent = true;
    std::string_view rest = in.substr(notif_v2_fixed + len);
    if (rest.empty()) {
        out.traceWhy = "trace context announced but missing";
        return true;
    }
    const auto ctx_len = static_cast<uint8_t>(rest[0]);
    if (rest.size() - 1 < ctx_len) {
        out.traceWhy = "trace context of " + std::to_string(ctx_len) + " bytes truncated to " +
            std::to_string(rest.size() - 1);
        return true;
    }
    const nixl_trace_ctx_result_t r = nixl_trace_ctx_decode(
        reinterpret_cast<const uint8_t *>(rest.data() + 1), ctx_len, &out.trace);
    if (r != NIXL_TRACE_CTX_OK) {
        out.trace = nixl_be_trace_ctx_t{};
        out.traceWhy = std::string("trace context (") + std::to_string(ctx_len) +
            " bytes) refused: " + nixl_trace_ctx_result_str(r);
        return true;
    }
    out.traceOk = true;
    return true;
}

} // namespace nixlUcx
