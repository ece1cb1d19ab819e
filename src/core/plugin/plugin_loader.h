/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file plugin_loader.h
 * @brief Finds, loads and validates plugins of the three kinds (data backends, telemetry
 *        exporters, trace backends) through one mechanism.
 *
 * A plugin of kind K named N is the file <dir>/<prefix of K><N>.so exporting the entry symbol of
 * K, which returns a descriptor starting with nixl_plugin_header_t. The directory is
 * NIXL_PLUGIN_DIR when set, else "<directory of libnixl.so>/plugins". A plugin is accepted only
 * when its header says kind K, exactly K's ABI version, a descriptor size at least the one core
 * knows, and the name N. Every refusal returns a status and writes one ERROR line naming the
 * file and the cause (for a version mismatch: the plugin's version and the expected one).
 *
 * Loaded plugins stay loaded until the process exits (engines and the SDK's static state live in
 * them), so a plugin pointer handed out is valid forever.
 *
 * Thread-safe.
 */
#ifndef NIXL_SRC_CORE_PLUGIN_PLUGIN_LOADER_H
#define NIXL_SRC_CORE_PLUGIN_PLUGIN_LOADER_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nixl_types.h"
#include "nixl_plugin_common.h"

enum class nixl_plugin_kind_t { BACKEND, TELEMETRY_EXPORTER, TRACE_BACKEND };

/** Static facts about a kind: file prefix, entry symbol, ABI version, minimum descriptor size. */
struct nixlPluginKindInfo {
    nixl_plugin_kind_t kind;
    uint32_t cKind; ///< nixl_plugin_kind_abi_t of the C header
    const char *what; ///< "backend", "telemetry exporter", "trace backend"
    const char *prefix; ///< "libplugin_", ...
    const char *entry; ///< entry symbol name
    uint32_t abiVersion; ///< the version this libnixl was built with
    size_t descriptorSize; ///< sizeof the kind's descriptor struct
};

const nixlPluginKindInfo &
nixlPluginKind(nixl_plugin_kind_t kind) noexcept;

/** A validated, loaded plugin. */
class nixlLoadedPlugin {
public:
    nixlLoadedPlugin(nixl_plugin_kind_t kind,
                     std::string name,
                     std::string path,
                     std::string version,
                     void *dl_handle,
                     const nixl_plugin_header_t *descriptor) noexcept;

    nixl_plugin_kind_t
    kind() const noexcept {
        return kind_;
    }

    const std::string &
    name() const noexcept {
        return name_;
    }

    /** Full path of the .so file. */
    const std::string &
    path() const noexcept {
        return path_;
    }

    /** The plugin's own release string. */
    const std::string &
    version() const noexcept {
        return version_;
    }

    /** The kind's descriptor, e.g. as<nixl_backend_plugin_t>() for a backend. */
    template<typename T>
    const T *
    as() const noexcept {
        return reinterpret_cast<const T *>(descriptor_);
    }

private:
    nixl_plugin_kind_t kind_;
    std::string name_;
    std::string path_;
    std::string version_;
    void *dlHandle_;
    const nixl_plugin_header_t *descriptor_;
};

class nixlPluginLoader {
public:
    /** The process-wide loader. */
    static nixlPluginLoader &
    instance();

    /**
     * NIXL_PLUGIN_DIR if set (environment or configuration file, read at each call), else
     * "<directory of libnixl>/plugins".
     */
    std::string
    defaultDirectory() const;

    /** Names of the plugins of a kind found in dir (default directory if empty), sorted. */
    std::vector<std::string>
    discover(nixl_plugin_kind_t kind, const std::string &dir = "") const;

    /**
     * Loads plugin `name` of a kind from dir (default directory if empty), or returns the one
     * already loaded from the same path. Statuses: NIXL_ERR_NOT_FOUND (no such file),
     * NIXL_ERR_MISMATCH (wrong ABI version, kind, size or name), NIXL_ERR_BACKEND (dlopen
     * failed, entry symbol missing, entry returned null or threw), NIXL_ERR_INVALID_PARAM (a
     * name containing '/' or empty).
     */
    nixl_status_t
    load(nixl_plugin_kind_t kind,
         const std::string &name,
         std::shared_ptr<const nixlLoadedPlugin> &out,
         const std::string &dir = "");

    /** Names of plugins of a kind loaded so far. */
    std::vector<std::string>
    loaded(nixl_plugin_kind_t kind) const;

private:
    nixlPluginLoader() = default;
    struct impl;
    std::shared_ptr<impl> impl_;
};

#endif // NIXL_SRC_CORE_PLUGIN_PLUGIN_LOADER_H
