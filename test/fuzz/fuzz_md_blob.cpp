/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file fuzz_md_blob.cpp
 * @brief libFuzzer target for nixlMdDecode: any input must decode or fail cleanly, and whatever
 *        decodes must come back unchanged from encode -> decode (byte for byte for libnixl's
 *        own form, by value for NIXL 1.4's layout).
 */
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/metadata/md_blob.h"
#include "fuzz_common.h"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    nixlMdBlob blob;
    std::string error;
    nixl_md_form_t form = nixl_md_form_t::LIBNIXL;
    const nixl_status_t status = nixlMdDecode(input, blob, error, &form);
    if (status != NIXL_SUCCESS) {
        // Failure has exactly one shape: MISMATCH with a reason.
        NIXL_FUZZ_CHECK(status == NIXL_ERR_MISMATCH);
        NIXL_FUZZ_CHECK(!error.empty());
        return 0;
    }

    // Every value has one encoding (no padding, no optional fields, exact length), so a blob
    // that decodes is its own re-encoding. A blob in NIXL 1.4's layout decodes to libnixl's
    // own (fuzz_md_blob_nixl checks that layout's round trip): its value must survive.
    const std::string again = nixlMdEncode(blob);
    NIXL_FUZZ_CHECK(form != nixl_md_form_t::LIBNIXL || again == input);
    nixlMdBlob blob2;
    NIXL_FUZZ_CHECK(nixlMdDecode(again, blob2, error) == NIXL_SUCCESS);
    NIXL_FUZZ_CHECK(blob2 == blob);
    return 0;
}
