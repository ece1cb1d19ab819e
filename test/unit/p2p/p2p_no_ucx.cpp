/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
// Builds without UCX have no second-process test.
int
p2pPeerMain(int) {
    return 2;
}
