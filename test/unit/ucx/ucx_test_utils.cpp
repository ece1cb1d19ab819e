/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "ucx_test_utils.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <poll.h>
#include <sstream>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace nixl_ucx_test {

testMem::testMem(size_t len) : len_(len) {
    void *p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        throw std::bad_alloc();
    }
    p_ = static_cast<uint8_t *>(p);
}

testMem::~testMem() {
    unmap();
}

void
testMem::unmap() {
    if (p_ != nullptr) {
        ::munmap(p_, len_);
        p_ = nullptr;
    }
}

bool
cmaInTls() {
    const char *tls = std::getenv("UCX_TLS");
    if (tls == nullptr || *tls == '\0') {
        return true;
    }
    std::string t(tls);
    const bool exclude = t[0] == '^';
    bool named = false;
    for (const char *item : {"all", "sm", "shm", "cma"}) {
        std::string s = "," + t.substr(exclude ? 1 : 0) + ",";
        named = named || s.find("," + std::string(item) + ",") != std::string::npos;
    }
    return exclude ? !named : named;
}

std::string
tlsWithoutCma() {
    const char *env = std::getenv("UCX_TLS");
    std::string tls = env != nullptr ? env : "";
    if (tls.empty() || tls == "all") {
        return "^cma";
    }
    if (tls[0] == '^') {
        return tls + ",cma";
    }
    std::string out;
    size_t pos = 0;
    while (pos <= tls.size()) {
        size_t comma = tls.find(',', pos);
        if (comma == std::string::npos) {
            comma = tls.size();
        }
        std::string item = tls.substr(pos, comma - pos);
        pos = comma + 1;
        if (item == "sm" || item == "shm") {
            item = "sysv,posix";
        } else if (item == "all") {
            item = "sysv,posix,tcp,self";
        }
        if (item.empty() || item == "cma") {
            continue;
        }
        out += (out.empty() ? "" : ",") + item;
    }
    return out;
}

std::string
encodeParams(const nixl_b_params_t &params) {
    std::string out;
    for (const auto &[k, v] : params) {
        if (!out.empty()) {
            out += ';';
        }
        out += k + "=" + v;
    }
    return out;
}

nixl_b_params_t
decodeParams(const std::string &s) {
    nixl_b_params_t out;
    size_t pos = 0;
    while (pos < s.size()) {
        size_t semi = s.find(';', pos);
        std::string item = s.substr(pos, semi == std::string::npos ? std::string::npos :
                                                                    semi - pos);
        pos = semi == std::string::npos ? s.size() : semi + 1;
        size_t eq = item.find('=');
        if (eq != std::string::npos) {
            out[item.substr(0, eq)] = item.substr(eq + 1);
        }
    }
    return out;
}

std::unique_ptr<ucxAgent>
ucxAgent::make(const std::string &name, const ucxSetup &setup, nixl_status_t *st) {
    auto a = std::make_unique<ucxAgent>();
    a->name = name;
    nixlAgentConfig cfg(setup.progThread,
                        false,
                        default_comm_port,
                        setup.sync,
                        1,
                        setup.pthrDelayUs);
    a->agent = std::make_unique<nixlAgent>(name, cfg);
    nixl_status_t s = a->agent->createBackend("UCX", setup.params, a->backend);
    if (st != nullptr) {
        *st = s;
    }
    if (s != NIXL_SUCCESS) {
        return nullptr;
    }
    return a;
}

nixl_status_t
ucxAgent::registerDram(uintptr_t addr, size_t len) {
    nixl_reg_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBlobDesc(addr, len, 0, ""));
    return agent->registerMem(l);
}

nixl_status_t
ucxAgent::deregisterDram(uintptr_t addr, size_t len) {
    nixl_reg_dlist_t l(DRAM_SEG);
    l.addDesc(nixlBlobDesc(addr, len, 0, ""));
    return agent->deregisterMem(l);
}

std::string
ucxAgent::md() const {
    std::string blob;
    agent->getLocalMD(blob);
    return blob;
}

// ---------------------------------------------------------------------------------------------
// Parent side

