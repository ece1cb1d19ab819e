/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// nixlAgent against a small executable model of NIXL 1.4's documented semantics: random call
// sequences over three agents of this process (TEST backend), every call's status and every
// byte of every buffer checked against the model after each step. docs/testing.md ("The model
// test") says what it covers, how to run more sequences and how to replay one seed.
//
// The model, per agent: its live registrations (range -> registration id; a re-registration of
// the same range gets a new id), what it loaded of each peer (range -> id, as the most recently
// loaded blob describes it, plus an epoch bumped by invalidateRemoteMD), its expected buffer
// contents and the notifications it must still receive. A request or prepared list remembers the
// registrations each descriptor may have resolved to (all live ones covering it: overlapping
// registrations make the choice the agent's), and its status as a set of statuses the model
// cannot yet tell apart. Agent-level checks (NOT_FOUND) win over backend failures (BACKEND).

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "agent_test_utils.h"

namespace nixl_agent_test {
namespace {

constexpr int model_agent_count = 3;
constexpr int model_buf_count = 2;
constexpr size_t model_buf_len = 64;
/** Sequence i runs with seed model_base_seed + i, so a failure is replayed by its seed alone. */
constexpr uint64_t model_base_seed = 0x4e49584c0000ULL;
constexpr int model_default_sequences = 10000;
constexpr int model_default_steps = 50;
constexpr int model_ucx_sequences = 100;

/** Registrable ranges of each buffer: all of it, both halves, and a middle one overlapping
 *  both halves; [0,64) and [0,32) share their address with different lengths. */
struct modelRange {
    size_t off;
    size_t len;
};
constexpr std::array<modelRange, 4> model_ranges = {{{0, 64}, {0, 32}, {16, 32}, {32, 32}}};
constexpr int model_range_count = model_buf_count * static_cast<int>(model_ranges.size());

int
rangeBuf(int r) {
    return r / static_cast<int>(model_ranges.size());
}

const modelRange &
rangeOf(int r) {
    return model_ranges[r % model_ranges.size()];
}

/** The statuses the model accepts for one call, or holds possible for a request. */
class statusSet {
public:
    statusSet() = default;

    statusSet(std::initializer_list<nixl_status_t> list) {
        for (nixl_status_t s : list) {
            add(s);
        }
    }

    void
    add(nixl_status_t s) {
        bits_ |= bit(s);
    }

    bool
    has(nixl_status_t s) const {
        return (bits_ & bit(s)) != 0;
    }

    bool
    only(nixl_status_t s) const {
        return bits_ == bit(s);
    }

    std::string
    str() const {
        std::string out;
        for (int v = -16; v < 16; ++v) {
            auto s = static_cast<nixl_status_t>(v);
            if (has(s)) {
                out += (out.empty() ? "" : "|") + nixlEnumStrings::statusStr(s);
            }
        }
        return "{" + out + "}";
    }

private:
    static uint32_t
    bit(nixl_status_t s) {
        return 1u << (static_cast<int>(s) + 16);
    }

    uint32_t bits_ = 0;
};

/**
 * The outcome of a call over descriptors that each may end in several ways: the agent's
 * NOT_FOUND wins over the backend's BACKEND, which wins over SUCCESS.
 */
statusSet
combine(const std::vector<statusSet> &per_desc) {
    bool can_nf = false, can_be = false, all_can_pass_agent = true, all_can_pass = true;
    for (const statusSet &s : per_desc) {
        can_nf = can_nf || s.has(NIXL_ERR_NOT_FOUND);
        can_be = can_be || s.has(NIXL_ERR_BACKEND);
        all_can_pass_agent =
            all_can_pass_agent && (s.has(NIXL_SUCCESS) || s.has(NIXL_ERR_BACKEND));
        all_can_pass = all_can_pass && s.has(NIXL_SUCCESS);
    }
    statusSet out;
    if (can_nf) {
        out.add(NIXL_ERR_NOT_FOUND);
    }
    if (all_can_pass_agent && can_be) {
        out.add(NIXL_ERR_BACKEND);
    }
    if (all_can_pass) {
        out.add(NIXL_SUCCESS);
    }
    return out;
}

struct modelDesc {
    int buf;
    size_t off;
    size_t len;
};

/** A loaded remote registration a descriptor may resolve to. */
struct remoteCand {
    int range;
    uint64_t id;
    uint64_t at; ///< the load that brought this registration (0 for loopback)
};

/** Local descriptors with the registration ids each may resolve to. */
struct localSide {
    std::vector<modelDesc> descs;
    std::vector<std::vector<uint64_t>> cands;
};

/** Remote descriptors with the loaded registrations each may resolve to. */
struct remoteSide {
    std::vector<modelDesc> descs;
    std::vector<std::vector<remoteCand>> cands;
};

struct modelBlob {
    int owner;
    bool conn;
    std::map<int, uint64_t> regs;
    nixl_blob_t bytes;
    std::string what;
};

struct modelList {
    nixlDlistH *h;
    int peer; ///< -1: local side
    uint64_t epoch;
    localSide local;
    remoteSide remote;
    std::string name;
};

struct modelReq {
    nixlXferReqH *h = nullptr;
    int peer = 0;
    nixl_xfer_op_t op = NIXL_WRITE;
    uint64_t epoch = 0;
    localSide local;
    remoteSide remote;
    statusSet status{NIXL_ERR_NOT_POSTED};
    bool running = false;
    int pollsLeft = 0;
    std::optional<std::string> notif;        ///< sent by the next post without extra_params
    std::optional<std::string> runningNotif; ///< of the post that is running
    std::string name;
};

struct modelNotif {
    int from;
    std::string msg;
    bool required; ///< false: may arrive at most once (the model could not tell if it was sent)
};

struct modelPeerView {
    bool loaded = false;
    uint64_t epoch = 0;
    std::map<int, uint64_t> known;    ///< range -> registration id
    std::map<int, uint64_t> loadedAt; ///< range -> the last load that carried it
    std::map<int, uint64_t> instance; ///< range -> the load that brought this registration
};

struct modelAgent {
    std::string name;
    bool async = false;
    std::vector<testBuffer> bufs; ///< before agent: the agent goes first, then its memory
    std::unique_ptr<nixlAgent> agent;
    std::array<std::vector<uint8_t>, model_buf_count> mem; ///< expected contents
    std::map<int, uint64_t> regs;                          ///< live: range -> registration id
    std::array<modelPeerView, model_agent_count> views;
    std::vector<modelNotif> inbox;
    std::vector<modelReq> reqs;
    std::vector<modelList> lists;

    bool
    live(uint64_t id) const {
        for (const auto &[r, i] : regs) {
            if (i == id) {
                return true;
            }
        }
        return false;
    }
};

std::string
descStr(const modelDesc &d) {
    return "b" + std::to_string(d.buf) + "[" + std::to_string(d.off) + "," +
        std::to_string(d.off + d.len) + ")";
}

std::string
rangeStr(int r) {
    const modelRange &m = rangeOf(r);
    return descStr({rangeBuf(r), m.off, m.len});
}

template<typename Side>
std::string
sideStr(const Side &s) {
    std::string out;
    for (const auto &d : s.descs) {
        out += (out.empty() ? "" : " ") + descStr(d);
    }
    return out;
}

/**
 * What the model needs to know of the backend under test. TEST completes deterministically
 * (the model counts its polls); others complete when they do, so the model waits for each
 * posted request inside the post step and polls getNotifs until what is due arrived.
 */
struct modelBackend {
    const char *type;
    bool exactPolls;          ///< TEST: A0 async with async_polls=1, polls modelled exactly
    nixl_status_t goneStatus; ///< a copy into a deregistered remote registration
};

constexpr modelBackend model_test_backend{"TEST", true, NIXL_ERR_BACKEND};
/** docs/backends/ucx.md: a stale remote key is NOT_FOUND, nothing more is copied. */
constexpr modelBackend model_ucx_backend{"UCX", false, NIXL_ERR_NOT_FOUND};

/** Deadline for a transfer or a notification of a backend that completes on its own. */
constexpr auto model_wait = std::chrono::seconds(30);

/** stderr while it lives, read call by call (next()): the log lines of each step. */
using modelLogTap = nixl_test::stderrReader;

/** How often each call returned each status, over all sequences of a run. */
using modelStats = std::map<std::string, std::map<std::string, uint64_t>>;

/** One random sequence: the agents, the model, the steps taken so far. */
class modelRun {
public:
    /** tap: the sequence's stderr, to hold each call to one ERROR line per error status. */
    modelRun(const modelBackend &be, uint64_t seed, modelStats &stats, modelLogTap &tap)
        : be_(be),
          seed_(seed),
          rng_(seed),
          stats_(stats),
          tap_(tap) {}

