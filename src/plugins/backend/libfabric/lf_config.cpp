/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The LIBFABRIC engine's parameters: validated once, each refusal one line naming the value.

#include "lf_config.h"

#include <algorithm>

#include "common/nixl_text.h"
#include "lf_notif.h"
#include "lf_wire.h"

namespace nixlLf {

namespace {

    bool
    parseSize(const std::string &s, size_t lo, size_t hi, size_t &out) {
        if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) {
            return false;
        }
        const unsigned long long v = std::stoull(s);
        if (v < lo || v > hi) {
            return false;
        }
        out = static_cast<size_t>(v);
        return true;
    }

    const char *const default_providers = "auto";

} // namespace

nixl_b_params_t
lfConfig::options() {
    return {{"provider", default_providers},
            {"num_threads", "0"},
            {"split_batch_size", "1024"},
            {"max_bw_per_dram_seg", ""},
            {"notif_fragment_size", "8192"},
            {"peer_check_ms", "100"},
            {"stall_timeout_ms", "10000"},
            {"notif_peer_max_bytes", "268435456"},
            {"notif_total_max_bytes", "1073741824"},
            {"notif_send_max_bytes", "67108864"},
            {"shm_fast_rma", "yes"},
            {"release_timeout_ms", "2000"},
            {"progress_idle_ms", "100"}};
}

lfConfig
lfConfig::parse(const std::string &agent, const nixl_b_params_t &p, nixl_status_t &status) {
    lfConfig cfg;
    status = NIXL_SUCCESS;
    auto bad = [&](const std::string &key, const std::string &v, const char *accepted) {
        NIXL_SDK_ERROR("agent " << agent << ": LIBFABRIC parameter " << key << "='"
                                << nixlSdk::cutValue(v) << "' refused: " << accepted);
        status = NIXL_ERR_INVALID_PARAM;
    };
    for (const auto &[key, v] : p) {
        size_t n = 0;
        if (key == "provider") {
            if (v.empty() || v == "auto") {
                continue;
            }
            for (const std::string_view prov : nixlText::splitList(v)) {
                if (prov.empty() || prov.size() > max_prov_name) {
                    bad(key, v, "a comma-separated list of provider names, or auto");
                    return cfg;
                }
                cfg.providers.emplace_back(prov);
            }
        } else if (key == "num_threads") {
            // NIXL's worker threads: here they post long requests' turns (lf_pool.cpp).
            if (!v.empty() && !parseSize(v, 0, 64, n)) {
                bad(key, v, "an integer 0..64");
                return cfg;
            }
            cfg.numThreads = v.empty() ? 0 : n;
        } else if (key == "split_batch_size") {
            if (!parseSize(v, 1, 1u << 20, n)) {
                bad(key, v, "an integer 1..1048576");
                return cfg;
            }
            cfg.splitBatch = n;
        } else if (key == "max_bw_per_dram_seg") {
            // NIXL stripes a DRAM transfer over rails up to this bandwidth; we use one rail
            // per peer, so a valid value is accepted and has no effect.
            if (!v.empty() && !parseSize(v, 0, SIZE_MAX / 2, n)) {
                bad(key, v, "empty or an unsigned integer (accepted, has no effect)");
                return cfg;
            }
        } else if (key == "notif_fragment_size") {
            if (!parseSize(v, 4096, 1u << 20, n)) {
                bad(key, v, "an integer 4096..1048576");
                return cfg;
            }
            cfg.notifFrag = n;
        } else if (key == "peer_check_ms") {
            if (!parseSize(v, 1, 60000, n)) {
                bad(key, v, "an integer 1..60000");
                return cfg;
            }
            cfg.peerCheck = std::chrono::milliseconds(n);
        } else if (key == "stall_timeout_ms") {
            if (!parseSize(v, 0, 86400000, n)) {
                bad(key, v, "an integer 0..86400000 (0: off)");
                return cfg;
            }
            cfg.stallTimeout = std::chrono::milliseconds(n);
        } else if (key == "notif_peer_max_bytes" || key == "notif_total_max_bytes") {
            // At least one largest notification must fit.
            if (!parseSize(v, max_notif_len + 2 * notif_entry_overhead, SIZE_MAX / 4, n)) {
                bad(key, v, "an integer 67109376..2^62 (bytes; a 64 MiB notification must fit)");
                return cfg;
            }
            (key == "notif_peer_max_bytes" ? cfg.notifPeerMax : cfg.notifTotalMax) = n;
        } else if (key == "notif_send_max_bytes") {
            if (!parseSize(v, 4096, SIZE_MAX / 4, n)) {
                bad(key, v, "an integer 4096..2^62 (bytes)");
                return cfg;
            }
            cfg.notifSendMax = n;
        } else if (key == "shm_fast_rma") {
            if (v == "yes" || v == "1" || v == "true" || v == "on") {
                cfg.fastRma = true;
            } else if (v == "no" || v == "0" || v == "false" || v == "off") {
                cfg.fastRma = false;
            } else {
                bad(key, v, "yes or no");
                return cfg;
            }
        } else if (key == "release_timeout_ms") {
            if (!parseSize(v, 0, 600000, n)) {
                bad(key, v, "an integer 0..600000");
                return cfg;
            }
            cfg.releaseTimeoutMs = n;
        } else if (key == "progress_idle_ms") {
            if (!parseSize(v, 1, 3600000, n)) {
                bad(key, v, "an integer 1..3600000");
                return cfg;
            }
            cfg.progressIdleMs = n;
        } else if (key == "fault_hold_mark") {
            // Tests only (not in pluginOptions): see lfConfig::faultHoldMark.
            if (v != "yes" && v != "no") {
                bad(key, v, "yes or no (fault injection for tests)");
                return cfg;
            }
            cfg.faultHoldMark = v == "yes";
        } else {
            bad(key, v, "unknown parameter (see docs/backends/libfabric.md)");
            return cfg;
        }
    }
    // The first fragment of a notification carries the name: leave room for payload.
    if (agent.size() > max_agent_name || agent.size() + 128 > cfg.notifFrag / 2) {
        NIXL_SDK_ERROR("agent name of " << agent.size() << " bytes: LIBFABRIC allows "
                                        << std::min(max_agent_name, cfg.notifFrag / 2 - 128)
                                        << " with notif_fragment_size " << cfg.notifFrag);
        status = NIXL_ERR_BACKEND;
    }
    return cfg;
}

} // namespace nixlLf