peerProcess::~peerProcess() {
    if (pid_ > 0) {
        if (fd_ >= 0) {
            sendFrame(fd_, "exit");
        }
        // Give it the chance to exit cleanly, then make sure.
        std::string reply;
        if (fd_ < 0 || !recvFrame(fd_, reply, nullptr, std::chrono::seconds(20))) {
            ::kill(pid_, SIGKILL);
        }
        wait();
    }
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

bool
peerProcess::start(const peerConfig &cfg, std::string &err) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        err = std::string("socketpair: ") + std::strerror(errno);
        return false;
    }
    std::ostringstream c;
    c << "name=" << cfg.name << "|size=" << cfg.bufSize << "|pt=" << (cfg.setup.progThread ? 1 : 0)
      << "|delay=" << cfg.setup.pthrDelayUs << "|idle=" << (cfg.pollWhileIdle ? "poll" : "block")
      << "|pace=" << cfg.pollPaceUs << "|params=" << encodeParams(cfg.setup.params);
    const std::string cfg_str = c.str();
    const std::string fd_str = std::to_string(sv[1]);
    pid_t pid = ::fork();
    if (pid < 0) {
        err = std::string("fork: ") + std::strerror(errno);
        ::close(sv[0]);
        ::close(sv[1]);
        return false;
    }
    if (pid == 0) {
        // Child: keep sv[1] across exec, set the environment, become a fresh process.
        ::fcntl(sv[1], F_SETFD, 0);
        for (const auto &[k, v] : cfg.env) {
            if (v.empty()) {
                ::unsetenv(k.c_str());
            } else {
                ::setenv(k.c_str(), v.c_str(), 1);
            }
        }
        const char *argv[] = {"ucx_test", "--ucx-peer", fd_str.c_str(), cfg_str.c_str(), nullptr};
        ::execv("/proc/self/exe", const_cast<char *const *>(argv));
        ::_exit(127);
    }
    ::close(sv[1]);
    pid_ = pid;
    fd_ = sv[0];
    name_ = cfg.name;
    std::string hello;
    if (!recvFrame(fd_, hello) || hello.rfind("ok ", 0) != 0) {
        err = "peer " + cfg.name + " did not start: '" + hello + "'";
        return false;
    }
    std::istringstream in(hello.substr(3));
    in >> bufAddr_ >> bufSize_;
    if (!recvFrame(fd_, md_)) {
        err = "peer " + cfg.name + " sent no metadata";
        return false;
    }
    return true;
}

std::string
peerProcess::cmd(const std::string &line, const std::string *blob) {
    if (!sendFrame(fd_, line) || (blob != nullptr && !sendFrame(fd_, *blob))) {
        return "";
    }
    std::string reply;
    if (!recvFrame(fd_, reply)) {
        return "";
    }
    return reply;
}

std::string
peerProcess::cmdWhile(const std::string &line, const std::function<void()> &poll) {
    std::atomic<bool> done{false};
    std::string reply;
    std::thread t([&] {
        reply = cmd(line);
        done.store(true);
    });
    waitFor([&] {
        poll();
        return done.load();
    });
    t.join();
    return reply;
}

bool
peerProcess::loadMD(const std::string &md) {
    return cmd("load", &md).rfind("ok", 0) == 0;
}

void
peerProcess::kill() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
    }
}

int
peerProcess::wait() {
    if (pid_ <= 0) {
        return -1;
    }
    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    pid_ = -1;
    return r < 0 ? -1 : status;
}

// ---------------------------------------------------------------------------------------------
// Child side

namespace {

    struct expectation {
        std::string sender;
        std::string msg;
        bool check = false;
        uint32_t seed = 0;
        size_t off = 0;
        size_t len = 0;
        std::string result; ///< "" until the notification arrived
    };

    class peerState {
    public:
        std::unique_ptr<ucxAgent> a;
        std::unique_ptr<testMem> buf;
        nixl_notifs_t seen; ///< every notification received, by sender
        std::map<std::string, size_t> consumed;
        std::vector<expectation> expects;
        std::string remoteName;
        nixlXferReqH *pending = nullptr; ///< a request "post" left running
        uint32_t paceUs = 0;

        /** getNotifs once; resolves expectations the moment their notification shows up. */
        void
        pollNotifs() {
            nixl_notifs_t fresh;
            a->agent->getNotifs(fresh);
            if (paceUs != 0) {
                std::this_thread::sleep_for(std::chrono::microseconds(paceUs));
            }
            for (auto &[sender, msgs] : fresh) {
                for (auto &m : msgs) {
                    for (auto &e : expects) {
                        if (e.result.empty() && e.sender == sender && e.msg == m) {
                            if (!e.check) {
                                e.result = "ok";
                            } else {
                                long long at =
                                    firstMismatch(buf->data() + e.off, e.len, e.seed);
                                e.result = at < 0 ? "ok" : "bad " + std::to_string(at);
                            }
                            break;
                        }
                    }
                    seen[sender].push_back(std::move(m));
                }
            }
        }
    };

