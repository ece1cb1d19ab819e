/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine: local registrations, their public data, and remote registrations (rkeys).
#include "ucx_internal.h"

#include <cstdio>


using nixlUcx::memName;

namespace {

std::string
hex64(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

nixl_status_t
nixlUcxEngine::registerMem(const nixlBlobDesc &mem,
                           const nixl_mem_t &nixl_mem,
                           nixlBackendMD *&out) {
    if (nixl_mem != DRAM_SEG && !(nixl_mem == VRAM_SEG && vram_)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot register "
                                << memName(nixl_mem) << " memory");
        return NIXL_ERR_NOT_SUPPORTED;
    }
    if (mem.len == 0) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot register 0 bytes at 0x"
                                << std::hex << mem.addr << std::dec);
        return NIXL_ERR_INVALID_PARAM;
    }
    auto md = std::make_unique<nixlUcxLocalMD>();
    md->base = mem.addr;
    md->len = mem.len;
    md->mem = nixl_mem;
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
        UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    mp.address = reinterpret_cast<void *>(mem.addr);
    mp.length = mem.len;
    mp.memory_type = nixl_mem == VRAM_SEG ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
    ucs_status_t st = ucp_mem_map(ctx_, &mp, &md->memh);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_mem_map of " << mem.len
                                << " bytes at 0x" << std::hex << mem.addr << std::dec << ": "
                                << ucs_status_string(st));
        return NIXL_ERR_BACKEND;
    }
    void *rkey = nullptr;
    size_t rkey_len = 0;
    st = ucp_rkey_pack(ctx_, md->memh, &rkey, &rkey_len);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_rkey_pack for " << mem.len
                                << " bytes at 0x" << std::hex << mem.addr << std::dec << ": "
                                << ucs_status_string(st));
        ucp_mem_unmap(ctx_, md->memh);
        return NIXL_ERR_BACKEND;
    }
    // A registration in no slot would be copied into by peers unchecked (no fence), so one
    // whose slot cannot be backed is refused.
    if (std::string why; !registry_->add(md->slot, md->regId, why)) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX registerMem of " << mem.len
                                << " bytes at 0x" << std::hex << mem.addr << std::dec
                                << " refused: " << why);
        ucp_rkey_buffer_release(rkey);
        ucp_mem_unmap(ctx_, md->memh);
        return NIXL_ERR_BACKEND;
    }
    nixlUcx::publicDataWire pd;
    pd.mem = static_cast<uint16_t>(nixl_mem);
    pd.owner = nonce_;
    pd.base = md->base;
    pd.len = md->len;
    pd.slot = md->slot;
    pd.regId = md->regId;
    pd.rkey.assign(static_cast<const char *>(rkey), rkey_len);
    ucp_rkey_buffer_release(rkey);
    md->publicData = nixlUcx::encodePublicData(pd);
    md->packedRkey = std::move(pd.rkey);
    out = md.release();
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::deregisterMem(nixlBackendMD *meta) {
    auto *md = dynamic_cast<nixlUcxLocalMD *>(meta);
    if (md == nullptr) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX deregisterMem: not a UCX registration");
        return NIXL_ERR_INVALID_PARAM;
    }
    nixl_status_t fenced = NIXL_SUCCESS;
    if (md->slot != 0) {
        std::string who;
        if (!registry_->release(md->slot, cfg_.releaseTimeoutMs, who)) {
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX deregisterMem of " << md->len
                                    << " bytes at 0x" << std::hex << md->base << std::dec
                                    << ": a peer, " << who
                                    << "; the range may still be accessed until it returns");
            fenced = NIXL_ERR_BACKEND;
        }
    }
    ucs_status_t st = ucp_mem_unmap(ctx_, md->memh);
    if (st != UCS_OK) {
        NIXL_SDK_ERROR("agent " << localAgent << ": ucp_mem_unmap of " << md->len
                                << " bytes at 0x" << std::hex << md->base << std::dec << ": "
                                << ucs_status_string(st));
    }
    delete md;
    return st != UCS_OK ? NIXL_ERR_BACKEND : fenced;
}

