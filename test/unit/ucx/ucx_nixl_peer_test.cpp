/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// UCX with NIXL 1.4 peers (issue 33; ../shared/reference/nixl-wire.md sections 1.4, 3.2-3.5):
// the NIXL forms of connection info, public data and notifications, built here from the
// specification. Two engines driven through core's proxy load each other's NIXL forms and so
// treat each other as NIXL peers (UCP path, AM-0 notifications); a bare UCP worker written
// from the specification checks the notification bytes on the wire both ways.

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <ucp/api/ucp.h>

#include "backend/backend_engine.h"
#include "plugin/plugin_loader.h"
#include "ucx_nixl_peer.h"
#include "ucx_test_utils.h"
#include "ucx_wire.h"

using namespace nixl_ucx_test;

namespace {

/** Section 1.4: the notification of agent "target" with message "hi", 44 bytes. */
std::string
specNotif() {
    std::string b("nixlSerDes|", 11);
    b += "name";
    b += std::string("\x06\0\0\0\0\0\0\0", 8);
    b += "target|";
    b += "msg";
    b += std::string("\x02\0\0\0\0\0\0\0", 8);
    b += "hi|";
    return b;
}

TEST(ucxNixlWire, NotifMatchesTheSpecification) {
    const std::string golden = specNotif();
    ASSERT_EQ(golden.size(), 44u);
    EXPECT_EQ(nixlUcx::encodeNixlNotif("target", "hi"), golden);
    std::string_view sender, msg;
    std::string why;
    ASSERT_TRUE(nixlUcx::decodeNixlNotif(golden, sender, msg, why)) << why;
    EXPECT_EQ(sender, "target");
    EXPECT_EQ(msg, "hi");
    // NIXL ignores bytes after the last field it reads, and the delimiter's value.
    std::string more = golden + "extra";
    more[more.size() - 6] = 'x';
    ASSERT_TRUE(nixlUcx::decodeNixlNotif(more, sender, msg, why)) << why;
    EXPECT_EQ(msg, "hi");
    // An empty message is a message (NIXL's msg may be empty).
    ASSERT_TRUE(nixlUcx::decodeNixlNotif(nixlUcx::encodeNixlNotif("a", ""), sender, msg, why));
    EXPECT_EQ(msg, "");
}

TEST(ucxNixlWire, MalformedNotifsAreRefused) {
    const std::string golden = specNotif();
    std::string_view sender, msg;
    std::string why;
    auto refused = [&](const std::string &body) {
        why.clear();
        return !nixlUcx::decodeNixlNotif(body, sender, msg, why) && !why.empty();
    };
    EXPECT_TRUE(refused(""));
    EXPECT_TRUE(refused("nixlSerDes"));
    EXPECT_TRUE(refused("NIXLSERDES|" + golden.substr(11)));
    // No "name": the message alone.
    EXPECT_TRUE(refused("nixlSerDes|" + golden.substr(11 + 4 + 8 + 7)));
    // Every truncation of the golden stream.
    for (size_t n = 11; n < golden.size(); ++n) {
        EXPECT_TRUE(refused(golden.substr(0, n))) << n;
    }
    // A name length past the end.
    std::string huge = golden;
    huge[15] = '\xff';
    huge[22] = '\x7f';
    EXPECT_TRUE(refused(huge));
    // An empty sender cannot be told from anyone.
    EXPECT_TRUE(refused(nixlUcx::encodeNixlNotif("", "hi")));
}

TEST(ucxNixlWire, ConnInfoFormsAreToldApart) {
    // A UCP address's first byte carries its version (0 or 1) in the low nibble.
    const std::string addr("\x01\x02\x03\x04\x05\x06", 6);
    EXPECT_FALSE(nixlUcx::isOwnConnInfo(addr));
    nixlUcx::connInfoWire ci;
    ci.addrs.push_back(addr);
    EXPECT_TRUE(nixlUcx::isOwnConnInfo(nixlUcx::encodeConnInfo(ci)));
    std::string out, why;
    EXPECT_TRUE(nixlUcx::decodeNixlConnInfo(addr, out, why)) << why;
    EXPECT_EQ(out, addr);
    EXPECT_FALSE(nixlUcx::decodeNixlConnInfo(addr.substr(0, 2), out, why));
    EXPECT_FALSE(nixlUcx::decodeNixlConnInfo("", out, why));
    EXPECT_FALSE(nixlUcx::decodeNixlConnInfo(std::string("\x0e\x00\x00\x00", 4), out, why));
    EXPECT_FALSE(why.empty());
}

/** UCX error handling both sides use: "none" when UCX_TLS leaves no tcp (peer mode needs it). */
bool
peerModeUsable() {
    const char *tls = std::getenv("UCX_TLS");
    return tls == nullptr || std::string(tls).find("tcp") != std::string::npos ||
        std::string(tls).find("all") != std::string::npos;
}

nixl_b_params_t
engineParams() {
    nixl_b_params_t p;
    p["ucx_error_handling_mode"] = peerModeUsable() ? "peer" : "none";
    return p;
}

nixl_plugin_str_t
pstr(const std::string &s) {
    return {s.data(), s.size()};
}

/** Two engines, each loaded with the other's NIXL forms only. */
class ucxNixlPeer : public ::testing::Test {
protected:
    static constexpr size_t len = 1 << 20;

