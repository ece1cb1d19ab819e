/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The UCX engine's configuration: parameters parsed once, and what they set on UCP configs.
#include "ucx_config.h"

#include <cstdlib>
#include <string>

#include "common/nixl_text.h"
#include "ucx_internal.h"

using nixlUcx::max_pool_threads;
using nixlUcx::max_split_batch;
using nixlUcx::splitPairs;

namespace {

/**
 * UCX presets, applied only when the user set neither the variable nor an engine_config entry
 * for it, and only when this UCX knows the key at UCP level (an unknown key makes every worker
 * warn). UCX 1.13 knows neither, so there they are documentation of intent.
 */
const std::pair<const char *, const char *> ucx_presets[] = {
    // Two RMA rails spread large transfers over two NICs where a host has them.
    {"MAX_RMA_RAILS", "2"},
    // Relaxed PCIe ordering speeds RDMA up where the root complex allows it; "try" is safe.
    {"IB_PCI_RELAXED_ORDERING", "try"},
};

/**
 * Settings of the context of private workers (the workers that hold the endpoints to one
 * same-host peer). Such a worker's receive queue takes only UCX's replies to it (wireup,
 * acknowledgements and read replies of software RMA), not notifications, which go to the
 * peer's home worker. UCX grows the receive pool of each of sysv and posix by 512 buffers of
 * 8 KiB at once, so a worker wrote about 8 MiB of shared memory at creation; 64 buffers (one
 * per FIFO element) make that about 1 MiB. The FIFO size itself stays: UCX 1.13 indexes a
 * peer's FIFO with the sender's own size (a private worker with 16 against peers' 64 left
 * transfers in progress forever), so it must be the same in every process.
 */
const std::pair<const char *, const char *> private_presets[] = {
    {"MM_RX_BUFS_GROW", "64"},
};

} // namespace

namespace nixlUcx {

bool
splitPairs(std::string_view s, std::vector<std::pair<std::string, std::string>> &out) {
    if (s.empty()) {
        return true;
    }
    for (const std::string_view item : nixlText::splitList(s)) {
        if (item.empty()) {
            continue;
        }
        size_t eq = item.find('=');
        if (eq == std::string_view::npos && !out.empty()) {
            out.back().second += ",";
            out.back().second.append(item);
            continue;
        }
        if (eq == std::string_view::npos || eq == 0) {
            return false;
        }
        out.emplace_back(std::string(nixlUcx::trim(item.substr(0, eq))),
                         std::string(nixlUcx::trim(item.substr(eq + 1))));
    }
    return true;
}

} // namespace nixlUcx

nixl_b_params_t
nixlUcxConfig::options() {
    return {
        {"ucx_devices", ""},
        {"num_workers", "1"},
        {"ucx_error_handling_mode", "peer"},
        {"engine_config", ""},
        {"ucx_direct_cma", "yes"},
        {"ucx_peer_check_ms", "200"},
        {"ucx_release_timeout_ms", "2000"},
        {"notif_peer_max_bytes", "268435456"},
        {"notif_total_max_bytes", "1073741824"},
        {"notif_send_max_bytes", "67108864"},
        {"num_threads", "0"},
        {"split_batch_size", "1024"},
    };
}

