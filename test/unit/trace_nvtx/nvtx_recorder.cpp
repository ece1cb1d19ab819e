/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * A test-only NVTX tool: an injection library loaded through NVTX_INJECTION64_PATH exactly as
 * Nsight Systems loads its own (NVTX dlopens it at the process's first NVTX call and calls
 * InitializeInjectionNvtx2, which fills the core callback table). It records, one line per
 * call, every domain, category, registered string, range push/pop and mark it receives, with
 * the payloads decoded, so that tests can assert the exact sequence a plugin produced. Tests
 * read the record with nixl_nvtx_recorder_take() (dlsym on this library).
 *
 * Built twice: with NIXL_NVTX_RECORDER_PAYLOAD_EXT=1 it also exports
 * InitializeInjectionNvtxExtension and implements the payload extension (schema registration,
 * and the payload push/pop/mark calls, recorded so a test sees if they are used).
 * With 0 it is
 * a tool that knows only the core table, like an older Nsight or a third-party tool, and sees
 * payloads it cannot decode.
 *
 * Line formats (D<n> = n-th domain created, S<n> = n-th string registered, process-wide):
 *   domain D1 "name" [-> null]       destroy D1
 *   category D1 5 "CommSend"         string D1 S3 "nixl::postXferReq.write"
 *   schema D1 16777218 "nixl.attr.int64" size=32 [key:cstring*@0 value:int64@16]
 *   push D1 L0 reg:<name>|ascii:<name> argb=ff... cat=5 <payload>
 *   pop D1 L0                        mark D1 reg:... argb=... cat=... <payload>
 *   <payload> = "-" | {correlation_id=7}{key="bytes" value=4096}... (decoded, extension)
 *             | ext-payload(n) (core-only tool: payload type it does not know)
 * where L<k> is the 0-based nesting level of the range on its thread and domain.
 *
 * Thread safety: every callback takes one mutex; nesting levels are per thread.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#ifndef NIXL_NVTX_RECORDER_PAYLOAD_EXT
#error "build with -DNIXL_NVTX_RECORDER_PAYLOAD_EXT=0 or 1"
#endif

namespace {

struct schemaEntry {
    uint64_t flags;
    uint64_t type;
    std::string name;
    uint64_t detail;
    uint64_t offset;
};

struct schemaInfo {
    std::string name;
    size_t staticSize;
    std::vector<schemaEntry> entries;
};

std::mutex mu;
std::string record;
size_t domainCount = 0;
size_t stringCount = 0;
std::map<uintptr_t, std::string> stringText; // handle -> text
std::map<std::pair<uintptr_t, uint64_t>, schemaInfo> schemas; // (domain, id) -> layout
bool extInitialized = false;
thread_local std::map<uintptr_t, int> depth; // per domain, this thread

// Handles are small fake pointers: tests see D<n>/S<n>, never addresses.
constexpr uintptr_t domainBase = 0x10000;
constexpr uintptr_t stringBase = 0x20000;

std::string
fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string
fmt(const char *f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof(buf), f, ap);
    va_end(ap);
    return buf;
}

std::string
domainName(nvtxDomainHandle_t d) {
    const auto v = reinterpret_cast<uintptr_t>(d);
    if (v == 0) {
        return "D0"; // the default domain
    }
    return fmt("D%zu", static_cast<size_t>(v - domainBase));
}

void
line(const std::string &s) {
    record += s;
    record += '\n';
}

[[maybe_unused]] const char *
typeName(uint64_t t) {
    switch (t) {
    case NVTX_PAYLOAD_ENTRY_TYPE_INT64:
        return "int64";
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT64:
        return "uint64";
    case NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE:
        return "double";
    case NVTX_PAYLOAD_ENTRY_TYPE_SIZE:
        return "size";
    case NVTX_PAYLOAD_ENTRY_TYPE_CSTRING:
        return "cstring";
    default:
        return "other";
    }
}

