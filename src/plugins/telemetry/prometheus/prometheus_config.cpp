/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "prometheus_config.h"

#include <stdexcept>

#include "nixl_plugin_sdk_common.h"
#include "prom_schema.h"

namespace nixlPromConfig {

std::string
config_t::bindAddress() const {
    return std::string(local ? "127.0.0.1:" : "0.0.0.0:") + std::to_string(port);
}

nixlProm::nameStyle_t
readNameStyle() {
    const auto v = nixlSdk::configLookup(nixlProm::kNamesVar);
    if (!v || v->text.empty()) {
        return nixlProm::nameStyle_t::LIBNIXL;
    }
    if (const auto style = nixlProm::parseNameStyle(v->text)) {
        return *style;
    }
    // A naming typo must not cost the agent its telemetry: say so once, keep the default names.
    NIXL_SDK_WARN("prometheus: " << nixlSdk::configRejection(nixlProm::kNamesVar, *v,
                                                             "'nixl' or 'libnixl'")
                                 << "; using libnixl's names");
    return nixlProm::nameStyle_t::LIBNIXL;
}

config_t
readConfig() {
    // Environment, else the NIXL configuration file (through core); the SDK helpers throw
    // std::invalid_argument naming the variable, value, origin and accepted values.
    config_t cfg;
    cfg.port = nixlSdk::configPort(kPortVar).value_or(kDefaultPort);
    cfg.local = nixlSdk::configBool(kLocalVar).value_or(false);
    const auto buckets = nixlSdk::configString(nixlProm::kBucketsVar);
    std::string why;
    auto bounds = nixlProm::parseBucketBoundsUs(buckets ? buckets->c_str() : nullptr, &why);
    if (!bounds) {
        throw std::invalid_argument(why);
    }
    cfg.boundsUs = std::move(*bounds);
    cfg.names = readNameStyle();
    return cfg;
}

} // namespace nixlPromConfig