nixlUcxConfig
nixlUcxConfig::parse(const nixl_b_params_t &params,
                     bool progress_thread,
                     uint64_t pthr_delay_us,
                     const std::string &agent) {
    nixlUcxConfig c;
    c.progressThread = progress_thread;
    c.pthrDelayUs = pthr_delay_us;
    auto get = [&](const char *key, std::string &value) {
        auto it = params.find(key);
        if (it == params.end()) {
            return false;
        }
        value = it->second;
        return true;
    };
    std::string v;
    if (get("device_list", v) && !nixlUcx::trim(v).empty()) {
        c.devices = std::string(nixlUcx::trim(v));
    } else if (get("ucx_devices", v)) {
        c.devices = std::string(nixlUcx::trim(v));
    }
    uint64_t n = 0;
    if (get("num_workers", v)) {
        if (!nixlUcx::parseUnsigned(v, n) || n == 0 || n > 64) {
            NIXL_SDK_ERROR("agent " << agent << ": UCX num_workers must be 1..64, not '"
                                    << nixlSdk::cutValue(v) << "'");
            c.valid = false;
            return c;
        }
        c.numWorkers = n;
    } else {
        c.defaults.emplace_back("num_workers", "1");
    }
    if (get("ucx_error_handling_mode", v)) {
        std::string m(nixlUcx::trim(v));
        if (m == "peer") {
            c.peerErrMode = true;
        } else if (m == "none") {
            c.peerErrMode = false;
        } else {
            NIXL_SDK_ERROR("agent " << agent
                                    << ": UCX ucx_error_handling_mode must be none or peer, not '"
                                    << nixlSdk::cutValue(v) << "'");
            c.valid = false;
            return c;
        }
    } else {
        c.defaults.emplace_back("ucx_error_handling_mode", "peer");
    }
    if (get("ucx_direct_cma", v)) {
        if (!nixlUcx::parseBool(v, c.directCma)) {
            NIXL_SDK_ERROR("agent " << agent << ": UCX ucx_direct_cma must be yes or no, "
                                    << "not '" << nixlSdk::cutValue(v) << "'");
            c.valid = false;
            return c;
        }
    }
    if (get("ucx_peer_check_ms", v)) {
        if (!nixlUcx::parseUnsigned(v, n) || n == 0 || n > 60000) {
            NIXL_SDK_ERROR("agent " << agent
                                    << ": UCX ucx_peer_check_ms must be 1..60000, not '"
                                    << nixlSdk::cutValue(v)
                                    << "'");
            c.valid = false;
            return c;
        }
        c.peerCheckMs = n;
    }
    if (get("ucx_release_timeout_ms", v)) {
        if (!nixlUcx::parseUnsigned(v, n) || n > 600000) {
            NIXL_SDK_ERROR("agent " << agent
                                    << ": UCX ucx_release_timeout_ms must be 0..600000, not '"
                                    << nixlSdk::cutValue(v) << "'");
            c.valid = false;
            return c;
        }
        c.releaseTimeoutMs = n;
    }
    for (auto [key, dst] : {std::pair{"notif_peer_max_bytes", &c.notifPeerMax},
                            std::pair{"notif_total_max_bytes", &c.notifTotalMax},
                            std::pair{"notif_send_max_bytes", &c.notifSendMax}}) {
        if (get(key, v)) {
            // At least one message with its overhead must fit.
            if (!nixlUcx::parseUnsigned(v, n) || n < 4096 || n > (uint64_t(1) << 62)) {
                NIXL_SDK_ERROR("agent " << agent << ": UCX " << key
                                        << " must be 4096..2^62 bytes, not '" << nixlSdk::cutValue(v) << "'");
                c.valid = false;
            return c;
            }
            *dst = n;
        }
    }
    if (get("ucx_fault_direct_hold_bytes", v)) {
        if (!nixlUcx::parseUnsigned(v, c.faultDirectHoldBytes)) {
            NIXL_SDK_ERROR("agent " << agent << ": UCX ucx_fault_direct_hold_bytes must "
                                    << "be a byte count, not '" << nixlSdk::cutValue(v) << "'");
            c.valid = false;
            return c;
        }
    }
    if (get("ucx_fault_notif_trace", v)) {
        static const char *const kinds[] = {"", "truncate", "version", "zero"};
        c.faultNotifTrace = -1;
        for (int i = 1; i < 4; ++i) {
            if (v == kinds[i]) {
                c.faultNotifTrace = i;
            }
        }
        if (c.faultNotifTrace < 0) {
            NIXL_SDK_ERROR("agent " << agent << ": UCX ucx_fault_notif_trace must be "
                                    << "truncate, version or zero, not '" << nixlSdk::cutValue(v) << "'");
            c.valid = false;
            return c;
        }
    }
    if (get("engine_config", v)) {
        c.engineConfig = v;
    }
    // NIXL's thread-pool engine: requests of more than split_batch_size descriptors are
    // posted in batches by num_threads threads of the engine (ucx_pool.cpp).
    if (get("num_threads", v) && !nixlUcx::trim(v).empty()) {
        if (!nixlUcx::parseUnsigned(v, n) || n > max_pool_threads) {
            NIXL_SDK_ERROR("agent " << agent << ": UCX num_threads must be 0.."
                                    << max_pool_threads << ", not '" << nixlSdk::cutValue(v)
                                    << "'");
            c.valid = false;
            return c;
        }
        c.numThreads = n;
    }
    if (get("split_batch_size", v)) {
        if (!nixlUcx::parseUnsigned(v, n) || n == 0 || n > max_split_batch) {
            NIXL_SDK_ERROR("agent " << agent << ": UCX split_batch_size must be 1.."
                                    << max_split_batch << ", not '" << nixlSdk::cutValue(v)
                                    << "'");
            c.valid = false;
            return c;
        }
        c.splitBatch = n;
    }
    return c;
}