    std::map<std::string, std::string>
    parseCfg(const std::string &s) {
        std::map<std::string, std::string> out;
        size_t pos = 0;
        while (pos < s.size()) {
            size_t bar = s.find('|', pos);
            std::string item =
                s.substr(pos, bar == std::string::npos ? std::string::npos : bar - pos);
            pos = bar == std::string::npos ? s.size() : bar + 1;
            size_t eq = item.find('=');
            if (eq != std::string::npos) {
                out[item.substr(0, eq)] = item.substr(eq + 1);
            }
        }
        return out;
    }

    std::string
    handle(peerState &s, int fd, const std::string &line, bool &exit_now) {
        std::istringstream in(line);
        std::string op;
        in >> op;
        if (op == "exit") {
            exit_now = true;
            return "bye";
        }
        if (op == "die") {
            // An abrupt exit (no destructor, no reply): a peer process that crashes.
            std::_Exit(0);
        }
        if (op == "connect") {
            // connect <remote>: makeConnection, which starts UCX's wireup towards it now.
            std::string remote;
            in >> remote;
            nixl_status_t st = s.a->agent->makeConnection(remote);
            return st == NIXL_SUCCESS ? "ok" : "err " + std::to_string(st);
        }
        if (op == "load") {
            std::string blob;
            if (!recvFrame(fd, blob)) {
                exit_now = true;
                return "err frame";
            }
            std::string name;
            nixl_status_t st = s.a->agent->loadRemoteMD(blob, name);
            s.remoteName = name;
            return st == NIXL_SUCCESS ? "ok " + name : "err " + std::to_string(st);
        }
        if (op == "fill" || op == "check") {
            uint32_t seed = 0;
            size_t off = 0;
            size_t len = 0;
            in >> seed >> off >> len;
            if (off + len > s.buf->size()) {
                return "err range";
            }
            if (op == "fill") {
                fillPattern(s.buf->data() + off, len, seed);
                return "ok";
            }
            long long at = firstMismatch(s.buf->data() + off, len, seed);
            return at < 0 ? "ok" : "bad " + std::to_string(at);
        }
        if (op == "expect") {
            // expect <sender> <msg> [<seed> <off> <len>]: check the data the moment msg comes.
            expectation e;
            in >> e.sender >> e.msg;
            if (in >> e.seed >> e.off >> e.len) {
                e.check = true;
            }
            // It may have arrived while idle; then it is checked now.
            auto it = s.seen.find(e.sender);
            if (it != s.seen.end()) {
                for (const auto &m : it->second) {
                    if (m == e.msg) {
                        return "err already";
                    }
                }
            }
            s.expects.push_back(e);
            return "ok";
        }
        if (op == "await") {
            std::string msg;
            in >> msg;
            std::string result;
            bool found = waitFor([&] {
                s.pollNotifs();
                for (auto it = s.expects.begin(); it != s.expects.end(); ++it) {
                    if (it->msg == msg && !it->result.empty()) {
                        result = it->result;
                        s.expects.erase(it);
                        return true;
                    }
                }
                return false;
            });
            return found ? result : "timeout";
        }
        if (op == "awaitpattern") {
            // awaitpattern <sender> <len> <seed>: a large notification of pattern bytes.
            std::string sender;
            size_t len = 0;
            uint32_t seed = 0;
            in >> sender >> len >> seed;
            const std::string want = patternString(len, seed);
            bool found = waitFor([&] {
                s.pollNotifs();
                auto it = s.seen.find(sender);
                if (it == s.seen.end()) {
                    return false;
                }
                for (auto m = it->second.begin(); m != it->second.end(); ++m) {
                    if (*m == want) {
                        it->second.erase(m);
                        return true;
                    }
                }
                return false;
            });
            return found ? "ok" : "timeout";
        }
        if (op == "count") {
            // count <sender> <msg>: "ok <n>", how many times msg came from sender so far.
            std::string sender;
            std::string msg;
            in >> sender >> msg;
            s.pollNotifs();
            auto it = s.seen.find(sender);
            const size_t n = it == s.seen.end() ? 0 :
                static_cast<size_t>(std::count(it->second.begin(), it->second.end(), msg));
            return "ok " + std::to_string(n);
        }
        if (op == "gennotif") {
            std::string remote;
            std::string msg;
            in >> remote >> msg;
            nixl_status_t st = s.a->agent->genNotif(remote, msg);
            return st == NIXL_SUCCESS ? "ok" : "err " + std::to_string(st);
        }
        if (op == "xfer") {
            // xfer <READ|WRITE> <remote> <local off> <remote addr> <len> <notif|->
            std::string kind;
            std::string remote;
            size_t loff = 0;
            uintptr_t raddr = 0;
            size_t len = 0;
            std::string notif;
            in >> kind >> remote >> loff >> raddr >> len >> notif;
            nixl_xfer_dlist_t l = xferList({{s.buf->addr() + loff, len}});
            nixl_xfer_dlist_t r = xferList({{raddr, len}});
            nixl_opt_args_t extra;
            if (notif != "-") {
                extra.notif = notif;
            }
            nixlXferReqH *req = nullptr;
            nixl_status_t st = s.a->agent->createXferReq(
                kind == "READ" ? NIXL_READ : NIXL_WRITE, l, r, remote, req, &extra);
            if (st != NIXL_SUCCESS) {
                return "err " + std::to_string(st);
            }
            st = runXfer(*s.a->agent, req, [&] { s.pollNotifs(); });
            s.a->agent->releaseXferReq(req);
            return st == NIXL_SUCCESS ? "ok" : "err " + std::to_string(st);
        }
        if (op == "dereg") {
            nixl_status_t st = s.a->deregisterDram(s.buf->addr(), s.buf->size());
            return st == NIXL_SUCCESS ? "ok" : "err " + std::to_string(st);
        }
        if (op == "post") {
            // post <READ|WRITE> <remote> <local off> <remote addr> <len>: posts and returns
            // the post's status at once ("ok <status>"); "status"/"release" follow it up.
            std::string kind;
            std::string remote;
            size_t loff = 0;
            uintptr_t raddr = 0;
            size_t len = 0;
            in >> kind >> remote >> loff >> raddr >> len;
            nixl_status_t st = s.a->agent->createXferReq(
                kind == "READ" ? NIXL_READ : NIXL_WRITE, xferList({{s.buf->addr() + loff, len}}),
                xferList({{raddr, len}}), remote, s.pending);
            if (st != NIXL_SUCCESS) {
                return "err " + std::to_string(st);
            }
            return "ok " + std::to_string(s.a->agent->postXferReq(s.pending));
        }
        if (op == "status") {
            return s.pending == nullptr ? "err none" :
                                          "ok " + std::to_string(
                                                      s.a->agent->getXferStatus(s.pending));
        }
        if (op == "release") {
            nixl_status_t st = s.a->agent->releaseXferReq(s.pending);
            s.pending = nullptr;
            return st == NIXL_SUCCESS ? "ok" : "err " + std::to_string(st);
        }
        return "err unknown command " + op;
    }

} // namespace

