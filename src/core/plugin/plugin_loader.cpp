/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "plugin_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <string_view>
#include <system_error>
#include <utility>

#include "nixl_backend_plugin.h"
#include "nixl_telemetry_exporter_plugin.h"
#include "nixl_trace_backend_plugin.h"
#include "common/nixl_log.h"
#include "config/config.h"

namespace {

const nixlPluginKindInfo kKinds[] = {
    {nixl_plugin_kind_t::BACKEND,
     NIXL_PLUGIN_KIND_BACKEND,
     "backend",
     NIXL_BACKEND_PLUGIN_PREFIX,
     NIXL_BACKEND_PLUGIN_ENTRY,
     NIXL_BACKEND_ABI_VERSION,
     sizeof(nixl_backend_plugin_t)},
    {nixl_plugin_kind_t::TELEMETRY_EXPORTER,
     NIXL_PLUGIN_KIND_TELEMETRY_EXPORTER,
     "telemetry exporter",
     NIXL_TELEMETRY_EXPORTER_PLUGIN_PREFIX,
     NIXL_TELEMETRY_EXPORTER_PLUGIN_ENTRY,
     NIXL_TELEMETRY_EXPORTER_ABI_VERSION,
     sizeof(nixl_telemetry_exporter_plugin_t)},
    {nixl_plugin_kind_t::TRACE_BACKEND,
     NIXL_PLUGIN_KIND_TRACE_BACKEND,
     "trace backend",
     NIXL_TRACE_BACKEND_PLUGIN_PREFIX,
     NIXL_TRACE_BACKEND_PLUGIN_ENTRY,
     NIXL_TRACE_BACKEND_ABI_VERSION,
     sizeof(nixl_trace_backend_plugin_t)},
};

constexpr std::string_view kSuffix = ".so";

/** Name of a C-header kind value as found in a plugin header, for refusal messages. */
const char *
cKindName(uint32_t c_kind) noexcept {
    for (const nixlPluginKindInfo &k : kKinds) {
        if (k.cKind == c_kind) {
            return k.what;
        }
    }
    return "unknown";
}

/**
 * Calls the entry point through the function type the kind's C header declares, so the call
 * matches the plugin's definition exactly rather than going through a generic pointer type.
 */
template<typename Descriptor>
const nixl_plugin_header_t *
callEntryAs(void *symbol) {
    using entry_fn = const Descriptor *(*)(void);
    const Descriptor *descriptor = reinterpret_cast<entry_fn>(symbol)();
    return descriptor == nullptr ? nullptr : &descriptor->hdr;
}

const nixl_plugin_header_t *
callEntry(nixl_plugin_kind_t kind, void *symbol) {
    switch (kind) {
    case nixl_plugin_kind_t::BACKEND:
        return callEntryAs<nixl_backend_plugin_t>(symbol);
    case nixl_plugin_kind_t::TELEMETRY_EXPORTER:
        return callEntryAs<nixl_telemetry_exporter_plugin_t>(symbol);
    case nixl_plugin_kind_t::TRACE_BACKEND:
        return callEntryAs<nixl_trace_backend_plugin_t>(symbol);
    }
    return nullptr;
}

/**
 * Closes a refused plugin when the refusal path leaves scope. Declared before any try block so
 * the close runs only after an exception thrown by the plugin has been destroyed: that
 * exception's destructor and type info live in the library being closed.
 */
class dlCloser {
public:
    explicit dlCloser(void *handle) noexcept : handle_(handle) {}

    dlCloser(const dlCloser &) = delete;
    dlCloser &
    operator=(const dlCloser &) = delete;

    ~dlCloser() {
        if (handle_ != nullptr) {
            dlclose(handle_);
        }
    }