nixl_status_t
nixlUcxEngine::getPublicData(const nixlBackendMD *meta, std::string &str) const {
    auto *md = dynamic_cast<const nixlUcxLocalMD *>(meta);
    if (md == nullptr) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX getPublicData: not a UCX registration");
        return NIXL_ERR_INVALID_PARAM;
    }
    str = md->publicData;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::getPublicDataNixl(const nixlBackendMD *meta, std::string &str) const {
    auto *md = dynamic_cast<const nixlUcxLocalMD *>(meta);
    if (md == nullptr) {
        NIXL_SDK_ERROR("agent " << localAgent
                                << ": UCX getPublicDataNixl: not a UCX registration");
        return NIXL_ERR_INVALID_PARAM;
    }
    str = md->packedRkey;
    return NIXL_SUCCESS;
}

bool
nixlUcxEngine::decodeNixlPublicData(const nixlBlobDesc &input,
                                    nixl_mem_t mem,
                                    nixlUcx::publicDataWire &pd,
                                    std::string &why) const {
    // No frame and no checksum: the key is all there is, so it is always walked (against
    // our own layout for host memory, structurally otherwise) before UCX unpacks it.
    const nixlUcx::rkeyLayout *layout = mem == DRAM_SEG && rkeyLayoutKnown_ ? &hostRkey_ : nullptr;
    if (!nixlUcx::checkNixlPublicData(input.metaInfo, layout, why)) {
        return false;
    }
    pd = nixlUcx::publicDataWire{};
    pd.mem = static_cast<uint16_t>(mem);
    pd.base = input.addr;
    pd.len = input.len;
    pd.rkey = input.metaInfo;
    return true;
}

