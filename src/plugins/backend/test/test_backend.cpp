/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "test_backend.h"

#include <unistd.h>

#include <charconv>
#include <cstring>
#include <ostream>
#include <string_view>
#include <system_error>

#include "common/nixl_text.h"
#include "nixl_plugin_config_parse.h"
#include "test_backend_log.h"

using namespace nixlTestLog; // at, range, rawValue: the pieces of a log line

namespace {

/** Known parameters and their defaults; the single source for getPluginParams and the parser. */
struct param_default_t {
    const char *key;
    const char *value;
};

constexpr param_default_t param_defaults[] = {
    {"async", "false"},
    {"async_polls", "1"},
    {"fail_post_at", "0"},
    {"fail_register_at", "0"},
    {"disconnect_after", "0"},
    {"fail_release", "false"},
    {"fail_create", "false"},
    {"trace_phases", "true"},
    {"hold_notifs", "false"},
};

bool
parseFlag(const std::string &value, bool &out) {
    return nixlConfigParse::parseBool(value, out); // NIXL's boolean words, any case
}

/** Plain decimal digits only: no sign, no spaces, no overflow. */
using nixlText::parseDecimal;

/*
 * Connection info: "nixl-test/1:<pid>:<token, 16 hex digits>:<agent name>". The pid keeps an
 * engine of another process from being mistaken for a local one; the token tells a re-created
 * agent of the same name from the engine that was destroyed.
 */
constexpr std::string_view conn_prefix = "nixl-test/1:";
constexpr size_t token_digits = 16;

struct conn_t {
    uint64_t pid = 0;
    uint64_t token = 0;
    std::string_view name;
};

std::string
encodeConn(uint64_t pid, uint64_t token, const std::string &name) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string hex(token_digits, '0');
    for (size_t i = 0; i < token_digits; ++i) {
        hex[token_digits - 1 - i] = digits[(token >> (4 * i)) & 0xf];
    }
    return std::string(conn_prefix) + std::to_string(pid) + ":" + hex + ":" + name;
}

bool
decodeConn(std::string_view s, conn_t &out) {
    if (s.substr(0, conn_prefix.size()) != conn_prefix) {
        return false;
    }
    s.remove_prefix(conn_prefix.size());
    size_t colon = s.find(':');
    if (colon == std::string_view::npos || !parseDecimal(s.substr(0, colon), out.pid)) {
        return false;
    }
    s.remove_prefix(colon + 1);
    if (s.size() < token_digits + 2 || s[token_digits] != ':') {
        return false;
    }
    const char *end = s.data() + token_digits;
    auto [ptr, ec] = std::from_chars(s.data(), end, out.token, 16);
    if (ec != std::errc() || ptr != end) {
        return false;
    }
    out.name = s.substr(token_digits + 1);
    return true;
}

/*
 * Public data of one registration: a fixed 40-byte record in native byte order (agents of one
 * process share it). The token ties it to the engine whose connection info was loaded; the region
 * id lets the loader find the live registration.
 */
struct public_record_t {
    uint64_t magic;
    uint64_t addr;
    uint64_t len;
    uint64_t token;
    uint64_t region;
};

static_assert(sizeof(public_record_t) == 40, "public data is a fixed 40-byte record");

constexpr uint64_t record_magic = 0x3144'4d54'5354'584eULL; // "NXTSTMD1" in little endian

std::string
encodeRecord(const nixlTestRegion &region, uint64_t token) {
    public_record_t rec{record_magic, region.addr, region.len, token, region.id};
    return std::string(reinterpret_cast<const char *>(&rec), sizeof(rec));
}

} // namespace

nixlTestEngine::nixlTestEngine(const nixlBackendInitParams *init_params)
    : nixlBackendEngine(init_params),
      self_(std::make_shared<nixlTestEndpoint>(localAgent, nixlTestRegistry::newToken())) {
    if (!loadConfig()) {
        initErr = true;
        return;
    }
    if (cfg_.failCreate) {
        NIXL_SDK_ERROR(at(localAgent, "") << "creation fails on request (fail_create=true)");
        initErr = true;
        return;
    }
    // Reported, not configured: what core gave (tests check the sink is there only when the
    // agent traces).
    setInitParam("trace_sink", traceSink_ != nullptr ? "given" : "none");
    connInfo_ = encodeConn(static_cast<uint64_t>(::getpid()), self_->token(), localAgent);
    // Loopback needs no connection info exchange: the engine always knows itself.
    peers_.emplace(localAgent,
                   std::make_shared<nixlTestPeer>(localAgent, self_->token(), self_));
    nixlTestRegistry::instance().add(self_);
    published_ = true;
}

