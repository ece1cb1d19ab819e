/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Rails: opening a provider (fabric, domain, address vector, completion queue, endpoint), its
// receive buffers, and closing it.

#include "lf_backend.h"

#include <cerrno>
#include <cstring>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

namespace nixlLf {

bool
lfEngine::openRail(const std::string &prov, std::string &why) {
    auto r = std::make_unique<lfRail>();
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
    hints->fabric_attr->prov_name = strdup(prov.c_str());
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    int rc = -FI_ENODATA;
    if (prov == "shm" && cfg_.fastRma) {
        // shm's initiator-only RMA needs FI_MR_VIRT_ADDR and no ordering that involves RMA.
        // No SAW is needed: every operation is either delivery-complete (the data is in the
        // target before the notification is posted) or a fast one, whose data is copied before
        // its completion (and so, again, before the notification).
        hints->tx_attr->msg_order = FI_ORDER_SAS;
        rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &r->info);
        if (rc == 0 &&
            ((r->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) == 0 ||
             (r->info->tx_attr->op_flags & FI_DELIVERY_COMPLETE) == 0 ||
             (r->info->tx_attr->msg_order & FI_ORDER_SAS) == 0)) {
            fi_freeinfo(r->info); // not what fast RMA needs: the rail as before
            r->info = nullptr;
            rc = -FI_ENODATA;
        } else if (rc == 0) {
            r->fastRma = true;
        }
    }
    if (rc != 0) {
        // Fragments of one notification must arrive in order (SAS); a send after writes stays
        // behind them (SAW), which backs the completion-ordered notification. tcp;ofi_rxm has
        // no SAR; a READ's notification waits for the read's completion at the initiator.
        hints->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_SAW;
        rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &r->info);
    }
    if (rc != 0) {
        // Without delivery-complete the notification still waits for the initiator's
        // completions; the ordering above keeps it behind the data.
        hints->tx_attr->op_flags = 0;
        rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &r->info);
    }
    fi_freeinfo(hints);
    if (rc != 0) {
        why = "fi_getinfo: " + fiErr(rc);
        return false;
    }
    r->prov = r->info->fabric_attr->prov_name;
    r->index = rails_.size();
    const uint64_t mm = static_cast<uint64_t>(r->info->domain_attr->mr_mode);
    r->virtAddr = (mm & (FI_MR_VIRT_ADDR | FI_MR_BASIC)) != 0;
    r->provKey = (mm & (FI_MR_PROV_KEY | FI_MR_BASIC)) != 0;
    r->localDesc = (mm & FI_MR_LOCAL) != 0;
    r->delivery = (r->info->tx_attr->op_flags & FI_DELIVERY_COMPLETE) != 0;
    r->fragSize = cfg_.notifFrag;

    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_DATA;
    cq_attr.wait_obj = FI_WAIT_NONE;
    cq_attr.size = 0;
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    if ((rc = fi_fabric(r->info->fabric_attr, &r->fabric, nullptr)) != 0) {
        why = "fi_fabric: " + fiErr(rc);
    } else if ((rc = fi_domain(r->fabric, r->info, &r->domain, nullptr)) != 0) {
        why = "fi_domain: " + fiErr(rc);
    } else if ((rc = openCq(*r, cq_attr)) != 0) {
        why = "fi_cq_open: " + fiErr(rc);
    } else if ((rc = fi_av_open(r->domain, &av_attr, &r->av, nullptr)) != 0) {
        why = "fi_av_open: " + fiErr(rc);
    } else if ((rc = fi_endpoint(r->domain, r->info, &r->ep, nullptr)) != 0) {
        why = "fi_endpoint: " + fiErr(rc);
    } else if ((rc = fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV)) != 0) {
        why = "fi_ep_bind(cq): " + fiErr(rc);
    } else if ((rc = fi_ep_bind(r->ep, &r->av->fid, 0)) != 0) {
        why = "fi_ep_bind(av): " + fiErr(rc);
    } else if ((rc = fi_enable(r->ep)) != 0) {
        why = "fi_enable: " + fiErr(rc);
    } else {
        char name[max_ep_addr];
        size_t len = sizeof(name);
        if ((rc = fi_getname(&r->ep->fid, name, &len)) != 0) {
            why = "fi_getname: " + fiErr(rc);
        } else {
            r->addr.assign(name, len);
        }
    }
    if (rc == 0) {
        std::lock_guard<std::mutex> g(r->mu);
        for (size_t i = 0; i < cfg_.recvBufs && rc == 0; ++i) {
            auto rc_ctx = std::make_unique<recvCtx>();
            rc_ctx->kind = opCtx::RECV;
            rc_ctx->buf.resize(r->fragSize);
            rc = static_cast<int>(fi_recv(r->ep, rc_ctx->buf.data(), rc_ctx->buf.size(), nullptr,
                                          FI_ADDR_UNSPEC, &rc_ctx->fctx));
            if (rc != 0) {
                why = "fi_recv: " + fiErr(rc);
            }
            r->recvs.push_back(std::move(rc_ctx));
        }
    }
    if (rc != 0) {
        closeRail(*r);
        return false;
    }
    NIXL_SDK_DEBUG("agent " << localAgent << ": LIBFABRIC provider " << r->prov << " open (domain "
                            << r->info->domain_attr->name << ", mr_mode 0x" << std::hex << mm
                            << std::dec << ", remote addresses are "
                            << (r->virtAddr ? "virtual" : "offsets") << ", delivery-complete "
                            << (r->delivery ? "yes" : "no") << ", fast RMA "
                            << (r->fastRma ? "possible" : "no") << ")");
    rails_.push_back(std::move(r));
    return true;
}

