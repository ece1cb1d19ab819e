/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Shared by the NVTX plugin tests: access to the recording NVTX tool (nvtx_recorder.cpp) that
 * NVTX loaded from NVTX_INJECTION64_PATH, and the expected rendering of payloads for the two
 * kinds of tool (with and without the payload extension).
 */
#ifndef NIXL_TEST_NVTX_TEST_UTIL_H
#define NIXL_TEST_NVTX_TEST_UTIL_H

#include <dlfcn.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace nvtxTest {

// The recorder this process runs under, or null (with a reason) when none is configured.
class recorder {
public:
    recorder() {
        const char *path = std::getenv("NVTX_INJECTION64_PATH");
        if (path == nullptr || *path == '\0') {
            error_ = "NVTX_INJECTION64_PATH is not set";
            return;
        }
        // The same file NVTX dlopens: the loader hands both of us the one instance.
        handle_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (handle_ == nullptr) {
            error_ = std::string("dlopen: ") + dlerror();
            return;
        }
        take_ = reinterpret_cast<char *(*)()>(dlsym(handle_, "nixl_nvtx_recorder_take"));
        reset_ = reinterpret_cast<void (*)()>(dlsym(handle_, "nixl_nvtx_recorder_reset"));
        ext_ = reinterpret_cast<int (*)()>(dlsym(handle_, "nixl_nvtx_recorder_payload_ext"));
        if (take_ == nullptr || reset_ == nullptr || ext_ == nullptr) {
            error_ = std::string(path) + " is not the NVTX test recorder";
        }
        const char *want = std::getenv("NIXL_TEST_NVTX_PAYLOAD_EXT");
        withExt_ = want != nullptr && std::string(want) == "1";
    }

    bool
    ok() const {
        return error_.empty();
    }

    const std::string &
    error() const {
        return error_;
    }

    // Whether this run's tool implements the payload extension (from the test's env).
    bool
    withExt() const {
        return withExt_;
    }

    // Whether NVTX initialised the recorder's payload extension (only the ext build has one).
    bool
    extInitialized() const {
        return ext_() != 0;
    }

    void
    reset() const {
        reset_();
    }

    // Lines recorded since the last take/reset.
    std::vector<std::string>
    take() const {
        char *raw = take_();
        std::vector<std::string> out;
        std::istringstream in(raw != nullptr ? raw : "");
        std::free(raw);
        for (std::string l; std::getline(in, l);) {
            out.push_back(l);
        }
        return out;
    }

    // The payload part of a push/mark line: what a tool with the extension decodes, or what
    // a tool without it records (a payload of a type it does not know, with n blobs).
    std::string
    payload(const std::string &decoded, size_t n) const {
        if (n == 0) {
            return "-";
        }
        return withExt_ ? decoded : "ext-payload(" + std::to_string(n) + ")";
    }

    // Schema registrations the plugin makes in domain d: only a tool with the extension
    // receives them.
    std::vector<std::string>
    schemaLines(const std::string &d) const {
        if (!withExt_) {
            return {};
        }
        return {
            "schema " + d + " 16777217 \"nixl.correlation\" size=8 [correlation_id:uint64@0]",
            "schema " + d + " 16777218 \"nixl.attr.int64\" size=32 [key:cstring*@0 value:int64@16]",
            "schema " + d +
                " 16777219 \"nixl.attr.double\" size=32 [key:cstring*@0 value:double@16]",
            "schema " + d +
                " 16777220 \"nixl.attr.string\" size=32 [key:cstring*@0 value:cstring*@16 "
                "length:size@24]",
        };
    }

    // The category names the plugin gives domain d, one per kind (category = kind + 1).
    static std::vector<std::string>
    categoryLines(const std::string &d) {
        const char *names[] = {"Generic", "Compute", "MemoryR", "MemoryW",
                               "CommSend", "CommRecv", "CommColl", "Metadata"};
        std::vector<std::string> out;
        for (int i = 0; i < 8; ++i) {
            out.push_back("category " + d + " " + std::to_string(i + 1) + " \"" + names[i] + "\"");
        }
        return out;
    }

private:
    void *handle_ = nullptr;
    char *(*take_)() = nullptr;
    void (*reset_)() = nullptr;
    int (*ext_)() = nullptr;
    bool withExt_ = false;
    std::string error_;
};

inline void
append(std::vector<std::string> &to, const std::vector<std::string> &more) {
    to.insert(to.end(), more.begin(), more.end());
}

} // namespace nvtxTest

#endif // NIXL_TEST_NVTX_TEST_UTIL_H