nixlTestEngine::~nixlTestEngine() {
    // Waits for peers' copies into our memory to finish; later ones see the engine gone.
    self_->shutdown();
    if (published_) {
        nixlTestRegistry::instance().remove(self_.get());
    }
}

nixl_b_params_t
nixlTestEngine::pluginOptions() {
    nixl_b_params_t params;
    for (const auto &p : param_defaults) {
        params.emplace(p.key, p.value);
    }
    return params;
}

nixl_mem_list_t
nixlTestEngine::pluginMems() {
    return {DRAM_SEG};
}

bool
nixlTestEngine::loadConfig() {
    struct flag_t {
        const char *key;
        bool *dst;
    };
    struct count_t {
        const char *key;
        uint64_t *dst;
    };
    const flag_t flags[] = {
        {"async", &cfg_.async},
        {"fail_release", &cfg_.failRelease},
        {"fail_create", &cfg_.failCreate},
        {"trace_phases", &cfg_.tracePhases},
        {"hold_notifs", &cfg_.holdNotifs},
    };
    const count_t counts[] = {
        {"async_polls", &cfg_.asyncPolls},
        {"fail_post_at", &cfg_.failPostAt},
        {"fail_register_at", &cfg_.failRegisterAt},
        {"disconnect_after", &cfg_.disconnectAfter},
    };

    const nixl_b_params_t &params = getCustomParams();
    for (const flag_t &f : flags) {
        auto it = params.find(f.key);
        if (it != params.end() && !parseFlag(it->second, *f.dst)) {
            NIXL_SDK_ERROR(at(localAgent, "")
                           << "invalid value '" << it->second << "' for parameter '" << f.key
                           << "': expected \"true\" or \"false\"");
            return false;
        }
    }
    for (const count_t &c : counts) {
        auto it = params.find(c.key);
        if (it != params.end() && !parseDecimal(it->second, *c.dst)) {
            NIXL_SDK_ERROR(at(localAgent, "")
                           << "invalid value '" << it->second << "' for parameter '" << c.key
                           << "': expected a non-negative decimal integer");
            return false;
        }
    }
    // Report the effective value of every known parameter, including defaulted ones, next to
    // the unknown keys the user passed (which stay untouched).
    for (const auto &p : param_defaults) {
        if (params.find(p.key) == params.end()) {
            setInitParam(p.key, p.value);
        }
    }
    return true;
}

std::shared_ptr<nixlTestPeer>
nixlTestEngine::findPeer(const std::string &name) const {
    std::shared_lock<std::shared_mutex> guard(peersLock_);
    auto it = peers_.find(name);
    return it == peers_.end() ? nullptr : it->second;
}

