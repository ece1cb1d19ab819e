/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The POSIX backend against fio, in the same run, on the same file, with the same engine, block
// size and queue depth (benchmark/README.md, "posix_bench"):
//
//   posix_bench [--dir DIR] [--size BYTES] [--engines uring,aio] [--direct auto|yes|no]
//               [--runtime-ms MS] [--bw-qd N] [--iops-qd N] [--fio PATH|none]
//               [--points write,read,randread,randwrite] [--poll-gap-us N]
//               [--blocks 4K,64K,1M] [--lat-ms MS] [--json]
//
// Per engine and per mode (page cache; O_DIRECT where the file system takes it), four points:
// sequential WRITE and READ of 1 MiB blocks at --bw-qd (bandwidth), random READ and WRITE of
// 4 KiB blocks at --iops-qd (IOPS). libnixl's side is one prepared request of many descriptors
// (a whole pass over the file, or 8192 random blocks) with kernel_queue_size = the queue
// depth, posted again and again for --runtime-ms; fio's is one job with the same ioengine, bs,
// iodepth, direct and file, time-based for the same time, submitting and reaping up to iodepth
// I/Os per call as the backend does (fio's default is one per call). Printed per point: both
// figures, the ratio libnixl/fio, and both sides' latency per I/O (p50, p99, p99.9, max). The
// bandwidth request completes as a whole, so libnixl's latency comes from a second, separate
// phase of --lat-ms (default half of --runtime-ms) after its bandwidth run: qd requests of
// one block each kept in flight, as fio keeps iodepth I/Os in flight, each timed from
// postXferReq to the getXferStatus that sees it end (steady_clock), and re-posted at once.
// fio's figure is its clat (submission to completion, per I/O). The file's dirty pages
// are flushed before each tool's run. libnixl's caller polls getXferStatus back to back, as
// NIXL programs do; --poll-gap-us N sleeps N us between polls instead (fio sleeps in
// io_getevents), to see what a spinning caller costs on a loaded machine. Before timing, each
// engine and mode writes a pattern over the whole file and reads it back, checked byte for
// byte: the exit status is 1 when that or any transfer fails.
//
// --blocks sweeps the block size: every point runs once per listed size (multiples of 4 KiB
// that divide --size) instead of at 1 MiB / 4 KiB. --json prints one JSON object per line and
// point instead of the table (the notes go to stderr), in the schema benchmark/plot.py draws:
// "op" is the fio rw name, "GBps" (10^9 B/s), "iops" and "p50_us", "p99_us", "p999_us",
// "max_us" are libnixl's, and "peers" holds fio's figures with the same latency keys.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "nixl.h"

namespace {

using clock_type = std::chrono::steady_clock;

struct options {
    std::string dir = "/tmp";
    size_t size = 256u << 20;
    std::vector<std::string> engines = {"uring", "aio"};
    std::string direct = "auto";
    long runtime_ms = 2000;
    size_t bw_qd = 16;
    size_t iops_qd = 32;
    std::string fio = "/usr/bin/fio";
    std::vector<std::string> points = {"write", "read", "randread", "randwrite"};
    long poll_gap_us = 0;
    std::vector<size_t> blocks; // empty: 1 MiB sequential, 4 KiB random
    long lat_ms = -1;           // the latency phase; -1: half of runtime_ms
    bool json = false;
};

constexpr size_t big_block = 1u << 20;
constexpr size_t small_block = 4096;
constexpr size_t random_descs = 8192;
constexpr uint64_t file_key = 1;
// The latency phase cycles over this many one-block requests at most (prepared up front, so
// no request is built while others are being timed).
constexpr size_t latency_reqs = 1024;

/** One point's figures: bytes/s, I/O per second, latency per I/O in microseconds (-1: none). */
struct figures {
    double bw = 0;
    double iops = 0;
    double p50_us = -1;
    double p99_us = -1;
    double p999_us = -1;
    double max_us = -1;
    size_t lat_ios = 0;    // I/Os behind the latency figures (libnixl's side)
    size_t lat_inline = 0; // of those, how many ended inside postXferReq
    bool ok = false;
};

/** p50, p99, p99.9 (nearest rank) and max of lat into f; lat is sorted. */
void
setTail(std::vector<double> &lat, figures &f) {
    if (lat.empty()) {
        return;
    }
    std::sort(lat.begin(), lat.end());
    const auto rank = [&lat](double q) {
        const size_t r = static_cast<size_t>(std::ceil(q * static_cast<double>(lat.size())));
        return lat[std::min(lat.size(), std::max<size_t>(r, 1)) - 1];
    };
    f.p50_us = rank(0.50);
    f.p99_us = rank(0.99);
    f.p999_us = rank(0.999);
    f.max_us = lat.back();
    f.lat_ios = lat.size();
}

/** A 4096-aligned heap buffer (O_DIRECT's memory alignment); one thread uses it. */
struct alignedBuf {
    explicit alignedBuf(size_t n) {
        if (::posix_memalign(&p, 4096, n) != 0) {
            throw std::bad_alloc();
        }
        std::memset(p, 0, n);
    }
    ~alignedBuf() {
        std::free(p);
    }
    alignedBuf(const alignedBuf &) = delete;
    alignedBuf &
    operator=(const alignedBuf &) = delete;
    uint8_t *
    data() const {
        return static_cast<uint8_t *>(p);
    }
    void *p = nullptr;
};

size_t
parseSize(const std::string &s) {
    char *end = nullptr;
    size_t v = std::strtoull(s.c_str(), &end, 10);
    switch (end != nullptr ? *end : '\0') {
    case 'K':
    case 'k':
        return v << 10;
    case 'M':
    case 'm':
        return v << 20;
    case 'G':
    case 'g':
        return v << 30;
    default:
        return v;
    }
}

std::vector<std::string>
split(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');) {
        if (!item.empty()) {
            out.push_back(item);
        }
    }
    return out;
}