std::string
decodeEntry(const schemaInfo &s, const schemaEntry &e, const char *blob) {
    const char *at = blob + e.offset;
    switch (e.type) {
    case NVTX_PAYLOAD_ENTRY_TYPE_INT64: {
        int64_t v;
        memcpy(&v, at, sizeof(v));
        return fmt("%" PRId64, v);
    }
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT64: {
        uint64_t v;
        memcpy(&v, at, sizeof(v));
        return fmt("%" PRIu64, v);
    }
    case NVTX_PAYLOAD_ENTRY_TYPE_SIZE: {
        size_t v;
        memcpy(&v, at, sizeof(v));
        return fmt("%zu", v);
    }
    case NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE: {
        double v;
        memcpy(&v, at, sizeof(v));
        return fmt("%g", v);
    }
    case NVTX_PAYLOAD_ENTRY_TYPE_CSTRING: {
        if ((e.flags & NVTX_PAYLOAD_ENTRY_FLAG_POINTER) == 0) {
            return "?embedded-string";
        }
        const char *p;
        memcpy(&p, at, sizeof(p));
        if (p == nullptr) {
            return "null";
        }
        const uint64_t kind = NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_TYPE(e.flags);
        if (kind == NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_ZERO_TERMINATED) {
            return "\"" + std::string(p) + "\"";
        }
        if (kind == NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_LENGTH_INDEX && e.detail < s.entries.size() &&
            s.entries[e.detail].type == NVTX_PAYLOAD_ENTRY_TYPE_SIZE) {
            size_t len;
            memcpy(&len, blob + s.entries[e.detail].offset, sizeof(len));
            return "\"" + std::string(p, len) + "\"";
        }
        return "?string-flags";
    }
    default:
        return fmt("?type%" PRIu64, e.type);
    }
}

std::string
decodePayloads(nvtxDomainHandle_t d, const nvtxPayloadData_t *pl, size_t n) {
    if (n == 0) {
        return "-";
    }
    std::string out;
    for (size_t i = 0; i < n; ++i) {
        const auto it = schemas.find({reinterpret_cast<uintptr_t>(d), pl[i].schemaId});
        if (it == schemas.end()) {
            out += fmt("{?schema%" PRIu64 "}", pl[i].schemaId);
            continue;
        }
        const schemaInfo &s = it->second;
        if (pl[i].size != s.staticSize || pl[i].payload == nullptr) {
            out += fmt("{?size%zu}", pl[i].size);
            continue;
        }
        out += "{";
        bool first = true;
        for (const schemaEntry &e : s.entries) {
            if (e.flags & NVTX_PAYLOAD_ENTRY_FLAG_HIDE) {
                continue;
            }
            out += (first ? "" : " ") + e.name + "=" +
                decodeEntry(s, e, static_cast<const char *>(pl[i].payload));
            first = false;
        }
        out += "}";
    }
    return out;
}

std::string
describe(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
    if (a == nullptr) {
        return "null-attributes";
    }
    std::string s;
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
        const auto it = stringText.find(reinterpret_cast<uintptr_t>(a->message.registered));
        s = it == stringText.end() ? "reg:?unknown-handle" : "reg:" + it->second;
    } else if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) {
        s = std::string("ascii:") + (a->message.ascii != nullptr ? a->message.ascii : "null");
    } else {
        s = fmt("msgtype%d", static_cast<int>(a->messageType));
    }
    s += a->colorType == NVTX_COLOR_ARGB ? fmt(" argb=%08x", a->color) : " argb=none";
    s += fmt(" cat=%u ", a->category);
    if (a->payloadType == NVTX_PAYLOAD_TYPE_EXT) {
        const auto *pl = reinterpret_cast<const nvtxPayloadData_t *>(
            static_cast<uintptr_t>(a->payload.ullValue));
        const size_t n = a->reserved0 < 0 ? 0 : static_cast<size_t>(a->reserved0);
        s += NIXL_NVTX_RECORDER_PAYLOAD_EXT ? decodePayloads(d, pl, n) : fmt("ext-payload(%zu)", n);
    } else if (a->payloadType == NVTX_PAYLOAD_UNKNOWN) {
        s += "-";
    } else {
        s += fmt("payloadtype%d", static_cast<int>(a->payloadType));
    }
    return s;
}

// ---- core (NVTX_CB_MODULE_CORE2) ----

