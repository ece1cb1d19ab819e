/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "md_blob.h"
#include "md_blob_nixl.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "codec/nixl_le.h"
#include "codec/nixl_serdes_wire.h"
#include "common/nixl_text.h"
#include "nixl_plugin_names.h"

// Layout and rationale: docs/metadata.md. Every multi-byte integer is little-endian and is
// assembled byte by byte, so blobs move between hosts of any byte order and no read ever goes
// through a misaligned pointer.

namespace {

// "NIXLMD" then CR LF: a channel that rewrites line endings corrupts the magic, so the damage is
// reported as such instead of surfacing later as a confusing length error.
constexpr char md_magic_bytes[8] = {'N', 'I', 'X', 'L', 'M', 'D', '\r', '\n'};
constexpr std::string_view md_magic(md_magic_bytes, sizeof(md_magic_bytes));

// NIXL 1.4's container (md_blob_nixl.h). nixlMdDecode hands a whole blob starting like this to
// that decoder; here it can only be one nested where libnixl's own blob belongs.
constexpr std::string_view nixl_serdes_prefix = nixlSerdesWire::magic;

constexpr size_t offset_version = 8;
constexpr size_t offset_flags = 12;
constexpr size_t offset_length = 16;
static_assert(offset_length + 8 == nixl_md_header_size);

// Smallest encoding of each repeated element. A count is accepted only if that many minimal
// elements fit in the bytes left, which caps every reservation at a small multiple of the blob.
constexpr uint64_t min_conn_size = 4 + 1 + 4; // name length, >= 1 name byte, conn info length
constexpr uint64_t min_section_size = 4 + 1 + 4 + 4; // name length, name byte, mem, count
constexpr uint64_t min_desc_fixed_size = 8 + 8 + 8; // addr, len, devId
constexpr uint64_t min_desc_size = min_desc_fixed_size + 4; // plus public data length

constexpr uint32_t max_mem_type = FILE_SEG;
// Every kind up to max_mem_type has its name in the shared table (nixl_plugin_names.h).
static_assert(max_mem_type + 1 == NIXL_BE_MEM_KIND_COUNT && NIXL_BE_MEM_FILE == FILE_SEG);

uint32_t
checkedU32(size_t v, const char *what) {
    if (v > std::numeric_limits<uint32_t>::max()) {
        throw std::length_error(std::string("nixlMdEncode: ") + what + " of " + std::to_string(v) +
                                " does not fit a 32-bit length field");
    }
    return static_cast<uint32_t>(v);
}

void
putStr(std::string &out, const std::string &s, const char *what) {
    nixlLe::put<uint32_t>(out, checkedU32(s.size(), what));
    out.append(s);
}

// Names come from the peer and end up in logs: keep them printable and short.
std::string
printable(std::string_view s) {
    // Cut only (escaping here too wrote a peer's ESC as "\\x1b" in the log). Header-only:
    // the fuzzers build this file alone.
    return nixlText::cut(s, 64);
}

// Index of the first element (in blob order) whose key already appeared earlier, and the index
// of that earlier one; false if all keys differ. Sorting keeps this O(n log n) for hostile
// inputs with millions of entries.
template<class Key>
bool
findRepeat(const std::vector<Key> &keys, size_t &repeat, size_t &first) {
    std::vector<size_t> order(keys.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::stable_sort(
        order.begin(), order.end(), [&keys](size_t a, size_t b) { return keys[a] < keys[b]; });
    bool found = false;
    size_t group_start = 0;
    for (size_t k = 1; k < order.size(); ++k) {
        if (keys[order[k]] != keys[order[group_start]]) {
            group_start = k;
            continue;
        }
        // Inside a group of equal keys the stable sort keeps blob order, so order[group_start]
        // is the first occurrence and order[k] a later one.
        if (!found || order[k] < repeat) {
            repeat = order[k];
            first = order[group_start];
            found = true;
        }
    }
    return found;
}

class mdDecoder {
public:
    mdDecoder(std::string_view bytes, std::string &error) noexcept
        : bytes_(bytes),
          error_(error) {}

    bool
    decode(nixlMdBlob &out);

private:
    bool
    fail(std::string msg) {
        error_ = std::move(msg);
        return false;
    }

    size_t
    left() const noexcept {
        return bytes_.size() - pos_;
    }

    // Messages are built only on failure: where() is a callable returning the field's name.
    template<class Where>
    bool
    truncated(size_t need, Where where) {
        return fail("truncated in " + where() + ": need " + std::to_string(need) +
                    " bytes at offset " + std::to_string(pos_) + ", " + std::to_string(left()) +
                    " left");
    }

    template<class Where>
    bool
    readU32(uint32_t &v, Where where) {
        if (left() < 4) {
            return truncated(4, where);
        }
        v = nixlLe::get<uint32_t>(bytes_.data() + pos_);
        pos_ += 4;
        return true;
    }

    // A u32 length and that many bytes. min_len/max_len bound the length (max_len 0: only the
    // blob bounds it). The view points into the input, so nothing is copied twice.
    template<class Where>
    bool
    readString(std::string_view &s, size_t min_len, size_t max_len, Where where) {
        uint32_t len = 0;
        if (!readU32(len, where)) {
            return false;
        }
        if (len < min_len) {
            return fail(where() + " length " + std::to_string(len));
        }
        if (max_len != 0 && len > max_len) {
            return fail(where() + " length " + std::to_string(len) + ", limit " +
                        std::to_string(max_len));
        }
        if (len > left()) {
            return fail("truncated in " + where() + ": length " + std::to_string(len) +
                        " at offset " + std::to_string(pos_ - 4) + ", " +
                        std::to_string(left()) + " bytes left");
        }
        s = bytes_.substr(pos_, len);
        pos_ += len;
        return true;
    }

    // A u32 element count, accepted only if count minimal elements fit in what is left.
    template<class Where>
    bool
    readCount(uint32_t &count, uint64_t min_elem_size, Where where) {
        if (!readU32(count, where)) {
            return false;
        }
        const uint64_t need = uint64_t(count) * min_elem_size; // <= 2^32 * 28: no overflow
        if (need > left()) {
            return fail(where() + " " + std::to_string(count) + " needs at least " +
                        std::to_string(need) + " bytes, " + std::to_string(left()) + " left");
        }
        return true;
    }

    bool
    decodeHeader();
    bool
    decodeConns(nixlMdBlob &out);
    bool
    decodeSections(nixlMdBlob &out);

    std::string_view bytes_;
    std::string &error_;
    size_t pos_ = 0;
};

bool
mdDecoder::decodeHeader() {
    if (bytes_.size() > nixl_md_max_blob_size) {
        return fail("blob is " + std::to_string(bytes_.size()) + " bytes, over the limit of " +
                    std::to_string(nixl_md_max_blob_size));
    }
    if (bytes_.empty()) {
        return fail("empty blob");
    }
    if (bytes_.substr(0, nixl_serdes_prefix.size()) == nixl_serdes_prefix) {
        return fail("bad magic: a NIXL nixlSerDes stream where libnixl's own blob belongs");
    }
    const size_t magic_seen = std::min(bytes_.size(), md_magic.size());
    if (bytes_.substr(0, magic_seen) != md_magic.substr(0, magic_seen)) {
        return fail("bad magic");
    }
    if (bytes_.size() < nixl_md_header_size) {
        return fail("truncated header: " + std::to_string(bytes_.size()) + " bytes, need " +
                    std::to_string(nixl_md_header_size));
    }
    // The version decides how the rest of the header reads, so it is checked first.
    const uint32_t version = nixlLe::get<uint32_t>(bytes_.data() + offset_version);
    if (version != nixl_md_format_version) {
        return fail("format version " + std::to_string(version) + ", expected " +
                    std::to_string(nixl_md_format_version));
    }
    const uint32_t flags = nixlLe::get<uint32_t>(bytes_.data() + offset_flags);
    if (flags != 0) {
        char hex[16];
        std::snprintf(hex, sizeof(hex), "0x%08x", static_cast<unsigned>(flags));
        return fail(std::string("flags ") + hex + ", expected 0 (version " +
                    std::to_string(nixl_md_format_version) + " defines no flags)");
    }
    const uint64_t length = nixlLe::get<uint64_t>(bytes_.data() + offset_length);
    if (length > bytes_.size()) {
        return fail("truncated: header says " + std::to_string(length) + " bytes, got " +
                    std::to_string(bytes_.size()));
    }
    if (length < bytes_.size()) {
        return fail(std::to_string(bytes_.size() - length) + " trailing bytes after the " +
                    std::to_string(length) + " bytes the header declares");
    }
    pos_ = nixl_md_header_size;
    return true;
}

bool
mdDecoder::decodeConns(nixlMdBlob &out) {
    uint32_t count = 0;
    if (!readCount(count, min_conn_size, [] { return std::string("connection count"); })) {
        return false;
    }
    out.conns.resize(count);
    std::vector<std::string_view> keys(count);
    for (uint32_t i = 0; i < count; ++i) {
        const auto idx = [i] { return "connection " + std::to_string(i); };
        std::string_view backend;
        std::string_view info;
        if (!readString(backend, 1, nixl_md_max_backend_name_len, [&idx] {
                return idx() + " backend name";
            })) {
            return false;
        }
        if (!readString(info, 0, 0, [&idx, backend] {
                return idx() + " (" + printable(backend) + ") connection info";
            })) {
            return false;
        }
        out.conns[i].backend.assign(backend);
        out.conns[i].connInfo.assign(info);
        keys[i] = backend;
    }
    size_t repeat = 0;
    size_t first = 0;
    if (findRepeat(keys, repeat, first)) {
        return fail("connection " + std::to_string(repeat) + " repeats backend " +
                    printable(keys[repeat]) + " of connection " + std::to_string(first));
    }
    return true;
}

bool
mdDecoder::decodeSections(nixlMdBlob &out) {
    uint32_t count = 0;
    if (!readCount(count, min_section_size, [] { return std::string("section count"); })) {
        return false;
    }
    out.sections.resize(count);
    std::vector<std::pair<std::string_view, uint32_t>> keys(count);
    for (uint32_t i = 0; i < count; ++i) {
        const auto idx = [i] { return "section " + std::to_string(i); };
        nixlMdSection &sec = out.sections[i];
        std::string_view backend;
        if (!readString(backend, 1, nixl_md_max_backend_name_len, [&idx] {
                return idx() + " backend name";
            })) {
            return false;
        }
        sec.backend.assign(backend);
        const auto named = [&idx, backend] { return idx() + " (" + printable(backend) + ")"; };
        uint32_t mem = 0;
        if (!readU32(mem, [&named] { return named() + " mem type"; })) {
            return false;
        }
        if (mem > max_mem_type) {
            return fail(named() + " mem type " + std::to_string(mem) + ", expected 0.." +
                        std::to_string(max_mem_type) + " (DRAM_SEG..FILE_SEG)");
        }
        sec.mem = static_cast<nixl_mem_t>(mem);
        keys[i] = {backend, mem};
        uint32_t ndescs = 0;
        if (!readCount(ndescs, min_desc_size, [&idx] { return idx() + " descriptor count"; })) {
            return false;
        }
        sec.descs.resize(ndescs);
        for (uint32_t j = 0; j < ndescs; ++j) {
            const auto where = [i, j] {
                return "section " + std::to_string(i) + " descriptor " + std::to_string(j);
            };
            nixlMdDesc &d = sec.descs[j];
            if (left() < min_desc_fixed_size) {
                return truncated(min_desc_fixed_size, where);
            }
            const uint64_t addr = nixlLe::get<uint64_t>(bytes_.data() + pos_);
            const uint64_t len = nixlLe::get<uint64_t>(bytes_.data() + pos_ + 8);
            const uint64_t dev = nixlLe::get<uint64_t>(bytes_.data() + pos_ + 16);
            pos_ += min_desc_fixed_size;
            if constexpr (sizeof(uintptr_t) < sizeof(uint64_t) ||
                          sizeof(size_t) < sizeof(uint64_t)) {
                if (addr > std::numeric_limits<uintptr_t>::max() ||
                    len > std::numeric_limits<size_t>::max()) {
                    return fail(where() + " does not fit this platform's address width");
                }
            }
            d.addr = static_cast<uintptr_t>(addr);
            d.len = static_cast<size_t>(len);
            d.devId = dev;
            std::string_view pub;
            if (!readString(pub, 0, 0, [&where] { return where() + " public data"; })) {
                return false;
            }
            d.publicData.assign(pub);
        }
    }
    size_t repeat = 0;
    size_t first = 0;
    if (findRepeat(keys, repeat, first)) {
        return fail("section " + std::to_string(repeat) + " repeats backend " +
                    printable(keys[repeat].first) + " mem type " +
                    nixl_be_mem_name(keys[repeat].second) + " of section " + std::to_string(first));
    }
    return true;
}

bool
mdDecoder::decode(nixlMdBlob &out) {
    out = nixlMdBlob();
    if (!decodeHeader()) {
        return false;
    }
    std::string_view name;
    if (!readString(name, 1, nixl_md_max_agent_name_len, [] {
            return std::string("agent name");
        })) {
        return false;
    }
    out.agentName.assign(name);
    if (!decodeConns(out) || !decodeSections(out)) {
        return false;
    }
    if (left() != 0) {
        return fail(std::to_string(left()) + " trailing bytes after the last section, at offset " +
                    std::to_string(pos_));
    }
    return true;
}

} // namespace

std::string
nixlMdEncode(const nixlMdBlob &blob) {
    size_t total = nixl_md_header_size + 4 + blob.agentName.size() + 4;
    for (const nixlMdConn &c : blob.conns) {
        total += 4 + c.backend.size() + 4 + c.connInfo.size();
    }
    total += 4;
    for (const nixlMdSection &s : blob.sections) {
        total += 4 + s.backend.size() + 4 + 4;
        for (const nixlMdDesc &d : s.descs) {
            total += min_desc_size + d.publicData.size();
        }
    }

    std::string out;
    out.reserve(total);
    out.append(md_magic);
    nixlLe::put<uint32_t>(out, nixl_md_format_version);
    nixlLe::put<uint32_t>(out, 0);
    nixlLe::put<uint64_t>(out, total);
    putStr(out, blob.agentName, "agent name");
    nixlLe::put<uint32_t>(out, checkedU32(blob.conns.size(), "connection count"));
    for (const nixlMdConn &c : blob.conns) {
        putStr(out, c.backend, "backend name");
        putStr(out, c.connInfo, "connection info");
    }
    nixlLe::put<uint32_t>(out, checkedU32(blob.sections.size(), "section count"));
    for (const nixlMdSection &s : blob.sections) {
        putStr(out, s.backend, "backend name");
        nixlLe::put<uint32_t>(out, static_cast<uint32_t>(s.mem));
        nixlLe::put<uint32_t>(out, checkedU32(s.descs.size(), "descriptor count"));
        for (const nixlMdDesc &d : s.descs) {
            nixlLe::put<uint64_t>(out, d.addr);
            nixlLe::put<uint64_t>(out, d.len);
            nixlLe::put<uint64_t>(out, d.devId);
            putStr(out, d.publicData, "public data");
        }
    }
    return out;
}

namespace {

nixl_status_t
decodeOwn(std::string_view bytes, nixlMdBlob &out, std::string &error) {
    mdDecoder decoder(bytes, error);
    return decoder.decode(out) ? NIXL_SUCCESS : NIXL_ERR_MISMATCH;
}

} // namespace

nixl_status_t
nixlMdDecode(std::string_view bytes, nixlMdBlob &out, std::string &error, nixl_md_form_t *form) {
    if (!nixlSerdesWire::hasMagic(bytes) || bytes.size() > nixl_md_max_blob_size) {
        if (form != nullptr) {
            *form = nixl_md_form_t::LIBNIXL;
        }
        return decodeOwn(bytes, out, error);
    }
    nixlMdBlob nixl_part;
    std::string_view ext;
    if (nixlMdDecodeNixl(bytes, nixl_part, ext, error) != NIXL_SUCCESS) {
        return NIXL_ERR_MISMATCH;
    }
    if (ext.empty() && bytes.find(md_magic) != std::string_view::npos) {
        // libnixl's blob is in there, but not where the combined layout puts it: a damaged
        // combined blob (a section name, count or length changed). Its NIXL part carries no
        // checksum, so reading it as a NIXL agent's would load unchecked bytes; refuse instead.
        error = "a NIXL nixlSerDes blob that carries libnixl's metadata outside its libnixl "
                "section (damaged)";
        return NIXL_ERR_MISMATCH;
    }
    if (ext.empty()) {
        // The rules of our own format (names, ranges, repeats) hold for the NIXL part too:
        // checking its re-encoding applies them with one implementation.
        if (form != nullptr) {
            *form = nixl_md_form_t::NIXL;
        }
        if (decodeOwn(nixlMdEncode(nixl_part), out, error) != NIXL_SUCCESS) {
            error = "NIXL nixlSerDes blob: " + error;
            return NIXL_ERR_MISMATCH;
        }
        return NIXL_SUCCESS;
    }
    if (form != nullptr) {
        *form = nixl_md_form_t::COMBINED;
    }
    if (decodeOwn(ext, out, error) != NIXL_SUCCESS) {
        error = "the libnixl section of a NIXL nixlSerDes blob: " + error;
        return NIXL_ERR_MISMATCH;
    }
    if (out.agentName != nixl_part.agentName) {
        error = "the NIXL part names agent " + printable(nixl_part.agentName) +
            ", its libnixl section agent " + printable(out.agentName);
        return NIXL_ERR_MISMATCH;
    }
    return NIXL_SUCCESS;
}

bool
nixlMdPeekOwnAgentName(std::string_view bytes, std::string &name) {
    if (bytes.size() < nixl_md_header_size + 4 || bytes.substr(0, md_magic.size()) != md_magic) {
        return false;
    }
    const uint32_t len = nixlLe::get<uint32_t>(bytes.data() + nixl_md_header_size);
    if (len == 0 || len > nixl_md_max_agent_name_len ||
        bytes.size() - nixl_md_header_size - 4 < len) {
        return false;
    }
    name.assign(bytes.substr(nixl_md_header_size + 4, len));
    return true;
}