/** The number after "key" : in text from pos on (fio's JSON), or -1. */
double
jsonNumber(const std::string &text, size_t pos, const std::string &key) {
    const size_t k = text.find("\"" + key + "\"", pos);
    if (k == std::string::npos) {
        return -1;
    }
    const size_t colon = text.find(':', k);
    return colon == std::string::npos ? -1 : std::strtod(text.c_str() + colon + 1, nullptr);
}

/** fio, one job as described; its JSON read back. */
figures
runFio(const options &o,
       const std::string &path,
       const std::string &engine,
       bool direct,
       const std::string &rw,
       size_t bs,
       size_t qd) {
    figures f;
    if (o.fio == "none") {
        return f;
    }
    std::ostringstream cmd;
    cmd << o.fio << " --name=posix_bench --filename=" << path
        << " --ioengine=" << (engine == "uring" ? "io_uring" : "libaio") << " --rw=" << rw
        << " --bs=" << bs << " --iodepth=" << qd << " --iodepth_batch_submit=" << qd
        << " --iodepth_batch_complete_max=" << qd << " --direct=" << (direct ? 1 : 0)
        << " --size=" << o.size << " --time_based --runtime=" << o.runtime_ms
        << "ms --randrepeat=0 --norandommap --output-format=json 2>&1";
    FILE *p = ::popen(cmd.str().c_str(), "r");
    if (p == nullptr) {
        return f;
    }
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) {
        out.append(buf, n);
    }
    const int rc = ::pclose(p);
    const std::string dir = rw.find("read") != std::string::npos ? "read" : "write";
    const size_t sec = out.find("\"" + dir + "\" : {");
    if (rc != 0 || sec == std::string::npos) {
        std::cerr << "posix_bench: fio failed (" << cmd.str() << "):\n" << out << std::endl;
        return f;
    }
    f.bw = jsonNumber(out, sec, "bw_bytes");
    f.iops = jsonNumber(out, sec, "iops");
    const size_t clat = out.find("\"clat_ns\"", sec);
    if (clat != std::string::npos) {
        f.p50_us = jsonNumber(out, clat, "50.000000") / 1000.0;
        f.p99_us = jsonNumber(out, clat, "99.000000") / 1000.0;
        f.p999_us = jsonNumber(out, clat, "99.900000") / 1000.0;
        f.max_us = jsonNumber(out, clat, "max") / 1000.0;
    }
    f.ok = f.bw >= 0 && f.iops >= 0;
    return f;
}

/** An agent with the POSIX backend on one engine and queue depth, memory and the file
 *  registered (path mode). Not thread-safe: one thread drives it. */