    void
    SetUp() override {
        ASSERT_EQ(nixlPluginLoader::instance().load(nixl_plugin_kind_t::BACKEND, "UCX", plugin_),
                  NIXL_SUCCESS);
        ASSERT_EQ(nixlBackendEngineProxy::create(
                      plugin_, "target", engineParams(), nixlAgentConfig(), false, a_),
                  NIXL_SUCCESS);
        ASSERT_EQ(nixlBackendEngineProxy::create(
                      plugin_, "initiator", engineParams(), nixlAgentConfig(), false, b_),
                  NIXL_SUCCESS);
        ASSERT_EQ(a_->registerMem(nixlBlobDesc(memA_.addr(), len, 0, ""), DRAM_SEG, mdA_),
                  NIXL_SUCCESS);
        ASSERT_EQ(b_->registerMem(nixlBlobDesc(memB_.addr(), len, 0, ""), DRAM_SEG, mdB_),
                  NIXL_SUCCESS);
        // A's NIXL forms into B, B's into A.
        std::string conn, own, pub;
        ASSERT_EQ(a_->getConnInfoNixl(conn), NIXL_SUCCESS);
        ASSERT_EQ(a_->getConnInfo(own), NIXL_SUCCESS);
        EXPECT_NE(conn, own);
        EXPECT_FALSE(nixlUcx::isOwnConnInfo(conn));
        ASSERT_EQ(b_->loadRemoteConnInfo("target", conn), NIXL_SUCCESS);
        ASSERT_EQ(a_->getPublicDataNixl(mdA_, pub), NIXL_SUCCESS);
        std::string why;
        EXPECT_TRUE(nixlUcx::parsePackedRkey(pub, layout_, why)) << why; // a raw packed key
        ASSERT_EQ(b_->loadRemoteMD(nixlBasicDesc(memA_.addr(), len, 0), pub, DRAM_SEG, "target",
                                   rmdA_),
                  NIXL_SUCCESS);
        ASSERT_EQ(b_->getConnInfoNixl(conn), NIXL_SUCCESS);
        ASSERT_EQ(a_->loadRemoteConnInfo("initiator", conn), NIXL_SUCCESS);
        ASSERT_EQ(b_->getPublicDataNixl(mdB_, pub), NIXL_SUCCESS);
        ASSERT_EQ(a_->loadRemoteMD(nixlBasicDesc(memB_.addr(), len, 0), pub, DRAM_SEG,
                                   "initiator", rmdB_),
                  NIXL_SUCCESS);
    }

