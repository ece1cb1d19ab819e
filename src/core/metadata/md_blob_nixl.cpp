/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "md_blob_nixl.h"

#include <limits>

#include "codec/nixl_le.h"
#include "codec/nixl_serdes_wire.h"
#include "common/nixl_text.h"

// Field order: ../shared/reference/nixl-wire.md 2.1 (blob), 2.4 (descriptor list), 2.5 (basic
// descriptor). Integers are little-endian, as NIXL 1.4 writes them on its LP64 LE hosts.

namespace {

constexpr std::string_view tag_agent{"Agent"};
constexpr std::string_view tag_conns{"Conns"};
constexpr std::string_view tag_conn_type{"t"};
constexpr std::string_view tag_conn_info{"c"};
constexpr std::string_view mem_section{"MemSection"};
constexpr std::string_view tag_sec_count{"nixlSecElms"};
constexpr std::string_view tag_backend{"bknd"};
constexpr std::string_view tag_dlist{"nixlDList"};
constexpr std::string_view section_dlist{"nixlSDList"};
constexpr std::string_view tag_mem{"t"};
constexpr std::string_view tag_count{"n"};

constexpr size_t basic_desc_size = 24;
constexpr uint32_t max_mem_type = FILE_SEG;

// Smallest encodings, to cap a count by the bytes left before looping over it.
constexpr size_t field = nixlSerdesWire::field_overhead;
constexpr size_t min_conn_size = (1 + field + 1) * 2; // "t" and "c", one value byte each
constexpr size_t min_desc_size = field + basic_desc_size;
constexpr size_t min_section_size = (tag_backend.size() + field + 1) +
                                    (tag_dlist.size() + field + section_dlist.size()) +
                                    (tag_mem.size() + field + 4) + (tag_count.size() + field + 8) +
                                    min_desc_size;

void
putDesc(std::string &out, const nixlMdDesc &d) {
    nixlLe::put<uint64_t>(out, d.addr);
    nixlLe::put<uint64_t>(out, d.len);
    nixlLe::put<uint64_t>(out, d.devId);
    out.append(d.publicData);
}

void
putSection(nixlSerdesWire::writer &w,
           std::string_view backend,
           nixl_mem_t mem,
           const std::vector<nixlMdDesc> &descs) {
    w.str(tag_backend, backend);
    w.str(tag_dlist, section_dlist);
    w.integer<uint32_t>(tag_mem, static_cast<uint32_t>(mem));
    w.integer<uint64_t>(tag_count, descs.size());
    std::string elem;
    for (const nixlMdDesc &d : descs) {
        elem.clear();
        putDesc(elem, d);
        w.str({}, elem);
    }
}

class nixlFormDecoder {
public:
    nixlFormDecoder(std::string_view bytes, std::string &error) noexcept
        : in_(bytes),
          rd_(bytes),
          error_(error) {}

    bool
    decode(nixlMdBlob &out, std::string_view &ext);

private:
    bool
    fail(const std::string &msg) {
        error_ = "NIXL nixlSerDes blob: " + msg + " (offset " + std::to_string(rd_.offset()) +
            ")";
        return false;
    }

    bool
    missing(const std::string &what) {
        return fail(what + " missing, malformed or truncated");
    }

    // count elements of at least min_size bytes must fit in what is left.
    bool
    countFits(uint64_t count, size_t min_size, const std::string &what) {
        if (count > rd_.left() / min_size) {
            return fail(what + " " + std::to_string(count) + " does not fit in the " +
                        std::to_string(rd_.left()) + " bytes left");
        }
        return true;
    }

    bool
    decodeSection(const std::string &where, nixlMdSection &sec);

