/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Reassembly of notification fragments within bounded memory (lf_notif.h), without the plugin:
// in-order delivery of out-of-order fragments, and malicious sequences (huge announced lengths,
// many messages under way, many senders) that must stay within the limits, drop only the
// offending messages, and leave the sender's later messages deliverable.

#include <gtest/gtest.h>

#include "lf_notif.h"

using namespace nixlLf;

namespace {

constexpr size_t peer_max = size_t(1) << 20;
constexpr size_t total_max = size_t(3) << 20;

notifFragWire
frag(uint64_t nonce, uint32_t seq, uint32_t total, uint32_t offset, std::string_view payload,
     std::string_view sender = "P") {
    notifFragWire f;
    f.nonce = nonce;
    f.seq = seq;
    f.total = total;
    f.offset = offset;
    f.sender = offset == 0 ? sender : std::string_view();
    f.payload = payload;
    return f;
}

/** A whole message in one fragment. */
notifReassembler::result
whole(notifReassembler &r, uint64_t nonce, uint32_t seq, const std::string &msg,
      std::vector<notifReassembler::message> &out, int64_t now = 0) {
    return r.feed(frag(nonce, seq, static_cast<uint32_t>(msg.size()), 0, msg), now, out);
}

} // namespace

TEST(lfNotif, OutOfOrderFragmentsAndMessagesDeliveredInOrder) {
    notifReassembler r(peer_max, total_max);
    std::vector<notifReassembler::message> out;
    const std::string a = "first-message", b = "second";
    // Message 1 completes before message 0; message 0's fragments arrive last-first.
    EXPECT_FALSE(whole(r, 7, 1, b, out).dropped);
    EXPECT_TRUE(out.empty());
    EXPECT_FALSE(r.feed(frag(7, 0, a.size(), 5, std::string_view(a).substr(5)), 0, out).dropped);
    EXPECT_TRUE(out.empty());
    EXPECT_FALSE(r.feed(frag(7, 0, a.size(), 0, std::string_view(a).substr(0, 5)), 0, out).dropped);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].data, a);
    EXPECT_EQ(out[0].sender, "P");
    EXPECT_EQ(out[1].data, b);
    // Only the sender's own state stays charged.
    EXPECT_EQ(r.heldBytes(), notif_entry_overhead);
}

TEST(lfNotif, HugeAnnouncedLengthDroppedAndSenderKeepsWorking) {
    notifReassembler r(peer_max, total_max);
    std::vector<notifReassembler::message> out;
    // A 1-byte fragment announcing a 64 MiB message: not allocated, dropped, logged once.
    auto res = r.feed(frag(9, 0, max_notif_len, 0, "x"), 0, out);
    EXPECT_TRUE(res.dropped);
    EXPECT_TRUE(res.overLimit);
    EXPECT_TRUE(res.log);
    EXPECT_EQ(res.sender, "P");
    EXPECT_EQ(res.senderDrops, 1u);
    EXPECT_LE(r.heldBytes(9), 2 * notif_entry_overhead);
    EXPECT_EQ(r.droppedMessages(), 1u);
    // Its further fragments are swallowed by the tombstone, without a new line.
    res = r.feed(frag(9, 0, max_notif_len, 1, "y"), 0, out);
    EXPECT_TRUE(res.dropped);
    EXPECT_FALSE(res.log);
    // The next message waits for the dropped one to be complete (the sender's order) ...
    EXPECT_FALSE(whole(r, 9, 1, "after", out).dropped);
    EXPECT_TRUE(out.empty());
    // ... which a well-behaved sender completes: then later messages flow.
    r.feed(frag(9, 0, max_notif_len, 2, std::string(max_notif_len - 2, 'z')), 0, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].data, "after");
    EXPECT_FALSE(whole(r, 9, 2, "later", out).dropped);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].data, "later");
    EXPECT_EQ(r.heldBytes(9), 0u); // nothing under way (the sender's own state is charged to the total)
    EXPECT_EQ(r.droppedMessages(), 1u);
}