nixl_status_t
nixlUcxEngine::unpackRkeys(nixlUcxRemoteMD &md) const {
    for (auto &lane : md.conn->lanes) {
        std::lock_guard<std::mutex> g(lane->worker->lock);
        // A pending lane unpacks the key when its endpoint is made (setupLaneLocked), which
        // may have happened between our insertion into conn->mds and this lock.
        if (lane->worker->worker == nullptr || lane->ep == nullptr ||
            md.rkeys[lane->index] != nullptr) {
            continue;
        }
        ucs_status_t st =
            ucp_ep_rkey_unpack(lane->ep, md.packedRkey.data(), &md.rkeys[lane->index]);
        if (st != UCS_OK) {
            md.rkeys[lane->index] = nullptr;
            NIXL_SDK_ERROR("agent " << localAgent << ": UCX cannot unpack the remote key of "
                                    << md.len << " bytes at 0x" << std::hex << md.base
                                    << std::dec << " of " << md.conn->name << " (lane "
                                    << lane->index << "): " << ucs_status_string(st));
            return NIXL_ERR_BACKEND;
        }
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::loadRemoteMD(const nixlBlobDesc &input,
                            const nixl_mem_t &nixl_mem,
                            const std::string &remote_agent,
                            nixlBackendMD *&output) {
    std::shared_ptr<nixlUcxConn> conn = findConn(remote_agent);
    if (!conn) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX loadRemoteMD: no connection info of "
                                << remote_agent);
        return NIXL_ERR_NOT_FOUND;
    }
    if (!conn->usable()) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX loadRemoteMD: " << remote_agent
                                << " was lost");
        return NIXL_ERR_REMOTE_DISCONNECT;
    }
    nixlUcx::publicDataWire pd;
    std::string why;
    // Nothing of the peer's bytes reaches UCX before they pass these checks (ucx_wire.h).
    // A NIXL peer's public data is its raw key (ucx_nixl_peer.h); it has no engine nonce.
    if (conn->nixl) {
        if (!decodeNixlPublicData(input, nixl_mem, pd, why) && why.empty()) {
            why = "is not a NIXL 1.4 remote key"; // the decoder names the cause; never empty
        }
    } else if (!nixlUcx::decodePublicData(input.metaInfo, pd, why)) {
        // why says what is wrong
    } else if (pd.mem != static_cast<uint16_t>(nixl_mem) || pd.base != input.addr ||
               pd.len != input.len) {
        why = "describes another range or memory kind";
    } else if (pd.owner != conn->remoteNonce) {
        // Each registration names the engine that made it: one of another engine (a blob
        // spliced from two agents', or a section of an earlier incarnation) would address
        // memory of whichever process the connection reaches, not the one it describes.
        why = "made by engine " + hex64(pd.owner) + ", but the connection info loaded for " +
            remote_agent + " is engine " + hex64(conn->remoteNonce) +
            "'s (a blob mixing two agents' metadata?)";
    } else if (nixl_mem == DRAM_SEG && rkeyLayoutKnown_ &&
               !nixlUcx::checkPackedRkey(pd.rkey, &hostRkey_, why)) {
        why = "remote key: " + why;
    }
    if (!why.empty()) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX refused the public data of "
                                << remote_agent << "'s registration of " << input.len
                                << " bytes at 0x" << std::hex << input.addr << std::dec << " ("
                                << input.metaInfo.size() << " bytes): " << why);
        return NIXL_ERR_MISMATCH;
    }
    auto md = std::make_unique<nixlUcxRemoteMD>();
    md->base = pd.base;
    md->len = pd.len;
    md->slot = pd.slot;
    md->regId = pd.regId;
    if (md->slot >= conn->remoteRegSlots) {
        md->slot = 0;
    }
    // A slot the peer's mapped table has no storage for would be a SIGBUS at the first
    // direct copy's check: an honest peer reserves a slot before it publishes it.
    if (md->slot != 0 && conn->peerTable && !conn->peerTable->backed(md->slot)) {
        NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": UCX refused the public data of "
                                        << remote_agent << "'s registration of " << input.len
                                        << " bytes at 0x" << std::hex << input.addr << std::dec
                                        << ": its slot " << md->slot
                                        << " has no storage in the peer's registration table "
                                           "(forged or damaged metadata)");
        return NIXL_ERR_MISMATCH;
    }
    md->mem = nixl_mem;
    md->conn = conn;
    md->packedRkey = std::move(pd.rkey);
    md->rkeys.assign(conn->lanes.size(), nullptr);
    {
        std::lock_guard<std::mutex> g(conn->mdLock);
        conn->mds.insert(md.get());
    }
    nixl_status_t st = unpackRkeys(*md);
    if (st != NIXL_SUCCESS) {
        unloadMD(md.release());
        return st;
    }
    output = md.release();
    return NIXL_SUCCESS;
}

nixl_status_t
nixlUcxEngine::loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) {
    auto *local = dynamic_cast<nixlUcxLocalMD *>(input);
    if (local == nullptr) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX loadLocalMD: not a UCX registration");
        return NIXL_ERR_INVALID_PARAM;
    }
    nixlBlobDesc desc(local->base, local->len, 0, local->publicData);
    return loadRemoteMD(desc, local->mem, localAgent, output);
}

nixl_status_t
nixlUcxEngine::unloadMD(nixlBackendMD *input) {
    auto *md = dynamic_cast<nixlUcxRemoteMD *>(input);
    if (md == nullptr) {
        NIXL_SDK_ERROR("agent " << localAgent << ": UCX unloadMD: not a remote registration");
        return NIXL_ERR_INVALID_PARAM;
    }
    for (auto &lane : md->conn->lanes) {
        std::lock_guard<std::mutex> g(lane->worker->lock);
        if (md->rkeys[lane->index] != nullptr) {
            if (lane->worker->worker != nullptr) {
                ucp_rkey_destroy(md->rkeys[lane->index]);
            }
            md->rkeys[lane->index] = nullptr;
        }
    }
    {
        std::lock_guard<std::mutex> g(md->conn->mdLock);
        md->conn->mds.erase(md);
    }
    delete md;
    return NIXL_SUCCESS;
}
