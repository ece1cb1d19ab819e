/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// A build without the etcd module (-Detcd=disabled, or no libcurl): with NIXL_ETCD_ENDPOINTS
// set, the metadata calls that would go to etcd answer NIXL_ERR_NOT_SUPPORTED with one log
// line each naming the cause; the agent itself works.

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "nixl.h"
#include "../../common/log_capture.h"

namespace {

size_t
logLines(const std::string &log, std::string &first) {
    std::istringstream in(log);
    std::string line;
    size_t n = 0;
    while (std::getline(in, line)) {
        if (line.rfind("[nixl ", 0) == 0) {
            if (n++ == 0) {
                first = line;
            }
        }
    }
    return n;
}

TEST(EtcdNotBuilt, CallsThatNeedEtcdAnswerNotSupportedWithOneLine) {
    ::setenv("NIXL_ETCD_ENDPOINTS", "127.0.0.1:2379", 1);
    nixlAgent agent("A", nixlAgentConfig(false, false, 0));
    nixl_reg_dlist_t descs(DRAM_SEG);
    nixl_opt_args_t extra;
    extra.metadataLabel = "part";
    const char *const calls[] = {"sendLocalMD", "sendLocalPartialMD", "fetchRemoteMD",
                                 "invalidateLocalMD"};
    for (const char *call : calls) {
        nixl_test::stderrCapture capture;
        nixl_status_t st = NIXL_SUCCESS;
        const std::string name(call);
        if (name == "sendLocalMD") {
            st = agent.sendLocalMD();
        } else if (name == "sendLocalPartialMD") {
            st = agent.sendLocalPartialMD(descs, &extra);
        } else if (name == "fetchRemoteMD") {
            st = agent.fetchRemoteMD("B");
        } else {
            st = agent.invalidateLocalMD();
        }
        const std::string log = capture.stop();
        EXPECT_EQ(st, NIXL_ERR_NOT_SUPPORTED) << call;
        std::string line;
        EXPECT_EQ(logLines(log, line), 1u) << call << ":\n" << log;
        EXPECT_NE(line.find(name), std::string::npos) << line;
        EXPECT_NE(line.find("not supported in this build"), std::string::npos) << line;
    }
    ::unsetenv("NIXL_ETCD_ENDPOINTS");
}

} // namespace
