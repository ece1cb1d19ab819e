/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config/config.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>

// Header-only: the parser is compiled into libnixl (no runtime dependency on the shared
// libtomlplusplus Debian also ships) and kept out of its exported symbols.
// The C library's declarations come first: inside the pragma they would turn hidden too.
#include <cassert>
#include <cfloat>
#include <cmath>
#include <cstdio>
#define TOML_HEADER_ONLY 1
#pragma GCC visibility push(hidden)
#include <toml++/toml.h>
#pragma GCC visibility pop

#include "common/nixl_log.h"
#include "nixl_plugin_config_parse.h"

namespace {

[[noreturn]] void
fail(const std::string &msg) {
    NIXL_ERROR << msg;
    // what() reaches the application (and terminals) without the logger: escaped and cut
    // here, once, as the log line is by the logger.
    throw std::invalid_argument(nixl::log::escaped(nixl::log::cut(msg, nixl::log::max_line_bytes)));
}

std::string
fileError(const std::string &path, const std::string &why) {
    return "configuration file " + path + ": " + why;
}

std::optional<std::string>
envValue(std::string_view name) {
    const std::string n(name);
    const char *v = std::getenv(n.c_str());
    if (v == nullptr || *v == '\0') {
        return std::nullopt;
    }
    return std::string(v);
}

bool
isRegularFileOrMissing(const std::string &path, bool &exists, std::string &why) {
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) {
        exists = false;
        if (errno == ENOENT || errno == ENOTDIR) {
            return true;
        }
        why = std::strerror(errno);
        return false;
    }
    exists = true;
    if (!S_ISREG(st.st_mode)) {
        why = "not a regular file";
        return false;
    }
    return true;
}

// Text of one scalar as the typed getters expect it; false for tables and arrays.
bool
scalarText(const toml::node &node, std::string &out) {
    if (const auto *s = node.as_string()) {
        out = s->get();
    } else if (const auto *i = node.as_integer()) {
        out = std::to_string(i->get());
    } else if (const auto *b = node.as_boolean()) {
        out = b->get() ? "true" : "false";
    } else if (const auto *f = node.as_floating_point()) {
        char buf[64];
        const auto res = std::to_chars(buf, buf + sizeof(buf), f->get());
        out.assign(buf, res.ptr);
    } else if (const auto *t = node.as_time()) {
        // NIXL reads a TOML time as a duration: 00:00:05.5 is 5500 ms.
        const toml::time &v = t->get();
        const uint64_t ms = uint64_t{v.hour} * 3600000 + uint64_t{v.minute} * 60000 +
            uint64_t{v.second} * 1000 + v.nanosecond / 1000000;
        out = std::to_string(ms);
    } else if (const auto *d = node.as_date()) {
        std::ostringstream os;
        os << d->get();
        out = os.str();
    } else if (const auto *dt = node.as_date_time()) {
        std::ostringstream os;
        os << dt->get();
        out = os.str();
    } else {
        return false;
    }
    return true;
}

// Never destroyed: agents torn down by other static destructors at exit may still read options.
std::mutex &
loadMutex() {
    static auto *m = new std::mutex;
    return *m;
}

std::shared_ptr<const nixlConfigFile> &
loaded() {
    static auto *file = new std::shared_ptr<const nixlConfigFile>;
    return *file;
}

} // namespace

nixlConfigSources
nixlConfigSources::fromEnvironment() {
    nixlConfigSources s;
    if (auto v = envValue(nixl_config_file_var)) {
        s.explicitFile = std::move(*v);
    }
    if (auto home = envValue("HOME")) {
        std::string h = std::move(*home);
        if (h.back() != '/') {
            h += '/';
        }
        s.homeFile = h + nixl_config_home_name;
    }
    return s;
}