    void *
    release() noexcept {
        void *h = handle_;
        handle_ = nullptr;
        return h;
    }

private:
    void *handle_;
};

/**
 * Backend-only checks: the parts of the descriptor core calls without further null checks.
 * Returns the status and logs the one refusal line itself.
 */
nixl_status_t
checkBackendDescriptor(const std::string &path, const nixl_plugin_header_t *hdr) {
    const auto *plugin = reinterpret_cast<const nixl_backend_plugin_t *>(hdr);
    if (plugin->create_engine == nullptr) {
        NIXL_ERROR << path << ": backend plugin " << hdr->name
                   << " is missing mandatory entry create_engine";
        return NIXL_ERR_MISMATCH;
    }
    const nixl_be_ops_t *ops = plugin->ops;
    if (ops == nullptr) {
        NIXL_ERROR << path << ": backend plugin " << hdr->name
                   << " is missing mandatory entry ops (no operations table)";
        return NIXL_ERR_MISMATCH;
    }
    if (ops->size < NIXL_BE_OPS_MIN_SIZE) {
        NIXL_ERROR << path << ": backend plugin " << hdr->name << " operations table is "
                   << ops->size << " bytes, expected at least " << NIXL_BE_OPS_MIN_SIZE;
        return NIXL_ERR_MISMATCH;
    }

    const std::pair<const char *, bool> mandatory[] = {
        {"destroy_engine", ops->destroy_engine != nullptr},
        {"register_mem", ops->register_mem != nullptr},
        {"deregister_mem", ops->deregister_mem != nullptr},
        {"connect", ops->connect != nullptr},
        {"disconnect", ops->disconnect != nullptr},
        {"unload_md", ops->unload_md != nullptr},
        {"prep_xfer", ops->prep_xfer != nullptr},
        {"post_xfer", ops->post_xfer != nullptr},
        {"check_xfer", ops->check_xfer != nullptr},
        {"release_req", ops->release_req != nullptr},
    };
    std::string missing;
    for (const auto &[name, present] : mandatory) {
        if (!present) {
            missing += missing.empty() ? "" : ", ";
            missing += name;
        }
    }
    if (!missing.empty()) {
        // All missing entries in one line, so a plugin author fixes them in one round.
        NIXL_ERROR << path << ": backend plugin " << hdr->name
                   << " is missing mandatory operation(s): " << missing;
        return NIXL_ERR_MISMATCH;
    }
    return NIXL_SUCCESS;
}

/**
 * Checks the header every kind shares, then the kind's own parts. Order matters: kind and ABI
 * version are the only fields valid in a plugin of any age, so nothing else is read until both
 * match.
 */
nixl_status_t
checkDescriptor(const nixlPluginKindInfo &info,
                const std::string &path,
                const std::string &name,
                const nixl_plugin_header_t *hdr) {
    if (hdr->kind != info.cKind) {
        NIXL_ERROR << path << ": plugin header says kind " << hdr->kind << " ("
                   << cKindName(hdr->kind) << "), expected " << info.cKind << " (" << info.what
                   << ")";
        return NIXL_ERR_MISMATCH;
    }
    if (hdr->abi_version != info.abiVersion) {
        NIXL_ERROR << path << ": " << info.what << " plugin ABI version " << hdr->abi_version
                   << ", expected " << info.abiVersion;
        return NIXL_ERR_MISMATCH;
    }
    if (hdr->size < info.descriptorSize) {
        NIXL_ERROR << path << ": " << info.what << " plugin descriptor is " << hdr->size
                   << " bytes, expected at least " << info.descriptorSize;
        return NIXL_ERR_MISMATCH;
    }
    if (hdr->name == nullptr) {
        NIXL_ERROR << path << ": " << info.what << " plugin has no name, expected \"" << name
                   << "\"";
        return NIXL_ERR_MISMATCH;
    }
    if (std::string_view(hdr->name) != name) {
        NIXL_ERROR << path << ": " << info.what << " plugin calls itself \"" << hdr->name
                   << "\", expected \"" << name << "\" from its file name";
        return NIXL_ERR_MISMATCH;
    }
    if (info.kind == nixl_plugin_kind_t::BACKEND) {
        return checkBackendDescriptor(path, hdr);
    }
    return NIXL_SUCCESS;
}

/** name with control bytes replaced, so a hostile name cannot break the log line. */
std::string
printable(const std::string &name) {
    std::string out = name;
    for (char &c : out) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            c = '?';
        }
    }
    return out;
}