class posixSide {
public:
    posixSide(const std::string &engine,
              size_t qd,
              const std::string &path,
              bool direct,
              alignedBuf &mem,
              size_t mem_len,
              size_t file_len,
              long poll_gap_us)
        : agent_("bench", nixlAgentConfig(false)),
          pollGapUs_(poll_gap_us),
          mem_(DRAM_SEG),
          file_(FILE_SEG) {
        nixlBackendH *h = nullptr;
        const nixl_b_params_t params = {{"use_" + engine, "true"},
                                        {"kernel_queue_size", std::to_string(qd)}};
        ok_ = agent_.createBackend("POSIX", params, h) == NIXL_SUCCESS;
        mem_.addDesc(nixlBlobDesc(reinterpret_cast<uintptr_t>(mem.data()), mem_len, 0, ""));
        file_.addDesc(
            nixlBlobDesc(0, file_len, file_key, std::string(direct ? "rw,direct:" : "rw:") + path));
        ok_ = ok_ && agent_.registerMem(mem_) == NIXL_SUCCESS;
        ok_ = ok_ && agent_.registerMem(file_) == NIXL_SUCCESS;
        base_ = reinterpret_cast<uintptr_t>(mem.data());
    }
    ~posixSide() {
        if (ok_) {
            agent_.deregisterMem(file_);
            agent_.deregisterMem(mem_);
        }
    }
    posixSide(const posixSide &) = delete;
    posixSide &
    operator=(const posixSide &) = delete;

    bool
    ok() const {
        return ok_;
    }

    /** A request: memory base + mem_off[i] <-> file file_off[i], bs bytes each. */
    nixlXferReqH *
    make(nixl_xfer_op_t op,
         const std::vector<uint64_t> &mem_off,
         const std::vector<uint64_t> &file_off,
         size_t bs) {
        nixl_xfer_dlist_t m(DRAM_SEG), f(FILE_SEG);
        for (size_t i = 0; i < mem_off.size(); ++i) {
            m.addDesc(nixlBasicDesc(base_ + mem_off[i], bs, 0));
            f.addDesc(nixlBasicDesc(file_off[i], bs, file_key));
        }
        nixlXferReqH *req = nullptr;
        return agent_.createXferReq(op, m, f, "bench", req) == NIXL_SUCCESS ? req : nullptr;
    }

    /** Posts req and polls it to its end; true on success. */
    bool
    runOnce(nixlXferReqH *req) {
        nixl_status_t st = agent_.postXferReq(req);
        while (st == NIXL_IN_PROG) {
            if (pollGapUs_ > 0) {
                ::usleep(static_cast<useconds_t>(pollGapUs_));
            }
            st = agent_.getXferStatus(req);
        }
        return st == NIXL_SUCCESS;
    }

    /** req posted again and again for runtime_ms (at least once): seconds taken and passes. */
    bool
    runFor(nixlXferReqH *req, long runtime_ms, double &secs, size_t &passes) {
        const auto start = clock_type::now();
        const auto end = start + std::chrono::milliseconds(runtime_ms);
        passes = 0;
        do {
            if (!runOnce(req)) {
                return false;
            }
            ++passes;
        } while (clock_type::now() < end);
        secs = std::chrono::duration<double>(clock_type::now() - start).count();
        return true;
    }

    /** fio's shape, for latency: up to qd of reqs (one block each) in flight, each re-posted as
     *  soon as a getXferStatus sees it end, for runtime_ms (then the rest drains). Appends each
     *  I/O's post -> end-seen time in us to lat_us; false when a transfer fails. */
    bool
    runLatency(const std::vector<nixlXferReqH *> &reqs,
               size_t qd,
               long runtime_ms,
               std::vector<double> &lat_us,
               size_t &inline_ios) {
        std::deque<size_t> idle;
        for (size_t i = 0; i < reqs.size(); ++i) {
            idle.push_back(i);
        }
        std::vector<std::pair<size_t, clock_type::time_point>> busy;
        const auto end = clock_type::now() + std::chrono::milliseconds(runtime_ms);
        const auto us = [](clock_type::time_point from) {
            return std::chrono::duration<double, std::micro>(clock_type::now() - from).count();
        };
        bool posting = true;
        while (true) {
            // At most qd posts a round: a post may end the I/O at once (a page-cache hit), and
            // the clock is read between rounds.
            for (size_t n = 0; posting && n < qd && busy.size() < qd && !idle.empty(); ++n) {
                const size_t i = idle.front();
                idle.pop_front();
                const auto t = clock_type::now();
                const nixl_status_t st = agent_.postXferReq(reqs[i]);
                if (st == NIXL_SUCCESS) {
                    lat_us.push_back(us(t));
                    ++inline_ios;
                    idle.push_back(i);
                } else if (st == NIXL_IN_PROG) {
                    busy.emplace_back(i, t);
                } else {
                    return false;
                }
            }
            posting = posting && clock_type::now() < end;
            if (busy.empty() && !posting) {
                return true;
            }
            for (size_t k = 0; k < busy.size();) {
                const nixl_status_t st = agent_.getXferStatus(reqs[busy[k].first]);
                if (st == NIXL_IN_PROG) {
                    ++k;
                    continue;
                }
                if (st != NIXL_SUCCESS) {
                    return false; // release waits for what is still in flight
                }
                lat_us.push_back(us(busy[k].second));
                idle.push_back(busy[k].first);
                busy[k] = busy.back();
                busy.pop_back();
            }
            if (pollGapUs_ > 0) {
                ::usleep(static_cast<useconds_t>(pollGapUs_));
            }
        }
    }

