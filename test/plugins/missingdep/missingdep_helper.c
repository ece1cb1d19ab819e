/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * Link-time stand-in for a library libplugin_MISSINGDEP.so needs. It is linked under the soname
 * libnixl_test_absent.so, a file that exists nowhere, so at run time the dependency is missing
 * exactly as a library not installed on the host would be.
 */
__attribute__((visibility("default"))) const char *
nixl_test_missingdep_name(void);

const char *
nixl_test_missingdep_name(void) {
    return "MISSINGDEP";
}