namespace {

// Reads the whole file, or says why not. One open, checked on the descriptor: a stat() of
// the path before the open can be raced by a swap for a FIFO (the open then blocks forever).
// O_NONBLOCK keeps the open of a FIFO or device from blocking; fstat then refuses it.
// Symlinks are followed on purpose: the file is named by the user's own environment, HOME or
// /etc, and is only read, so a ~/.nixl.cfg linked into a dotfiles repository is legitimate.
bool
readConfigFile(const std::string &path, std::string &out, std::string &why) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        why = errno == ENOENT ? std::string("does not exist") :
                                std::string("cannot open: ") + std::strerror(errno);
        return false;
    }
    struct fdCloser {
        int fd;
        ~fdCloser() {
            ::close(fd);
        }
    } closer{fd};

    struct stat st{};
    if (::fstat(fd, &st) != 0) {
        why = std::string("cannot stat: ") + std::strerror(errno);
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        why = "not a regular file";
        return false;
    }
    // Pseudo files pass S_ISREG but are not configuration: reading /proc/kmsg blocks (or
    // consumes the kernel log), and their st_size says nothing about what a read returns.
    struct statfs sfs{};
    if (::fstatfs(fd, &sfs) == 0) {
        const auto type = static_cast<unsigned long>(sfs.f_type);
        if (type == PROC_SUPER_MAGIC || type == SYSFS_MAGIC || type == DEBUGFS_MAGIC ||
            type == TRACEFS_MAGIC) {
            why = "on a kernel pseudo file system (procfs, sysfs, debugfs, tracefs), not a "
                  "configuration file";
            return false;
        }
    }
    const auto too_large = [&why](uint64_t size) {
        why = "larger than the limit of " + std::to_string(nixl_config_max_file_bytes) +
            " bytes (" + std::to_string(size) + " bytes)";
        return false;
    };
    if (static_cast<uint64_t>(st.st_size) > nixl_config_max_file_bytes) {
        return too_large(static_cast<uint64_t>(st.st_size));
    }
    // The size can change after fstat: read at most one byte past the limit to notice.
    out.clear();
    char buf[65536];
    while (out.size() <= nixl_config_max_file_bytes) {
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n == 0) {
            return true;
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            why = errno == EAGAIN ? std::string("read would block") :
                                    std::string("read error: ") + std::strerror(errno);
            return false;
        }
        out.append(buf, static_cast<size_t>(n));
    }
    return too_large(out.size());
}

} // namespace

std::shared_ptr<const nixlConfigFile>
nixlConfigFile::parse(const std::string &path) {
    std::string content;
    std::string why;
    if (!readConfigFile(path, content, why)) {
        fail(fileError(path, why));
    }

    toml::table table;
    try {
        table = toml::parse(content, path);
    }
    catch (const toml::parse_error &e) {
        const auto &where = e.source().begin;
        fail("configuration file " + path + ":" + std::to_string(where.line) + ":" +
             std::to_string(where.column) + ": not valid TOML: " + std::string(e.description()));
    }

    auto file = std::make_shared<nixlConfigFile>();
    file->path_ = path;
    for (auto &&[key, node] : table) {
        const std::string name(key.str());
        const std::string origin = path + ":" + std::to_string(node.source().begin.line);
        std::string text;
        if (scalarText(node, text)) {
            file->values_.emplace(name, nixlConfigValue{std::move(text), origin});
            continue;
        }
        if (const auto *arr = node.as_array()) {
            std::string joined;
            bool ok = true;
            for (const auto &elem : *arr) {
                std::string t;
                if (!scalarText(elem, t)) {
                    ok = false;
                    break;
                }
                if (!joined.empty()) {
                    joined += ',';
                }
                joined += t;
            }
            if (ok) {
                file->values_.emplace(name, nixlConfigValue{std::move(joined), origin});
                continue;
            }
            file->unusable_.emplace(name,
                                    name + " (from " + origin +
                                        ") is an array holding tables or arrays, not a value");
            continue;
        }
        file->unusable_.emplace(name,
                                name + " (from " + origin + ") is a table, not a value");
    }
    return file;
}

std::shared_ptr<const nixlConfigFile>
nixlConfigFile::load(const nixlConfigSources &sources) {
    if (!sources.explicitFile.empty()) {
        // Named explicitly: a missing file is a mistake to report, not a default.
        return parse(sources.explicitFile);
    }
    for (const std::string *candidate : {&sources.homeFile, &sources.systemFile}) {
        if (candidate->empty()) {
            continue;
        }
        bool exists = false;
        std::string why;
        if (!isRegularFileOrMissing(*candidate, exists, why)) {
            fail(fileError(*candidate, why));
        }
        if (exists) {
            return parse(*candidate);
        }
    }
    return std::make_shared<nixlConfigFile>();
}

std::optional<nixlConfigValue>
nixlConfigFile::find(std::string_view name) const {
    if (auto it = values_.find(name); it != values_.end()) {
        return it->second;
    }
    if (auto it = unusable_.find(name); it != unusable_.end()) {
        fail(it->second);
    }
    return std::nullopt;
}

void
nixlConfig::ensureLoaded() {
    (void)file();
}

std::shared_ptr<const nixlConfigFile>
nixlConfig::file() {
    std::lock_guard<std::mutex> lock(loadMutex());
    auto &f = loaded();
    if (!f) {
        // A failed load is not remembered: the next use reads the file again.
        f = nixlConfigFile::load(nixlConfigSources::fromEnvironment());
        if (!f->path().empty()) {
            NIXL_INFO << "configuration file " << f->path() << ": " << f->size() << " keys";
        }
    }
    return f;
}

void
nixlConfig::reloadForTesting() {
    std::lock_guard<std::mutex> lock(loadMutex());
    loaded().reset();
}