int
lfEngine::openCq(lfRail &r, fi_cq_attr &attr) const {
    if (progThread_) {
        // A wait fd lets the progress thread sleep until the provider has something for it
        // (tcp;ofi_rxm: a socket became readable) instead of waking every pthrDelay.
        attr.wait_obj = FI_WAIT_FD;
        if (fi_cq_open(r.domain, &attr, &r.cq, nullptr) == 0) {
            int fd = -1;
            const int rc = fi_control(&r.cq->fid, FI_GETWAIT, &fd);
            if (rc == 0 && fd >= 0) {
                r.waitFd = fd;
                return 0;
            }
            NIXL_SDK_DEBUG("agent " << localAgent << ": LIBFABRIC " << r.prov
                                    << ": no wait fd from the completion queue ("
                                    << fiErr(rc) << "); polled every pthrDelay");
            fi_close(&r.cq->fid);
            r.cq = nullptr;
        }
        // shm 1.17: FI_WAIT_FD is not implemented. Such a rail is polled.
    }
    attr.wait_obj = FI_WAIT_NONE;
    return fi_cq_open(r.domain, &attr, &r.cq, nullptr);
}

void
lfEngine::closeRail(lfRail &r) {
    // The endpoint goes first: after it is closed no completion names our contexts any more.
    if (r.ep != nullptr) {
        fi_close(&r.ep->fid);
    }
    if (r.av != nullptr) {
        fi_close(&r.av->fid);
    }
    if (r.cq != nullptr) {
        fi_close(&r.cq->fid);
    }
    if (r.domain != nullptr) {
        fi_close(&r.domain->fid);
    }
    if (r.fabric != nullptr) {
        fi_close(&r.fabric->fid);
    }
    if (r.info != nullptr) {
        fi_freeinfo(r.info);
    }
    r.ep = nullptr;
    r.av = nullptr;
    r.cq = nullptr;
    r.waitFd = -1; // closed with the queue
    r.domain = nullptr;
    r.fabric = nullptr;
    r.info = nullptr;
    // Whatever is left was never sent; genNotif reported its messages sent, so they are
    // counted (the destructor says how many).
    for (sendCtx *s : r.sends) {
        sendDone(*s, true);
        delete s;
    }
    r.sends.clear();
    r.recvs.clear();
}

void
lfEngine::repost(lfRail &r, recvCtx *rc) const {
    for (;;) {
        ssize_t rc2 = fi_recv(r.ep, rc->buf.data(), rc->buf.size(), nullptr, FI_ADDR_UNSPEC,
                              &rc->fctx);
        if (rc2 != -FI_EAGAIN) {
            if (rc2 != 0) {
                NIXL_SDK_ERROR_LIMITED("agent " << localAgent << ": LIBFABRIC " << r.prov
                                        << ": fi_recv: " << fiErr(static_cast<int>(rc2)));
            }
            return;
        }
        // The receive queue is full of completed entries not yet read: a plain read makes room
        // (not progressLocked, which could re-enter here).
        fi_cq_data_entry e;
        if (fi_cq_read(r.cq, &e, 1) == 1) {
            onCompletion(r, static_cast<opCtx *>(e.op_context), 0, e.len);
        }
    }
}

} // namespace nixlLf
