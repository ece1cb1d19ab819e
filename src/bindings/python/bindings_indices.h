/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file bindings_indices.h
 * @brief makeXferReq's index arguments: lists of ints, numpy arrays (through their object
 *        layout) and other buffers, for both per-transfer paths. Internal to
 *        src/bindings/python.
 *
 * Thread safety: every function needs the GIL; setNdarrayType() (once, from nixl._api's
 * import) writes the state the others read.
 */
#ifndef NIXL_BINDINGS_PYTHON_BINDINGS_INDICES_H
#define NIXL_BINDINGS_PYTHON_BINDINGS_INDICES_H

#include <vector>

#include "bindings_common.h"

namespace nixl_py {

/**
 * Indices of makeXferReq: a sequence of ints, or a 1-D array of any integer or float dtype
 * whose values are cast to uint32 (as NIXL's binding forces the dtype to uint32). Appends to
 * out; raises TypeError, ValueError, IndexError or OverflowError naming what.
 */
void
toIndices(PyObject *obj, const char *what, std::vector<int> &out);

/**
 * Appends the indices of the two common shapes and returns true: an exact list of exact ints in
 * int range, or a 1-D numpy.ndarray (once registered) of a native-order integer dtype (values
 * cast as toIndices does). Returns false, out untouched and no exception set, for anything
 * else: the caller then takes its general path, which raises what it raises.
 */
bool
fastIndices(PyObject *obj, std::vector<int> &out);

/** Registers numpy.ndarray (or None), then read through its object layout by toIndices and
 *  fastIndices; probe is numpy.array([7, -9, 11], dtype=numpy.int64)[::2], read both ways to
 *  check the layout (a mismatch keeps the buffer protocol). */
void
setNdarrayType(PyObject *type, PyObject *probe);

} // namespace nixl_py

#endif // NIXL_BINDINGS_PYTHON_BINDINGS_INDICES_H
