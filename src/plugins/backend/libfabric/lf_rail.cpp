/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Rails: opening a provider (fabric, domain, address vector, completion queue, endpoint) with
// its receive buffers, and closing it; reposting a receive buffer; registrations and peer
// addresses in its domain (lfRail).

#include "lf_rail.h"

#include "lf_xfer.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

namespace nixlLf {

bool
lfRail::open(const lfRailHost &host,
             const std::string &agent,
             const std::string &provName,
             size_t railIndex,
             const lfRailOptions &opts,
             std::string &why) {
    host_ = &host;
    agent_ = agent;
    splitBatch_ = opts.splitBatch;
    faultHoldMark_ = opts.faultHoldMark;
    nonce_ = opts.nonce;
    fi_info *hints = fi_allocinfo();
    if (hints == nullptr) {
        why = "fi_allocinfo failed";
        return false;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    // Ask for every mode we can serve; what the provider returns is what we then follow.
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->fabric_attr->prov_name = strdup(provName.c_str());
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    int rc = -FI_ENODATA;
    if (provName == "shm" && opts.fastRma) {
        // shm's initiator-only RMA needs FI_MR_VIRT_ADDR and no ordering that involves RMA.
        // No SAW is needed: every operation is either delivery-complete (the data is in the
        // target before the notification is posted) or a fast one, whose data is copied before
        // its completion (and so, again, before the notification).
        hints->tx_attr->msg_order = FI_ORDER_SAS;
        rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info);
        if (rc == 0 &&
            ((info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) == 0 ||
             (info->tx_attr->op_flags & FI_DELIVERY_COMPLETE) == 0 ||
             (info->tx_attr->msg_order & FI_ORDER_SAS) == 0)) {
            fi_freeinfo(info); // not what fast RMA needs: the rail as before
            info = nullptr;
            rc = -FI_ENODATA;
        } else if (rc == 0) {
            fastRma = true;
        }
    }
    if (rc != 0) {
        // Fragments of one notification must arrive in order (SAS); a send after writes stays
        // behind them (SAW), which backs the completion-ordered notification. tcp;ofi_rxm has
        // no SAR; a READ's notification waits for the read's completion at the initiator.
        hints->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_SAW;
        rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info);
    }
    if (rc != 0) {
        // Without delivery-complete the notification still waits for the initiator's
        // completions; the ordering above keeps it behind the data.
        hints->tx_attr->op_flags = 0;
        rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info);
    }
    fi_freeinfo(hints);
    if (rc != 0) {
        why = "fi_getinfo: " + fiErr(rc);
        return false;
    }
    prov = info->fabric_attr->prov_name;
    index = railIndex;
    const uint64_t mm = static_cast<uint64_t>(info->domain_attr->mr_mode);
    virtAddr = (mm & (FI_MR_VIRT_ADDR | FI_MR_BASIC)) != 0;
    provKey = (mm & (FI_MR_PROV_KEY | FI_MR_BASIC)) != 0;
    localDesc = (mm & FI_MR_LOCAL) != 0;
    delivery = (info->tx_attr->op_flags & FI_DELIVERY_COMPLETE) != 0;
    fragSize = opts.fragSize;

    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_DATA;
    cq_attr.wait_obj = FI_WAIT_NONE;
    cq_attr.size = 0;
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    if ((rc = fi_fabric(info->fabric_attr, &fabric, nullptr)) != 0) {
        why = "fi_fabric: " + fiErr(rc);
    } else if ((rc = fi_domain(fabric, info, &domain, nullptr)) != 0) {
        why = "fi_domain: " + fiErr(rc);
    } else if ((rc = openCq(agent, opts.waitFd, cq_attr)) != 0) {
        why = "fi_cq_open: " + fiErr(rc);
    } else if ((rc = fi_av_open(domain, &av_attr, &av, nullptr)) != 0) {
        why = "fi_av_open: " + fiErr(rc);
    } else if ((rc = fi_endpoint(domain, info, &ep, nullptr)) != 0) {
        why = "fi_endpoint: " + fiErr(rc);
    } else if ((rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) != 0) {
        why = "fi_ep_bind(cq): " + fiErr(rc);
    } else if ((rc = fi_ep_bind(ep, &av->fid, 0)) != 0) {
        why = "fi_ep_bind(av): " + fiErr(rc);
    } else if ((rc = fi_enable(ep)) != 0) {
        why = "fi_enable: " + fiErr(rc);
    } else {
        char name[max_ep_addr];
        size_t len = sizeof(name);
        if ((rc = fi_getname(&ep->fid, name, &len)) != 0) {
            why = "fi_getname: " + fiErr(rc);
        } else {
            addr.assign(name, len);
        }
    }
    if (rc == 0) {
        std::lock_guard<std::mutex> g(mu_);
        for (size_t i = 0; i < opts.recvBufs && rc == 0; ++i) {
            auto rc_ctx = std::make_unique<recvCtx>();
            rc_ctx->kind = opCtx::RECV;
            rc_ctx->buf.resize(fragSize);
            rc = static_cast<int>(fi_recv(ep, rc_ctx->buf.data(), rc_ctx->buf.size(), nullptr,
                                          FI_ADDR_UNSPEC, &rc_ctx->fctx));
            if (rc != 0) {
                why = "fi_recv: " + fiErr(rc);
            }
            recvs_.push_back(std::move(rc_ctx));
        }
    }
    if (rc != 0) {
        close(); // nothing was sent yet: no contexts come back
        return false;
    }
    NIXL_SDK_DEBUG("agent " << agent << ": LIBFABRIC provider " << prov << " open (domain "
                            << info->domain_attr->name << ", mr_mode 0x" << std::hex << mm
                            << std::dec << ", remote addresses are "
                            << (virtAddr ? "virtual" : "offsets") << ", delivery-complete "
                            << (delivery ? "yes" : "no") << ", fast RMA "
                            << (fastRma ? "possible" : "no") << ")");
    return true;
}