    void
    release(nixlXferReqH *req) {
        if (req != nullptr) {
            agent_.releaseXferReq(req);
        }
    }

private:
    nixlAgent agent_;
    long pollGapUs_;
    nixl_reg_dlist_t mem_;
    nixl_reg_dlist_t file_;
    uintptr_t base_ = 0;
    bool ok_ = false;
};

struct point {
    const char *name;
    nixl_xfer_op_t op;
    const char *fio_rw;
    size_t bs;
    bool random;
};

/** Whole-file pattern WRITE then READ back, checked: the bytes the timed runs move are real. */
bool
verify(posixSide &side, alignedBuf &mem, size_t file_len) {
    const size_t n = file_len / big_block;
    std::vector<uint64_t> off(n);
    for (size_t i = 0; i < n; ++i) {
        off[i] = i * big_block;
    }
    for (size_t i = 0; i < file_len; ++i) {
        mem.data()[i] = static_cast<uint8_t>((i * 31 + (i >> 12)) & 0xff);
    }
    nixlXferReqH *w = side.make(NIXL_WRITE, off, off, big_block);
    const bool wrote = w != nullptr && side.runOnce(w);
    side.release(w);
    std::memset(mem.data(), 0, file_len);
    nixlXferReqH *r = side.make(NIXL_READ, off, off, big_block);
    const bool read = wrote && r != nullptr && side.runOnce(r);
    side.release(r);
    for (size_t i = 0; read && i < file_len; ++i) {
        if (mem.data()[i] != static_cast<uint8_t>((i * 31 + (i >> 12)) & 0xff)) {
            std::cerr << "posix_bench: byte " << i << " differs after the round trip" << std::endl;
            return false;
        }
    }
    return read;
}

std::string
fmtRate(double v, bool bytes) {
    char buf[64];
    if (v < 0) {
        return "-";
    }
    if (bytes) {
        std::snprintf(buf, sizeof(buf), "%.0f MiB/s", v / (1 << 20));
    } else {
        std::snprintf(buf, sizeof(buf), "%.1fk IOPS", v / 1000.0);
    }
    return buf;
}

/** Flushes the file's dirty pages, so that neither tool's run pays for the other's writeback
 *  (the first point after the checked round trip otherwise ran at half speed). */
void
settle(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDWR);
    if (fd >= 0) {
        ::fdatasync(fd);
        ::close(fd);
    }
}

/** "4KiB", "1MiB", or bytes: the table's block size. */
std::string
sizeName(size_t b) {
    if (b >= (1u << 20) && b % (1u << 20) == 0) {
        return std::to_string(b >> 20) + "MiB";
    }
    if (b >= 1024 && b % 1024 == 0) {
        return std::to_string(b >> 10) + "KiB";
    }
    return std::to_string(b);
}

/** A side's latency keys (plot.py's), when it has them: ,"p50_us":..,"max_us":.. */
void
printLatency(const figures &f) {
    if (f.p50_us < 0 || f.p99_us < 0) {
        return;
    }
    std::printf(",\"p50_us\":%.3f,\"p99_us\":%.3f", f.p50_us, f.p99_us);
    if (f.p999_us >= 0) {
        std::printf(",\"p999_us\":%.3f", f.p999_us);
    }
    if (f.max_us >= 0) {
        std::printf(",\"max_us\":%.3f", f.max_us);
    }
}