std::string
pluginPath(const nixlPluginKindInfo &info, const std::string &dir, const std::string &name) {
    std::filesystem::path p =
        std::filesystem::path(dir) / (std::string(info.prefix) + name + std::string(kSuffix));
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(p, ec);
    // The cache is keyed by this string, so "a/./b" and "a/b" must give the same key.
    return (ec ? p : abs).lexically_normal().string();
}

} // namespace

const nixlPluginKindInfo &
nixlPluginKind(nixl_plugin_kind_t kind) noexcept {
    for (const nixlPluginKindInfo &k : kKinds) {
        if (k.kind == kind) {
            return k;
        }
    }
    return kKinds[0];
}

nixlLoadedPlugin::nixlLoadedPlugin(nixl_plugin_kind_t kind,
                                   std::string name,
                                   std::string path,
                                   std::string version,
                                   void *dl_handle,
                                   const nixl_plugin_header_t *descriptor) noexcept
    : kind_(kind),
      name_(std::move(name)),
      path_(std::move(path)),
      version_(std::move(version)),
      dlHandle_(dl_handle),
      descriptor_(descriptor) {}

struct nixlPluginLoader::impl {
    std::mutex mutex;
    /** Accepted plugins by absolute file path. Entries are never removed: see the header. */
    std::map<std::string, std::shared_ptr<const nixlLoadedPlugin>> byPath;
};

nixlPluginLoader &
nixlPluginLoader::instance() {
    // Never destroyed: plugins stay loaded until exit, and code running in other static
    // destructors (agents torn down at exit) may still reach the loader.
    static nixlPluginLoader *const loader = [] {
        auto *l = new nixlPluginLoader();
        l->impl_ = std::make_shared<impl>();
        return l;
    }();
    return *loader;
}

std::string
nixlPluginLoader::defaultDirectory() const {
    // Environment, else configuration file. A bad file reached here only outside an agent
    // constructor (which reports it first); then the default directory is used.
    try {
        if (auto dir = nixlConfig::getString("NIXL_PLUGIN_DIR")) {
            return *dir;
        }
    }
    catch (const std::invalid_argument &) {
    }
    // Any function defined in libnixl identifies the library; dladdr then names its file.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&nixlPluginKind), &info) == 0 ||
        info.dli_fname == nullptr) {
        NIXL_WARN << "cannot locate libnixl with dladdr; looking for plugins in ./plugins";
        return "plugins";
    }
    std::filesystem::path lib(info.dli_fname);
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(lib, ec);
    return ((ec ? lib : abs).parent_path() / "plugins").lexically_normal().string();
}

std::vector<std::string>
nixlPluginLoader::discover(nixl_plugin_kind_t kind, const std::string &dir) const {
    const nixlPluginKindInfo &info = nixlPluginKind(kind);
    const std::string d = dir.empty() ? defaultDirectory() : dir;
    const std::string_view prefix(info.prefix);

    std::vector<std::string> names;
    std::error_code ec;
    std::filesystem::directory_iterator it(d, ec);
    if (ec) {
        // A missing plugin directory is a normal setup (no plugins installed), not an error.
        NIXL_DEBUG << "no " << info.what << " plugins: cannot list " << d << ": " << ec.message();
        return names;
    }
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
        if (ec) {
            NIXL_DEBUG << "stopped listing " << d << ": " << ec.message();
            break;
        }
        const std::string file = it->path().filename().string();
        if (file.size() <= prefix.size() + kSuffix.size() ||
            file.compare(0, prefix.size(), prefix) != 0 ||
            file.compare(file.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
            continue;
        }
        std::error_code type_ec;
        // Follows symlinks: an installed libplugin_X.so is often a link to a versioned file.
        if (!it->is_regular_file(type_ec) || type_ec) {
            continue;
        }
        names.push_back(file.substr(prefix.size(), file.size() - prefix.size() - kSuffix.size()));
    }
    std::sort(names.begin(), names.end());
    return names;
}

