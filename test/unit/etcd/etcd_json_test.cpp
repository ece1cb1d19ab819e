/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// The etcd module's pure parts, no server: the strict JSON reader, base64, the watch message
// reader, endpoint lists, the configuration variables and the key layout.

#include <gtest/gtest.h>

#include <stdexcept>

#include "etcd_client.h"
#include "etcd_internal.h"
#include "etcd_json.h"
#include "etcd_metadata.h"
#include "config/config.h"
#include "../../common/scoped_env.h"

namespace {

bool
parses(std::string_view text) {
    nixlJsonValue v;
    std::string err;
    return nixlJsonParse(text, v, err);
}

TEST(EtcdJson, ReadsTheGatewayShapes) {
    nixlJsonValue v;
    std::string err;
    ASSERT_TRUE(nixlJsonParse(
        R"({"header":{"cluster_id":"1511","revision":"2"},"kvs":[{"key":"L25peGwvYQ==",)"
        R"("mod_revision":"2","value":"aGVsbG8A/w=="}],"count":"1","more":false,"x":null,)"
        R"("f":-1.5e3})",
        v,
        err))
        << err;
    int64_t rev = 0;
    ASSERT_TRUE(nixlJsonInt(v.find("header")->find("revision"), rev));
    EXPECT_EQ(rev, 2);
    const nixlJsonValue *kvs = v.find("kvs");
    ASSERT_NE(kvs, nullptr);
    ASSERT_EQ(kvs->items.size(), 1u);
    nixlEtcdKv kv;
    ASSERT_TRUE(nixl_etcd_detail::parseKv(kvs->items[0], kv, err)) << err;
    EXPECT_EQ(kv.key, "/nixl/a");
    EXPECT_EQ(kv.value, std::string("hello\0\xff", 7));
    EXPECT_EQ(kv.modRevision, 2);
    bool more = true;
    EXPECT_TRUE(nixlJsonBool(v.find("more"), more));
    EXPECT_FALSE(more);
    EXPECT_EQ(v.find("x")->kind, nixlJsonValue::kind_t::NUL);
    int64_t f = 0;
    EXPECT_FALSE(nixlJsonInt(v.find("f"), f)); // not an integer
    EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(EtcdJson, DecodesEscapesAndUtf8) {
    nixlJsonValue v;
    std::string err;
    ASSERT_TRUE(nixlJsonParse(R"(["a\"\\\/\b\f\n\r\t", "\u00e9\ud83d\ude00", "é"])", v, err))
        << err;
    EXPECT_EQ(v.items[0].text, "a\"\\/\b\f\n\r\t");
    EXPECT_EQ(v.items[1].text, "\xc3\xa9\xf0\x9f\x98\x80");
    EXPECT_EQ(v.items[2].text, "\xc3\xa9");
    // Quote and parse back: any bytes of valid UTF-8 survive.
    const std::string s = std::string("x\x01\"\\\n\xc3\xa9", 7);
    ASSERT_TRUE(nixlJsonParse(nixlJsonQuote(s), v, err)) << err;
    EXPECT_EQ(v.text, s);
}

TEST(EtcdJson, RefusesWhatIsNotStrictJson) {
    const char *bad[] = {
        "",
        " ",
        "{",
        "{\"a\":1,}",
        "[1,]",
        "{\"a\":1 \"b\":2}",
        "{\"a\":1,\"a\":2}", // duplicate member
        "{a:1}",
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "+1",
        "NaN",
        "tru",
        "nul",
        "\"abc",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\ud800\"", // lone high surrogate
        "\"\\udc00\"", // lone low surrogate
        "\"\x01\"", // raw control character
        "\"\xc3\"", // truncated UTF-8
        "\"\xc0\xaf\"", // overlong
        "\"\xed\xa0\x80\"", // encoded surrogate
        "\"\xf5\x80\x80\x80\"", // beyond U+10FFFF
        "{} {}",
        "{}x",
        "// c\n{}",
    };
    for (const char *b : bad) {
        EXPECT_FALSE(parses(b)) << "accepted: " << b;
    }
    std::string deep(nixl_json_max_depth + 1, '[');
    deep += std::string(nixl_json_max_depth + 1, ']');
    EXPECT_FALSE(parses(deep));
    std::string ok(nixl_json_max_depth, '[');
    ok += std::string(nixl_json_max_depth, ']');
    EXPECT_TRUE(parses(ok));
}

TEST(EtcdJson, IntegersAsGatewayWritesThem) {
    nixlJsonValue v;
    std::string err;
    ASSERT_TRUE(nixlJsonParse(R"({"a":"9223372036854775807","b":-3,"c":"9223372036854775808",)"
                              R"("d":"012","e":"","f":"1x","g":true,"h":"-0"})",
                              v,
                              err));
    int64_t n = 0;
    EXPECT_TRUE(nixlJsonInt(v.find("a"), n));
    EXPECT_EQ(n, INT64_MAX);
    EXPECT_TRUE(nixlJsonInt(v.find("b"), n));
    EXPECT_EQ(n, -3);
    for (const char *k : {"c", "d", "e", "f", "g"}) {
        EXPECT_FALSE(nixlJsonInt(v.find(k), n)) << k;
    }
    EXPECT_TRUE(nixlJsonInt(nullptr, n, 7));
    EXPECT_EQ(n, 7);
}

TEST(EtcdJson, Base64RoundTripAndStrictness) {
    std::string all;
    for (int i = 0; i < 256; ++i) {
        all += static_cast<char>(i);
    }
    for (size_t len = 0; len <= 7; ++len) {
        std::string out;
        ASSERT_TRUE(nixlBase64Decode(nixlBase64Encode(all.substr(0, len)), out));
        EXPECT_EQ(out, all.substr(0, len));
    }
    std::string out;
    ASSERT_TRUE(nixlBase64Decode(nixlBase64Encode(all), out));
    EXPECT_EQ(out, all);
    EXPECT_EQ(nixlBase64Encode("hello\0\xff"), "aGVsbG8=");
    EXPECT_EQ(nixlBase64Encode(std::string("hello\0\xff", 7)), "aGVsbG8A/w==");
    for (const char *b : {"a", "aGVsbG8", "aGVs bG8=", "aGVsbG8A/w=x", "a===", "aGVsbG9=",
                          "aG==aGVs", "aGVsbG8_", "aGVsbG8-"}) {
        EXPECT_FALSE(nixlBase64Decode(b, out)) << b;
    }
}

TEST(EtcdJson, WatchMessages) {
    using nixl_etcd_detail::parseWatchMessage;
    nixlJsonValue v;
    std::string err;
    nixl_etcd_detail::watchMessage m;
    ASSERT_TRUE(nixlJsonParse(R"({"result":{"header":{"revision":"3"},"created":true}})", v, err));
    ASSERT_TRUE(parseWatchMessage(v, m, err)) << err;
    EXPECT_TRUE(m.created);
    EXPECT_EQ(m.headerRevision, 3);
    EXPECT_TRUE(m.events.empty());

    m = {};
    ASSERT_TRUE(nixlJsonParse(
        R"({"result":{"header":{"revision":"6"},"events":[{"kv":{"key":"L25peGwvdy94",)"
        R"("mod_revision":"5","value":"djE="}},{"type":"DELETE","kv":{"key":"L25peGwvdy94",)"
        R"("mod_revision":"6"}}]}})",
        v,
        err));
    ASSERT_TRUE(parseWatchMessage(v, m, err)) << err;
    ASSERT_EQ(m.events.size(), 2u);
    EXPECT_EQ(m.events[0].type, nixl_etcd_event_type_t::PUT);
    EXPECT_EQ(m.events[0].kv.key, "/nixl/w/x");
    EXPECT_EQ(m.events[0].kv.value, "v1");
    EXPECT_EQ(m.events[1].type, nixl_etcd_event_type_t::DELETE);
    EXPECT_EQ(m.events[1].kv.modRevision, 6);

    for (const char *bad :
         {R"({"header":{}})",
          R"({"result":{"created":true}})",
          R"({"result":{"header":{"revision":"1"},"events":{}}})",
          R"({"result":{"header":{"revision":"1"},"events":[{"type":"X","kv":{"key":""}}]}})",
          R"({"result":{"header":{"revision":"1"},"events":[{"type":"PUT"}]}})",
          R"({"result":{"header":{"revision":"1"},"events":[{"kv":{"key":"!"}}]}})",
          R"({"result":{"header":{"revision":"1"},"created":"yes"}})"}) {
        m = {};
        ASSERT_TRUE(nixlJsonParse(bad, v, err)) << bad;
        EXPECT_FALSE(parseWatchMessage(v, m, err)) << bad;
    }
}

TEST(EtcdJson, TransactionOfRanges) {
    using nixl_etcd_detail::parseTxnRanges;
    nixlJsonValue v;
    std::string err;
    std::vector<std::optional<nixlEtcdKv>> out;
    // What etcd 3.4's gateway answers for two ranges, the second empty.
    ASSERT_TRUE(nixlJsonParse(
        R"({"header":{"revision":"2"},"succeeded":true,"responses":[{"response_range":)"
        R"({"header":{"revision":"2"},"kvs":[{"key":"L25zLy9BL21ldGFkYXRh","create_revision":"2",)"
        R"("mod_revision":"2","version":"1","value":"aGVsbG8="}],"count":"1"}},)"
        R"({"response_range":{"header":{"revision":"2"}}}]})",
        v,
        err));
    ASSERT_TRUE(parseTxnRanges(v, 2, out, err)) << err;
    ASSERT_EQ(out.size(), 2u);
    ASSERT_TRUE(out[0].has_value());
    EXPECT_EQ(out[0]->key, "/ns//A/metadata");
    EXPECT_EQ(out[0]->value, "hello");
    EXPECT_FALSE(out[1].has_value());
    EXPECT_FALSE(parseTxnRanges(v, 3, out, err)); // another count than asked for

    for (const char *bad :
         {R"({"header":{"revision":"1"}})",
          R"({"responses":{}})",
          R"({"responses":[{"response_put":{}}]})",
          R"({"responses":[{"response_range":[]}]})",
          R"({"responses":[{"response_range":{"kvs":{}}}]})",
          R"({"responses":[{"response_range":{"kvs":[{"key":"!"}]}}]})"}) {
        ASSERT_TRUE(nixlJsonParse(bad, v, err)) << bad;
        err.clear();
        EXPECT_FALSE(parseTxnRanges(v, 1, out, err)) << bad;
        EXPECT_FALSE(err.empty()) << bad;
    }
}

TEST(EtcdJson, GatewayErrors) {
    nixlJsonValue v;
    std::string err;
    int64_t code = 0;
    std::string msg;
    ASSERT_TRUE(nixlJsonParse(R"({"error":"etcdserver: requested lease not found",)"
                              R"("message":"etcdserver: requested lease not found","code":5})",
                              v,
                              err));
    EXPECT_TRUE(nixl_etcd_detail::gatewayError(v, 404, code, msg));
    EXPECT_EQ(code, 5);
    EXPECT_EQ(msg, "etcdserver: requested lease not found");
    ASSERT_TRUE(nixlJsonParse(R"({"error":{"grpc_code":16,"message":"bad token"}})", v, err));
    EXPECT_TRUE(nixl_etcd_detail::gatewayError(v, 200, code, msg));
    EXPECT_EQ(code, 16);
    ASSERT_TRUE(nixlJsonParse(R"({"header":{"revision":"1"}})", v, err));
    EXPECT_FALSE(nixl_etcd_detail::gatewayError(v, 200, code, msg));
    EXPECT_TRUE(nixl_etcd_detail::gatewayError(v, 502, code, msg));
}

TEST(EtcdConfig, EndpointLists) {
    std::vector<std::string> eps;
    std::string err;
    ASSERT_TRUE(nixlEtcdConfig::parseEndpoints(
        "http://a:1, https://b:2/ ;c:3", false, eps, err));
    EXPECT_EQ(eps, (std::vector<std::string>{"http://a:1", "https://b:2", "http://c:3"}));
    ASSERT_TRUE(nixlEtcdConfig::parseEndpoints("c:3", true, eps, err));
    EXPECT_EQ(eps, (std::vector<std::string>{"https://c:3"}));
    EXPECT_FALSE(nixlEtcdConfig::parseEndpoints("a:1,,b:2", false, eps, err));
    EXPECT_FALSE(nixlEtcdConfig::parseEndpoints("unix://x", false, eps, err));
    EXPECT_FALSE(nixlEtcdConfig::parseEndpoints("http://", false, eps, err));
    EXPECT_FALSE(nixlEtcdConfig::parseEndpoints("", false, eps, err));
}

TEST(EtcdConfig, FromVariables) {
    using nixl_test::scopedEnv;
    {
        scopedEnv e("NIXL_ETCD_ENDPOINTS", nullptr);
        EXPECT_FALSE(nixlEtcdConfig::fromProcessConfig().has_value());
    }
    {
        scopedEnv e("NIXL_ETCD_ENDPOINTS", "127.0.0.1:2379,127.0.0.1:2380");
        scopedEnv n("NIXL_ETCD_NAMESPACE", nullptr);
        scopedEnv t("NIXL_ETCD_LEASE_TTL", nullptr);
        auto cfg = nixlEtcdConfig::fromProcessConfig();
        ASSERT_TRUE(cfg.has_value());
        EXPECT_EQ(cfg->endpoints,
                  (std::vector<std::string>{"http://127.0.0.1:2379", "http://127.0.0.1:2380"}));
        EXPECT_EQ(cfg->nameSpace, "/nixl/agents/");
        EXPECT_EQ(cfg->leaseTtl.count(), 10);
    }
    {
        scopedEnv e("NIXL_ETCD_ENDPOINTS", "127.0.0.1:2379");
        scopedEnv n("NIXL_ETCD_NAMESPACE", "/mine");
        scopedEnv ca("NIXL_ETCD_CA_FILE", "/ca.pem");
        scopedEnv c("NIXL_ETCD_CERT_FILE", "/c.pem");
        scopedEnv k("NIXL_ETCD_KEY_FILE", "/k.pem");
        scopedEnv u("NIXL_ETCD_USER", "u");
        scopedEnv p("NIXL_ETCD_PASSWORD", "p");
        scopedEnv t("NIXL_ETCD_LEASE_TTL", "30");
        scopedEnv r("NIXL_ETCD_REQUEST_TIMEOUT_MS", "1500");
        auto cfg = nixlEtcdConfig::fromProcessConfig();
        ASSERT_TRUE(cfg.has_value());
        EXPECT_EQ(cfg->endpoints, (std::vector<std::string>{"https://127.0.0.1:2379"}));
        EXPECT_EQ(cfg->nameSpace, "/mine");
        EXPECT_EQ(cfg->caFile, "/ca.pem");
        EXPECT_EQ(cfg->certFile, "/c.pem");
        EXPECT_EQ(cfg->keyFile, "/k.pem");
        EXPECT_EQ(cfg->user, "u");
        EXPECT_EQ(cfg->password, "p");
        EXPECT_EQ(cfg->leaseTtl.count(), 30);
        EXPECT_EQ(cfg->requestTimeout.count(), 1500);
    }
    {
        scopedEnv e("NIXL_ETCD_ENDPOINTS", "127.0.0.1:2379");
        scopedEnv t("NIXL_ETCD_LEASE_TTL", "0");
        EXPECT_THROW(nixlEtcdConfig::fromProcessConfig(), std::invalid_argument);
    }
    {
        scopedEnv e("NIXL_ETCD_ENDPOINTS", "ftp://x:1");
        EXPECT_THROW(nixlEtcdConfig::fromProcessConfig(), std::invalid_argument);
    }
    {
        scopedEnv e("NIXL_ETCD_ENDPOINTS", "127.0.0.1:2379");
        scopedEnv p("NIXL_ETCD_PASSWORD", "secret");
        scopedEnv u("NIXL_ETCD_USER", nullptr);
        EXPECT_THROW(nixlEtcdConfig::fromProcessConfig(), std::invalid_argument);
    }
}

TEST(EtcdKeys, NixlLayoutAndPrefixEnd) {
    EXPECT_EQ(nixlEtcdAgentPrefix("/nixl/agents/", "A") + nixl_etcd_metadata_label,
              "/nixl/agents//A/metadata");
    EXPECT_EQ(nixlEtcdAgentPrefix("/ns", "B") + "part", "/ns/B/part");
    EXPECT_EQ(nixlEtcdClient::prefixEnd("/a/"), "/a0");
    EXPECT_EQ(nixlEtcdClient::prefixEnd(std::string("a\xff", 2)), "b");
    EXPECT_EQ(nixlEtcdClient::prefixEnd(std::string("\xff\xff", 2)), std::string(1, '\0'));
    nixlEtcdConfig cfg;
    cfg.endpoints = {"http://127.0.0.1:1"};
    EXPECT_THROW(nixlEtcdMetadata("a/b", cfg), std::invalid_argument);
    EXPECT_THROW(nixlEtcdMetadata("", cfg), std::invalid_argument);
    EXPECT_THROW(nixlEtcdClient(nixlEtcdConfig{}), std::invalid_argument);
}

} // namespace
