/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fuzz_md_blob_nixl.cpp
 * @brief libFuzzer target for the metadata blob in NIXL 1.4's layout (nixlMdDecodeNixl, and
 *        nixlMdDecode on the same bytes): any input must decode or fail cleanly, and whatever
 *        decodes must come back unchanged from encode -> decode.
 */
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/metadata/md_blob_nixl.h"
#include "fuzz_common.h"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    nixlMdBlob part;
    std::string_view ext;
    std::string error;
    const nixl_status_t status = nixlMdDecodeNixl(input, part, ext, error);

    // Whatever form it is, the full decoder fails the one documented way or succeeds.
    nixlMdBlob any;
    std::string any_error;
    nixl_md_form_t form = nixl_md_form_t::LIBNIXL;
    const nixl_status_t any_status = nixlMdDecode(input, any, any_error, &form);
    NIXL_FUZZ_CHECK(any_status == NIXL_SUCCESS || any_status == NIXL_ERR_MISMATCH);
    NIXL_FUZZ_CHECK(any_status == NIXL_SUCCESS || !any_error.empty());

    if (status != NIXL_SUCCESS) {
        NIXL_FUZZ_CHECK(status == NIXL_ERR_MISMATCH);
        NIXL_FUZZ_CHECK(!error.empty());
        // A stream the NIXL-layout reader refuses is never taken as one by the full decoder.
        NIXL_FUZZ_CHECK(any_status != NIXL_SUCCESS || form == nixl_md_form_t::LIBNIXL);
        return 0;
    }
    NIXL_FUZZ_CHECK(ext.empty() || (ext.data() >= input.data() &&
                                    ext.data() + ext.size() <= input.data() + input.size()));
    if (any_status == NIXL_SUCCESS) {
        NIXL_FUZZ_CHECK(form == (ext.empty() ? nixl_md_form_t::NIXL : nixl_md_form_t::COMBINED));
        NIXL_FUZZ_CHECK(any.agentName == part.agentName);
    }

    // The reader skips each delimiter unchecked (as NIXL's does), so the bytes may differ from
    // the re-encoding only there; the values may not.
    const std::string own(ext);
    const std::string again = nixlMdEncodeNixl(part, ext.empty() ? nullptr : &own);
    NIXL_FUZZ_CHECK(again.size() == input.size());
    nixlMdBlob part2;
    std::string_view ext2;
    NIXL_FUZZ_CHECK(nixlMdDecodeNixl(again, part2, ext2, error) == NIXL_SUCCESS);
    NIXL_FUZZ_CHECK(part2 == part);
    NIXL_FUZZ_CHECK(ext2 == ext);
    return 0;
}