bool
nixlUcxConfig::apply(ucp_config_t *config, const std::string &agent, bool log) const {
    ucs_status_t st;
    if (!devices.empty() && devices != "all") {
        st = ucp_config_modify(config, "NET_DEVICES", devices.c_str());
        if (st != UCS_OK) {
            NIXL_SDK_ERROR("agent " << agent << ": UCX device list '" << devices
                                    << "' rejected: " << ucs_status_string(st));
            return false;
        }
    }
    std::vector<std::pair<std::string, std::string>> overrides;
    if (!splitPairs(engineConfig, overrides)) {
        NIXL_SDK_ERROR("agent " << agent << ": UCX engine_config '" << engineConfig
                                << "' is not a comma-separated KEY=VALUE list");
        return false;
    }
    for (auto &[key, value] : overrides) {
        if (key.rfind("UCX_", 0) == 0) {
            key = key.substr(4);
        }
        st = ucp_config_modify(config, key.c_str(), value.c_str());
        if (st != UCS_OK) {
            NIXL_SDK_ERROR("agent " << agent << ": UCX engine_config " << key << "="
                                    << nixlSdk::cutValue(value) << " rejected: " << ucs_status_string(st));
            return false;
        }
        std::string known;
        if (log) {
            NIXL_SDK_DEBUG("agent " << agent << ": UCX_" << key << "=" << nixlSdk::cutValue(value)
                                << " (engine_config"
                                << (nixlUcx::configValue(config, key, known) ?
                                        ")" :
                                        "; not a UCP key, left to the transports)"));
        }
    }
    for (const auto &[key, value] : ucx_presets) {
        const std::string env = std::string("UCX_") + key;
        bool overridden = std::getenv(env.c_str()) != nullptr;
        for (const auto &o : overrides) {
            overridden = overridden || o.first == key;
        }
        std::string current;
        if (overridden || !nixlUcx::configValue(config, key, current)) {
            if (log) {
                NIXL_SDK_DEBUG("agent " << agent << ": UCX preset " << env << "=" << nixlSdk::cutValue(value)
                                    << " not applied ("
                                    << (overridden ? "set by the user" : "unknown to this UCX")
                                    << ")");
            }
            continue;
        }
        st = ucp_config_modify(config, key, value);
        if (log) {
            NIXL_SDK_DEBUG("agent " << agent << ": UCX preset " << env << "=" << nixlSdk::cutValue(value) << ": "
                                << ucs_status_string(st));
        }
    }
    return true;
}

ucp_params_t
nixlUcxConfig::contextParams(const char *name) const {
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
        UCP_PARAM_FIELD_NAME;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM;
    if (progressThread) {
        params.features |= UCP_FEATURE_WAKEUP;
    }
    params.mt_workers_shared = 1;
    params.name = name;
    return params;
}

void
nixlUcxConfig::applyPrivate(ucp_config_t *config, const std::string &agent) const {
    std::vector<std::pair<std::string, std::string>> overrides;
    nixlUcx::splitPairs(engineConfig, overrides); // parsed once already by apply()
    for (const auto &[key, value] : private_presets) {
        if (nixlUcx::mmKeySetByUser(key, overrides)) {
            NIXL_SDK_DEBUG("agent " << agent << ": UCX private workers keep the "
                                    << "user's " << key << " of the shared-memory "
                                    << "transports");
            continue;
        }
        const ucs_status_t st = ucp_config_modify(config, key, value);
        if (st != UCS_OK) {
            NIXL_SDK_DEBUG("agent " << agent << ": UCX private workers: " << key << "="
                                    << nixlSdk::cutValue(value) << ": " << ucs_status_string(st));
        }
    }
}
