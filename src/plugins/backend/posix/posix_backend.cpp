/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "posix_backend.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "posix_queue.h"
#include "posix_request.h"

namespace {

/* The SDK casts the ABI's uint32_t enums straight to the C++ enums; copying the bytes reads a
 * value outside the enumerators without undefined behaviour. */
template<typename E>
uint32_t
rawValue(const E &value) noexcept {
    static_assert(sizeof(E) == sizeof(uint32_t), "ABI enums travel as uint32_t");
    uint32_t raw;
    std::memcpy(&raw, &value, sizeof(raw));
    return raw;
}

/** Idle kernel queues the engine keeps for reuse; beyond that, ended posts free theirs. */
constexpr size_t max_idle_queues = 64;

bool
misaligned(uint64_t v, uint32_t align) noexcept {
    return align > 1 && v % align != 0;
}

} // namespace

nixlPosixEngine::nixlPosixEngine(const nixlBackendInitParams *init_params)
    : nixlBackendEngine(init_params) {
    std::string why;
    if (!cfg_.parse(getCustomParams(), why)) {
        NIXL_SDK_ERROR("POSIX agent '" << localAgent << "': " << why);
        initErr = true;
        initErrStatus = NIXL_ERR_INVALID_PARAM;
        return;
    }
    if (!chooseEngine()) {
        initErr = true;
        return;
    }
    setInitParam("engine", std::string(nixlPosixEngineName(engine_)));
}

bool
nixlPosixEngine::chooseEngine() {
    // The chosen engine first, then the others in the order of nixl_posix_engine_t. POSIX AIO
    // needs no kernel setup, so the chain ends in a working engine unless memory runs out.
    std::vector<nixl_posix_engine_t> order{cfg_.engine};
    for (auto kind : {nixl_posix_engine_t::URING, nixl_posix_engine_t::LINUX_AIO,
                      nixl_posix_engine_t::POSIX_AIO}) {
        if (kind != cfg_.engine) {
            order.push_back(kind);
        }
    }
    std::string failed;
    for (nixl_posix_engine_t kind : order) {
        int err = 0;
        std::unique_ptr<nixlPosixQueue> probe =
            nixlPosixMakeQueue(kind, cfg_.kernelQueueSize, err);
        if (probe != nullptr) {
            engine_ = kind;
            pool_ = std::make_unique<nixlPosixQueuePool>(kind, cfg_.kernelQueueSize, max_idle_queues);
            pool_->put(std::move(probe));
            if (!failed.empty()) {
                NIXL_SDK_WARN("POSIX agent '" << localAgent << "': " << failed << "; using "
                              << nixlPosixEngineName(kind) << " instead");
            }
            return true;
        }
        failed += failed.empty() ? "" : ", ";
        failed += std::string(nixlPosixEngineName(kind)) + " cannot be set up: " +
            (strerrorname_np(err) != nullptr ? strerrorname_np(err) : "errno") + " (" +
            std::strerror(err) + ")";
        if (kind == nixl_posix_engine_t::URING && (err == EPERM || err == ENOSYS)) {
            failed += ", io_uring is refused here (a seccomp profile such as Docker's default)";
        }
    }
    NIXL_SDK_ERROR("POSIX agent '" << localAgent << "': no I/O engine works: " << failed);
    return false;
}

nixl_status_t
nixlPosixEngine::getXferPath(const nixlBackendReqH *handle, nixl_xfer_path_info_t &out) const {
    (void)handle; // one engine for every request of this backend
    switch (engine_) {
    case nixl_posix_engine_t::URING:
        out.path = NIXL_XFER_PATH_POSIX_URING;
        break;
    case nixl_posix_engine_t::LINUX_AIO:
        out.path = NIXL_XFER_PATH_POSIX_AIO;
        break;
    case nixl_posix_engine_t::POSIX_AIO:
        out.path = NIXL_XFER_PATH_POSIX_POSIX_AIO;
        break;
    }
    if (engine_ != cfg_.engine) {
        // chooseEngine found the configured engine unusable here (its WARN line says why).
        out.fallback = NIXL_PATH_FALLBACK_TRANSPORT_UNAVAILABLE;
        out.first_for_conn = fallbackReported_.exchange(true) ? 0 : 1;
    }
    return NIXL_SUCCESS;
}

nixl_b_params_t
nixlPosixEngine::pluginOptions() {
    return nixlPosixConfig::defaults();
}

nixl_mem_list_t
nixlPosixEngine::pluginMems() {
    return {DRAM_SEG, FILE_SEG};
}