/** "p50/p99/p99.9/max" in us, or "-". */
std::string
fmtTail(const figures &f) {
    if (f.p50_us < 0) {
        return "-";
    }
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%.0f/%.0f/%.0f/%.0f", f.p50_us, f.p99_us,
                  std::max(f.p999_us, 0.0), std::max(f.max_us, 0.0));
    return buf;
}

/** One point as a JSON line (plot.py's schema); fio, when it ran, is the peer. */
void
printJson(const std::string &engine,
          bool direct,
          const point &p,
          size_t qd,
          const figures &ours,
          const figures &theirs) {
    const char *mode = direct ? "O_DIRECT" : "page-cache";
    if (!ours.ok) {
        std::cerr << "posix_bench: " << engine << " " << mode << " " << p.fio_rw << " "
                  << sizeName(p.bs) << ": libnixl's run FAILED, no JSON line" << std::endl;
        return;
    }
    std::printf("{\"bench\":\"posix_bench\",\"engine\":\"%s\",\"mode\":\"%s\",\"op\":\"%s\","
                "\"block\":%zu,\"qd\":%zu,\"path\":\"libnixl POSIX %s %s\",\"GBps\":%.4f,"
                "\"iops\":%.1f",
                engine.c_str(), mode, p.fio_rw, p.bs, qd, engine.c_str(), mode, ours.bw / 1e9,
                ours.iops);
    printLatency(ours);
    if (ours.lat_ios > 0) {
        std::printf(",\"lat_ios\":%zu,\"lat_inline\":%zu", ours.lat_ios, ours.lat_inline);
    }
    std::printf(",\"peers\":[");
    if (theirs.ok) {
        std::printf("{\"name\":\"fio %s %s\",\"GBps\":%.4f,\"iops\":%.1f", engine.c_str(), mode,
                    theirs.bw / 1e9, theirs.iops);
        printLatency(theirs);
        std::printf("}");
    }
    std::printf("]}\n");
    std::fflush(stdout);
}

bool
runPoint(const options &o,
         const std::string &path,
         const std::string &engine,
         bool direct,
         alignedBuf &mem,
         const point &p,
         std::mt19937_64 &rng);

/** One engine in one mode: the check, then the four points. False if anything failed. */
bool
runMode(const options &o, const std::string &path, const std::string &engine, bool direct) {
    alignedBuf mem(o.size);
    bool all_ok = true;
    {
        posixSide side(engine, o.bw_qd, path, direct, mem, o.size, o.size, 0);
        if (!side.ok() || !verify(side, mem, o.size)) {
            std::cerr << "posix_bench: " << engine << (direct ? " O_DIRECT" : " page cache")
                      << ": setup or the checked round trip failed" << std::endl;
            return false;
        }
    }
    const point points[] = {
        {"write 1MiB", NIXL_WRITE, "write", big_block, false},
        {"read 1MiB", NIXL_READ, "read", big_block, false},
        {"randread 4KiB", NIXL_READ, "randread", small_block, true},
        {"randwrite 4KiB", NIXL_WRITE, "randwrite", small_block, true},
    };
    std::mt19937_64 rng(42);
    for (const point &kind : points) {
        if (std::find(o.points.begin(), o.points.end(), kind.fio_rw) == o.points.end()) {
            continue;
        }
        const std::vector<size_t> sizes =
            o.blocks.empty() ? std::vector<size_t>{kind.bs} : o.blocks;
        for (const size_t bs : sizes) {
            point p = kind;
            p.bs = bs;
            all_ok = runPoint(o, path, engine, direct, mem, p, rng) && all_ok;
        }
    }
    return all_ok;
}