int
peerMain(int fd, const std::string &cfg_str) {
    auto cfg = parseCfg(cfg_str);
    peerState s;
    ucxSetup setup;
    setup.progThread = cfg["pt"] == "1";
    setup.pthrDelayUs = std::strtoull(cfg["delay"].c_str(), nullptr, 10);
    setup.params = decodeParams(cfg["params"]);
    const bool poll_idle = cfg["idle"] != "block";
    s.paceUs = static_cast<uint32_t>(std::strtoul(cfg["pace"].c_str(), nullptr, 10));
    nixl_status_t st = NIXL_SUCCESS;
    try {
        s.a = ucxAgent::make(cfg["name"], setup, &st);
    }
    catch (const std::exception &e) {
        sendFrame(fd, std::string("err ") + e.what());
        return 2;
    }
    if (!s.a) {
        sendFrame(fd, "err createBackend " + std::to_string(st));
        return 2;
    }
    s.buf = std::make_unique<testMem>(std::strtoull(cfg["size"].c_str(), nullptr, 10));
    std::memset(s.buf->data(), 0, s.buf->size());
    st = s.a->registerDram(s.buf->addr(), s.buf->size());
    if (st != NIXL_SUCCESS) {
        sendFrame(fd, "err registerMem " + std::to_string(st));
        return 2;
    }
    sendFrame(fd, "ok " + std::to_string(s.buf->addr()) + " " + std::to_string(s.buf->size()));
    sendFrame(fd, s.a->md());
    for (;;) {
        if (poll_idle) {
            // An application that polls: serve UCX while waiting for the next command.
            for (;;) {
                struct pollfd pfd = {fd, POLLIN, 0};
                if (::poll(&pfd, 1, 0) > 0) {
                    break;
                }
                s.pollNotifs();
            }
        }
        std::string line;
        if (!recvFrame(fd, line, nullptr, std::chrono::hours(1))) {
            break; // parent gone
        }
        bool exit_now = false;
        std::string reply = handle(s, fd, line, exit_now);
        sendFrame(fd, reply);
        if (exit_now) {
            break;
        }
    }
    s.a.reset();
    return 0;
}

} // namespace nixl_ucx_test