nvtxDomainHandle_t NVTX_API
domainCreateA(const char *name) {
    std::lock_guard<std::mutex> g(mu);
    const size_t id = ++domainCount;
    // A tool that does not handle some domain hands out no handle for it (as NVTX without a
    // tool does): NIXL_TEST_NVTX_NULL_DOMAIN names such a domain.
    const char *none = std::getenv("NIXL_TEST_NVTX_NULL_DOMAIN");
    if (none != nullptr && name != nullptr && std::strcmp(none, name) == 0) {
        line(fmt("domain D%zu \"%s\" -> null", id, name));
        return nullptr;
    }
    line(fmt("domain D%zu \"%s\"", id, name != nullptr ? name : "null"));
    return reinterpret_cast<nvtxDomainHandle_t>(domainBase + id);
}

void NVTX_API
domainDestroy(nvtxDomainHandle_t d) {
    std::lock_guard<std::mutex> g(mu);
    line("destroy " + domainName(d));
}

void NVTX_API
domainNameCategoryA(nvtxDomainHandle_t d, uint32_t category, const char *name) {
    std::lock_guard<std::mutex> g(mu);
    line(fmt("category %s %u \"%s\"", domainName(d).c_str(), category, name ? name : "null"));
}

nvtxStringHandle_t NVTX_API
domainRegisterStringA(nvtxDomainHandle_t d, const char *s) {
    std::lock_guard<std::mutex> g(mu);
    const size_t id = ++stringCount;
    const uintptr_t h = stringBase + id;
    stringText[h] = s != nullptr ? s : "null";
    line(fmt("string %s S%zu \"%s\"", domainName(d).c_str(), id, stringText[h].c_str()));
    return reinterpret_cast<nvtxStringHandle_t>(h);
}

int NVTX_API
domainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
    std::lock_guard<std::mutex> g(mu);
    const int level = depth[reinterpret_cast<uintptr_t>(d)]++;
    line(fmt("push %s L%d ", domainName(d).c_str(), level) + describe(d, a));
    return level;
}

int NVTX_API
domainRangePop(nvtxDomainHandle_t d) {
    std::lock_guard<std::mutex> g(mu);
    int &lv = depth[reinterpret_cast<uintptr_t>(d)];
    if (lv == 0) {
        line("pop " + domainName(d) + " UNBALANCED");
        return -1;
    }
    --lv;
    line(fmt("pop %s L%d", domainName(d).c_str(), lv));
    return lv;
}

void NVTX_API
domainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
    std::lock_guard<std::mutex> g(mu);
    line("mark " + domainName(d) + " " + describe(d, a));
}

template<typename Fn>
void
setSlot(NvtxFunctionTable table, unsigned size, unsigned id, Fn fn) {
    if (id < size && table[id] != nullptr) {
        *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
    }
}

#if NIXL_NVTX_RECORDER_PAYLOAD_EXT
// ---- payload extension (NVTX_EXT_PAYLOAD_MODULEID) ----

uint64_t NVTX_API
payloadSchemaRegister(nvtxDomainHandle_t d, const nvtxPayloadSchemaAttr_t *a) {
    std::lock_guard<std::mutex> g(mu);
    if (a == nullptr || (a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID) == 0) {
        line("schema " + domainName(d) + " REFUSED (no static id)");
        return 0;
    }
    schemaInfo s;
    s.name = (a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME) && a->name ? a->name : "";
    s.staticSize = (a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE) ?
        a->payloadStaticSize :
        0;
    std::string desc;
    for (size_t i = 0; i < a->numEntries; ++i) {
        const nvtxPayloadSchemaEntry_t &e = a->entries[i];
        s.entries.push_back({e.flags, e.type, e.name ? e.name : "", e.arrayOrUnionDetail, e.offset});
        desc += fmt("%s%s:%s%s@%" PRIu64, i ? " " : "", e.name ? e.name : "", typeName(e.type),
                    (e.flags & NVTX_PAYLOAD_ENTRY_FLAG_POINTER) ? "*" : "", e.offset);
    }
    schemas[{reinterpret_cast<uintptr_t>(d), a->schemaId}] = s;
    line(fmt("schema %s %" PRIu64 " \"%s\" size=%zu [", domainName(d).c_str(), a->schemaId,
             s.name.c_str(), s.staticSize) +
         desc + "]");
    return a->schemaId;
}

void NVTX_API
markPayload(nvtxDomainHandle_t d, const nvtxPayloadData_t *pl, size_t n) {
    std::lock_guard<std::mutex> g(mu);
    line("ext.mark " + domainName(d) + " " + decodePayloads(d, pl, n));
}

