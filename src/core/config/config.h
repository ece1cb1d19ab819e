/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file config.h
 * @brief The one place libnixl reads NIXL_* options, for core and (through the core services'
 *        get_config) for every plugin.
 *
 * Lookup order of an option NAME (NIXL 1.4's):
 *  1. the environment variable NAME, unless unset or empty;
 *  2. the top-level key NAME of one TOML configuration file, the first of
 *     $NIXL_CONFIG_FILE (when set and non-empty; a missing file is then an error),
 *     $HOME/.nixl.cfg (when it exists), /etc/nixl.cfg (when it exists).
 *     Files are not merged: only the first one found is read.
 * The file is opened once, without blocking, and must be a regular file (symlinks are
 * followed) of at most nixl_config_max_file_bytes, not on procfs/sysfs/debugfs/tracefs.
 * The file is read once per process, on first use; a file that exists but cannot be read or
 * parsed is an error (one ERROR line with file, line and reason, std::invalid_argument), and
 * is tried again on the next use, so a corrected file is picked up. nixlAgent's constructor
 * calls nixlConfig::ensureLoaded() first, so such a file fails agent construction.
 *
 * Value text of a file entry: strings as written, integers in decimal, booleans true/false,
 * floats in shortest round-trip form, a time of day (00:00:05.5) as its milliseconds, an array
 * of those joined with commas. Tables are not values.
 *
 * Typed getters apply the rules of nixl_plugin_config_parse.h; a value that breaks them gives
 * one ERROR line naming the option, its value, its origin ("environment" or "<file>:<line>")
 * and what is accepted, and std::invalid_argument with the same text.
 *
 * NIXL_LOG_LEVEL is the exception: the logger reads it with getenv when libnixl loads, before
 * any configuration file could be read (as NIXL does).
 *
 * Thread safety: every function may be called from any thread; the loaded file is immutable.
 * Reading the environment races only with a concurrent setenv, as getenv does.
 */
#ifndef NIXL_SRC_CORE_CONFIG_CONFIG_H
#define NIXL_SRC_CORE_CONFIG_CONFIG_H

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "nixl_plugin_common.h"

/** NIXL_CONFIG_FILE: the path of the TOML configuration file. */
inline constexpr char nixl_config_file_var[] = "NIXL_CONFIG_FILE";
/** File name looked for in $HOME. */
inline constexpr char nixl_config_home_name[] = ".nixl.cfg";
/** The system-wide file. */
inline constexpr char nixl_config_system_file[] = "/etc/nixl.cfg";

/**
 * Largest configuration file read, in bytes: a bigger one is refused (error) rather than
 * parsed, so a wrong NIXL_CONFIG_FILE cannot cost seconds and gigabytes at construction.
 */
inline constexpr uint64_t nixl_config_max_file_bytes = uint64_t{1} << 20;

/** One option's raw value and where it came from. */
struct nixlConfigValue {
    std::string text;
    /** "environment" or "<file>:<line>", for messages. */
    std::string origin;
};

/** Where the configuration file is looked for. fromEnvironment() gives the process's. */
struct nixlConfigSources {
    std::string explicitFile; ///< value of NIXL_CONFIG_FILE; empty when unset
    std::string homeFile; ///< $HOME/.nixl.cfg; empty when HOME is unset
    std::string systemFile = nixl_config_system_file;

    static nixlConfigSources
    fromEnvironment();
};

/** One parsed configuration file (or none): immutable, shareable between threads. */
class nixlConfigFile {
public:
    /**
     * Picks the file by the lookup order and parses it. No file at all is an empty
     * configuration. Throws std::invalid_argument after one ERROR line when the chosen file
     * is missing (NIXL_CONFIG_FILE only), unreadable or not valid TOML.
     */
    static std::shared_ptr<const nixlConfigFile>
    load(const nixlConfigSources &sources);

    /** Parses path as TOML; throws std::invalid_argument as load() does. */
    static std::shared_ptr<const nixlConfigFile>
    parse(const std::string &path);

    /** The file read; empty when there was none. */
    const std::string &
    path() const noexcept {
        return path_;
    }

    /**
     * The entry of a top-level key. nullopt when absent. A key whose value is not a
     * value (a table, an array holding tables or arrays) throws std::invalid_argument after one
     * ERROR line.
     */
    std::optional<nixlConfigValue>
    find(std::string_view name) const;

    size_t
    size() const noexcept {
        return values_.size();
    }

private:
    std::string path_;
    std::map<std::string, nixlConfigValue, std::less<>> values_;
    /** Keys present with an unusable value -> why (with origin). */
    std::map<std::string, std::string, std::less<>> unusable_;
};

/** The process's configuration: environment, then the file. Static functions only. */
class nixlConfig {
public:
    /** Reads the file if not done yet; throws std::invalid_argument when it is bad. */
    static void
    ensureLoaded();

    /** The process's file, loading it if needed; throws as ensureLoaded(). */
    static std::shared_ptr<const nixlConfigFile>
    file();

    /** Raw value of name: environment, else file; nullopt when set nowhere. */
    static std::optional<nixlConfigValue>
    lookup(std::string_view name);

    /*
     * Typed getters: nullopt when the option is set nowhere. who prefixes the error message
     * (e.g. "agent A: "). Bounds are inclusive.
     */
    static std::optional<bool>
    getBool(std::string_view name, std::string_view who = {});

    static std::optional<uint64_t>
    getUnsigned(std::string_view name,
                std::string_view who = {},
                uint64_t min = 0,
                uint64_t max = UINT64_MAX);

    static std::optional<int64_t>
    getSigned(std::string_view name,
              std::string_view who = {},
              int64_t min = INT64_MIN,
              int64_t max = INT64_MAX);

    static std::optional<uint16_t>
    getPort(std::string_view name, std::string_view who = {});

    static std::optional<std::string>
    getString(std::string_view name);

    static std::optional<std::chrono::milliseconds>
    getMilliseconds(std::string_view name,
                    std::string_view who = {},
                    uint64_t min_ms = 0,
                    uint64_t max_ms = INT64_MAX);

    /** Tests only: forgets the loaded file; the next use reads it again. */
    static void
    reloadForTesting();

    /** core services' get_config (see nixl_plugin_common.h); ctx is unused. */
    static nixl_plugin_status_t
    serviceLookup(void *ctx,
                  const char *name,
                  size_t name_len,
                  const nixl_plugin_bytes_sink_t *value,
                  const nixl_plugin_bytes_sink_t *origin) noexcept;

    /**
     * Logs one ERROR line and throws std::invalid_argument: "<who><name>=<text> (from
     * <origin>) is not <accepted>".
     */
    [[noreturn]] static void
    reject(std::string_view who,
           std::string_view name,
           const nixlConfigValue &value,
           std::string_view accepted);
};

#endif // NIXL_SRC_CORE_CONFIG_CONFIG_H
