/*
 * fieldstore's implementation of FDB5's C API (fdb_c.h, FDB5 5.25): the same declarations,
 * so a program written against FDB5 compiles unchanged with -I<this include directory> and
 * links with -lfieldstore_c (or -lfdb5 against the libfdb5.so link the install makes).
 * Written for fieldstore; differences from FDB5 are in docs/c-api.md.
 *
 * Every function returns a code of FdbErrorValues. On an error, fdb_error_string(code) gives
 * the message (per thread, valid until that thread's next error) and the failure handler, if
 * set, is called. Objects made by fdb_new_* are deleted by the matching fdb_delete_*. A
 * handle may be used by many threads at once, keys and requests by calls that only read
 * them; other objects by one thread at a time.
 */
#ifndef fdb5_api_fdb_c_H
#define fdb5_api_fdb_c_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Initialisation and versions */

/* Initialises the library. Optional with fieldstore; harmless to call more than once. */
int fdb_initialise();
/* The version of FDB5's C API implemented ("5.25.0"); fieldstore_version() gives fieldstore's. */
int fdb_version(const char** version);
/* The commit fieldstore was built from (40 hexadecimal digits). */
int fdb_vcs_version(const char** sha1);

/* Errors */

enum FdbErrorValues {
    FDB_SUCCESS = 0,
    FDB_ERROR_GENERAL_EXCEPTION = 1,
    FDB_ERROR_UNKNOWN_EXCEPTION = 2,
    FDB_ITERATION_COMPLETE = 3
};

/* "Success", "Iteration complete", the calling thread's last error message, or "<unknown>". */
const char* fdb_error_string(int err);

typedef void (*fdb_failure_handler_t)(void* context, int error_code);
/* Calls handler(context, code) on every error, after its message is set; NULL removes it.
 * The handler must return (not throw nor longjmp). */
int fdb_set_failure_handler(fdb_failure_handler_t handler, void* context);

/* Keys: keyword=value pairs naming one field to archive */

struct fdb_key_t;
typedef struct fdb_key_t fdb_key_t;
int fdb_new_key(fdb_key_t** key);
/* Sets a keyword's value (replacing one it had). */
int fdb_key_add(fdb_key_t* key, const char* param, const char* value);
int fdb_delete_key(fdb_key_t* key);

/* Requests: keywords with lists of values */

struct fdb_request_t;
typedef struct fdb_request_t fdb_request_t;
int fdb_new_request(fdb_request_t** req);
/* Sets a keyword's values, each split on '/' ("0/to/12/by/6" is a range), replacing those it had. */
int fdb_request_add(fdb_request_t* req, const char* param, const char* values[], int numValues);
/* A keyword's values: *values is a malloc'ed array of *numValues malloc'ed strings, which the
 * caller frees (each string, then the array). An error if the request has not the keyword. */
int fdb_request_get(fdb_request_t* req, const char* param, char** values[], size_t* numValues);
/* Expands ranges and writes values canonically (expver=1 -> 0001, param=t -> 130). */
int fdb_expand_request(fdb_request_t* req);
int fdb_delete_request(fdb_request_t* req);

/* Split keys: a listed element's keys, level by level */

struct fdb_split_key_t;
typedef struct fdb_split_key_t fdb_split_key_t;
int fdb_new_splitkey(fdb_split_key_t** key);
/* The next keyword, value and level (0 data set, 1 collocation, 2 element; level may be
 * NULL); FDB_ITERATION_COMPLETE after the last. */
int fdb_splitkey_next_metadata(fdb_split_key_t* it, const char** key, const char** value, size_t* level);
int fdb_delete_splitkey(fdb_split_key_t* key);

/* Listing */

struct fdb_listiterator_t;
typedef struct fdb_listiterator_t fdb_listiterator_t;
/* Moves to the next element; FDB_ITERATION_COMPLETE after the last. */
int fdb_listiterator_next(fdb_listiterator_t* it);
/* The current field's file (or object), offset and length. */
int fdb_listiterator_attrs(fdb_listiterator_t* it, const char** uri, size_t* off, size_t* len);
/* Fills a split key with the current element's keys. */
int fdb_listiterator_splitkey(fdb_listiterator_t* it, fdb_split_key_t* key);
int fdb_delete_listiterator(fdb_listiterator_t* it);

/* Reading what a retrieve names */