nixl_status_t
nixlTestEngine::registerMem(const nixlBlobDesc &mem,
                            const nixl_mem_t &nixl_mem,
                            nixlBackendMD *&out) {
    const uint64_t call = registerCalls_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (cfg_.failRegisterAt != 0 && call == cfg_.failRegisterAt) {
        NIXL_SDK_ERROR(at(localAgent, "")
                       << "registerMem of " << range(mem.addr, mem.len) << " (call " << call
                       << ") fails on request (fail_register_at=" << cfg_.failRegisterAt << ")");
        return NIXL_ERR_BACKEND;
    }
    if (rawValue(nixl_mem) != DRAM_SEG) {
        NIXL_SDK_ERROR(at(localAgent, "")
                       << "registerMem of " << range(mem.addr, mem.len) << ": memory type "
                       << rawValue(nixl_mem) << " is not supported, only DRAM_SEG");
        return NIXL_ERR_NOT_SUPPORTED;
    }
    auto md = std::make_unique<nixlTestLocalMD>(self_->addRegion(mem.addr, mem.len, mem.devId));
    nixlTestLocalMD *raw = md.get();
    try {
        std::lock_guard<std::mutex> guard(mdLock_);
        localMds_.emplace(raw, std::move(md));
    }
    catch (...) {
        self_->removeRegion(*raw->region);
        throw;
    }
    out = raw;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::deregisterMem(nixlBackendMD *meta) {
    std::unique_ptr<nixlTestLocalMD> md;
    {
        std::lock_guard<std::mutex> guard(mdLock_);
        auto it = localMds_.find(meta);
        if (it != localMds_.end()) {
            md = std::move(it->second);
            localMds_.erase(it);
        }
    }
    if (md == nullptr) {
        NIXL_SDK_ERROR(at(localAgent, "")
                       << "deregisterMem: metadata " << static_cast<const void *>(meta)
                       << " is not a registration of this engine");
        return NIXL_ERR_INVALID_PARAM;
    }
    // Waits for peers copying into this memory; later copies see it gone.
    self_->removeRegion(*md->region);
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::connect(const std::string &remote_agent) {
    if (remote_agent == localAgent) {
        std::unique_lock<std::shared_mutex> guard(peersLock_);
        if (peers_.find(localAgent) == peers_.end()) {
            peers_.emplace(localAgent,
                           std::make_shared<nixlTestPeer>(localAgent, self_->token(), self_));
        }
        return NIXL_SUCCESS;
    }
    if (findPeer(remote_agent) != nullptr) {
        return NIXL_SUCCESS;
    }
    NIXL_SDK_ERROR(at(localAgent, remote_agent)
                   << "connect: no connection info of this agent was loaded");
    return NIXL_ERR_NOT_FOUND;
}

nixl_status_t
nixlTestEngine::disconnect(const std::string &remote_agent) {
    std::unique_lock<std::shared_mutex> guard(peersLock_);
    auto it = peers_.find(remote_agent);
    if (it != peers_.end()) {
        // Requests prepared against the old connection keep its record and must fail, not
        // silently go on after the caller dropped the remote.
        it->second->dropped.store(true, std::memory_order_release);
        peers_.erase(it);
    }
    if (remote_agent == localAgent) {
        // A fresh loopback record: disconnecting ourselves resets counters, it cannot unlink us.
        peers_.emplace(localAgent,
                       std::make_shared<nixlTestPeer>(localAgent, self_->token(), self_));
    }
    // Idempotent: an unknown agent is already disconnected.
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::unloadMD(nixlBackendMD *input) {
    std::unique_ptr<nixlTestRemoteMD> md;
    {
        std::lock_guard<std::mutex> guard(mdLock_);
        auto it = remoteMds_.find(input);
        if (it != remoteMds_.end()) {
            md = std::move(it->second);
            remoteMds_.erase(it);
        }
    }
    if (md == nullptr) {
        NIXL_SDK_ERROR(at(localAgent, "")
                       << "unloadMD: metadata " << static_cast<const void *>(input)
                       << " was not loaded by this engine");
        return NIXL_ERR_INVALID_PARAM;
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::getPublicData(const nixlBackendMD *meta, std::string &str) const {
    std::lock_guard<std::mutex> guard(mdLock_);
    auto it = localMds_.find(meta);
    if (it == localMds_.end()) {
        NIXL_SDK_ERROR(at(localAgent, "")
                       << "getPublicData: metadata " << static_cast<const void *>(meta)
                       << " is not a registration of this engine");
        return NIXL_ERR_INVALID_PARAM;
    }
    str = encodeRecord(*it->second->region, self_->token());
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::getConnInfo(std::string &str) const {
    str = connInfo_;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::loadRemoteConnInfo(const std::string &remote_agent,
                                   const std::string &remote_conn_info) {
    conn_t conn;
    if (!decodeConn(remote_conn_info, conn)) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "loadRemoteConnInfo: " << remote_conn_info.size()
                       << " bytes of connection info are not a TEST engine's");
        return NIXL_ERR_MISMATCH;
    }
    if (conn.name != remote_agent) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "loadRemoteConnInfo: connection info belongs to agent '" << conn.name
                       << "'");
        return NIXL_ERR_MISMATCH;
    }
    std::shared_ptr<nixlTestEndpoint> ep;
    if (conn.pid == static_cast<uint64_t>(::getpid())) {
        ep = nixlTestRegistry::instance().find(remote_agent, conn.token);
    }
    if (ep == nullptr) {
        // Not an error yet: the caller learns it on the first transfer, as with a real network
        // peer that went away after publishing its metadata.
        NIXL_SDK_WARN(at(localAgent, remote_agent)
                      << "loadRemoteConnInfo: the engine this connection info names no longer "
                         "exists in this process; transfers to it report "
                         "NIXL_ERR_REMOTE_DISCONNECT");
    }

    std::unique_lock<std::shared_mutex> guard(peersLock_);
    std::shared_ptr<nixlTestPeer> &slot = peers_[remote_agent];
    if (slot != nullptr && slot->token == conn.token && slot->endpoint == ep) {
        return NIXL_SUCCESS; // the same connection again: keep its counters
    }
    if (slot != nullptr) {
        slot->dropped.store(true, std::memory_order_release);
    }
    slot = std::make_shared<nixlTestPeer>(remote_agent, conn.token, std::move(ep));
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::loadRemoteMD(const nixlBlobDesc &input,
                             const nixl_mem_t &nixl_mem,
                             const std::string &remote_agent,
                             nixlBackendMD *&output) {
    const range_t span = range(input.addr, input.len);
    if (rawValue(nixl_mem) != DRAM_SEG) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "loadRemoteMD of " << span << ": memory type " << rawValue(nixl_mem)
                       << " is not supported, only DRAM_SEG");
        return NIXL_ERR_NOT_SUPPORTED;
    }
    public_record_t rec;
    if (input.metaInfo.size() != sizeof(rec)) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "loadRemoteMD of " << span << ": public data is "
                       << input.metaInfo.size() << " bytes, a TEST record is " << sizeof(rec));
        return NIXL_ERR_MISMATCH;
    }
    std::memcpy(&rec, input.metaInfo.data(), sizeof(rec));
    if (rec.magic != record_magic || rec.addr != input.addr || rec.len != input.len) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "loadRemoteMD of " << span
                       << ": public data is not the TEST record of this range (it describes "
                       << range(static_cast<uintptr_t>(rec.addr), static_cast<size_t>(rec.len))
                       << ")");
        return NIXL_ERR_MISMATCH;
    }
    std::shared_ptr<nixlTestPeer> peer = findPeer(remote_agent);
    if (peer == nullptr) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "loadRemoteMD of " << span
                       << ": no connection info of this agent was loaded");
        return NIXL_ERR_NOT_FOUND;
    }
    if (rec.token != peer->token) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "loadRemoteMD of " << span
                       << ": public data comes from another engine than the loaded connection "
                          "info (a re-created agent?)");
        return NIXL_ERR_MISMATCH;
    }
    std::shared_ptr<nixlTestRegion> region;
    if (peer->endpoint != nullptr) {
        region = peer->endpoint->findRegion(rec.region);
    }
    if (region != nullptr && (region->addr != rec.addr || region->len != rec.len)) {
        NIXL_SDK_ERROR(at(localAgent, remote_agent)
                       << "loadRemoteMD of " << span << ": registration " << rec.region
                       << " of the remote engine covers " << range(region->addr, region->len));
        return NIXL_ERR_MISMATCH;
    }
    if (region == nullptr) {
        // Stale metadata (deregistered, or the engine is gone) loads like on a real network;
        // transfers into it then fail with a clear message instead of touching freed memory.
        region = std::make_shared<nixlTestRegion>(rec.addr, rec.len, input.devId, rec.region,
                                                  false);
    }
    auto md = std::make_unique<nixlTestRemoteMD>(remote_agent, rec.token, std::move(region));
    nixlTestRemoteMD *raw = md.get();
    {
        std::lock_guard<std::mutex> guard(mdLock_);
        remoteMds_.emplace(raw, std::move(md));
    }
    output = raw;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlTestEngine::loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) {
    std::lock_guard<std::mutex> guard(mdLock_);
    auto it = localMds_.find(input);
    if (it == localMds_.end()) {
        NIXL_SDK_ERROR(at(localAgent, localAgent)
                       << "loadLocalMD: metadata " << static_cast<const void *>(input)
                       << " is not a registration of this engine");
        return NIXL_ERR_INVALID_PARAM;
    }
    auto md =
        std::make_unique<nixlTestRemoteMD>(localAgent, self_->token(), it->second->region);
    nixlTestRemoteMD *raw = md.get();
    remoteMds_.emplace(raw, std::move(md));
    output = raw;
    return NIXL_SUCCESS;
}

NIXL_BACKEND_PLUGIN_DEFINE(nixlTestEngine, "TEST", "1.0.0")
