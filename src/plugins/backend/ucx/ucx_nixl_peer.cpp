/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// NIXL 1.4's UCX wire forms: see ucx_nixl_peer.h.
#include "ucx_nixl_peer.h"

#include <cstdint>
#include <cstring>

#include "codec/nixl_serdes_wire.h"

namespace nixlUcx {

bool
isOwnConnInfo(std::string_view in) noexcept {
    uint32_t m = 0;
    if (in.size() < sizeof(m)) {
        return false;
    }
    std::memcpy(&m, in.data(), sizeof(m)); // our formats are little-endian, as the hosts
    return m == conn_magic;
}

bool
decodeNixlConnInfo(std::string_view in, std::string &addr, std::string &why) {
    std::string sub;
    if (!checkWorkerAddress(in, sub)) {
        why = "NIXL-form worker address: " + sub;
        return false;
    }
    addr.assign(in);
    return true;
}

bool
checkNixlPublicData(std::string_view in, const rkeyLayout *local, std::string &why) {
    std::string sub;
    if (!checkPackedRkey(in, local, sub)) {
        why = "NIXL-form remote key: " + sub;
        return false;
    }
    return true;
}

std::string
encodeNixlNotif(std::string_view sender, std::string_view msg) {
    nixlSerdesWire::writer w;
    w.str("name", sender);
    w.str("msg", msg);
    return w.take();
}

bool
decodeNixlNotif(std::string_view body,
                std::string_view &sender,
                std::string_view &msg,
                std::string &why) {
    nixlSerdesWire::reader rd(body);
    if (!rd.ok()) {
        why = "no serdes magic";
        return false;
    }
    if (!rd.str("name", sender, nixl_notif_max_name)) {
        why = "no whole \"name\" field of at most " + std::to_string(nixl_notif_max_name) +
            " bytes at offset " + std::to_string(rd.offset());
        return false;
    }
    if (sender.empty()) {
        why = "an empty sender name";
        return false;
    }
    if (!rd.str("msg", msg)) {
        why = "no whole \"msg\" field at offset " + std::to_string(rd.offset());
        return false;
    }
    return true;
}

} // namespace nixlUcx