struct fdb_datareader_t;
typedef struct fdb_datareader_t fdb_datareader_t;
int fdb_new_datareader(fdb_datareader_t** dr);
/* Opens the stream at its start; its size in *size (size may be NULL). */
int fdb_datareader_open(fdb_datareader_t* dr, long* size);
int fdb_datareader_close(fdb_datareader_t* dr);
int fdb_datareader_tell(fdb_datareader_t* dr, long* pos);
/* Moves to byte pos (0 to the size). */
int fdb_datareader_seek(fdb_datareader_t* dr, long pos);
/* Moves count bytes on (back if negative). */
int fdb_datareader_skip(fdb_datareader_t* dr, long count);
int fdb_datareader_size(fdb_datareader_t* dr, long* size);
/* Reads up to count bytes; *read is 0 at the end. */
int fdb_datareader_read(fdb_datareader_t* dr, void* buf, long count, long* read);
int fdb_delete_datareader(fdb_datareader_t* dr);

/* Handles */

struct fdb_handle_t;
typedef struct fdb_handle_t fdb_handle_t;
/* A handle on the store the environment names (FIELDSTORE_CONFIG, FIELDSTORE_ROOT, FDB5's
 * FDB5_CONFIG_FILE and friends, else the default local store). */
int fdb_new_handle(fdb_handle_t** fdb);
/* A handle on the store a YAML configuration describes (fieldstore's or FDB5's format). */
int fdb_new_handle_from_yaml(fdb_handle_t** fdb, const char* system_config, const char* user_config);
/* Archives length bytes under a key; readers see them after fdb_flush. */
int fdb_archive(fdb_handle_t* fdb, fdb_key_t* key, const char* data, size_t length);
/* Archives GRIB messages under the keys read from them; with a request, each message must be
 * one it names and each field it names must be there, checked before anything is archived. */
int fdb_archive_multiple(fdb_handle_t* fdb, fdb_request_t* req, const char* data, size_t length);
/* Lists what req names (NULL: everything) to depth 1, 2 or 3; duplicates true leaves out
 * fields replaced by newer archives (as FDB5 5.25 does). */
int fdb_list(fdb_handle_t* fdb, const fdb_request_t* req, fdb_listiterator_t** it, bool duplicates, int depth);
/* Retrieves what req names into dr, in the order the request names values. */
int fdb_retrieve(fdb_handle_t* fdb, fdb_request_t* req, fdb_datareader_t* dr);
/* Makes everything archived through the handle durable and visible. */
int fdb_flush(fdb_handle_t* fdb);
/* Flushes, then deletes the handle. */
int fdb_delete_handle(fdb_handle_t* fdb);

/* Wipe */

struct fdb_wipe_element_t;
typedef struct fdb_wipe_element_t fdb_wipe_element_t;
struct fdb_wipe_iterator_t;
typedef struct fdb_wipe_iterator_t fdb_wipe_iterator_t;
/* Wipes what req names (class, expver, stream, date and time at least) at the iterator's first
 * next; a dry run unless doit. */
int fdb_wipe(fdb_handle_t* fdb, fdb_request_t* req, bool doit, bool porcelain, bool unsafeWipeAll,
             fdb_wipe_iterator_t** it);
/* The report's next line as a new element (delete it); FDB_ITERATION_COMPLETE after the last. */
int fdb_wipe_iterator_next(fdb_wipe_iterator_t* it, fdb_wipe_element_t** element);
int fdb_delete_wipe_iterator(fdb_wipe_iterator_t* it);
int fdb_delete_wipe_element(fdb_wipe_element_t* element);
int fdb_wipe_element_string(fdb_wipe_element_t* element, const char** str);

/* Purge */

struct fdb_purge_element_t;
typedef struct fdb_purge_element_t fdb_purge_element_t;
struct fdb_purge_iterator_t;
typedef struct fdb_purge_iterator_t fdb_purge_iterator_t;
/* Reclaims fields replaced by newer archives among what req names; a dry run unless doit. */
int fdb_purge(fdb_handle_t* fdb, fdb_request_t* req, bool doit, bool porcelain, fdb_purge_iterator_t** it);
int fdb_purge_iterator_next(fdb_purge_iterator_t* it, fdb_purge_element_t** element);
int fdb_delete_purge_iterator(fdb_purge_iterator_t* it);
int fdb_delete_purge_element(fdb_purge_element_t* element);
int fdb_purge_element_string(fdb_purge_element_t* element, const char** str);

#ifdef __cplusplus
}
#endif

#endif