    void
    TearDown() override {
        if (b_ && rmdA_ != nullptr) {
            EXPECT_EQ(b_->unloadMD(rmdA_), NIXL_SUCCESS);
        }
        if (a_ && rmdB_ != nullptr) {
            EXPECT_EQ(a_->unloadMD(rmdB_), NIXL_SUCCESS);
        }
        if (a_ && mdA_ != nullptr) {
            EXPECT_EQ(a_->deregisterMem(mdA_), NIXL_SUCCESS);
        }
        if (b_ && mdB_ != nullptr) {
            EXPECT_EQ(b_->deregisterMem(mdB_), NIXL_SUCCESS);
        }
    }

    /**
     * from posts op between its own memory and the peer's, with notification msg; returns the
     * transfer's status once it and the notification are both through.
     */
    nixl_status_t
    transfer(nixlBackendEngineProxy &from,
             nixl_be_md_t *local_md,
             uintptr_t local,
             nixlBackendEngineProxy &to,
             nixl_be_md_t *remote_md,
             uintptr_t remote,
             const std::string &to_name,
             const std::string &from_name,
             nixl_xfer_op_t op,
             const std::string &msg) {
        nixl_be_xfer_desc_t l{local, len, 0, local_md};
        nixl_be_xfer_desc_t r{remote, len, 0, remote_md};
        nixl_be_xfer_list_t ll{NIXL_BE_MEM_DRAM, 0, &l, 1};
        nixl_be_xfer_list_t rl{NIXL_BE_MEM_DRAM, 0, &r, 1};
        nixl_be_opt_args_t opt{};
        opt.size = sizeof(opt);
        opt.has_notif = 1;
        opt.notif = pstr(msg);
        nixl_be_req_t *req = nullptr;
        nixl_status_t st = from.prepXfer(op, ll, rl, to_name, &opt, req);
        if (st != NIXL_SUCCESS) {
            return st;
        }
        st = from.postXfer(op, ll, rl, pstr(to_name), req, &opt);
        nixl_notifs_t got;
        while (st == NIXL_IN_PROG || got[from_name].empty()) {
            if (st < 0) {
                break;
            }
            EXPECT_EQ(to.getNotifs(got), NIXL_SUCCESS); // the target progresses
            if (st == NIXL_IN_PROG) {
                st = from.checkXfer(req);
            }
        }
        from.releaseReq(req);
        if (st == NIXL_SUCCESS) {
            EXPECT_EQ(got.size(), 1u);
            EXPECT_EQ(got[from_name], std::vector<nixl_blob_t>{msg});
        }
        return st;
    }

