/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "tracing/trace_names.h"

#include <string>

namespace nixl::trace {

namespace {

    constexpr nixl_trace_key_t
    key(KeyId id) noexcept {
        const char *text = detail::key_texts[static_cast<size_t>(id)];
        return nixl_trace_key_t{static_cast<uint32_t>(id),
                                static_cast<uint32_t>(std::char_traits<char>::length(text)),
                                text};
    }

    constexpr nixl_trace_key_t kKeys[] = {
        key(KeyId::REMOTE_AGENT),
        key(KeyId::BYTES),
        key(KeyId::TRACE_ID),
        key(KeyId::PARENT_ID),
        key(KeyId::STATUS),
        key(KeyId::DESC_COUNT),
        key(KeyId::MEM_TYPE),
        key(KeyId::PHASE_BACKEND),
        key(KeyId::PHASE_NAME),
        key(KeyId::PHASE_LABEL),
        key(KeyId::PHASE_TRACE_ID),
    };
    static_assert(std::size(kKeys) == static_cast<size_t>(KeyId::COUNT),
                  "one table entry per KeyId");

} // namespace

std::span<const nixl_trace_name_t>
nameTable() noexcept {
    return std::span<const nixl_trace_name_t>(detail::names);
}

std::span<const nixl_trace_key_t>
keyTable() noexcept {
    return std::span<const nixl_trace_key_t>(kKeys);
}

const char *
nameOf(NameId id) noexcept {
    const auto i = static_cast<size_t>(id);
    return i < std::size(detail::names) ? detail::names[i].name : "nixl::unknown";
}

Kind
kindOf(NameId id) noexcept {
    const auto i = static_cast<size_t>(id);
    return i < std::size(detail::names) ? static_cast<Kind>(detail::names[i].kind) : Kind::Generic;
}

} // namespace nixl::trace