nixl_status_t
nixlPosixEngine::registerMem(const nixlBlobDesc &mem,
                             const nixl_mem_t &nixl_mem,
                             nixlBackendMD *&out) {
    const uint32_t kind = rawValue(nixl_mem);
    if (kind == DRAM_SEG) {
        out = new nixlPosixDramMD();
        return NIXL_SUCCESS;
    }
    if (kind != FILE_SEG) {
        NIXL_SDK_ERROR("POSIX agent '" << localAgent << "': memory kind " << kind
                       << " is not supported (DRAM_SEG and FILE_SEG only)");
        return NIXL_ERR_NOT_SUPPORTED;
    }
    nixlPosixFileMD *md = nullptr;
    std::string why;
    const nixl_status_t st = files_.add(mem, md, why);
    if (st != NIXL_SUCCESS) {
        NIXL_SDK_ERROR("POSIX agent '" << localAgent << "' FILE_SEG devId " << mem.devId
                       << ": " << why);
        return st;
    }
    out = md;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlPosixEngine::deregisterMem(nixlBackendMD *meta) {
    if (auto *file = dynamic_cast<nixlPosixFileMD *>(meta); file != nullptr) {
        files_.remove(file);
        return NIXL_SUCCESS;
    }
    delete meta;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlPosixEngine::connect(const std::string &remote_agent) {
    if (remote_agent != localAgent) {
        NIXL_SDK_ERROR("POSIX agent '" << localAgent << "': cannot connect to '" << remote_agent
                       << "': the POSIX backend is local only");
        return NIXL_ERR_NOT_SUPPORTED;
    }
    return NIXL_SUCCESS;
}

nixl_status_t
nixlPosixEngine::disconnect(const std::string &remote_agent) {
    (void)remote_agent;
    return NIXL_SUCCESS;
}

nixl_status_t
nixlPosixEngine::loadLocalMD(nixlBackendMD *input, nixlBackendMD *&output) {
    output = input; // the registration itself serves the agent's own transfers
    return NIXL_SUCCESS;
}

nixl_status_t
nixlPosixEngine::unloadMD(nixlBackendMD *input) {
    (void)input; // loadLocalMD returned the registration; deregisterMem frees it
    return NIXL_SUCCESS;
}

nixl_status_t
nixlPosixEngine::prepXfer(const nixl_xfer_op_t &operation,
                          const nixl_meta_dlist_t &local,
                          const nixl_meta_dlist_t &remote,
                          const std::string &remote_agent,
                          nixlBackendReqH *&handle,
                          const nixl_opt_b_args_t *opt_args) const {
    (void)opt_args;
    const uint32_t op = rawValue(operation);
    if (op != NIXL_READ && op != NIXL_WRITE) {
        NIXL_SDK_ERROR("POSIX agent '" << localAgent << "': operation " << op
                       << " is neither READ nor WRITE");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (remote_agent != localAgent) {
        NIXL_SDK_ERROR("POSIX agent '" << localAgent << "': transfer to '" << remote_agent
                       << "' refused: the POSIX backend is local only (use the agent's own name)");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (rawValue(local.getType()) != DRAM_SEG || rawValue(remote.getType()) != FILE_SEG) {
        NIXL_SDK_ERROR("POSIX agent '" << localAgent << "': transfers go between a DRAM_SEG "
                       << "local list and a FILE_SEG remote list (got kinds "
                       << rawValue(local.getType()) << " and " << rawValue(remote.getType())
                       << ")");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (local.size() != remote.size() || local.isEmpty()) {
        NIXL_SDK_ERROR("POSIX agent '" << localAgent << "': " << local.size()
                       << " local and " << remote.size()
                       << " file descriptors; they must be equal and not 0");
        return NIXL_ERR_INVALID_PARAM;
    }
    if (local.size() > cfg_.iosPoolSize) {
        NIXL_SDK_ERROR("POSIX agent '" << localAgent << "': " << local.size()
                       << " descriptors exceed ios_pool_size " << cfg_.iosPoolSize);
        return NIXL_ERR_INVALID_PARAM;
    }
    std::vector<nixlPosixIo> ios(local.size());
    const nixl_be_xfer_desc_t *ld = local.data();
    const nixl_be_xfer_desc_t *rd = remote.data();
    for (size_t i = 0; i < ios.size(); ++i) {
        const auto *file = dynamic_cast<const nixlPosixFileMD *>(
            reinterpret_cast<nixlBackendMD *>(rd[i].md));
        if (file == nullptr) {
            NIXL_SDK_ERROR("POSIX agent '" << localAgent << "' desc " << i
                           << ": the file descriptor has no FILE_SEG registration of this backend");
            return NIXL_ERR_INVALID_PARAM;
        }
        if (ld[i].len != rd[i].len) {
            NIXL_SDK_ERROR("POSIX agent '" << localAgent << "' desc " << i << ": lengths differ ("
                           << ld[i].len << " in memory, " << rd[i].len << " in the file)");
            return NIXL_ERR_INVALID_PARAM;
        }
        if (file->direct &&
            (misaligned(ld[i].addr, file->memAlign) || misaligned(rd[i].addr, file->offAlign) ||
             misaligned(rd[i].len, file->offAlign))) {
            NIXL_SDK_ERROR("POSIX agent '" << localAgent << "' desc " << i << " file '"
                           << file->name << "': O_DIRECT needs the buffer address aligned to "
                           << file->memAlign << " bytes and the offset and length to "
                           << file->offAlign << " (got address 0x" << std::hex << ld[i].addr
                           << std::dec << ", offset " << rd[i].addr << ", length " << rd[i].len
                           << ")");
            return NIXL_ERR_INVALID_PARAM;
        }
        nixlPosixIo &io = ios[i];
        io.buf = reinterpret_cast<char *>(ld[i].addr);
        io.offset = rd[i].addr;
        io.len = ld[i].len;
        io.fd = file->fd;
        io.write = op == NIXL_WRITE;
        io.index = static_cast<uint32_t>(i);
        io.file = file;
    }
    handle = new nixlPosixReq(*pool_, std::move(ios), localAgent);
    return NIXL_SUCCESS;
}

nixl_status_t
nixlPosixEngine::postXfer(const nixl_xfer_op_t &operation,
                          const nixl_meta_dlist_t &local,
                          const nixl_meta_dlist_t &remote,
                          const std::string &remote_agent,
                          nixlBackendReqH *&handle,
                          const nixl_opt_b_args_t *opt_args) const {
    (void)operation;
    (void)local;
    (void)remote;
    (void)remote_agent;
    auto *req = static_cast<nixlPosixReq *>(handle);
    if (req == nullptr) {
        NIXL_SDK_ERROR("POSIX agent '" << localAgent << "': postXfer without a prepared request");
        return NIXL_ERR_INVALID_PARAM;
    }
    const nixl_be_trace_ctx_t *ctx = opt_args != nullptr ? opt_args->traceCtx : nullptr;
    const std::string_view label = nixlPosixEngineName(req->engine());
    recordPhase(ctx, NIXL_BE_PHASE_SUBMIT, label, nixlTraceNow);
    bool ended = false;
    const nixl_status_t st = req->post(ctx, ended);
    recordPhase(ctx, NIXL_BE_PHASE_WIRE_SUBMITTED, label, nixlTraceNow);
    if (ended) {
        recordPhase(ctx, NIXL_BE_PHASE_WIRE_COMPLETED, label, nixlTraceNow);
    }
    return st;
}

nixl_status_t
nixlPosixEngine::checkXfer(nixlBackendReqH *handle) const {
    auto *req = static_cast<nixlPosixReq *>(handle);
    if (req == nullptr) {
        return NIXL_ERR_INVALID_PARAM;
    }
    bool ended = false;
    const nixl_status_t st = req->check(ended);
    if (ended) {
        recordPhase(req->traceCtx(), NIXL_BE_PHASE_WIRE_COMPLETED,
                    nixlPosixEngineName(req->engine()), nixlTraceNow);
    }
    return st;
}

nixl_status_t
nixlPosixEngine::releaseReqH(nixlBackendReqH *handle) const {
    // The request's destructor waits for its in-flight I/O, so nothing lands in memory the
    // application frees after this returns.
    delete static_cast<nixlPosixReq *>(handle);
    return NIXL_SUCCESS;
}

nixl_status_t
nixlPosixEngine::queryMem(const std::vector<nixlBlobDesc> &descs,
                          std::vector<nixl_query_resp_t> &resp) const {
    resp.clear();
    resp.reserve(descs.size());
    for (const auto &d : descs) {
        // metaInfo is the path, alone or in the path-mode form "<modes>:<path>".
        const nixlPosixFileSpec spec = nixlPosixFileSpec::parse(d.metaInfo);
        const std::string &path = spec.kind == nixlPosixFileSpec::kind_t::PATH ? spec.path :
                                                                                  d.metaInfo;
        struct stat st {};
        if (path.empty() || ::stat(path.c_str(), &st) != 0) {
            resp.emplace_back(std::nullopt);
            continue;
        }
        nixl_b_params_t info;
        info.emplace("size", std::to_string(st.st_size));
        info.emplace("mode", std::to_string(st.st_mode));
        info.emplace("mtime", std::to_string(st.st_mtime));
        resp.emplace_back(std::move(info));
    }
    return NIXL_SUCCESS;
}

NIXL_BACKEND_PLUGIN_DEFINE(nixlPosixEngine, "POSIX", "1.0.0")