    std::shared_ptr<const nixlLoadedPlugin> plugin_;
    std::unique_ptr<nixlBackendEngineProxy> a_, b_;
    testMem memA_{len}, memB_{len};
    nixl_be_md_t *mdA_ = nullptr, *mdB_ = nullptr, *rmdA_ = nullptr, *rmdB_ = nullptr;
    nixlUcx::rkeyLayout layout_;
};

TEST_F(ucxNixlPeer, WriteAndReadWithNotifsBothWays) {
    // B writes to A, then reads A back into B; then the same from A's side.
    fillPattern(memB_.data(), len, 3);
    std::memset(memA_.data(), 0, len);
    ASSERT_EQ(transfer(*b_, mdB_, memB_.addr(), *a_, rmdA_, memA_.addr(), "target", "initiator",
                       NIXL_WRITE, "w1"),
              NIXL_SUCCESS);
    EXPECT_EQ(std::memcmp(memA_.data(), memB_.data(), len), 0);
    fillPattern(memA_.data(), len, 5);
    ASSERT_EQ(transfer(*b_, mdB_, memB_.addr(), *a_, rmdA_, memA_.addr(), "target", "initiator",
                       NIXL_READ, "r1"),
              NIXL_SUCCESS);
    EXPECT_EQ(std::memcmp(memA_.data(), memB_.data(), len), 0);

    fillPattern(memA_.data(), len, 7);
    ASSERT_EQ(transfer(*a_, mdA_, memA_.addr(), *b_, rmdB_, memB_.addr(), "initiator", "target",
                       NIXL_WRITE, "w2"),
              NIXL_SUCCESS);
    EXPECT_EQ(std::memcmp(memA_.data(), memB_.data(), len), 0);
    fillPattern(memB_.data(), len, 9);
    ASSERT_EQ(transfer(*a_, mdA_, memA_.addr(), *b_, rmdB_, memB_.addr(), "initiator", "target",
                       NIXL_READ, "r2"),
              NIXL_SUCCESS);
    EXPECT_EQ(std::memcmp(memA_.data(), memB_.data(), len), 0);
}

TEST_F(ucxNixlPeer, GenNotifBothWays) {
    ASSERT_EQ(b_->genNotif("target", "to A"), NIXL_SUCCESS);
    ASSERT_EQ(a_->genNotif("initiator", ""), NIXL_SUCCESS);
    nixl_notifs_t atA, atB;
    while (atA["initiator"].empty() || atB["target"].empty()) {
        ASSERT_EQ(a_->getNotifs(atA), NIXL_SUCCESS);
        ASSERT_EQ(b_->getNotifs(atB), NIXL_SUCCESS);
    }
    EXPECT_EQ(atA["initiator"], std::vector<nixl_blob_t>{"to A"});
    EXPECT_EQ(atB["target"], std::vector<nixl_blob_t>{""});
}

TEST_F(ucxNixlPeer, MalformedFormsAreRefused) {
    // Connection info: too short for a worker address, a version UCX does not know.
    EXPECT_EQ(b_->loadRemoteConnInfo("bad1", std::string("\x00\x01", 2)), NIXL_ERR_MISMATCH);
    EXPECT_EQ(b_->loadRemoteConnInfo("bad2", std::string("\x0f\x00\x00\x00\x00", 5)),
              NIXL_ERR_MISMATCH);
    EXPECT_EQ(b_->loadRemoteConnInfo("bad3", ""), NIXL_ERR_MISMATCH);
    // (An address cut after its header is not tried: without a checksum it reaches UCX, and
    // UCX 1.13 may abort on it, as NIXL would; docs/backends/ucx.md.)
    // Public data of a NIXL peer: truncated, too short, empty, an unknown memory type. (Our
    // own form is not tried: read as a raw key, whether its bytes pass the walk depends on
    // the engine's random nonce, and UCX 1.13 may crash on a key that passes it but is
    // wrong, as NIXL would; docs/backends/ucx.md.)
    std::string pub;
    ASSERT_EQ(a_->getPublicDataNixl(mdA_, pub), NIXL_SUCCESS);
    const nixlBasicDesc d(memA_.addr(), len, 0);
    for (const std::string &bad : {pub.substr(0, pub.size() / 2), pub.substr(0, 8),
                                   std::string(), std::string(pub.size(), '\xff')}) {
        nixl_be_md_t *md = nullptr;
        EXPECT_EQ(b_->loadRemoteMD(d, bad, DRAM_SEG, "target", md), NIXL_ERR_MISMATCH)
            << bad.size();
        EXPECT_EQ(md, nullptr);
    }
    // The good one still loads, and a raw key is refused for a peer of our own form.
    nixl_be_md_t *md = nullptr;
    ASSERT_EQ(b_->loadRemoteMD(d, pub, DRAM_SEG, "target", md), NIXL_SUCCESS);
    EXPECT_EQ(b_->unloadMD(md), NIXL_SUCCESS);
    std::string conn;
    ASSERT_EQ(a_->getConnInfo(conn), NIXL_SUCCESS);
    ASSERT_EQ(b_->loadRemoteConnInfo("targetOwn", conn), NIXL_SUCCESS);
    md = nullptr;
    EXPECT_EQ(b_->loadRemoteMD(d, pub, DRAM_SEG, "targetOwn", md), NIXL_ERR_MISMATCH);
    EXPECT_EQ(b_->disconnect("targetOwn"), NIXL_SUCCESS);
}

/**
 * A peer written from the specification alone: one UCP worker that publishes its raw address,
 * receives active message 0 and sends active message 0 eagerly with no header.
 */
class specPeer {
public:
    specPeer() {
        ucp_params_t p{};
        p.field_mask = UCP_PARAM_FIELD_FEATURES;
        p.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_AM;
        ucp_config_t *cfg = nullptr;
        EXPECT_EQ(ucp_config_read(nullptr, nullptr, &cfg), UCS_OK);
        EXPECT_EQ(ucp_init(&p, cfg, &ctx_), UCS_OK);
        ucp_config_release(cfg);
        ucp_worker_params_t wp{};
        wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
        EXPECT_EQ(ucp_worker_create(ctx_, &wp, &worker_), UCS_OK);
        ucp_address_t *a = nullptr;
        size_t n = 0;
        EXPECT_EQ(ucp_worker_get_address(worker_, &a, &n), UCS_OK);
        addr_.assign(reinterpret_cast<const char *>(a), n);
        ucp_worker_release_address(worker_, a);
        ucp_am_handler_param_t hp{};
        hp.field_mask =
            UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
        hp.id = 0;
        hp.cb = &specPeer::onAm;
        hp.arg = this;
        EXPECT_EQ(ucp_worker_set_am_recv_handler(worker_, &hp), UCS_OK);
    }