/** One point of one engine and mode: libnixl, then fio; a table row or a JSON line. */
bool
runPoint(const options &o,
         const std::string &path,
         const std::string &engine,
         bool direct,
         alignedBuf &mem,
         const point &p,
         std::mt19937_64 &rng) {
    bool all_ok = true;
    {
        const size_t qd = p.random ? o.iops_qd : o.bw_qd;
        std::vector<uint64_t> moff, foff;
        const size_t slots = o.size / p.bs;
        if (p.random) {
            const size_t n = std::min(random_descs, slots);
            for (size_t i = 0; i < n; ++i) {
                moff.push_back(i * p.bs);
                foff.push_back((rng() % slots) * p.bs);
            }
        } else {
            for (size_t i = 0; i < slots; ++i) {
                moff.push_back(i * p.bs);
                foff.push_back(i * p.bs);
            }
        }
        figures ours;
        settle(path);
        {
            posixSide side(engine, qd, path, direct, mem, o.size, o.size, o.poll_gap_us);
            nixlXferReqH *req = side.ok() ? side.make(p.op, moff, foff, p.bs) : nullptr;
            double secs = 0;
            size_t passes = 0;
            if (req != nullptr && side.runFor(req, o.runtime_ms, secs, passes)) {
                const double ios = static_cast<double>(passes * moff.size());
                ours.iops = ios / secs;
                ours.bw = ours.iops * static_cast<double>(p.bs);
                ours.ok = true;
            } else {
                all_ok = false;
            }
            side.release(req);
            // Latency, apart from the bandwidth run: one-block requests over the same blocks.
            const long lat_ms = o.lat_ms >= 0 ? o.lat_ms : std::max(1L, o.runtime_ms / 2);
            std::vector<nixlXferReqH *> one;
            for (size_t i = 0; ours.ok && lat_ms > 0 && i < std::min(moff.size(), latency_reqs);
                 ++i) {
                nixlXferReqH *r = side.make(p.op, {moff[i]}, {foff[i]}, p.bs);
                if (r == nullptr) {
                    break;
                }
                one.push_back(r);
            }
            std::vector<double> lat;
            // Sized from the bandwidth run's rate, so that no reallocation (a copy of megabytes
            // while I/Os are in flight) lands in the tail being measured; capped at 64 MiB.
            lat.reserve(static_cast<size_t>(
                std::min(8.0 * 1024 * 1024,
                         ours.iops * static_cast<double>(std::max(0L, lat_ms)) / 1000.0 * 1.5 +
                             4096.0)));
            // The bandwidth run left the file dirty: flush it, or its writeback lands in this
            // phase and not in fio's, which starts from a flushed file.
            settle(path);
            if (ours.ok && lat_ms > 0) {
                if (one.size() != std::min(moff.size(), latency_reqs) ||
                    !side.runLatency(one, qd, lat_ms, lat, ours.lat_inline)) {
                    std::cerr << "posix_bench: " << engine << " " << p.fio_rw << " "
                              << sizeName(p.bs) << ": the latency phase failed" << std::endl;
                    ours.ok = false;
                    all_ok = false;
                }
                setTail(lat, ours);
            }
            for (nixlXferReqH *r : one) {
                side.release(r);
            }
        }
        settle(path);
        const figures theirs = runFio(o, path, engine, direct, p.fio_rw, p.bs, qd);
        if (o.json) {
            printJson(engine, direct, p, qd, ours, theirs);
            return all_ok;
        }
        const bool bw = !p.random;
        const double a = bw ? ours.bw : ours.iops;
        const double b = bw ? theirs.bw : theirs.iops;
        char ratio[32] = "-";
        if (ours.ok && theirs.ok && b > 0) {
            std::snprintf(ratio, sizeof(ratio), "%.2f", a / b);
        }
        char line[384];
        std::snprintf(line, sizeof(line), "%-6s %-10s %-15s qd %-3zu %16s %16s %6s %24s %24s",
                      engine.c_str(), direct ? "O_DIRECT" : "page-cache",
                      (std::string(p.fio_rw) + " " + sizeName(p.bs)).c_str(), qd,
                      ours.ok ? fmtRate(a, bw).c_str() : "FAILED",
                      theirs.ok ? fmtRate(b, bw).c_str() : "-", ratio,
                      ours.ok ? fmtTail(ours).c_str() : "-", fmtTail(theirs).c_str());
        std::cout << line << std::endl;
    }
    return all_ok;
}

/** Whether the file system under dir opens files with O_DIRECT. */
bool
directWorks(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_DIRECT);
    if (fd < 0) {
        return false;
    }
    ::close(fd);
    return true;
}

void
usage() {
    std::cerr << "usage: posix_bench [--dir DIR] [--size BYTES] [--engines uring,aio] "
                 "[--direct auto|yes|no] [--runtime-ms MS] [--bw-qd N] [--iops-qd N] "
                 "[--fio PATH|none] [--points write,read,randread,randwrite] "
                 "[--poll-gap-us N] [--blocks 4K,64K,1M] [--lat-ms MS] [--json]"
              << std::endl;
}

} // namespace