int NVTX_API
rangePushPayload(nvtxDomainHandle_t d, const nvtxPayloadData_t *pl, size_t n) {
    std::lock_guard<std::mutex> g(mu);
    line("ext.push " + domainName(d) + " " + decodePayloads(d, pl, n));
    return depth[reinterpret_cast<uintptr_t>(d)]++;
}

int NVTX_API
rangePopPayload(nvtxDomainHandle_t d, const nvtxPayloadData_t *pl, size_t n) {
    std::lock_guard<std::mutex> g(mu);
    line("ext.pop " + domainName(d) + " " + decodePayloads(d, pl, n));
    return --depth[reinterpret_cast<uintptr_t>(d)];
}
#endif

} // namespace

extern "C" {

// Entry point NVTX looks up after dlopen of NVTX_INJECTION64_PATH; non-zero = attached.
__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
    const auto *cb = static_cast<const NvtxExportTableCallbacks *>(
        getExportTable(NVTX_ETID_CALLBACKS));
    if (cb == nullptr || cb->struct_size < sizeof(NvtxExportTableCallbacks)) {
        return 0;
    }
    NvtxFunctionTable table = nullptr;
    unsigned size = 0;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) == 0 || table == nullptr) {
        return 0;
    }
    setSlot(table, size, NVTX_CBID_CORE2_DomainCreateA, &domainCreateA);
    setSlot(table, size, NVTX_CBID_CORE2_DomainDestroy, &domainDestroy);
    setSlot(table, size, NVTX_CBID_CORE2_DomainNameCategoryA, &domainNameCategoryA);
    setSlot(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, &domainRegisterStringA);
    setSlot(table, size, NVTX_CBID_CORE2_DomainRangePushEx, &domainRangePushEx);
    setSlot(table, size, NVTX_CBID_CORE2_DomainRangePop, &domainRangePop);
    setSlot(table, size, NVTX_CBID_CORE2_DomainMarkEx, &domainMarkEx);
    return 1;
}

#if NIXL_NVTX_RECORDER_PAYLOAD_EXT
// Entry point of NVTX extensions: called once per extension module the program uses.
__attribute__((visibility("default"))) int
InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info) {
    if (info == nullptr || info->moduleId != NVTX_EXT_PAYLOAD_MODULEID ||
        info->segmentsCount < 1 || info->segments == nullptr) {
        return 1; // another extension: attached, but none of its calls implemented
    }
    nvtxExtModuleSegment_t &seg = info->segments[0];
    auto set = [&seg](size_t id, auto fn) {
        if (id < seg.slotCount) {
            seg.functionSlots[id] = reinterpret_cast<intptr_t>(fn);
        }
    };
    set(NVTX3EXT_CBID_nvtxPayloadSchemaRegister, &payloadSchemaRegister);
    set(NVTX3EXT_CBID_nvtxMarkPayload, &markPayload);
    set(NVTX3EXT_CBID_nvtxRangePushPayload, &rangePushPayload);
    set(NVTX3EXT_CBID_nvtxRangePopPayload, &rangePopPayload);
    std::lock_guard<std::mutex> g(mu);
    extInitialized = true;
    return 1;
}
#endif

// The record so far (malloc'd, caller frees), which is then cleared.
__attribute__((visibility("default"))) char *
nixl_nvtx_recorder_take(void) {
    std::lock_guard<std::mutex> g(mu);
    char *out = strdup(record.c_str());
    record.clear();
    return out;
}

// Forgets everything recorded and restarts D<n>/S<n> numbering, so that each test's expected
// sequence does not depend on the tests before it. Handles given out before stay unknown.
__attribute__((visibility("default"))) void
nixl_nvtx_recorder_reset(void) {
    std::lock_guard<std::mutex> g(mu);
    record.clear();
    domainCount = 0;
    stringCount = 0;
    stringText.clear();
    schemas.clear();
    depth.clear();
}

// 1 if this build implements the payload extension (and NVTX initialised it), else 0.
__attribute__((visibility("default"))) int
nixl_nvtx_recorder_payload_ext(void) {
    std::lock_guard<std::mutex> g(mu);
    return extInitialized ? 1 : 0;
}

} // extern "C"