    ~specPeer() {
        if (ep_ != nullptr) {
            ucp_request_param_t p{};
            p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            p.flags = UCP_EP_CLOSE_FLAG_FORCE;
            ucs_status_ptr_t sp = ucp_ep_close_nbx(ep_, &p);
            if (UCS_PTR_IS_PTR(sp)) {
                while (ucp_request_check_status(sp) == UCS_INPROGRESS) {
                    ucp_worker_progress(worker_);
                }
                ucp_request_free(sp);
            }
        }
        if (memh_ != nullptr) {
            ucp_mem_unmap(ctx_, memh_);
        }
        ucp_worker_destroy(worker_);
        ucp_cleanup(ctx_);
    }

    const std::string &
    addr() const noexcept {
        return addr_;
    }

    void
    connect(const std::string &remote) {
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
        ep.address = reinterpret_cast<const ucp_address_t *>(remote.data());
        ep.err_mode = peerModeUsable() ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
        ASSERT_EQ(ucp_ep_create(worker_, &ep, &ep_), UCS_OK);
    }

    /** Waits for sp, progressing this worker and other (its notifications go to seen). */
    void
    wait(ucs_status_ptr_t sp, nixlBackendEngineProxy &other, nixl_notifs_t &seen) {
        ASSERT_FALSE(UCS_PTR_IS_ERR(sp)) << ucs_status_string(UCS_PTR_STATUS(sp));
        if (sp == nullptr) {
            return;
        }
        while (ucp_request_check_status(sp) == UCS_INPROGRESS) {
            ucp_worker_progress(worker_);
            ASSERT_EQ(other.getNotifs(seen), NIXL_SUCCESS);
        }
        EXPECT_EQ(ucp_request_check_status(sp), UCS_OK);
        ucp_request_free(sp);
    }

    /**
     * Sends body as NIXL does: AM 0, no header, eager; progresses other (its notifications go
     * to seen) until it went.
     */
    void
    send(const std::string &body, nixlBackendEngineProxy &other, nixl_notifs_t &seen) {
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_AM_SEND_FLAG_EAGER;
        ucs_status_ptr_t sp = ucp_am_send_nbx(ep_, 0, nullptr, 0, body.data(), body.size(), &p);
        ASSERT_FALSE(UCS_PTR_IS_ERR(sp));
        if (sp != nullptr) {
            while (ucp_request_check_status(sp) == UCS_INPROGRESS) {
                ucp_worker_progress(worker_);
                ASSERT_EQ(other.getNotifs(seen), NIXL_SUCCESS);
            }
            EXPECT_EQ(ucp_request_check_status(sp), UCS_OK);
            ucp_request_free(sp);
        }
    }