TEST(lfNotif, ManyMessagesUnderWayStayWithinThePerSenderLimit) {
    notifReassembler r(peer_max, total_max);
    std::vector<notifReassembler::message> out;
    // Seq 0 never arrives; the sender opens thousands of 64 KiB messages behind it.
    size_t drops = 0, lines = 0;
    for (uint32_t seq = 1; seq <= 5000; ++seq) {
        auto res = r.feed(frag(3, seq, 65536, 0, "a"), seq, out); // 1 ms apart
        drops += res.dropped;
        lines += res.log;
        ASSERT_LE(r.heldBytes(3), peer_max) << "seq " << seq;
    }
    EXPECT_TRUE(out.empty());
    EXPECT_GT(drops, 4000u);
    // Rate-limited: one line per second of drops (5 s here), not one per drop.
    EXPECT_LE(lines, 6u);
    EXPECT_GE(lines, 1u);
    // Another sender is unaffected.
    EXPECT_FALSE(whole(r, 4, 0, "other", out).dropped);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].data, "other");
}

TEST(lfNotif, ManySendersStayWithinTheTotalLimit) {
    notifReassembler r(peer_max, total_max);
    std::vector<notifReassembler::message> out;
    size_t drops = 0;
    for (uint64_t nonce = 100; nonce < 100 + 64; ++nonce) {
        drops += r.feed(frag(nonce, 0, 900000, 0, "a"), 0, out).dropped;
        ASSERT_LE(r.heldBytes(), total_max) << "sender " << nonce;
    }
    EXPECT_GT(drops, 50u);
    for (uint64_t nonce = 1000; nonce < 1000 + 100000; ++nonce) {
        r.feed(frag(nonce, 0, 8, 0, "a"), 0, out);
        ASSERT_LE(r.heldBytes(), total_max) << "sender " << nonce;
    }
}

TEST(lfNotif, LengthDisagreementAndRepeatDropped) {
    notifReassembler r(peer_max, total_max);
    std::vector<notifReassembler::message> out;
    EXPECT_FALSE(r.feed(frag(5, 0, 10, 0, "abcde"), 0, out).dropped);
    auto res = r.feed(frag(5, 0, 12, 5, "fghij"), 0, out);
    EXPECT_TRUE(res.dropped);
    EXPECT_NE(res.why.find("disagree"), std::string::npos);
    // The order moved on past the dropped message.
    EXPECT_FALSE(whole(r, 5, 1, "next", out).dropped);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].data, "next");
    res = whole(r, 5, 1, "next", out);
    EXPECT_TRUE(res.dropped);
    EXPECT_NE(res.why.find("again"), std::string::npos);
    EXPECT_EQ(out.size(), 1u);
}

// Delivered notifications that nobody takes (an agent that never calls getNotifs) are bounded
// like reassembly: a message that would pass the limit is dropped and counted, the ones before
// it stay, and once getNotifs took them there is room again. The agent's own never drop.
TEST(lfNotif, DeliveredButUnreadStayWithinTheLimit) {
    const size_t limit = 4096;
    deliveredNotifs d(limit);
    const std::string msg(1000, 'x');
    size_t kept = 0;
    while (d.push("P", msg)) {
        ++kept;
        ASSERT_LE(d.heldBytes(), limit);
    }
    EXPECT_EQ(kept, limit / (1 + msg.size() + notif_entry_overhead));
    EXPECT_EQ(d.dropped(), 1u);
    EXPECT_FALSE(d.push("P", std::string(limit, 'y'))); // larger than the whole limit
    EXPECT_EQ(d.dropped(), 2u);
    EXPECT_EQ(d.unlogged, 2u);
    d.pushLocal("self", std::string(limit, 'z')); // loopback: the agent's own
    deliveredNotifs::list_t out;
    d.take(out);
    ASSERT_EQ(out.size(), kept + 1);
    EXPECT_EQ(out.front().second, msg);
    EXPECT_EQ(out.back().first, "self");
    EXPECT_EQ(d.heldBytes(), 0u);
    EXPECT_TRUE(d.push("P", msg)); // room again
}
