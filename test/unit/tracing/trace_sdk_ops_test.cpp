/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The trace backend SDK leaves an event operation NULL when the plugin class does not override
// it, and core then never calls it: the table the SDK builds for classes overriding different
// subsets (directly and through an intermediate class), and a Tracer over such a table that
// still nests spans for the events it does deliver.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>
#include <string>

#include "nixl_trace_backend_sdk.h"
#include "tracing/tracing.h"

namespace {

using nixl::trace::NameId;
using nixl::trace::Span;
using nixl::trace::Tracer;

struct endOnly : nixlTraceBackendBase {
    explicit endOnly(const nixlTraceBackendContext &) {}
    void
    spanEnd(const nixl_trace_event_t &ev) noexcept override {
        ends.push_back({ev.span_id, ev.parent_span_id});
    }
    static inline std::vector<std::pair<uint64_t, uint64_t>> ends;
};

struct all : nixlTraceBackendBase {
    explicit all(const nixlTraceBackendContext &) {}
    void
    spanBegin(const nixl_trace_event_t &) noexcept override {}
    void
    spanEnd(const nixl_trace_event_t &) noexcept override {}
    void
    mark(const nixl_trace_event_t &) noexcept override {}
};

struct marksOnly : nixlTraceBackendBase {
    explicit marksOnly(const nixlTraceBackendContext &) {}
    void
    mark(const nixl_trace_event_t &) noexcept override {}
};

/** Overrides nothing itself: inherits marksOnly's mark. */
struct derivedFromMarks : marksOnly {
    using marksOnly::marksOnly;
};

struct none : nixlTraceBackendBase {
    explicit none(const nixlTraceBackendContext &) {}
};

template<typename T>
const nixl_trace_backend_ops_t &
table() {
    return nixlSdk::detail::traceBackendOps<T>::table;
}

} // namespace

TEST(traceSdkOps, OperationsNotOverriddenAreNull) {
    EXPECT_EQ(table<endOnly>().span_begin, nullptr);
    EXPECT_NE(table<endOnly>().span_end, nullptr);
    EXPECT_EQ(table<endOnly>().mark, nullptr);

    EXPECT_NE(table<all>().span_begin, nullptr);
    EXPECT_NE(table<all>().span_end, nullptr);
    EXPECT_NE(table<all>().mark, nullptr);

    EXPECT_EQ(table<marksOnly>().span_begin, nullptr);
    EXPECT_EQ(table<marksOnly>().span_end, nullptr);
    EXPECT_NE(table<marksOnly>().mark, nullptr);

    EXPECT_EQ(table<derivedFromMarks>().span_begin, nullptr);
    EXPECT_NE(table<derivedFromMarks>().mark, nullptr);

    EXPECT_EQ(table<none>().span_begin, nullptr);
    EXPECT_EQ(table<none>().span_end, nullptr);
    EXPECT_EQ(table<none>().mark, nullptr);
    // create and destroy are always there.
    EXPECT_NE(table<none>().create, nullptr);
    EXPECT_NE(table<none>().destroy, nullptr);
    EXPECT_EQ(table<none>().size, sizeof(nixl_trace_backend_ops_t));
}

TEST(traceSdkOps, CoreSkipsNullOperationsAndStillNests) {
    endOnly::ends.clear();
    auto tracer = Tracer::create(
        "agentSdk", {nixl::trace::TraceBackendRef{"endonly", "table", &table<endOnly>(), nullptr}});
    ASSERT_NE(tracer, nullptr);
    uint64_t outer = 0;
    uint64_t inner = 0;
    {
        Span a(*tracer, NameId::POST_XFER_WRITE);
        outer = a.id();
        {
            Span b(*tracer, NameId::MAKE_CONNECTION);
            inner = b.id();
            // Nesting is core's bookkeeping: it holds with no span_begin delivered.
            EXPECT_EQ(b.parentId(), outer);
            EXPECT_EQ(tracer->currentSpan(), inner);
        }
        tracer->mark(NameId::XFER_COMPLETE); // no mark op: nothing to call
        EXPECT_EQ(tracer->currentSpan(), outer);
    }
    EXPECT_EQ(tracer->currentSpan(), 0u);
    ASSERT_EQ(endOnly::ends.size(), 2u);
    EXPECT_EQ(endOnly::ends[0], std::make_pair(inner, outer));
    EXPECT_EQ(endOnly::ends[1], std::make_pair(outer, uint64_t{0}));
}

namespace {

/** Records the order of the calls it gets, and the mark's fields. */
template<bool Folds> struct completionRecorder : nixlTraceBackendBase {
    static constexpr bool foldsCompletion = Folds;
    explicit completionRecorder(const nixlTraceBackendContext &ctx) {
        keyCount = ctx.keys.size();
    }
    void
    spanEnd(const nixl_trace_event_t &ev) noexcept override {
        calls.push_back('E');
        endCompleteNs = ev.complete_ns;
    }
    void
    mark(const nixl_trace_event_t &ev) noexcept override {
        calls.push_back('M');
        markEv = ev;
        markName = ev.name;
    }
    static inline std::string calls;
    static inline uint64_t endCompleteNs = 0;
    static inline nixl_trace_event_t markEv{};
    static inline std::string markName;
    static inline size_t keyCount = 0;
};

} // namespace

TEST(traceSdkOps, FoldedCompletionIsSplitForAPluginThatDoesNotFoldIt) {
    using splits = completionRecorder<false>;
    using folds = completionRecorder<true>;
    static_assert(!nixlTraceBackendBase::foldsCompletion && folds::foldsCompletion);
    for (bool fold : {false, true}) {
        SCOPED_TRACE(fold ? "folds" : "splits");
        splits::calls.clear();
        folds::calls.clear();
        const nixl_trace_backend_ops_t &ops = fold ? table<folds>() : table<splits>();
        auto tracer =
            Tracer::create("agentSdk", {nixl::trace::TraceBackendRef{"rec", "table", &ops, nullptr}});
        ASSERT_NE(tracer, nullptr);
        uint64_t id = 0;
        uint64_t at = 0;
        {
            nixl::trace::CorrelationScope corr(tracer.get(), 9);
            Span s(*tracer, NameId::POST_XFER_WRITE);
            id = s.id();
            at = nixl::trace::nowNs();
            s.setCompleted(at);
        }
        const std::string &calls = fold ? folds::calls : splits::calls;
        EXPECT_EQ(fold ? folds::keyCount : splits::keyCount,
                  static_cast<size_t>(nixl::trace::KeyId::COUNT));
        if (fold) {
            EXPECT_EQ(calls, "E"); // one call: the plugin writes the mark from the span's end
            EXPECT_EQ(folds::endCompleteNs, at);
        } else {
            ASSERT_EQ(calls, "ME"); // the mark first: it happened inside the span
            EXPECT_EQ(splits::markName, "nixl::xfer.complete");
            EXPECT_EQ(splits::markEv.name_id,
                      static_cast<uint32_t>(NameId::XFER_COMPLETE));
            EXPECT_EQ(splits::markEv.parent_span_id, id);
            EXPECT_EQ(splits::markEv.correlation_id, 9u);
            EXPECT_EQ(splits::markEv.begin_ns, at);
            EXPECT_EQ(splits::markEv.span_id, 0u);
            EXPECT_EQ(splits::markEv.complete_ns, 0u);
            EXPECT_EQ(splits::markEv.size, sizeof(nixl_trace_event_t));
        }
    }
}