std::optional<nixlConfigValue>
nixlConfig::lookup(std::string_view name) {
    const auto f = file();
    if (auto v = envValue(name)) {
        if (nixl::log::enabled(nixl::log::level::DEBUG)) {
            try {
                if (auto shadowed = f->find(name)) {
                    NIXL_DEBUG << name << ": the environment overrides " << shadowed->origin;
                }
            }
            catch (const std::invalid_argument &) {
            }
        }
        return nixlConfigValue{std::move(*v), "environment"};
    }
    return f->find(name);
}

void
nixlConfig::reject(std::string_view who,
                   std::string_view name,
                   const nixlConfigValue &value,
                   std::string_view accepted) {
    std::string msg(who);
    msg.append(name).append("=").append(value.text).append(" (from ");
    msg.append(value.origin).append(") is not ").append(accepted);
    fail(msg);
}

std::optional<bool>
nixlConfig::getBool(std::string_view name, std::string_view who) {
    auto v = lookup(name);
    if (!v) {
        return std::nullopt;
    }
    bool out = false;
    if (!nixlConfigParse::parseBool(v->text, out)) {
        reject(who, name, *v, nixlConfigParse::boolAccepted);
    }
    return out;
}

namespace {

std::string
rangeText(std::string_view kind, const std::string &min, const std::string &max) {
    return std::string(kind) + " between " + min + " and " + max;
}

} // namespace

std::optional<uint64_t>
nixlConfig::getUnsigned(std::string_view name, std::string_view who, uint64_t min, uint64_t max) {
    auto v = lookup(name);
    if (!v) {
        return std::nullopt;
    }
    uint64_t out = 0;
    if (!nixlConfigParse::parseUnsigned(v->text, out) || out < min || out > max) {
        reject(who,
               name,
               *v,
               rangeText(nixlConfigParse::unsignedAccepted, std::to_string(min),
                         std::to_string(max)));
    }
    return out;
}

std::optional<int64_t>
nixlConfig::getSigned(std::string_view name, std::string_view who, int64_t min, int64_t max) {
    auto v = lookup(name);
    if (!v) {
        return std::nullopt;
    }
    int64_t out = 0;
    if (!nixlConfigParse::parseSigned(v->text, out) || out < min || out > max) {
        reject(who,
               name,
               *v,
               rangeText(nixlConfigParse::signedAccepted, std::to_string(min),
                         std::to_string(max)));
    }
    return out;
}

std::optional<uint16_t>
nixlConfig::getPort(std::string_view name, std::string_view who) {
    auto v = lookup(name);
    if (!v) {
        return std::nullopt;
    }
    uint16_t out = 0;
    if (!nixlConfigParse::parsePort(v->text, out)) {
        reject(who, name, *v, nixlConfigParse::portAccepted);
    }
    return out;
}

std::optional<std::string>
nixlConfig::getString(std::string_view name) {
    auto v = lookup(name);
    if (!v) {
        return std::nullopt;
    }
    return std::move(v->text);
}

std::optional<std::chrono::milliseconds>
nixlConfig::getMilliseconds(std::string_view name,
                            std::string_view who,
                            uint64_t min_ms,
                            uint64_t max_ms) {
    auto v = lookup(name);
    if (!v) {
        return std::nullopt;
    }
    uint64_t out = 0;
    if (!nixlConfigParse::parseMilliseconds(v->text, out) || out < min_ms || out > max_ms) {
        reject(who,
               name,
               *v,
               rangeText(nixlConfigParse::millisecondsAccepted, std::to_string(min_ms),
                         std::to_string(max_ms)));
    }
    return std::chrono::milliseconds(static_cast<int64_t>(out));
}

nixl_plugin_status_t
nixlConfig::serviceLookup(void *ctx,
                          const char *name,
                          size_t name_len,
                          const nixl_plugin_bytes_sink_t *value,
                          const nixl_plugin_bytes_sink_t *origin) noexcept {
    (void)ctx;
    if (name == nullptr || value == nullptr || value->append == nullptr) {
        return NIXL_PLUGIN_ERR_INVALID_PARAM;
    }
    try {
        const std::string_view n(name, name_len);
        if (n.find('\0') != std::string_view::npos) {
            return NIXL_PLUGIN_ERR_INVALID_PARAM;
        }
        auto v = lookup(n);
        if (!v) {
            return NIXL_PLUGIN_ERR_NOT_FOUND;
        }
        nixl_plugin_status_t st = value->append(value->ctx, v->text.data(), v->text.size());
        if (st == NIXL_PLUGIN_SUCCESS && origin != nullptr && origin->append != nullptr) {
            st = origin->append(origin->ctx, v->origin.data(), v->origin.size());
        }
        return st;
    }
    catch (const std::invalid_argument &) {
        return NIXL_PLUGIN_ERR_INVALID_PARAM; // logged where it was found
    }
    catch (...) {
        return NIXL_PLUGIN_ERR_UNKNOWN;
    }
}