    std::string_view in_;
    nixlSerdesWire::reader rd_;
    std::string &error_;
};

bool
nixlFormDecoder::decodeSection(const std::string &where, nixlMdSection &sec) {
    std::string_view backend;
    if (!rd_.str(tag_backend, backend, nixl_md_max_backend_name_len) || backend.empty()) {
        return missing(where + " backend name");
    }
    sec.backend.assign(backend);
    const std::string named = where + " (" + nixlText::cut(backend, 64) + ")";
    std::string_view kind;
    if (!rd_.str(tag_dlist, kind, section_dlist.size()) || kind != section_dlist) {
        return missing(named + " descriptor list kind (nixlSDList)");
    }
    uint32_t mem = 0;
    if (!rd_.integer<uint32_t>(tag_mem, mem)) {
        return missing(named + " mem type");
    }
    if (mem > max_mem_type) {
        return fail(named + " mem type " + std::to_string(mem) + ", expected 0..4");
    }
    sec.mem = static_cast<nixl_mem_t>(mem);
    uint64_t n = 0;
    if (!rd_.integer<uint64_t>(tag_count, n)) {
        return missing(named + " descriptor count");
    }
    if (n == 0) {
        return fail(named + " has no descriptors");
    }
    if (!countFits(n, min_desc_size, named + " descriptor count")) {
        return false;
    }
    sec.descs.resize(n);
    for (uint64_t j = 0; j < n; ++j) {
        std::string_view elem;
        if (!rd_.str({}, elem) || elem.size() < basic_desc_size) {
            return missing(named + " descriptor " + std::to_string(j));
        }
        const uint64_t addr = nixlLe::get<uint64_t>(elem.data());
        const uint64_t len = nixlLe::get<uint64_t>(elem.data() + 8);
        if constexpr (sizeof(uintptr_t) < sizeof(uint64_t) || sizeof(size_t) < sizeof(uint64_t)) {
            if (addr > std::numeric_limits<uintptr_t>::max() ||
                len > std::numeric_limits<size_t>::max()) {
                return fail(named + " descriptor " + std::to_string(j) +
                            " does not fit this platform's address width");
            }
        }
        nixlMdDesc &d = sec.descs[j];
        d.addr = static_cast<uintptr_t>(addr);
        d.len = static_cast<size_t>(len);
        d.devId = nixlLe::get<uint64_t>(elem.data() + 16);
        d.publicData.assign(elem.substr(basic_desc_size));
    }
    return true;
}

bool
nixlFormDecoder::decode(nixlMdBlob &out, std::string_view &ext) {
    out = nixlMdBlob();
    ext = {};
    if (!rd_.ok()) {
        return fail("no nixlSerDes| magic");
    }
    std::string_view name;
    if (!rd_.str(tag_agent, name, nixl_md_max_agent_name_len) || name.empty()) {
        return missing("agent name");
    }
    out.agentName.assign(name);
    uint64_t conns = 0;
    if (!rd_.integer<uint64_t>(tag_conns, conns)) {
        return missing("connection count");
    }
    if (!countFits(conns, min_conn_size, "connection count")) {
        return false;
    }
    out.conns.resize(conns);
    for (uint64_t i = 0; i < conns; ++i) {
        const std::string where = "connection " + std::to_string(i);
        std::string_view backend;
        std::string_view info;
        if (!rd_.str(tag_conn_type, backend, nixl_md_max_backend_name_len) || backend.empty()) {
            return missing(where + " backend name");
        }
        if (!rd_.str(tag_conn_info, info) || info.empty()) {
            return missing(where + " (" + nixlText::cut(backend, 64) + ") connection info");
        }
        out.conns[i] = nixlMdConn{std::string(backend), std::string(info)};
    }
    std::string_view marker;
    if (!rd_.str({}, marker, mem_section.size()) || marker != mem_section) {
        return missing("MemSection marker");
    }
    uint64_t sections = 0;
    if (!rd_.integer<uint64_t>(tag_sec_count, sections)) {
        return missing("section count");
    }
    if (!countFits(sections, min_section_size, "section count")) {
        return false;
    }
    out.sections.reserve(sections);
    for (uint64_t i = 0; i < sections; ++i) {
        const std::string where = "section " + std::to_string(i);
        nixlMdSection sec;
        if (!decodeSection(where, sec)) {
            return false;
        }
        if (sec.backend != nixl_md_ext_backend) {
            out.sections.push_back(std::move(sec));
            continue;
        }
        if (i + 1 != sections || sec.descs.size() != 1) {
            return fail(where + ": the " + std::string(nixl_md_ext_backend) +
                        " section must be the last one and hold one descriptor");
        }
        // A view into the input: the public data ends the field just read, before its
        // delimiter (the decoded copy goes away with sec).
        const size_t pub_size = sec.descs[0].publicData.size();
        ext = in_.substr(rd_.offset() - 1 - pub_size, pub_size);
    }
    if (rd_.left() != 0) {
        return fail(std::to_string(rd_.left()) + " bytes after the last section");
    }
    return true;
}

} // namespace

std::string
nixlMdEncodeNixl(const nixlMdBlob &nixl_part, const std::string *libnixl_blob) {
    nixlSerdesWire::writer w;
    w.str(tag_agent, nixl_part.agentName);
    w.integer<uint64_t>(tag_conns, nixl_part.conns.size());
    for (const nixlMdConn &c : nixl_part.conns) {
        w.str(tag_conn_type, c.backend);
        w.str(tag_conn_info, c.connInfo);
    }
    w.str({}, mem_section);
    w.integer<uint64_t>(tag_sec_count,
                        nixl_part.sections.size() + (libnixl_blob != nullptr ? 1 : 0));
    for (const nixlMdSection &s : nixl_part.sections) {
        putSection(w, s.backend, s.mem, s.descs);
    }
    if (libnixl_blob != nullptr) {
        // One descriptor whose length is the blob's: NIXL reads it as a registration of a
        // backend it does not have and skips it.
        putSection(w, nixl_md_ext_backend, DRAM_SEG,
                   {nixlMdDesc{0, libnixl_blob->size(), 0, *libnixl_blob}});
    }
    return w.take();
}

nixl_status_t
nixlMdDecodeNixl(std::string_view bytes,
                 nixlMdBlob &out,
                 std::string_view &ext,
                 std::string &error) {
    nixlFormDecoder decoder(bytes, error);
    return decoder.decode(out, ext) ? NIXL_SUCCESS : NIXL_ERR_MISMATCH;
}

bool
nixlMdPeekAgentName(std::string_view bytes, std::string &name) {
    if (nixlSerdesWire::hasMagic(bytes)) {
        nixlSerdesWire::reader rd(bytes);
        std::string_view v;
        if (!rd.str(tag_agent, v, nixl_md_max_agent_name_len) || v.empty()) {
            return false;
        }
        name.assign(v);
        return true;
    }
    return nixlMdPeekOwnAgentName(bytes, name);
}
