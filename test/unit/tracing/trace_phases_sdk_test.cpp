/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The backend SDK's side of trace phases: the constexpr phase names and nixlRecordPhase, which
// a plugin calls with the sink core gave it (or null).

#include <gtest/gtest.h>

#include <cstddef>
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

namespace {

struct batchCall {
    int count = 0;
    const nixl_be_trace_sink_t *sink = nullptr;
    const nixl_be_trace_ctx_t *trace = nullptr;
    const nixl_be_trace_phase_rec_t *recs = nullptr;
    size_t recSize = 0;
    size_t n = 0;
};
batchCall batchSeen;

void
recordBatchInto(void *,
                const nixl_be_trace_sink_t *sink,
                const nixl_be_trace_ctx_t *trace,
                const nixl_be_trace_phase_rec_t *recs,
                size_t rec_size,
                size_t n) {
    ++batchSeen.count;
    batchSeen.sink = sink;
    batchSeen.trace = trace;
    batchSeen.recs = recs;
    batchSeen.recSize = rec_size;
    batchSeen.n = n;
}

/** Installs services as the SDK's core services for one test, and puts the old ones back. */
class scopedServices {
public:
    explicit scopedServices(const nixl_plugin_core_services_t *services)
        : old_(nixlSdk::coreServices().exchange(services)) {}
    ~scopedServices() {
        nixlSdk::coreServices().store(old_);
    }

private:
    const nixl_plugin_core_services_t *old_;
};

} // namespace

TEST(tracePhaseSdk, BatchGoesToCoreInOneCallWhenTheServicesHaveRecordPhases) {
    batchSeen = batchCall{};
    nixl_plugin_core_services_t services{};
    services.size = sizeof(services);
    services.record_phases = recordBatchInto;
    scopedServices scoped(&services);
    call c;
    nixl_be_trace_sink_t sink{sizeof(nixl_be_trace_sink_t), &c, recordInto};
    nixl_be_trace_ctx_t ctx{};
    nixlTracePhaseBatch batch;
    EXPECT_TRUE(batch.add(NIXL_BE_PHASE_SUBMIT, "post"));
    EXPECT_TRUE(batch.add(NIXL_BE_PHASE_WIRE_SUBMITTED, "copy"));
    ASSERT_EQ(batch.n, 2u);
    EXPECT_EQ(batch.recs[0].timestamp_us, nixlTraceNow); // the batch's time
    nixlRecordPhases(&sink, &ctx, batch.recs, batch.n);
    EXPECT_EQ(batchSeen.count, 1);
    EXPECT_EQ(batchSeen.sink, &sink);
    EXPECT_EQ(batchSeen.trace, &ctx);
    EXPECT_EQ(batchSeen.recs, batch.recs);
    EXPECT_EQ(batchSeen.recSize, sizeof(nixl_be_trace_phase_rec_t));
    EXPECT_EQ(batchSeen.n, 2u);
    EXPECT_EQ(c.count, 0); // not one by one

    nixlRecordPhases(nullptr, &ctx, batch.recs, batch.n); // tracing off
    nixlRecordPhases(&sink, &ctx, batch.recs, 0); // nothing to record
    EXPECT_EQ(batchSeen.count, 1);
}

TEST(tracePhaseSdk, BatchFallsBackToOneRecordPhaseEachWithAnOlderCore) {
    batchSeen = batchCall{};
    // An older core's services end before record_phases; a newer one may leave it null.
    nixl_plugin_core_services_t older{};
    older.size = offsetof(nixl_plugin_core_services_t, record_phases);
    older.record_phases = recordBatchInto; // beyond its size: must not be read
    nixl_plugin_core_services_t unset{};
    unset.size = sizeof(unset);
    for (const nixl_plugin_core_services_t *services :
         {static_cast<const nixl_plugin_core_services_t *>(nullptr),
          static_cast<const nixl_plugin_core_services_t *>(&older),
          static_cast<const nixl_plugin_core_services_t *>(&unset)}) {
        scopedServices scoped(services);
        call c;
        nixl_be_trace_sink_t sink{sizeof(nixl_be_trace_sink_t), &c, recordInto};
        nixlTracePhaseBatch batch;
        batch.add(NIXL_BE_PHASE_SUBMIT, "post");
        batch.add(NIXL_BE_PHASE_WIRE_COMPLETED, "copy");
        nixlRecordPhases(&sink, nullptr, batch.recs, batch.n);
        EXPECT_EQ(c.count, 2);
        EXPECT_EQ(c.phase, static_cast<uint32_t>(NIXL_BE_PHASE_WIRE_COMPLETED)); // in order
        EXPECT_EQ(c.label, "copy");
        EXPECT_EQ(c.ts, nixlTraceNow);
    }
    EXPECT_EQ(batchSeen.count, 0);
}

TEST(tracePhaseSdk, BatchHoldsAtMostMaxPhases) {
    nixlTracePhaseBatch batch;
    for (size_t i = 0; i < nixlTracePhaseBatch::max_phases; ++i) {
        EXPECT_TRUE(batch.add(NIXL_BE_PHASE_OTHER, "x"));
    }
    EXPECT_TRUE(batch.full());
    EXPECT_FALSE(batch.add(NIXL_BE_PHASE_OTHER, "y"));
    EXPECT_EQ(batch.n, nixlTracePhaseBatch::max_phases);
}