    /** Runs up to steps steps; false with failure() set when the agent left the model. */
    bool
    run(int steps) {
        setUp();
        // A start that makes transfers likely: each agent registers a range, then the full
        // metadata goes to a random peer or two. Checked like any other step.
        tap_.next(); // agent creation
        for (int y = 0; y < model_agent_count && failure_.empty(); ++y) {
            doRegister(y);
            checkLog();
        }
        for (int y = 0; y < model_agent_count && failure_.empty(); ++y) {
            doGetLocalMD(y);
            checkLog();
            for (int x = 0; x < model_agent_count && failure_.empty(); ++x) {
                if (x != y && chance(70)) {
                    loadBlob(x, blobs_.back());
                    checkLog();
                }
            }
        }
        for (int i = 0; i < steps && failure_.empty(); ++i) {
            step();
            if (failure_.empty()) {
                checkMemory();
            }
            checkLog();
        }
        return failure_.empty();
    }

    const std::string &
    failure() const {
        return failure_;
    }

    std::string
    report() const {
        std::string out = "seed " + std::to_string(seed_) + " (replay: NIXL_MODEL_SEED=" +
            std::to_string(seed_) + ")\nsteps:\n";
        for (const auto &s : log_) {
            out += "  " + s + "\n";
        }
        return out + (failure_.empty() ? "no failure" : "failure: " + failure_) + "\n";
    }

private:
    // ---- set-up and checks --------------------------------------------------------------

    void
    setUp() {
        for (int a = 0; a < model_agent_count; ++a) {
            modelAgent &m = agents_[a];
            m.name = "A" + std::to_string(a);
            // A0 completes asynchronously (one poll answered IN_PROG, the copy at the next);
            // the others complete inside postXferReq.
            m.async = be_.exactPolls && a == 0;
            // Backends that complete on their own get a progress thread: the model polls only
            // the initiator, and an in-process peer must progress to finish a transfer.
            m.agent = std::make_unique<nixlAgent>(m.name, nixlAgentConfig(!be_.exactPolls));
            nixl_b_params_t params;
            if (m.async) {
                params = {{"async", "true"}, {"async_polls", "1"}};
            }
            nixlBackendH *h = nullptr;
            nixl_status_t st = m.agent->createBackend(be_.type, params, h);
            if (st != NIXL_SUCCESS) {
                failure_ = std::string("createBackend(") + be_.type + ") for " + m.name + ": " +
                    nixlEnumStrings::statusStr(st);
                return;
            }
            for (int b = 0; b < model_buf_count; ++b) {
                m.bufs.emplace_back(model_buf_len, static_cast<uint32_t>(a * 16 + b));
                m.mem[b] = m.bufs.back().bytes();
            }
        }
    }

    void
    checkMemory() {
        for (int a = 0; a < model_agent_count; ++a) {
            for (int b = 0; b < model_buf_count; ++b) {
                const auto &have = agents_[a].bufs[b].bytes();
                const auto &want = agents_[a].mem[b];
                for (size_t i = 0; i < model_buf_len; ++i) {
                    if (have[i] != want[i]) {
                        failure_ = "after the last step, byte " + std::to_string(i) + " of " +
                            agents_[a].name + ".b" + std::to_string(b) + " is " +
                            std::to_string(have[i]) + ", the model expects " +
                            std::to_string(want[i]);
                        return;
                    }
                }
            }
        }
    }

    /**
     * The rule of agent.md "Errors and logs": an error status comes with one ERROR line naming
     * its cause, a success with none. A step may also end requests it polls on the way (a
     * failed copy found by deregisterMem's or a repost's poll): one line each. At most, since
     * rate-limited lines may be left out. TEST only: other backends log from their own threads.
     */
    void
    checkLog() {
        std::string text = tap_.next();
        if (failure_.empty() && be_.exactPolls) {
            int errors = 0;
            for (size_t at = text.find("[nixl E"); at != std::string::npos;
                 at = text.find("[nixl E", at + 1)) {
                ++errors;
            }
            int allowed = quietFailures_ +
                (stepStatus_ && *stepStatus_ < 0 ? 1 : 0);
            if (errors > allowed) {
                failure_ = "the last step logged " + std::to_string(errors) +
                    " ERROR lines, at most " + std::to_string(allowed) + " expected:\n" + text;
            }
        }
        quietFailures_ = 0;
        stepStatus_.reset();
    }

    /** Records the call's outcome; a status outside allowed fails the run. */
    bool
    expect(const statusSet &allowed, nixl_status_t actual) {
        stepStatus_ = actual;
        const std::string &line = log_.back();
        size_t dot = line.find('.');
        size_t paren = line.find('(', dot);
        ++stats_[line.substr(dot + 1, paren - dot - 1)][nixlEnumStrings::statusStr(actual)];
        log_.back() += " = " + nixlEnumStrings::statusStr(actual);
        if (!allowed.only(actual)) {
            log_.back() += " (model: " + allowed.str() + ")";
        }
        if (!allowed.has(actual)) {
            failure_ = "the last step returned " + nixlEnumStrings::statusStr(actual) +
                ", the model allows " + allowed.str();
            return false;
        }
        return true;
    }

    void
    note(const std::string &s) {
        log_.push_back(std::to_string(log_.size()) + ": " + s);
    }

    // ---- random choices -----------------------------------------------------------------

    size_t
    pick(size_t n) {
        return static_cast<size_t>(rng_() % n);
    }

    bool
    chance(int percent) {
        return static_cast<int>(pick(100)) < percent;
    }

    /** A sub-range of [off, off + len) of buffer buf of length want (8 or 16). */
    modelDesc
    subDesc(int buf, size_t off, size_t len, size_t want) {
        size_t slots = (len - want) / 8 + 1;
        return {buf, off + 8 * pick(slots), want};
    }

    /** A descriptor of length want: mostly inside one of the given ranges, else anywhere. */
    modelDesc
    pickDesc(const std::map<int, uint64_t> &ranges, size_t want) {
        std::vector<int> fit;
        for (const auto &[r, id] : ranges) {
            if (rangeOf(r).len >= want) {
                fit.push_back(r);
            }
        }
        if (!fit.empty() && chance(85)) {
            int r = fit[pick(fit.size())];
            return subDesc(rangeBuf(r), rangeOf(r).off, rangeOf(r).len, want);
        }
        return subDesc(static_cast<int>(pick(model_buf_count)), 0, model_buf_len, want);
    }

    std::string
    nextMsg() {
        // Unique, so a duplicate delivery is seen; sometimes empty, which NIXL allows.
        return chance(10) ? std::string() : "n" + std::to_string(++msgs_);
    }

    // ---- model queries ------------------------------------------------------------------

    static bool
    covers(int r, const modelDesc &d) {
        const modelRange &m = rangeOf(r);
        return rangeBuf(r) == d.buf && m.off <= d.off && d.off + d.len <= m.off + m.len;
    }

