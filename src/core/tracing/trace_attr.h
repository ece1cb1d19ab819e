/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file trace_attr.h
 * @brief One typed attribute of a trace event (Attr): a key from core's key table or any
 *        string, and a string, integer or double value, in the plugin ABI's layout
 *        (nixl_trace_attr_t). Not installed.
 *
 * Thread safety: a value type; an Attr borrows its key and string value (see Attr), so the
 * thread that made it keeps them alive while it is used.
 */
#ifndef NIXL_SRC_CORE_TRACING_TRACE_ATTR_H
#define NIXL_SRC_CORE_TRACING_TRACE_ATTR_H

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "nixl_trace_backend_plugin.h"
#include "tracing/trace_names.h"

namespace nixl::trace {

/**
 * One typed attribute, keyed by core's key table (KeyId) or by any string (NIXL_TRACE_KEY_DYNAMIC).
 * String keys must be string literals (or otherwise outlive the Span); string values are
 * borrowed, not copied, and must stay alive until the Span ends.
 */
class Attr {
public:
    Attr(const char *key, std::string_view value) noexcept : attr_{} {
        attr_.key = key;
        attr_.type = NIXL_TRACE_ATTR_STRING;
        attr_.key_id = NIXL_TRACE_KEY_DYNAMIC;
        attr_.value.str = nixl_plugin_str_t{value.data(), value.size()};
    }

    /** An attribute with an interned key: any value type the string-key forms take. */
    template<typename T>
    Attr(KeyId key, const T &value) noexcept : Attr(keyOf(key), value) {
        attr_.key_id = static_cast<std::uint32_t>(key);
    }

    Attr(const char *key, const char *value) noexcept
        : Attr(key, std::string_view(value != nullptr ? value : "")) {}

    Attr(const char *key, const std::string &value) noexcept
        : Attr(key, std::string_view(value)) {}

    /** Any integer (sizes, counts): stored as int64; values above INT64_MAX wrap. */
    template<typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
    Attr(const char *key, T value) noexcept : attr_{} {
        attr_.key = key;
        attr_.type = NIXL_TRACE_ATTR_INT64;
        attr_.key_id = NIXL_TRACE_KEY_DYNAMIC;
        attr_.value.i64 = static_cast<std::int64_t>(value);
    }

    Attr(const char *key, double value) noexcept : attr_{} {
        attr_.key = key;
        attr_.type = NIXL_TRACE_ATTR_DOUBLE;
        attr_.key_id = NIXL_TRACE_KEY_DYNAMIC;
        attr_.value.f64 = value;
    }

    const nixl_trace_attr_t &
    raw() const noexcept {
        return attr_;
    }

private:
    nixl_trace_attr_t attr_;
};

} // namespace nixl::trace

#endif // NIXL_SRC_CORE_TRACING_TRACE_ATTR_H
