/*
 * SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * @file scoped_env.h
 * @brief Test helper shared by the unit tests: sets or unsets one environment variable for a
 *        scope and restores the previous value (or its absence) afterwards.
 *
 * Not thread-safe (setenv is not): use it on the test's main thread, before the code under test
 * starts threads that read the environment.
 */
#ifndef NIXL_TEST_COMMON_SCOPED_ENV_H
#define NIXL_TEST_COMMON_SCOPED_ENV_H

#include <cstdlib>
#include <optional>
#include <string>

namespace nixl_test {

/** value == nullptr unsets the variable for the scope. */
class scopedEnv {
public:
    scopedEnv(const char *name, const char *value) : name_(name) {
        if (const char *old = std::getenv(name)) {
            old_ = std::string(old);
        }
        if (value != nullptr) {
            ::setenv(name, value, 1);
        } else {
            ::unsetenv(name);
        }
    }

    ~scopedEnv() {
        if (old_) {
            ::setenv(name_.c_str(), old_->c_str(), 1);
        } else {
            ::unsetenv(name_.c_str());
        }
    }

    scopedEnv(const scopedEnv &) = delete;
    scopedEnv &
    operator=(const scopedEnv &) = delete;

private:
    std::string name_;
    std::optional<std::string> old_;
};

} // namespace nixl_test

#endif // NIXL_TEST_COMMON_SCOPED_ENV_H
