/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file etcd_json.h
 * @brief A small strict JSON reader and base64 codec for etcd's v3 JSON gateway.
 *
 * Everything an etcd server (or whatever answers on its address) sends is untrusted input. The
 * reader accepts RFC 8259 JSON only: one value, optional surrounding whitespace, no trailing
 * bytes, no comments, no duplicate object keys, valid UTF-8, numbers by the grammar, and a
 * nesting depth limit. It builds a small tree; the gateway's responses are a few levels deep.
 * Numbers stay text: the gateway sends int64 fields as JSON strings ("revision":"5") and int32
 * ones as numbers, and nixlJsonInt reads either form exactly.
 *
 * The codecs never log: the caller knows which endpoint and request the text came from and
 * logs once with that. Pure functions; thread-safe.
 */
#ifndef NIXL_SRC_CORE_METADATA_ETCD_ETCD_JSON_H
#define NIXL_SRC_CORE_METADATA_ETCD_ETCD_JSON_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct nixlJsonMember;

/** One parsed JSON value. */
struct nixlJsonValue {
    enum class kind_t { NUL, BOOL, NUMBER, STRING, ARRAY, OBJECT };

    kind_t kind = kind_t::NUL;
    bool boolean = false;
    /** STRING: the decoded UTF-8 text; NUMBER: the number as written. */
    std::string text;
    std::vector<nixlJsonValue> items; ///< ARRAY
    std::vector<nixlJsonMember> members; ///< OBJECT, in input order

    /** The member named key of an object; nullptr if absent or this is not an object. */
    const nixlJsonValue *
    find(std::string_view key) const noexcept;
};

/** One member of an object. */
struct nixlJsonMember {
    std::string name;
    nixlJsonValue value;
};

/** Deepest nesting accepted (objects and arrays); the gateway's answers use about 5. */
inline constexpr size_t nixl_json_max_depth = 64;

/**
 * Parses text as exactly one JSON value. false with a short reason (and the byte offset) in
 * err when the text is not strict JSON; out is then unspecified.
 */
bool
nixlJsonParse(std::string_view text, nixlJsonValue &out, std::string &err);

/**
 * An integer field: a NUMBER without fraction or exponent, or a STRING holding one (how the
 * gateway writes int64). Absent (nullptr) gives def. false when present but not an integer
 * that fits int64.
 */
bool
nixlJsonInt(const nixlJsonValue *v, int64_t &out, int64_t def = 0) noexcept;

/** A STRING field; absent gives "". false when present but not a string. */
bool
nixlJsonString(const nixlJsonValue *v, std::string &out);

/** A BOOL field; absent gives false. false when present but not a bool. */
bool
nixlJsonBool(const nixlJsonValue *v, bool &out) noexcept;

/** text as a JSON string literal, quotes included (control bytes escaped). */
std::string
nixlJsonQuote(std::string_view text);

/** Standard base64 (RFC 4648 alphabet, '=' padding), as the gateway writes bytes fields. */
std::string
nixlBase64Encode(std::string_view bytes);

/**
 * Strict standard base64: length a multiple of 4, padding only at the end, no whitespace,
 * unused bits zero (so every byte string has exactly one accepted encoding). false otherwise.
 */
bool
nixlBase64Decode(std::string_view text, std::string &out);

#endif // NIXL_SRC_CORE_METADATA_ETCD_ETCD_JSON_H
