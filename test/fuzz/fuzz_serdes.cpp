/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fuzz_serdes.cpp
 * @brief libFuzzer target for the bytes another process hands to nixlSerDes::importStr, and for
 *        the descriptor-list deserialising constructors that read from it.
 *
 * Checked beyond "no crash, no sanitizer report": a length getBufLen reports is readable with
 * getBuf and never exceeds the input, and a list that deserialises survives serialise ->
 * export -> import -> deserialise unchanged.
 */
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "fuzz_common.h"
#include "nixl_descriptors.h"
#include "utils/serdes/serdes.h"

namespace {

// Tags NIXL programs and the descriptor lists use. The fuzzer finds others through the
// comparison hooks, but starting from the real ones reaches the interesting paths sooner.
const char *const probe_tags[] = {"", "t", "n", "nixlDList", "Agent", "Conns", "bknd"};
constexpr size_t probe_tag_count = sizeof(probe_tags) / sizeof(probe_tags[0]);

void
probeFields(const std::string &input) {
    nixlSerDes sd;
    if (sd.importStr(input) != NIXL_SUCCESS) {
        return;
    }
    // Walk the stream: at each step try every probe tag, take the first that matches.
    for (int step = 0; step < 32; ++step) {
        bool advanced = false;
        for (size_t t = 0; t < probe_tag_count && !advanced; ++t) {
            const std::string tag = probe_tags[t];
            const ssize_t len = sd.getBufLen(tag);
            if (len < 0) {
                continue;
            }
            NIXL_FUZZ_CHECK(static_cast<size_t>(len) <= input.size());
            std::string buf(static_cast<size_t>(len), '\0');
            if (len > 0) {
                // A wrong length is refused before anything is read, so the field stays next.
                NIXL_FUZZ_CHECK(sd.getBuf(tag, buf.data(), len - 1) != NIXL_SUCCESS);
                NIXL_FUZZ_CHECK(sd.getBufLen(tag) == len);
            }
            if (step % 2 == 0) {
                NIXL_FUZZ_CHECK(sd.getBuf(tag, buf.data(), len) == NIXL_SUCCESS);
            } else {
                NIXL_FUZZ_CHECK(sd.getStr(tag).size() == static_cast<size_t>(len));
            }
            advanced = true;
        }
        if (!advanced) {
            // An unknown tag: getStr must refuse it without consuming anything. (The input may
            // itself carry this tag next; libFuzzer finds such inputs. Then it is not unknown.)
            const std::string unknown = "\x01no such tag";
            if (sd.getBufLen(unknown) < 0) {
                NIXL_FUZZ_CHECK(sd.getStr(unknown).empty());
                NIXL_FUZZ_CHECK(sd.getBufLen(unknown) < 0);
            }
            return;
        }
    }
}

template<class T>
bool
sameElements(const nixlDescList<T> &a, const nixlDescList<T> &b) {
    if (!(a == b)) {
        return false;
    }
    if constexpr (std::is_same_v<T, nixlBlobDesc>) {
        // operator== on lists compares only the basic fields.
        for (int i = 0; i < a.descCount(); ++i) {
            if (a[i].metaInfo != b[i].metaInfo) {
                return false;
            }
        }
    }
    return true;
}

template<class T>
void
probeList(const std::string &input) {
    nixlSerDes sd;
    if (sd.importStr(input) != NIXL_SUCCESS) {
        return;
    }
    const nixlDescList<T> list(&sd);
    NIXL_FUZZ_CHECK(list.descCount() >= 0);
    NIXL_FUZZ_CHECK(list.getType() >= DRAM_SEG && list.getType() <= FILE_SEG);
    if (list.isEmpty()) {
        return;
    }
    nixlSerDes out;
    NIXL_FUZZ_CHECK(list.serialize(&out) == NIXL_SUCCESS);
    nixlSerDes in;
    NIXL_FUZZ_CHECK(in.importStr(out.exportStr()) == NIXL_SUCCESS);
    const nixlDescList<T> again(&in);
    NIXL_FUZZ_CHECK(sameElements(list, again));
}

} // namespace

extern "C" int
LLVMFuzzerInitialize(int *, char ***) {
    nixlFuzzQuietLogs();
    return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string input(reinterpret_cast<const char *>(data), size);
    probeFields(input);
    probeList<nixlBasicDesc>(input);
    probeList<nixlBlobDesc>(input);
    return 0;
}