    void
    progress() {
        ucp_worker_progress(worker_);
    }

    /** Maps mem as NIXL's registerMem does (flags 0) and returns the raw packed key. */
    std::string
    registerMem(testMem &mem) {
        ucp_mem_map_params_t mp{};
        mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
            UCP_MEM_MAP_PARAM_FIELD_FLAGS;
        mp.address = mem.data();
        mp.length = mem.size();
        EXPECT_EQ(ucp_mem_map(ctx_, &mp, &memh_), UCS_OK);
        void *k = nullptr;
        size_t n = 0;
        EXPECT_EQ(ucp_rkey_pack(ctx_, memh_, &k, &n), UCS_OK);
        std::string key(static_cast<const char *>(k), n);
        ucp_rkey_buffer_release(k);
        return key;
    }

    /**
     * What a NIXL initiator does for a WRITE with a notification (section 3.4): ucp_put_nbx
     * with the target's raw key, a flush of the endpoint, then the AM-0 notification.
     */
    void
    writeAndNotify(const void *src,
                   size_t n,
                   uint64_t remote,
                   const std::string &key,
                   const std::string &body,
                   nixlBackendEngineProxy &other,
                   nixl_notifs_t &seen) {
        ucp_rkey_h rkey = nullptr;
        ASSERT_EQ(ucp_ep_rkey_unpack(ep_, key.data(), &rkey), UCS_OK);
        ucp_request_param_t p{};
        wait(ucp_put_nbx(ep_, src, n, remote, rkey, &p), other, seen);
        wait(ucp_ep_flush_nbx(ep_, &p), other, seen);
        ucp_rkey_destroy(rkey);
        send(body, other, seen);
    }

    std::vector<std::string> got;
    size_t headers = 0; ///< messages that came with a header (NIXL's form has none)

private:
    static ucs_status_t
    onAm(void *arg,
         const void *header,
         size_t header_length,
         void *data,
         size_t length,
         const ucp_am_recv_param_t *param) {
        (void)header;
        auto *self = static_cast<specPeer *>(arg);
        EXPECT_EQ(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV, 0u);
        self->headers += header_length != 0 ? 1 : 0;
        self->got.emplace_back(static_cast<const char *>(data), length);
        return UCS_OK;
    }