    std::vector<uint64_t>
    localCands(const modelAgent &y, const modelDesc &d) const {
        std::vector<uint64_t> out;
        for (const auto &[r, id] : y.regs) {
            if (covers(r, d)) {
                out.push_back(id);
            }
        }
        return out;
    }

    /** What y resolves descriptors of agent x against: its own registrations for loopback. */
    const std::map<int, uint64_t> &
    known(const modelAgent &y, int x) const {
        return &y == &agents_[x] ? y.regs : y.views[x].known;
    }

    /** y can address x: itself, or a peer whose metadata it loaded. */
    bool
    reachable(const modelAgent &y, int x) const {
        return &y == &agents_[x] || y.views[x].loaded;
    }

    /** The registrations a remote descriptor may resolve to: of those covering it, the most
     *  recently loaded (several when one load brought them); any covering one for loopback. */
    std::vector<remoteCand>
    remoteCands(const modelAgent &y, int x, const modelDesc &d) const {
        std::vector<remoteCand> out;
        uint64_t newest = 0;
        for (const auto &[r, id] : known(y, x)) {
            if (!covers(r, d)) {
                continue;
            }
            const bool loop = &y == &agents_[x];
            uint64_t at = loop ? 0 : y.views[x].loadedAt.at(r);
            if (at > newest) {
                out.clear();
                newest = at;
            }
            if (at == newest) {
                out.push_back({r, id, loop ? 0 : y.views[x].instance.at(r)});
            }
        }
        return out;
    }

    /** Per descriptor: NOT_FOUND if its registration may be gone (deregistered). */
    static std::vector<statusSet>
    localStale(const modelAgent &y, const localSide &s) {
        std::vector<statusSet> out;
        for (const auto &cands : s.cands) {
            statusSet one;
            for (uint64_t id : cands) {
                one.add(y.live(id) ? NIXL_SUCCESS : NIXL_ERR_NOT_FOUND);
            }
            out.push_back(one);
        }
        return out;
    }

    /** Per descriptor: NOT_FOUND if its registration may have been replaced by metadata
     *  loaded since (the registration the peer's most recently loaded metadata describes);
     *  for loopback, if it may have been deregistered. */
    std::vector<statusSet>
    remoteReplaced(const modelAgent &y, int x, const remoteSide &s) const {
        if (&y == &agents_[x]) {
            localSide as_local{s.descs, {}};
            for (const auto &cands : s.cands) {
                as_local.cands.emplace_back();
                for (const remoteCand &c : cands) {
                    as_local.cands.back().push_back(c.id);
                }
            }
            return localStale(y, as_local);
        }
        std::vector<statusSet> out;
        for (const auto &cands : s.cands) {
            statusSet one;
            for (const remoteCand &c : cands) {
                // Replaced once is replaced: loading the old registration's blob again later
                // is a new load of it, not the one the list or request was made with.
                auto it = y.views[x].known.find(c.range);
                bool same = it != y.views[x].known.end() && it->second == c.id &&
                    y.views[x].instance.at(c.range) == c.at;
                one.add(same ? NIXL_SUCCESS : NIXL_ERR_NOT_FOUND);
            }
            out.push_back(one);
        }
        return out;
    }

    /** What the TEST backend's copy ends in: BACKEND when a target registration is gone. */
    statusSet
    copyOutcome(const modelReq &q) const {
        std::vector<statusSet> per;
        for (const auto &cands : q.remote.cands) {
            statusSet one;
            for (const remoteCand &c : cands) {
                one.add(agents_[q.peer].live(c.id) ? NIXL_SUCCESS : be_.goneStatus);
            }
            per.push_back(one);
        }
        return combine(per);
    }

    bool
    epochValid(const modelAgent &y, const modelReq &q) const {
        if (&y == &agents_[q.peer]) {
            return true; // loopback: no remote metadata involved
        }
        return y.views[q.peer].loaded && y.views[q.peer].epoch == q.epoch;
    }

    // ---- data movement ------------------------------------------------------------------

    using memState = std::array<std::array<std::vector<uint8_t>, model_buf_count>,
                                model_agent_count>;

    memState
    snapshot() const {
        memState s;
        for (int a = 0; a < model_agent_count; ++a) {
            s[a] = agents_[a].mem;
        }
        return s;
    }

    void
    restore(const memState &s) {
        for (int a = 0; a < model_agent_count; ++a) {
            agents_[a].mem = s[a];
        }
    }