int
lfRail::openCq(const std::string &agent, bool wantWaitFd, fi_cq_attr &attr) {
    if (wantWaitFd) {
        // A wait fd lets the progress thread sleep until the provider has something for it
        // (tcp;ofi_rxm: a socket became readable) instead of waking every pthrDelay.
        attr.wait_obj = FI_WAIT_FD;
        if (fi_cq_open(domain, &attr, &cq, nullptr) == 0) {
            int fd = -1;
            const int rc = fi_control(&cq->fid, FI_GETWAIT, &fd);
            if (rc == 0 && fd >= 0) {
                waitFd = fd;
                return 0;
            }
            NIXL_SDK_DEBUG("agent " << agent << ": LIBFABRIC " << prov
                                    << ": no wait fd from the completion queue ("
                                    << fiErr(rc) << "); polled every pthrDelay");
            fi_close(&cq->fid);
            cq = nullptr;
        }
        // shm 1.17: FI_WAIT_FD is not implemented. Such a rail is polled.
    }
    attr.wait_obj = FI_WAIT_NONE;
    return fi_cq_open(domain, &attr, &cq, nullptr);
}

void
lfRail::close() {
    // The endpoint goes first: after it is closed no completion names our contexts any more.
    if (ep != nullptr) {
        fi_close(&ep->fid);
    }
    if (av != nullptr) {
        fi_close(&av->fid);
    }
    if (cq != nullptr) {
        fi_close(&cq->fid);
    }
    if (domain != nullptr) {
        fi_close(&domain->fid);
    }
    if (fabric != nullptr) {
        fi_close(&fabric->fid);
    }
    if (info != nullptr) {
        fi_freeinfo(info);
    }
    ep = nullptr;
    av = nullptr;
    cq = nullptr;
    waitFd = -1; // closed with the queue
    domain = nullptr;
    fabric = nullptr;
    info = nullptr;
    recvs_.clear();
    sendBacklog_.clear(); // its entries are in sends_ too
    // Whatever is left was never sent; genNotif reported its messages sent, so they are
    // counted lost (the engine says so when it goes).
    for (sendCtx *s : std::exchange(sends_, {})) {
        sendDone(*s, true);
        delete s;
    }
}

int
lfRail::registerMr(void *buf, size_t len, uint64_t key, fid_mr **mr) {
    std::lock_guard<std::mutex> g(mu_);
    return fi_mr_reg(domain, buf, len,
                     FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_SEND | FI_RECV, 0,
                     key, 0, mr, nullptr);
}

void
lfRail::closeMr(fid_mr *mr) {
    std::lock_guard<std::mutex> g(mu_);
    fi_close(&mr->fid);
}

int
lfRail::insertAddr(const std::string &name, fi_addr_t *out) {
    std::lock_guard<std::mutex> g(mu_);
    return fi_av_insert(av, name.data(), 1, out, 0, nullptr);
}

void
lfRail::repostLocked(recvCtx *rc) {
    for (;;) {
        ssize_t rc2 = fi_recv(ep, rc->buf.data(), rc->buf.size(), nullptr, FI_ADDR_UNSPEC,
                              &rc->fctx);
        if (rc2 != -FI_EAGAIN) {
            if (rc2 != 0) {
                NIXL_SDK_ERROR_LIMITED("agent " << agent_ << ": LIBFABRIC " << prov
                                        << ": fi_recv: " << fiErr(static_cast<int>(rc2)));
            }
            return;
        }
        // The receive queue is full of completed entries not yet read: a plain read makes room
        // (not progressLocked, which could re-enter here).
        fi_cq_data_entry e;
        if (fi_cq_read(cq, &e, 1) == 1) {
            onCompletionLocked(static_cast<opCtx *>(e.op_context), 0, e.len);
        }
    }
}

} // namespace nixlLf