    ucp_context_h ctx_ = nullptr;
    ucp_worker_h worker_ = nullptr;
    ucp_ep_h ep_ = nullptr;
    ucp_mem_h memh_ = nullptr;
    std::string addr_;
};

TEST_F(ucxNixlPeer, NotifBytesOnTheWireMatchTheSpecification) {
    specPeer peer;
    // A ("target") notifies the spec peer: the body is section 1.4's 44 bytes.
    ASSERT_EQ(a_->loadRemoteConnInfo("spec", peer.addr()), NIXL_SUCCESS);
    ASSERT_EQ(a_->genNotif("spec", "hi"), NIXL_SUCCESS);
    nixl_notifs_t ignored;
    while (peer.got.empty()) {
        peer.progress();
        ASSERT_EQ(a_->getNotifs(ignored), NIXL_SUCCESS);
    }
    EXPECT_EQ(peer.got, std::vector<std::string>{specNotif()});
    EXPECT_EQ(peer.headers, 0u);

    // The spec peer notifies B (which loaded nothing of it): keyed by the name in the body.
    // A body without "name" and one without the magic go first: dropped, and the good one
    // after them (same endpoint, so in order) is the only one delivered.
    std::string conn;
    ASSERT_EQ(b_->getConnInfoNixl(conn), NIXL_SUCCESS);
    peer.connect(conn);
    const std::string golden = specNotif();
    nixl_notifs_t got;
    peer.send("nixlSerDes|" + golden.substr(11 + 4 + 8 + 7), *b_, got);
    peer.send("garbage", *b_, got);
    peer.send(golden, *b_, got);
    while (got.empty()) {
        peer.progress();
        ASSERT_EQ(b_->getNotifs(got), NIXL_SUCCESS);
    }
    EXPECT_EQ(got.size(), 1u);
    EXPECT_EQ(got["target"], std::vector<nixl_blob_t>{"hi"});
    EXPECT_EQ(a_->disconnect("spec"), NIXL_SUCCESS);
}

TEST_F(ucxNixlPeer, TransfersWithAPeerWrittenFromTheSpecification) {
    specPeer peer;
    testMem pm(len);
    const std::string peer_key = peer.registerMem(pm);
    // The engine (A, "target") loads the spec peer's address and raw key, as from a NIXL blob.
    ASSERT_EQ(a_->loadRemoteConnInfo("spec", peer.addr()), NIXL_SUCCESS);
    nixl_be_md_t *rmd = nullptr;
    ASSERT_EQ(a_->loadRemoteMD(nixlBasicDesc(pm.addr(), len, 0), peer_key, DRAM_SEG, "spec", rmd),
              NIXL_SUCCESS);
    std::string conn;
    ASSERT_EQ(a_->getConnInfoNixl(conn), NIXL_SUCCESS);
    peer.connect(conn);

    // A writes into the peer with a notification: the AM-0 body arrives after the data.
    fillPattern(memA_.data(), len, 11);
    std::memset(pm.data(), 0, len);
    nixl_be_xfer_desc_t l{memA_.addr(), len, 0, mdA_};
    nixl_be_xfer_desc_t r{pm.addr(), len, 0, rmd};
    nixl_be_xfer_list_t ll{NIXL_BE_MEM_DRAM, 0, &l, 1};
    nixl_be_xfer_list_t rl{NIXL_BE_MEM_DRAM, 0, &r, 1};
    const std::string msg = "hi";
    nixl_be_opt_args_t opt{};
    opt.size = sizeof(opt);
    opt.has_notif = 1;
    opt.notif = pstr(msg);
    for (nixl_xfer_op_t op : {NIXL_WRITE, NIXL_READ}) {
        if (op == NIXL_READ) {
            fillPattern(pm.data(), len, 13);
        }
        peer.got.clear();
        nixl_be_req_t *req = nullptr;
        ASSERT_EQ(a_->prepXfer(op, ll, rl, "spec", &opt, req), NIXL_SUCCESS);
        nixl_status_t st = a_->postXfer(op, ll, rl, pstr("spec"), req, &opt);
        while (st == NIXL_IN_PROG || peer.got.empty()) {
            ASSERT_GE(st, 0);
            peer.progress();
            if (st == NIXL_IN_PROG) {
                st = a_->checkXfer(req);
            }
        }
        EXPECT_EQ(st, NIXL_SUCCESS);
        a_->releaseReq(req);
        EXPECT_EQ(std::memcmp(memA_.data(), pm.data(), len), 0) << op;
        EXPECT_EQ(peer.got, std::vector<std::string>{specNotif()}) << op;
    }

    // The peer writes into A with A's raw key, flushes, notifies: A sees data and message.
    std::string a_key;
    ASSERT_EQ(a_->getPublicDataNixl(mdA_, a_key), NIXL_SUCCESS);
    fillPattern(pm.data(), len, 17);
    nixl_notifs_t got;
    peer.writeAndNotify(pm.data(), len, memA_.addr(), a_key,
                        nixlUcx::encodeNixlNotif("spec", "written"), *a_, got);
    while (got.empty()) {
        peer.progress();
        ASSERT_EQ(a_->getNotifs(got), NIXL_SUCCESS);
    }
    EXPECT_EQ(got["spec"], std::vector<nixl_blob_t>{"written"});
    EXPECT_EQ(std::memcmp(memA_.data(), pm.data(), len), 0);
    EXPECT_EQ(a_->unloadMD(rmd), NIXL_SUCCESS);
    EXPECT_EQ(a_->disconnect("spec"), NIXL_SUCCESS);
}

} // namespace
