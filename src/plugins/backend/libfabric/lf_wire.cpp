/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "lf_wire.h"

#include "codec/nixl_byte_codec.h"

#include <array>
#include <cstring>

namespace nixlLf {

namespace {

    // LIBFABRIC's strings carry a u16 length (names and endpoint addresses are short).
    using writer = nixlCodec::nixlByteWriter<uint16_t>;
    using reader = nixlCodec::nixlByteReader<uint16_t>;

    void
    seal(std::string &out) {
        writer(out).put<uint32_t>(crc32c(out.data(), out.size()));
    }

    /** Checks magic, version and the CRC trailer; on success body excludes the trailer. */
    bool
    unseal(std::string_view in,
           uint32_t magic,
           std::string_view &body,
           uint16_t &version,
           std::string &why) {
        if (in.size() < 10) {
            why = "truncated (" + std::to_string(in.size()) + " bytes)";
            return false;
        }
        reader r(in);
        uint32_t m = 0;
        uint16_t v = 0;
        r.get(m);
        r.get(v);
        if (m != magic) {
            why = "wrong magic (not libfabric backend data)";
            return false;
        }
        if (v < wire_version_min || v > wire_version) {
            why = "version " + std::to_string(v) + " (this build reads versions " +
                std::to_string(wire_version_min) + " to " + std::to_string(wire_version) + ")";
            return false;
        }
        version = v;
        body = in.substr(0, in.size() - 4);
        uint32_t crc = 0;
        reader(in.substr(in.size() - 4)).get(crc);
        if (crc32c(body.data(), body.size()) != crc) {
            why = "checksum mismatch";
            return false;
        }
        body = body.substr(6);
        return true;
    }

} // namespace

std::string
encodeConnInfo(const connInfoWire &in) {
    std::string out;
    writer w(out);
    w.put<uint32_t>(conn_magic);
    w.put<uint16_t>(in.version);
    w.put<uint64_t>(in.nonce);
    w.bytes(in.hostId);
    w.put<int32_t>(in.pid);
    w.put<uint8_t>(static_cast<uint8_t>(in.rails.size()));
    for (const auto &r : in.rails) {
        w.bytes(r.prov);
        w.bytes(r.addr);
    }
    if (in.version >= 2) {
        w.put<uint64_t>(in.startTime);
        w.bytes(in.regTable);
        w.put<uint64_t>(in.regSlots);
        w.put<uint64_t>(in.probeAddr);
    }
    seal(out);
    return out;
}

bool
decodeConnInfo(std::string_view in, connInfoWire &out, std::string &why) {
    std::string_view body;
    uint16_t version = 0;
    if (!unseal(in, conn_magic, body, version, why)) {
        return false;
    }
    reader r(body);
    std::string_view host;
    uint8_t n = 0;
    out = connInfoWire{};
    out.version = version;
    if (!r.get(out.nonce) || !r.bytes(host, max_host_id) || !r.get(out.pid) || !r.get(n)) {
        why = "truncated header";
        return false;
    }
    if (n == 0 || n > max_rails) {
        why = std::to_string(n) + " providers (1.." + std::to_string(max_rails) + " allowed)";
        return false;
    }
    out.hostId = host;
    for (uint8_t i = 0; i < n; ++i) {
        std::string_view prov, addr;
        if (!r.bytes(prov, max_prov_name) || !r.bytes(addr, max_ep_addr)) {
            why = "provider " + std::to_string(i) + " truncated or too long";
            return false;
        }
        if (prov.empty() || addr.empty()) {
            why = "provider " + std::to_string(i) + " has an empty name or address";
            return false;
        }
        out.rails.push_back({std::string(prov), std::string(addr)});
    }
    if (version >= 2) {
        std::string_view table;
        if (!r.get(out.startTime) || !r.bytes(table, max_table_name) || !r.get(out.regSlots) ||
            !r.get(out.probeAddr)) {
            why = "registration table fields truncated or too long";
            return false;
        }
        if (table.empty() != (out.regSlots == 0)) {
            why = "registration table without slots, or slots without a table";
            return false;
        }
        out.regTable = table;
    }
    if (r.left() != 0) {
        why = std::to_string(r.left()) + " trailing bytes";
        return false;
    }
    return true;
}

std::string
encodePublicData(const publicDataWire &in) {
    std::string out;
    writer w(out);
    w.put<uint32_t>(md_magic);
    w.put<uint16_t>(in.version);
    w.put<uint16_t>(in.mem);
    w.put<uint64_t>(in.base);
    w.put<uint64_t>(in.len);
    w.put<uint8_t>(static_cast<uint8_t>(in.rails.size()));
    for (const auto &r : in.rails) {
        w.bytes(r.prov);
        w.put<uint64_t>(r.key);
        w.put<uint8_t>(r.virtAddr);
    }
    if (in.version >= 2) {
        w.put<uint64_t>(in.slot);
        w.put<uint64_t>(in.regId);
    }
    if (in.version >= 3) {
        w.put<uint64_t>(in.owner);
    }
    seal(out);
    return out;
}

bool
decodePublicData(std::string_view in, publicDataWire &out, std::string &why) {
    std::string_view body;
    uint16_t version = 0;
    if (!unseal(in, md_magic, body, version, why)) {
        return false;
    }
    reader r(body);
    uint8_t n = 0;
    out = publicDataWire{};
    out.version = version;
    if (!r.get(out.mem) || !r.get(out.base) || !r.get(out.len) || !r.get(n)) {
        why = "truncated header";
        return false;
    }
    if (out.base + out.len < out.base) {
        why = "range wraps around the address space";
        return false;
    }
    if (n == 0 || n > max_rails) {
        why = std::to_string(n) + " providers (1.." + std::to_string(max_rails) + " allowed)";
        return false;
    }
    for (uint8_t i = 0; i < n; ++i) {
        std::string_view prov;
        mdRailWire m;
        if (!r.bytes(prov, max_prov_name) || !r.get(m.key) || !r.get(m.virtAddr)) {
            why = "provider " + std::to_string(i) + " truncated or too long";
            return false;
        }
        if (prov.empty() || m.virtAddr > 1) {
            why = "provider " + std::to_string(i) + " malformed";
            return false;
        }
        m.prov = prov;
        out.rails.push_back(std::move(m));
    }
    if (version >= 2) {
        if (!r.get(out.slot) || !r.get(out.regId)) {
            why = "registration slot truncated";
            return false;
        }
        if (out.slot != 0 && out.regId == 0) {
            why = "registration slot " + std::to_string(out.slot) + " without an id";
            return false;
        }
    }
    if (version >= 3 && !r.get(out.owner)) {
        why = "owner nonce truncated";
        return false;
    }
    if (r.left() != 0) {
        why = std::to_string(r.left()) + " trailing bytes";
        return false;
    }
    return true;
}

// Fragment: magic u32, version u8, flags u8 (bit 0 traced, bit 1 first), nonce u64, seq u32,
// total u32, offset u32; first fragment: sender (u16 + bytes), then 26 trace bytes if traced.
size_t
notifHeaderSize(const notifFragWire &in) noexcept {
    size_t n = 4 + 1 + 1 + 8 + 4 + 4 + 4;
    if (in.offset == 0) {
        n += 2 + in.sender.size() + (in.traced ? sizeof(in.trace) : 0);
    }
    return n;
}

void
encodeNotifFrag(const notifFragWire &in, std::string &out) {
    writer w(out);
    const bool first = in.offset == 0;
    w.put<uint32_t>(notif_magic);
    w.put<uint8_t>(notif_version);
    w.put<uint8_t>(static_cast<uint8_t>((in.traced && first ? 1u : 0u) | (first ? 2u : 0u)));
    w.put<uint64_t>(in.nonce);
    w.put<uint32_t>(in.seq);
    w.put<uint32_t>(in.total);
    w.put<uint32_t>(in.offset);
    if (first) {
        w.bytes(in.sender);
        if (in.traced) {
            w.raw(std::string_view(reinterpret_cast<const char *>(in.trace), sizeof(in.trace)));
        }
    }
    w.raw(in.payload);
}

bool
decodeNotifFrag(std::string_view in, notifFragWire &out, std::string &why) {
    reader r(in);
    uint32_t m = 0;
    uint8_t v = 0, flags = 0;
    out = notifFragWire{};
    if (!r.get(m) || !r.get(v) || !r.get(flags) || !r.get(out.nonce) || !r.get(out.seq) ||
        !r.get(out.total) || !r.get(out.offset)) {
        why = "truncated notification (" + std::to_string(in.size()) + " bytes)";
        return false;
    }
    if (m != notif_magic || v != notif_version || (flags & ~3u) != 0 || flags == 1u) {
        // flags 1: traced but not first (only a first fragment carries the context)
        why = "not a version " + std::to_string(notif_version) + " notification";
        return false;
    }
    const bool first = (flags & 2u) != 0;
    if (first != (out.offset == 0) || out.total > max_notif_len || out.offset > out.total) {
        why = "notification fragment out of range";
        return false;
    }
    if (first) {
        if (!r.bytes(out.sender, max_agent_name)) {
            why = "notification sender name truncated";
            return false;
        }
        out.traced = (flags & 1u) != 0;
        std::string_view t;
        if (out.traced) {
            if (!r.raw(t, sizeof(out.trace))) {
                why = "notification trace context truncated";
                return false;
            }
            std::memcpy(out.trace, t.data(), sizeof(out.trace));
        }
    }
    r.raw(out.payload, r.left());
    if (out.payload.size() > out.total - out.offset) {
        why = "notification fragment longer than its message";
        return false;
    }
    return true;
}

} // namespace nixlLf