int
main(int argc, char **argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json") {
            o.json = true;
            continue;
        }
        if (i + 1 >= argc) {
            usage();
            return 2;
        }
        const std::string v = argv[++i];
        if (a == "--dir") {
            o.dir = v;
        } else if (a == "--size") {
            o.size = parseSize(v);
        } else if (a == "--engines") {
            o.engines = split(v);
        } else if (a == "--direct" && (v == "auto" || v == "yes" || v == "no")) {
            o.direct = v;
        } else if (a == "--runtime-ms") {
            o.runtime_ms = std::atol(v.c_str());
        } else if (a == "--bw-qd") {
            o.bw_qd = parseSize(v);
        } else if (a == "--iops-qd") {
            o.iops_qd = parseSize(v);
        } else if (a == "--fio") {
            o.fio = v;
        } else if (a == "--points") {
            o.points = split(v);
        } else if (a == "--lat-ms") {
            o.lat_ms = std::atol(v.c_str());
        } else if (a == "--poll-gap-us") {
            o.poll_gap_us = std::atol(v.c_str());
        } else if (a == "--blocks") {
            o.blocks.clear();
            for (const auto &b : split(v)) {
                o.blocks.push_back(parseSize(b));
            }
        } else {
            usage();
            return 2;
        }
    }
    if (o.size < big_block || o.size % big_block != 0 || o.runtime_ms <= 0 ||
        o.bw_qd == 0 || o.iops_qd == 0 || o.lat_ms < -1) {
        usage();
        return 2;
    }
    for (const size_t b : o.blocks) {
        if (b == 0 || b % small_block != 0 || o.size % b != 0) {
            std::cerr << "posix_bench: block " << b << ": a multiple of 4096 that divides --size"
                      << std::endl;
            return 2;
        }
    }
    for (const auto &e : o.engines) {
        if (e != "uring" && e != "aio") {
            std::cerr << "posix_bench: engine " << e << ": uring or aio (fio has both)"
                      << std::endl;
            return 2;
        }
    }
    if (o.fio != "none" && ::access(o.fio.c_str(), X_OK) != 0) {
        std::cerr << "posix_bench: " << o.fio << " not found: fio's column is empty" << std::endl;
        o.fio = "none";
    }
    std::string path = o.dir + "/posix_bench-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(o.size)) != 0) {
        std::cerr << "posix_bench: cannot make a file in " << o.dir << ": "
                  << std::strerror(errno) << std::endl;
        return 1;
    }
    ::close(fd);
    // With --json, stdout is the JSON lines only; the notes go to stderr.
    std::ostream &info = o.json ? std::cerr : std::cout;
    std::vector<bool> modes = {false};
    if (o.direct != "no") {
        if (directWorks(path)) {
            modes.push_back(true);
        } else if (o.direct == "yes") {
            std::cerr << "posix_bench: the file system under " << o.dir << " refuses O_DIRECT"
                      << std::endl;
            ::unlink(path.c_str());
            return 1;
        } else {
            info << "O_DIRECT: the file system under " << o.dir
                      << " refuses it; page cache only" << std::endl;
        }
    }
    info << "file " << path << ", " << (o.size >> 20) << " MiB, " << o.runtime_ms
              << " ms per point and tool, libnixl's caller "
              << (o.poll_gap_us > 0 ?
                      "sleeping " + std::to_string(o.poll_gap_us) + " us between polls" :
                      std::string("polling back to back"))
              << "; ratio = libnixl/fio; latency per I/O in us as p50/p99/p99.9/max: "
                 "libnixl's post to completion seen by getXferStatus of one-block requests, "
                 "qd in flight, for "
              << (o.lat_ms >= 0 ? o.lat_ms : std::max(1L, o.runtime_ms / 2))
              << " ms (0: not measured); fio's clat at iodepth qd" << std::endl;
    if (!o.json) {
        std::printf("%-6s %-10s %-15s %-6s %16s %16s %6s %24s %24s\n", "engine", "mode", "point",
                    "", "libnixl POSIX", "fio", "ratio", "libnixl latency", "fio latency");
    }
    bool ok = true;
    for (const auto &e : o.engines) {
        for (const bool direct : modes) {
            ok = runMode(o, path, e, direct) && ok;
        }
    }
    ::unlink(path.c_str());
    return ok ? 0 : 1;
}