    bool
    actualEquals(const memState &s) const {
        for (int a = 0; a < model_agent_count; ++a) {
            for (int b = 0; b < model_buf_count; ++b) {
                if (agents_[a].bufs[b].bytes() != s[a][b]) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Moves q's bytes in the model, descriptor by descriptor, as the backend does. */
    void
    applyCopy(int y, const modelReq &q) {
        for (size_t i = 0; i < q.local.descs.size(); ++i) {
            const modelDesc &l = q.local.descs[i];
            const modelDesc &r = q.remote.descs[i];
            auto &lmem = agents_[y].mem[l.buf];
            auto &rmem = agents_[q.peer].mem[r.buf];
            // Through a copy: a loopback transfer may name overlapping ranges (memmove).
            if (q.op == NIXL_WRITE) {
                std::vector<uint8_t> tmp(lmem.begin() + l.off, lmem.begin() + l.off + l.len);
                std::copy(tmp.begin(), tmp.end(), rmem.begin() + r.off);
            } else {
                std::vector<uint8_t> tmp(rmem.begin() + r.off, rmem.begin() + r.off + r.len);
                std::copy(tmp.begin(), tmp.end(), lmem.begin() + l.off);
            }
        }
    }

    /**
     * q's copy happened in the step just run, ending in one of possible (SUCCESS: all bytes
     * moved and the notification queued; anything else: nothing). seen is the status the call
     * returned when the call reports it. Where the model cannot tell, the bytes decide; when
     * they cannot either (the copy changes nothing), the status stays a set and the
     * notification becomes optional. Returns the settled set.
     */
    statusSet
    settleCopy(int y, modelReq &q, statusSet possible, std::optional<nixl_status_t> seen) {
        if (seen) {
            if (!possible.has(*seen)) {
                failure_ = "the copy of " + q.name + " ended in " +
                    nixlEnumStrings::statusStr(*seen) + ", the model allows " + possible.str();
                return possible;
            }
            possible = statusSet{*seen};
        }
        const memState before = snapshot();
        applyCopy(y, q);
        const memState after = snapshot();
        bool can_move = possible.has(NIXL_SUCCESS);
        bool can_stay = !possible.only(NIXL_SUCCESS);
        bool moved;
        bool certain = true;
        if (can_move && can_stay) {
            if (before == after) {
                certain = false;
                moved = false;
            } else if (actualEquals(after)) {
                moved = true;
                possible = statusSet{NIXL_SUCCESS};
            } else {
                moved = false;
                statusSet rest;
                for (nixl_status_t s : {NIXL_ERR_BACKEND, NIXL_ERR_NOT_FOUND,
                                        NIXL_ERR_REMOTE_DISCONNECT}) {
                    if (possible.has(s)) {
                        rest.add(s);
                    }
                }
                possible = rest;
            }
        } else {
            moved = can_move;
        }
        if (!moved) {
            restore(before);
        }
        if (q.runningNotif && (moved || !certain)) {
            agents_[q.peer].inbox.push_back({y, *q.runningNotif, certain});
        }
        q.running = false;
        q.runningNotif.reset();
        q.status = possible;
        if (!seen && !possible.only(NIXL_SUCCESS)) {
            ++quietFailures_; // may have failed inside another call, which then logs it
        }
        return possible;
    }

    /** One checkXfer of the TEST engine on running q (async agent only). */
    void
    poll(int y, modelReq &q, std::optional<nixl_status_t> seen) {
        if (!epochValid(agents_[y], q)) {
            // invalidateRemoteMD disconnected the engine's peer record this request holds.
            q.running = false;
            q.runningNotif.reset();
            q.status = statusSet{NIXL_ERR_REMOTE_DISCONNECT};
            if (!seen) {
                ++quietFailures_;
            }
            if (seen && *seen != NIXL_ERR_REMOTE_DISCONNECT) {
                failure_ = q.name + " polled after invalidation returned " +
                    nixlEnumStrings::statusStr(*seen) + ", expected NIXL_ERR_REMOTE_DISCONNECT";
            }
            return;
        }
        if (q.pollsLeft > 0) {
            --q.pollsLeft;
            if (seen && *seen != NIXL_IN_PROG) {
                failure_ = q.name + " returned " + nixlEnumStrings::statusStr(*seen) +
                    " before its copy, expected NIXL_IN_PROG";
            }
            return;
        }
        settleCopy(y, q, copyOutcome(q), seen);
    }

    // ---- the steps ----------------------------------------------------------------------

    void
    step() {
        // Weights: the calls that change what the agents know, and transfers, most often.
        static constexpr std::array<int, 15> weights = {
            12, 8, 6, 5, 14, 2, 8, 10, 10, 14, 8, 4, 2, 3, 5};
        int total = 0;
        for (int w : weights) {
            total += w;
        }
        for (int tries = 0; tries < 20; ++tries) {
            int x = static_cast<int>(pick(static_cast<size_t>(total)));
            size_t kind = 0;
            while (x >= weights[kind]) {
                x -= weights[kind++];
            }
            int y = static_cast<int>(pick(model_agent_count));
            if (tryStep(kind, y)) {
                return;
            }
        }
    }

    /** Runs one step of the kind by agent y; false when it does not apply now. */
    bool
    tryStep(size_t kind, int y) {
        switch (kind) {
        case 0:
            return doRegister(y);
        case 1:
            return doDeregister(y);
        case 2:
            return doGetLocalMD(y);
        case 3:
            return doGetPartialMD(y);
        case 4:
            return doLoad(y);
        case 5:
            return doInvalidate(y);
        case 6:
            return doPrep(y);
        case 7:
            return doMake(y);
        case 8:
            return doCreate(y);
        case 9:
            return doPost(y);
        case 10:
            return doStatus(y);
        case 11:
            return doRelease(y);
        case 12:
            return doReleaseList(y);
        case 13:
            return doGenNotif(y);
        default:
            return doGetNotifs(y);
        }
    }

    bool
    doRegister(int y) {
        modelAgent &m = agents_[y];
        int r = static_cast<int>(pick(model_range_count));
        // Mostly a range not registered yet; a repeat now and then.
        for (int tries = 0; tries < 3 && m.regs.count(r) != 0 && chance(80); ++tries) {
            r = static_cast<int>(pick(model_range_count));
        }
        const modelRange &rr = rangeOf(r);
        note(m.name + ".registerMem(" + rangeStr(r) + ")");
        nixl_status_t st =
            m.agent->registerMem(regList({m.bufs[rangeBuf(r)].desc(rr.off, rr.len)}));
        if (m.regs.count(r) != 0) {
            // An exact repeat is refused (agent.md "Memory").
            expect({NIXL_ERR_INVALID_PARAM, NIXL_ERR_BACKEND}, st);
            return true;
        }
        if (expect({NIXL_SUCCESS}, st)) {
            m.regs[r] = ++regIds_;
            log_.back() += " (id " + std::to_string(regIds_) + ")";
        }
        return true;
    }

    bool
    doDeregister(int y) {
        modelAgent &m = agents_[y];
        // Mostly a live registration; sometimes any range (NOT_FOUND when not registered).
        int r;
        if (!m.regs.empty() && chance(85)) {
            auto it = m.regs.begin();
            std::advance(it, static_cast<long>(pick(m.regs.size())));
            r = it->first;
        } else {
            r = static_cast<int>(pick(model_range_count));
        }
        const modelRange &rr = rangeOf(r);
        note(m.name + ".deregisterMem(" + rangeStr(r) + ")");
        // Snapshot for the running requests deregisterMem polls first (agent.md).
        std::vector<size_t> running;
        for (size_t i = 0; i < m.reqs.size(); ++i) {
            if (m.reqs[i].running) {
                running.push_back(i);
            }
        }
        nixl_status_t st =
            m.agent->deregisterMem(regList({m.bufs[rangeBuf(r)].desc(rr.off, rr.len)}));
        for (size_t i : running) {
            poll(y, m.reqs[i], std::nullopt);
        }
        if (!failure_.empty()) {
            return true;
        }
        auto it = m.regs.find(r);
        if (it == m.regs.end()) {
            expect({NIXL_ERR_NOT_FOUND}, st);
            return true;
        }
        // Refused while a running request of this agent may move data through it.
        statusSet allowed;
        bool must_hold = false;
        for (const modelReq &q : m.reqs) {
            if (!q.running) {
                continue;
            }
            // Its local side, and for loopback its target.
            std::vector<std::vector<uint64_t>> held = q.local.cands;
            if (q.peer == y) {
                for (const auto &cands : q.remote.cands) {
                    held.emplace_back();
                    for (const remoteCand &c : cands) {
                        held.back().push_back(c.id);
                    }
                }
            }
            for (const auto &cands : held) {
                if (std::find(cands.begin(), cands.end(), it->second) != cands.end()) {
                    allowed.add(NIXL_ERR_REPOST_ACTIVE);
                    must_hold = must_hold || cands.size() == 1;
                }
            }
        }
        if (!must_hold) {
            allowed.add(NIXL_SUCCESS);
        }
        if (expect(allowed, st) && st == NIXL_SUCCESS) {
            m.regs.erase(it);
        }
        return true;
    }

    void
    keepBlob(modelBlob b) {
        if (blobs_.size() >= 8) {
            blobs_.erase(blobs_.begin() + static_cast<long>(pick(blobs_.size())));
        }
        blobs_.push_back(std::move(b));
    }

    bool
    doGetLocalMD(int y) {
        modelAgent &m = agents_[y];
        note(m.name + ".getLocalMD() -> blob " + std::to_string(blobSeq_ + 1));
        modelBlob b{y, true, m.regs, {}, {}};
        if (expect({NIXL_SUCCESS}, m.agent->getLocalMD(b.bytes))) {
            b.what = "blob " + std::to_string(++blobSeq_) + " (" + m.name + " full)";
            keepBlob(std::move(b));
        }
        return true;
    }

    bool
    doGetPartialMD(int y) {
        modelAgent &m = agents_[y];
        nixl_reg_dlist_t descs(DRAM_SEG);
        std::map<int, uint64_t> carried;
        bool all_live = true;
        std::string what;
        size_t n = pick(3);
        for (size_t i = 0; i < n; ++i) {
            int r;
            if (!m.regs.empty() && chance(90)) {
                auto it = m.regs.begin();
                std::advance(it, static_cast<long>(pick(m.regs.size())));
                r = it->first;
            } else {
                r = static_cast<int>(pick(model_range_count));
            }
            if (carried.count(r) != 0) {
                continue;
            }
            const modelRange &rr = rangeOf(r);
            descs.addDesc(m.bufs[rangeBuf(r)].blob(rr.off, rr.len));
            what += (what.empty() ? "" : " ") + rangeStr(r);
            auto it = m.regs.find(r);
            if (it == m.regs.end()) {
                all_live = false;
            } else {
                carried[r] = it->second;
            }
        }
        nixl_opt_args_t extra;
        extra.includeConnInfo = chance(50);
        note(m.name + ".getLocalPartialMD([" + what + "], conn " +
             (extra.includeConnInfo ? "yes" : "no") + ") -> blob " +
             std::to_string(blobSeq_ + 1));
        modelBlob b{y, descs.isEmpty() || extra.includeConnInfo, carried, {}, {}};
        nixl_status_t st = m.agent->getLocalPartialMD(descs, b.bytes, &extra);
        if (!all_live) {
            expect({NIXL_ERR_NOT_FOUND}, st);
            return true;
        }
        if (expect({NIXL_SUCCESS}, st)) {
            b.what = "blob " + std::to_string(++blobSeq_) + " (" + m.name + " partial)";
            keepBlob(std::move(b));
        }
        return true;
    }

    bool
    doLoad(int y) {
        if (blobs_.empty()) {
            return false;
        }
        // Mostly the newest blobs, so metadata is more often current than stale, and mostly
        // another agent's (loading the own blob is refused).
        size_t n = blobs_.size();
        size_t i = chance(60) ? n - 1 - pick(std::min<size_t>(n, 2)) : pick(n);
        for (int tries = 0; tries < 4 && blobs_[i].owner == y && chance(90); ++tries) {
            i = pick(n);
        }
        loadBlob(y, blobs_[i]);
        return true;
    }

    void
    loadBlob(int y, const modelBlob &b) {
        modelAgent &m = agents_[y];
        note(m.name + ".loadRemoteMD(" + b.what + ")");
        std::string name;
        nixl_status_t st = m.agent->loadRemoteMD(b.bytes, name);
        if (b.owner == y) {
            expect({NIXL_ERR_INVALID_PARAM}, st);
            return;
        }
        modelPeerView &v = m.views[b.owner];
        if (!v.loaded && !b.conn) {
            // The first blob of an agent must carry its connection info.
            expect({NIXL_ERR_BACKEND}, st);
            return;
        }
        if (!expect({NIXL_SUCCESS}, st)) {
            return;
        }
        if (name != agents_[b.owner].name) {
            failure_ = "loadRemoteMD named the agent '" + name + "'";
            return;
        }
        v.loaded = true;
        // A registration already known stays; a new one (a re-registration of the range)
        // replaces it (metadata.md "Re-registration"). Either counts as loaded now: whether
        // loading the same registration again makes it newer is the agent's choice, so the
        // model lets the loads tie rather than pick.
        const uint64_t now = ++loads_;
        for (const auto &[r, id] : b.regs) {
            auto it = v.known.find(r);
            if (it == v.known.end() || it->second != id) {
                v.known[r] = id;
                v.instance[r] = now;
            }
            v.loadedAt[r] = now;
        }
        return;
    }

    bool
    doInvalidate(int y) {
        modelAgent &m = agents_[y];
        int x = chance(90) ? pickPeer(y) : y;
        note(m.name + ".invalidateRemoteMD(" + agents_[x].name + ")");
        nixl_status_t st = m.agent->invalidateRemoteMD(agents_[x].name);
        if (x == y) {
            expect({NIXL_ERR_INVALID_PARAM}, st);
            return true;
        }
        modelPeerView &v = m.views[x];
        if (!v.loaded) {
            expect({NIXL_ERR_NOT_FOUND}, st);
            return true;
        }
        if (expect({NIXL_SUCCESS}, st)) {
            v.loaded = false;
            v.known.clear();
            v.loadedAt.clear();
            v.instance.clear();
            ++v.epoch;
        }
        return true;
    }

    /** Mostly a peer of y, sometimes y itself (loopback). */
    int
    pickTarget(int y) {
        return chance(15) ? y : pickPeer(y);
    }

    /** A peer of y other than y itself. */
    int
    pickPeer(int y) {
        return (y + 1 + static_cast<int>(pick(model_agent_count - 1))) % model_agent_count;
    }

    /** Random local and remote descriptors (1 or 2, pairwise equal lengths) for y -> x. */
    void
    pickSides(int y, int x, localSide &l, remoteSide &r) {
        size_t n = 1 + pick(2);
        for (size_t i = 0; i < n; ++i) {
            size_t len = chance(50) ? 8 : 16;
            r.descs.push_back(pickDesc(known(agents_[y], x), len));
            l.descs.push_back(pickDesc(agents_[y].regs, len));
        }
    }

    bool
    doPrep(int y) {
        modelAgent &m = agents_[y];
        modelList list{nullptr, chance(50) ? -1 : pickTarget(y), 0, {}, {}, {}};
        size_t n = 1 + pick(3);
        nixl_xfer_dlist_t descs(DRAM_SEG);
        bool covered = true;
        for (size_t i = 0; i < n; ++i) {
            size_t len = chance(50) ? 8 : 16;
            if (list.peer < 0) {
                modelDesc d = pickDesc(m.regs, len);
                list.local.descs.push_back(d);
                list.local.cands.push_back(localCands(m, d));
                covered = covered && !list.local.cands.back().empty();
                descs.addDesc(nixlBasicDesc(m.bufs[d.buf].addr() + d.off, d.len, 0));
            } else {
                modelDesc d = pickDesc(known(m, list.peer), len);
                list.remote.descs.push_back(d);
                list.remote.cands.push_back(remoteCands(m, list.peer, d));
                covered = covered && !list.remote.cands.back().empty();
                const testBuffer &tb = agents_[list.peer].bufs[d.buf];
                descs.addDesc(nixlBasicDesc(tb.addr() + d.off, d.len, 0));
            }
        }
        list.name = "L" + std::to_string(++listSeq_);
        std::string target = list.peer < 0 ? std::string() : agents_[list.peer].name;
        note(m.name + ".prepXferDlist(" + (list.peer < 0 ? "local" : target) + ", [" +
             (list.peer < 0 ? sideStr(list.local) : sideStr(list.remote)) + "]) -> " +
             list.name);
        nixl_status_t st = m.agent->prepXferDlist(target, descs, list.h);
        if (list.peer >= 0 && !reachable(m, list.peer)) {
            covered = false;
        }
        if (!covered) {
            expect({NIXL_ERR_NOT_FOUND}, st);
            return true;
        }
        if (expect({NIXL_SUCCESS}, st)) {
            if (list.peer >= 0) {
                list.epoch = m.views[list.peer].epoch;
            }
            m.lists.push_back(std::move(list));
        }
        return true;
    }

    /** Creation-time notification: none, or a message in extra_params->notif. */
    std::optional<std::string>
    pickCreationNotif(nixl_opt_args_t &extra) {
        if (!chance(40)) {
            return std::nullopt;
        }
        std::string msg = nextMsg();
        extra.notif = msg;
        return msg;
    }

    bool
    doMake(int y) {
        modelAgent &m = agents_[y];
        std::vector<size_t> locals, remotes;
        for (size_t i = 0; i < m.lists.size(); ++i) {
            (m.lists[i].peer < 0 ? locals : remotes).push_back(i);
        }
        if (locals.empty() || remotes.empty()) {
            return false;
        }
        const modelList &ll = m.lists[locals[pick(locals.size())]];
        const modelList &rl = m.lists[remotes[pick(remotes.size())]];
        // Index pairs of equal length; the agent's length check is covered elsewhere.
        std::vector<std::pair<int, int>> pairs;
        for (size_t i = 0; i < ll.local.descs.size(); ++i) {
            for (size_t j = 0; j < rl.remote.descs.size(); ++j) {
                if (ll.local.descs[i].len == rl.remote.descs[j].len) {
                    pairs.emplace_back(static_cast<int>(i), static_cast<int>(j));
                }
            }
        }
        if (pairs.empty()) {
            return false;
        }
        modelReq q;
        q.peer = rl.peer;
        q.op = chance(50) ? NIXL_WRITE : NIXL_READ;
        q.epoch = rl.epoch;
        std::vector<int> li, ri;
        size_t n = 1 + pick(2);
        for (size_t k = 0; k < n; ++k) {
            auto [i, j] = pairs[pick(pairs.size())];
            li.push_back(i);
            ri.push_back(j);
            q.local.descs.push_back(ll.local.descs[i]);
            q.local.cands.push_back(ll.local.cands[i]);
            q.remote.descs.push_back(rl.remote.descs[j]);
            q.remote.cands.push_back(rl.remote.cands[j]);
        }
        nixl_opt_args_t extra;
        q.notif = pickCreationNotif(extra);
        q.name = "q" + std::to_string(++reqSeq_);
        std::string idx;
        for (size_t k = 0; k < li.size(); ++k) {
            idx += (k ? " " : "") + std::to_string(li[k]) + ":" + std::to_string(ri[k]);
        }
        note(m.name + ".makeXferReq(" + (q.op == NIXL_WRITE ? "WRITE" : "READ") + ", " + ll.name +
             ", " + rl.name + " (" + agents_[rl.peer].name + "), [" + idx + "]" +
             (q.notif ? ", notif '" + *q.notif + "'" : "") + ") -> " + q.name);
        nixl_status_t st = m.agent->makeXferReq(q.op, ll.h, li, rl.h, ri, q.h, &extra);
        // The agent refuses lists whose registrations are gone (local: deregistered; remote:
        // invalidated, or replaced by metadata loaded since) before it builds anything.
        // Descriptors the request does not use may or may not count (NIXL leaves it open).
        std::vector<statusSet> per = localStale(m, ll.local);
        for (size_t i = 0; i < per.size(); ++i) {
            if (std::find(li.begin(), li.end(), static_cast<int>(i)) == li.end()) {
                per[i].add(NIXL_SUCCESS);
            }
        }
        std::vector<statusSet> rem = remoteReplaced(m, rl.peer, rl.remote);
        for (size_t j = 0; j < rem.size(); ++j) {
            if (std::find(ri.begin(), ri.end(), static_cast<int>(j)) == ri.end()) {
                rem[j].add(NIXL_SUCCESS);
            }
            per.push_back(rem[j]);
        }
        statusSet allowed = combine(per);
        if (rl.peer != y && (!m.views[rl.peer].loaded || m.views[rl.peer].epoch != rl.epoch)) {
            allowed = {NIXL_ERR_NOT_FOUND};
        }
        if (expect(allowed, st) && st == NIXL_SUCCESS) {
            m.reqs.push_back(std::move(q));
        }
        return true;
    }

    bool
    doCreate(int y) {
        modelAgent &m = agents_[y];
        int x = pickTarget(y);
        modelReq q;
        q.peer = x;
        q.op = chance(50) ? NIXL_WRITE : NIXL_READ;
        q.epoch = m.views[x].epoch;
        pickSides(y, x, q.local, q.remote);
        bool covered = reachable(m, x);
        nixl_xfer_dlist_t local(DRAM_SEG), remote(DRAM_SEG);
        for (size_t i = 0; i < q.local.descs.size(); ++i) {
            const modelDesc &l = q.local.descs[i];
            const modelDesc &r = q.remote.descs[i];
            q.local.cands.push_back(localCands(m, l));
            q.remote.cands.push_back(remoteCands(m, x, r));
            covered = covered && !q.local.cands.back().empty() && !q.remote.cands.back().empty();
            local.addDesc(nixlBasicDesc(m.bufs[l.buf].addr() + l.off, l.len, 0));
            remote.addDesc(nixlBasicDesc(agents_[x].bufs[r.buf].addr() + r.off, r.len, 0));
        }
        nixl_opt_args_t extra;
        q.notif = pickCreationNotif(extra);
        q.name = "q" + std::to_string(++reqSeq_);
        note(m.name + ".createXferReq(" + (q.op == NIXL_WRITE ? "WRITE" : "READ") + ", [" +
             sideStr(q.local) + "] -> " + agents_[x].name + " [" + sideStr(q.remote) + "]" +
             (q.notif ? ", notif '" + *q.notif + "'" : "") + ") -> " + q.name);
        nixl_status_t st = m.agent->createXferReq(q.op, local, remote, agents_[x].name, q.h,
                                                  &extra);
        if (expect({covered ? NIXL_SUCCESS : NIXL_ERR_NOT_FOUND}, st) && st == NIXL_SUCCESS) {
            m.reqs.push_back(std::move(q));
        }
        return true;
    }

    bool
    doPost(int y) {
        modelAgent &m = agents_[y];
        if (m.reqs.empty()) {
            return false;
        }
        size_t qi = pick(m.reqs.size());
        modelReq &q = m.reqs[qi];
        // One running request per agent at a time: two copies finishing in one deregisterMem
        // poll would leave their order, and so the bytes, to the agent's request order.
        for (size_t i = 0; i < m.reqs.size(); ++i) {
            if (i != qi && m.reqs[i].running) {
                return false;
            }
        }
        // extra_params: null (keep the stored notification), notif, legacy hasNotif, or
        // neither (clears it): agent.md "Transfers".
        size_t how = pick(4);
        nixl_opt_args_t extra;
        std::optional<std::string> next = q.notif;
        std::string how_str = "null";
        if (how == 1) {
            next = nextMsg();
            extra.notif = *next;
            how_str = "notif '" + *next + "'";
        } else if (how == 2) {
            next = nextMsg();
            extra.hasNotif = true;
            extra.notifMsg = *next;
            how_str = "hasNotif '" + *next + "'";
        } else if (how == 3) {
            next.reset();
            how_str = "no notif";
        }
        note(m.name + ".postXferReq(" + q.name + ", " + how_str + ")");
        nixl_status_t st = m.agent->postXferReq(q.h, how == 0 ? nullptr : &extra);
        // Agent checks first: the remote's metadata, then the registrations of both sides.
        if (!epochValid(m, q)) {
            expect({NIXL_ERR_NOT_FOUND}, st);
            return true;
        }
        std::vector<statusSet> per = localStale(m, q.local);
        for (const statusSet &s : remoteReplaced(m, q.peer, q.remote)) {
            per.push_back(s);
        }
        statusSet agent_ok = combine(per);
        if (!agent_ok.has(NIXL_SUCCESS)) {
            expect({NIXL_ERR_NOT_FOUND}, st);
            return true;
        }
        if (st == NIXL_ERR_NOT_FOUND && agent_ok.has(NIXL_ERR_NOT_FOUND)) {
            if (expect(agent_ok, st) && !q.running && be_.goneStatus == NIXL_ERR_NOT_FOUND &&
                copyOutcome(q).has(NIXL_ERR_NOT_FOUND)) {
                // UCX: the agent's refusal keeps the request's status, the backend's stale
                // key (the same status) becomes it; the model cannot tell which it was.
                q.status.add(NIXL_ERR_NOT_FOUND);
            }
            return true;
        }
        if (q.running) {
            // The agent polls a running request before it reposts it.
            if (q.pollsLeft > 0) {
                --q.pollsLeft;
                expect({NIXL_ERR_REPOST_ACTIVE}, st);
                return true;
            }
            settleCopy(y, q, copyOutcome(q), std::nullopt);
            if (!failure_.empty()) {
                return true;
            }
        }
        q.notif = next;
        q.runningNotif = next;
        if (m.async) {
            if (expect({NIXL_IN_PROG}, st)) {
                q.running = true;
                q.pollsLeft = 1;
                q.status = statusSet{NIXL_IN_PROG};
            }
            return true;
        }
        if (st == NIXL_IN_PROG && !be_.exactPolls) {
            // Completes on its own: awaited here, so no request runs across steps.
            auto deadline = std::chrono::steady_clock::now() + model_wait;
            while (st == NIXL_IN_PROG && std::chrono::steady_clock::now() < deadline) {
                st = m.agent->getXferStatus(q.h);
            }
            log_.back() += " = NIXL_IN_PROG, then getXferStatus";
        }
        q.running = true; // for settleCopy: the copy happened inside the post
        settleCopy(y, q, copyOutcome(q), st);
        if (failure_.empty()) {
            expect(q.status, st);
        }
        return true;
    }

    bool
    doStatus(int y) {
        modelAgent &m = agents_[y];
        if (m.reqs.empty()) {
            return false;
        }
        modelReq &q = m.reqs[pick(m.reqs.size())];
        note(m.name + ".getXferStatus(" + q.name + ")");
        nixl_status_t st = m.agent->getXferStatus(q.h);
        if (!q.running) {
            // A final status is kept: the call does not look at the remote again.
            if (expect(q.status, st)) {
                q.status = statusSet{st};
            }
            return true;
        }
        if (!epochValid(m, q)) {
            expect({NIXL_ERR_NOT_FOUND}, st);
            return true;
        }
        poll(y, q, st);
        if (failure_.empty()) {
            expect(q.running ? statusSet{NIXL_IN_PROG} : q.status, st);
        }
        return true;
    }

    bool
    doRelease(int y) {
        modelAgent &m = agents_[y];
        if (m.reqs.empty()) {
            return false;
        }
        size_t qi = pick(m.reqs.size());
        modelReq &q = m.reqs[qi];
        note(m.name + ".releaseXferReq(" + q.name + ")");
        nixl_status_t st = m.agent->releaseXferReq(q.h);
        if (!expect({NIXL_SUCCESS}, st)) {
            return true;
        }
        if (q.running) {
            // A running request is aborted. NIXL 1.4 polls it once first, so its copy may
            // have happened: all of its bytes or none, and its notification with them.
            statusSet outcome =
                epochValid(m, q) ? copyOutcome(q) : statusSet{NIXL_ERR_REMOTE_DISCONNECT};
            outcome.add(NIXL_ERR_CANCELED);
            settleCopy(y, q, outcome, std::nullopt);
        }
        m.reqs.erase(m.reqs.begin() + static_cast<long>(qi));
        return true;
    }

    bool
    doReleaseList(int y) {
        modelAgent &m = agents_[y];
        if (m.lists.empty()) {
            return false;
        }
        size_t li = pick(m.lists.size());
        note(m.name + ".releasedDlistH(" + m.lists[li].name + ")");
        if (expect({NIXL_SUCCESS}, m.agent->releasedDlistH(m.lists[li].h))) {
            m.lists.erase(m.lists.begin() + static_cast<long>(li));
        }
        return true;
    }

    bool
    doGenNotif(int y) {
        modelAgent &m = agents_[y];
        int x = static_cast<int>(pick(model_agent_count));
        std::string msg = nextMsg();
        note(m.name + ".genNotif(" + agents_[x].name + ", '" + msg + "')");
        nixl_status_t st = m.agent->genNotif(agents_[x].name, msg);
        // The own name is loopback; another agent needs its metadata loaded.
        bool reach = x == y || m.views[x].loaded;
        if (expect({reach ? NIXL_SUCCESS : NIXL_ERR_NOT_FOUND}, st) && st == NIXL_SUCCESS) {
            agents_[x].inbox.push_back({y, msg, true});
        }
        return true;
    }

    /** Every required notification of m's inbox is in got (counting repeats). */
    bool
    allDue(const modelAgent &m, const nixl_notifs_t &got) const {
        std::map<std::pair<std::string, std::string>, long> need;
        for (const modelNotif &n : m.inbox) {
            if (n.required) {
                ++need[{agents_[n.from].name, n.msg}];
            }
        }
        for (const auto &[sender, msgs] : got) {
            for (const std::string &msg : msgs) {
                auto it = need.find({sender, msg});
                if (it != need.end()) {
                    --it->second;
                }
            }
        }
        return std::all_of(need.begin(), need.end(), [](const auto &e) { return e.second <= 0; });
    }

    bool
    doGetNotifs(int y) {
        modelAgent &m = agents_[y];
        note(m.name + ".getNotifs()");
        nixl_notifs_t got;
        if (!expect({NIXL_SUCCESS}, m.agent->getNotifs(got))) {
            return true;
        }
        if (!be_.exactPolls) {
            // Delivered when the backend gets to it: poll (appending) until all due are in.
            auto deadline = std::chrono::steady_clock::now() + model_wait;
            while (!allDue(m, got) && std::chrono::steady_clock::now() < deadline) {
                if (m.agent->getNotifs(got) != NIXL_SUCCESS) {
                    failure_ = "getNotifs failed while waiting for notifications";
                    return true;
                }
            }
        }
        // Every delivered message must be pending, each once, and in its sender's order; the
        // TEST backend delivers synchronously, so every required one must be there.
        std::string seen;
        for (const auto &[sender, msgs] : got) {
            int from = -1;
            for (int a = 0; a < model_agent_count; ++a) {
                if (agents_[a].name == sender) {
                    from = a;
                }
            }
            size_t pos = 0;
            for (const std::string &msg : msgs) {
                seen += " " + sender + ":'" + msg + "'";
                auto it = m.inbox.end();
                for (size_t i = pos; i < m.inbox.size(); ++i) {
                    if (m.inbox[i].from == from && m.inbox[i].msg == msg) {
                        it = m.inbox.begin() + static_cast<long>(i);
                        break;
                    }
                }
                if (it == m.inbox.end()) {
                    failure_ = "getNotifs delivered '" + msg + "' from '" + sender +
                        "', which was not sent, was delivered already, or came out of order";
                    log_.back() += seen;
                    return true;
                }
                // Required messages of this sender before it were skipped: out of order.
                for (auto k = m.inbox.begin() + static_cast<long>(pos); k != it; ++k) {
                    if (k->from == from && k->required) {
                        failure_ = "getNotifs delivered '" + msg + "' from '" + sender +
                            "' before '" + k->msg + "', sent earlier";
                        log_.back() += seen;
                        return true;
                    }
                }
                pos = static_cast<size_t>(it - m.inbox.begin());
                m.inbox.erase(it);
            }
        }
        log_.back() += seen.empty() ? " (none)" : seen;
        for (const modelNotif &n : m.inbox) {
            if (n.required) {
                failure_ = "getNotifs did not deliver '" + n.msg + "' from " +
                    agents_[n.from].name;
                return true;
            }
        }
        m.inbox.clear();
        return true;
    }

    const modelBackend &be_;
    uint64_t seed_;
    std::mt19937_64 rng_;
    modelStats &stats_;
    modelLogTap &tap_;
    std::optional<nixl_status_t> stepStatus_; ///< what the step's call returned
    int quietFailures_ = 0;                   ///< requests that failed inside the step's call
    std::array<modelAgent, model_agent_count> agents_;
    std::vector<modelBlob> blobs_;
    std::vector<std::string> log_;
    std::string failure_;
    uint64_t regIds_ = 0;
    uint64_t loads_ = 0;
    uint64_t msgs_ = 0;
    int blobSeq_ = 0;
    int listSeq_ = 0;
    int reqSeq_ = 0;
};

/** A positive integer from the environment, else def. */
uint64_t
envCount(const char *name, uint64_t def) {
    const char *v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        return def;
    }
    char *end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 0);
    return end != nullptr && *end == '\0' && n > 0 ? n : def;
}

class agentModelTest : public agentTest {};

/**
 * NIXL's two-agent example, the sequence the model was written for: A2 registers X, A1 loads
 * A2's metadata, A2 deregisters X and registers it again (same address and length), A1 loads
 * A2's new metadata: a WRITE into X must move the data; what was made against the old
 * registration is refused with NOT_FOUND; loading the same metadata again changes nothing.
 */
TEST_F(agentModelTest, ReRegisteredBufferResolvesToNewMetadata) {
    auto a1 = makeAgent("A1");
    auto a2 = makeAgent("A2");
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a1));
    ASSERT_EQ(NIXL_SUCCESS, addTest(*a2));
    testBuffer src(256, 1);
    testBuffer x(256, 2);
    ASSERT_EQ(NIXL_SUCCESS, a1->registerMem(regList({src.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, a2->registerMem(regList({x.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, sendMD(*a2, *a1));

    nixlXferReqH *old_req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a1->createXferReq(NIXL_WRITE, xferList({src.desc()}), xferList({x.desc()}), "A2",
                                old_req));
    nixlDlistH *old_list = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a1->prepXferDlist("A2", xferList({x.desc()}), old_list));
    nixlDlistH *local = nullptr;
    ASSERT_EQ(NIXL_SUCCESS, a1->prepXferDlist(NIXL_INIT_AGENT, xferList({src.desc()}), local));

    ASSERT_EQ(NIXL_SUCCESS, a2->deregisterMem(regList({x.desc()})));
    ASSERT_EQ(NIXL_SUCCESS, a2->registerMem(regList({x.desc()})));
    nixl_blob_t blob;
    ASSERT_EQ(NIXL_SUCCESS, a2->getLocalMD(blob));
    std::string name;
    ASSERT_EQ(NIXL_SUCCESS, a1->loadRemoteMD(blob, name));

    nixlXferReqH *req = nullptr;
    ASSERT_EQ(NIXL_SUCCESS,
              a1->createXferReq(NIXL_WRITE, xferList({src.desc()}), xferList({x.desc()}), "A2",
                                req));
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a1, req));
    EXPECT_TRUE(holdsPattern(x, 1));

    EXPECT_EQ(NIXL_ERR_NOT_FOUND, a1->postXferReq(old_req));
    nixlXferReqH *from_old_list = nullptr;
    EXPECT_EQ(NIXL_ERR_NOT_FOUND,
              a1->makeXferReq(NIXL_WRITE, local, {0}, old_list, {0}, from_old_list));
    EXPECT_EQ(nullptr, from_old_list);

    // The same metadata again: the request made after the first load of it still works.
    ASSERT_EQ(NIXL_SUCCESS, a1->loadRemoteMD(blob, name));
    src.fill(3);
    ASSERT_EQ(NIXL_SUCCESS, runXfer(*a1, req));
    EXPECT_TRUE(holdsPattern(x, 3));

    EXPECT_EQ(NIXL_SUCCESS, a1->releaseXferReq(req));
    EXPECT_EQ(NIXL_SUCCESS, a1->releaseXferReq(old_req));
    EXPECT_EQ(NIXL_SUCCESS, a1->releasedDlistH(old_list));
    EXPECT_EQ(NIXL_SUCCESS, a1->releasedDlistH(local));
}

/**
 * Runs sequences (or the one of NIXL_MODEL_SEED) over backend be; the first failing sequence
 * stops the run and prints its seed, its steps and the agents' last log lines. Returns the
 * statuses seen.
 */
modelStats
runSequences(const modelBackend &be, uint64_t sequences, int steps) {
    const char *replay = std::getenv("NIXL_MODEL_SEED");
    std::vector<uint64_t> seeds;
    if (replay != nullptr && *replay != '\0') {
        seeds.push_back(std::strtoull(replay, nullptr, 0));
    } else {
        for (uint64_t i = 0; i < sequences; ++i) {
            seeds.push_back(model_base_seed + i);
        }
    }
    modelStats stats;
    for (uint64_t seed : seeds) {
        std::string log;
        bool ok;
        std::string report;
        {
            // The agents log one line per error status, which these sequences produce by the
            // hundred: shown only for a failing sequence. The agents go before the capture
            // ends: what they log when they go is theirs.
            modelLogTap tap;
            {
                modelRun run(be, seed, stats, tap);
                ok = run.run(steps);
                if (!ok || replay != nullptr) {
                    report = run.report();
                }
            }
            tap.restore();
            log = tap.text();
        }
        if (ok && replay != nullptr) {
            std::printf("%s", report.c_str());
        }
        if (!ok) {
            std::vector<std::string> lines;
            std::istringstream in(log);
            for (std::string line; std::getline(in, line);) {
                lines.push_back(line);
            }
            std::string tail;
            for (size_t i = lines.size() > 20 ? lines.size() - 20 : 0; i < lines.size(); ++i) {
                tail += "  " + lines[i] + "\n";
            }
            ADD_FAILURE() << "the agent (" << be.type << ") left the model in " << report
                          << "last log lines of the sequence:\n"
                          << tail;
            return stats;
        }
    }
    std::string summary;
    for (const auto &[call, counts] : stats) {
        summary += "  " + call + ":";
        for (const auto &[st, n] : counts) {
            summary += " " + st + " " + std::to_string(n);
        }
        summary += "\n";
    }
    std::printf("%s: %zu sequences of %d steps; statuses seen:\n%s", be.type, seeds.size(),
                steps, summary.c_str());
    return stats;
}

/** The generator must reach the outcomes the model is about, or a run proves little. */
void
expectReached(modelStats &stats,
              const std::vector<std::pair<std::string, std::string>> &wanted) {
    if (std::getenv("NIXL_MODEL_SEED") != nullptr || ::testing::Test::HasFailure()) {
        return;
    }
    for (const auto &[call, st] : wanted) {
        EXPECT_GT(stats[call][st], 0u) << call << " never returned " << st;
    }
}

/**
 * Thousands of random sequences over TEST (NIXL_MODEL_SEQUENCES, default
 * model_default_sequences; NIXL_MODEL_STEPS steps each). NIXL_MODEL_SEED=<seed> runs that one
 * sequence and prints its steps.
 */
TEST_F(agentModelTest, RandomSequences) {
    modelStats stats = runSequences(
        model_test_backend,
        envCount("NIXL_MODEL_SEQUENCES", model_default_sequences),
        static_cast<int>(envCount("NIXL_MODEL_STEPS", model_default_steps)));
    expectReached(stats,
                  {{"postXferReq", "NIXL_SUCCESS"},
                   {"postXferReq", "NIXL_IN_PROG"},
                   {"postXferReq", "NIXL_ERR_BACKEND"},
                   {"postXferReq", "NIXL_ERR_NOT_FOUND"},
                   {"postXferReq", "NIXL_ERR_REPOST_ACTIVE"},
                   {"getXferStatus", "NIXL_SUCCESS"},
                   {"getXferStatus", "NIXL_IN_PROG"},
                   {"makeXferReq", "NIXL_SUCCESS"},
                   {"makeXferReq", "NIXL_ERR_NOT_FOUND"},
                   {"deregisterMem", "NIXL_ERR_REPOST_ACTIVE"},
                   {"loadRemoteMD", "NIXL_ERR_BACKEND"},
                   {"getNotifs", "NIXL_SUCCESS"}});
}

/**
 * The same model over UCX, a shorter run (NIXL_MODEL_UCX_SEQUENCES, default
 * model_ucx_sequences): each agent's UCX context costs far more than a TEST engine.
 */
TEST_F(agentModelTest, RandomSequencesUcx) {
    std::vector<nixl_backend_t> plugins;
    {
        nixlAgent probe("probe", nixlAgentConfig());
        ASSERT_EQ(NIXL_SUCCESS, probe.getAvailPlugins(plugins));
    }
    if (std::find(plugins.begin(), plugins.end(), "UCX") == plugins.end()) {
        GTEST_SKIP() << "the UCX plugin is not built (no UCX found at configure time)";
    }
    modelStats stats = runSequences(
        model_ucx_backend,
        envCount("NIXL_MODEL_UCX_SEQUENCES", model_ucx_sequences),
        static_cast<int>(envCount("NIXL_MODEL_STEPS", model_default_steps)));
    expectReached(stats,
                  {{"postXferReq", "NIXL_SUCCESS"},
                   {"postXferReq", "NIXL_ERR_NOT_FOUND"},
                   {"getNotifs", "NIXL_SUCCESS"}});
}

} // namespace
} // namespace nixl_agent_test