nixl_status_t
nixlPluginLoader::load(nixl_plugin_kind_t kind,
                       const std::string &name,
                       std::shared_ptr<const nixlLoadedPlugin> &out,
                       const std::string &dir) {
    const nixlPluginKindInfo &info = nixlPluginKind(kind);
    out.reset();

    if (name.empty() || name.find('/') != std::string::npos ||
        name.find('\0') != std::string::npos) {
        NIXL_ERROR << "invalid " << info.what << " plugin name \"" << printable(name)
                   << "\": must be non-empty and contain no '/' or NUL";
        return NIXL_ERR_INVALID_PARAM;
    }

    const std::string path = pluginPath(info, dir.empty() ? defaultDirectory() : dir, name);

    // One lock over the whole load: two threads asking for the same plugin must end up with the
    // same object, and dlopen plus validation is rare enough that serialising it costs nothing.
    std::lock_guard<std::mutex> lock(impl_->mutex);

    auto cached = impl_->byPath.find(path);
    if (cached != impl_->byPath.end()) {
        out = cached->second;
        return NIXL_SUCCESS;
    }

    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        NIXL_ERROR << info.what << " plugin " << name << " not found: no file " << path;
        return NIXL_ERR_NOT_FOUND;
    }

    dlerror();
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char *err = dlerror();
        std::string_view reason = err != nullptr ? err : "dlopen failed";
        // glibc often starts its reason with the path; the line names the file once.
        if (reason.size() > path.size() + 2 && reason.substr(0, path.size()) == path &&
            reason.substr(path.size(), 2) == ": ") {
            reason.remove_prefix(path.size() + 2);
        }
        NIXL_ERROR << path << ": cannot load " << info.what << " plugin: " << reason;
        return NIXL_ERR_BACKEND;
    }
    dlCloser closer(handle);

    dlerror();
    void *symbol = dlsym(handle, info.entry);
    if (symbol == nullptr) {
        NIXL_ERROR << path << " is not a libnixl " << info.what << " plugin: no symbol "
                   << info.entry;
        return NIXL_ERR_BACKEND;
    }

    const nixl_plugin_header_t *hdr = nullptr;
    std::string thrown;
    bool threw = false;
    try {
        hdr = callEntry(kind, symbol);
    }
    catch (const std::exception &e) {
        threw = true;
        thrown = e.what();
    }
    catch (...) {
        threw = true;
        thrown = "unknown exception";
    }
    if (threw) {
        NIXL_ERROR << path << ": " << info.what << " plugin entry " << info.entry
                   << " threw: " << thrown;
        return NIXL_ERR_BACKEND;
    }
    if (hdr == nullptr) {
        NIXL_ERROR << path << ": " << info.what << " plugin entry " << info.entry
                   << " returned no descriptor";
        return NIXL_ERR_BACKEND;
    }

    nixl_status_t status = checkDescriptor(info, path, name, hdr);
    if (status != NIXL_SUCCESS) {
        return status;
    }

    auto plugin = std::make_shared<const nixlLoadedPlugin>(
        kind, name, path, hdr->version != nullptr ? hdr->version : "", handle, hdr);
    impl_->byPath.emplace(path, plugin);
    // Only now is the handle owned by the cache; an allocation failure above still closes it.
    closer.release();
    NIXL_INFO << "loaded " << info.what << " plugin " << name << " " << plugin->version()
              << " from " << path;
    out = std::move(plugin);
    return NIXL_SUCCESS;
}

std::vector<std::string>
nixlPluginLoader::loaded(nixl_plugin_kind_t kind) const {
    std::vector<std::string> names;
    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        for (const auto &[path, plugin] : impl_->byPath) {
            if (plugin->kind() == kind) {
                names.push_back(plugin->name());
            }
        }
    }
    std::sort(names.begin(), names.end());
    // The same name loaded from two directories is still one plugin name.
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}
