/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The backend SDK's side of trace phases: the constexpr phase names and nixlRecordPhase, which
// a plugin calls with the sink core gave it (or null).

#include <gtest/gtest.h>

#include <string>

#include "nixl_backend_sdk.h"

namespace {

static_assert(nixlTracePhaseName(NIXL_BE_PHASE_SUBMIT) == "submit");
static_assert(nixlTracePhaseName(NIXL_BE_PHASE_OTHER) == "other");

struct call {
    int count = 0;
    const nixl_be_trace_ctx_t *trace = nullptr;
    uint32_t phase = 0;
    std::string label;
    uint64_t ts = 0;
    const nixl_trace_attr_t *attrs = nullptr;
    size_t n = 0;
};

void
recordInto(void *ctx,
           const nixl_be_trace_ctx_t *trace,
           uint32_t phase,
           nixl_plugin_str_t label,
           uint64_t ts,
           const nixl_trace_attr_t *attrs,
           size_t n) {
    auto &c = *static_cast<call *>(ctx);
    ++c.count;
    c.trace = trace;
    c.phase = phase;
    c.label.assign(label.data, label.len);
    c.ts = ts;
    c.attrs = attrs;
    c.n = n;
}

} // namespace

TEST(tracePhaseSdk, NamesMatchTheCHeaderForEveryValue) {
    for (uint32_t p = 0; p <= NIXL_BE_PHASE_COUNT + 1; ++p) {
        EXPECT_EQ(std::string(nixlTracePhaseName(static_cast<nixl_be_trace_phase_t>(p))),
                  std::string(nixl_be_trace_phase_name(p)))
            << p;
    }
}

TEST(tracePhaseSdk, RecordPhaseForwardsAndIsANoOpWithoutASink) {
    call c;
    nixl_be_trace_sink_t sink{sizeof(nixl_be_trace_sink_t), &c, recordInto};
    nixl_be_trace_ctx_t ctx{};
    nixl_trace_attr_t attrs[1] = {};
    attrs[0].key = "k";
    nixlRecordPhase(&sink, &ctx, NIXL_BE_PHASE_NOTIF_SENT, "lbl", 77, attrs);
    EXPECT_EQ(c.count, 1);
    EXPECT_EQ(c.trace, &ctx);
    EXPECT_EQ(c.phase, static_cast<uint32_t>(NIXL_BE_PHASE_NOTIF_SENT));
    EXPECT_EQ(c.label, "lbl");
    EXPECT_EQ(c.ts, 77u);
    EXPECT_EQ(c.attrs, attrs);
    EXPECT_EQ(c.n, 1u);

    nixlRecordPhase(&sink, nullptr, NIXL_BE_PHASE_SUBMIT, "", 1);
    EXPECT_EQ(c.count, 2);
    EXPECT_EQ(c.attrs, nullptr); // no attributes: null, count 0
    EXPECT_EQ(c.n, 0u);

    nixlRecordPhase(nullptr, &ctx, NIXL_BE_PHASE_SUBMIT, "x", 1); // tracing off
    // A sink too small to hold record_phase is not called.
    nixl_be_trace_sink_t small{sizeof(size_t), &c, recordInto};
    nixlRecordPhase(&small, &ctx, NIXL_BE_PHASE_SUBMIT, "x", 1);
    EXPECT_EQ(c.count, 2);
}
