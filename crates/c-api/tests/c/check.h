/* The C tests' few helpers: checks that stop the program naming the line, and a store's
 * configuration in a temporary directory. */
#ifndef fieldstore_c_tests_check_H
#define fieldstore_c_tests_check_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fieldstore/fieldstore_c.h"

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

/* A call that must succeed. */
#define OK(call)                                                                                    \
    do {                                                                                            \
        int rc_ = (call);                                                                           \
        if (rc_ != FDB_SUCCESS) {                                                                   \
            fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, rc_,         \
                    fdb_error_string(rc_));                                                         \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

/* A call that must fail with a message holding `expected`. */
#define FAILS(call, expected)                                                                       \
    do {                                                                                            \
        int rc_ = (call);                                                                           \
        if (rc_ != FDB_ERROR_GENERAL_EXCEPTION || !strstr(fdb_error_string(rc_), (expected))) {     \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected an error about '%s'\n", __FILE__, \
                    __LINE__, #call, rc_, fdb_error_string(rc_), (expected));                      \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

#endif
