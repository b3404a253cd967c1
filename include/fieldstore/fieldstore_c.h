/*
 * fieldstore's additions to FDB5's C API (fdb5/api/fdb_c.h, included): its version, why a
 * request matched nothing, the values stored per keyword, stats, locks and where data sets
 * live. Same conventions: an FdbErrorValues code from every function; objects made by a
 * fieldstore_ function are deleted by the matching fieldstore_delete_ one. See docs/c-api.md.
 */
#ifndef fieldstore_c_H
#define fieldstore_c_H

#include <stdint.h>

#include "fdb5/api/fdb_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* fieldstore's version, e.g. "0.1.0". */
const char* fieldstore_version(void);

/* Why a listing or a retrieve matched nothing, per data set and index; NULL when something
 * matched. Valid as long as the iterator (until the reader retrieves again). */
int fieldstore_listiterator_explanation(fdb_listiterator_t* it, const char** why);
int fieldstore_datareader_explanation(fdb_datareader_t* dr, const char** why);

/* The values stored for each keyword among what req names (NULL: everything). */
struct fieldstore_axes_t;
typedef struct fieldstore_axes_t fieldstore_axes_t;
int fieldstore_axes(fdb_handle_t* fdb, const fdb_request_t* req, fieldstore_axes_t** axes);
/* The next keyword and its *count values (valid as long as the axes); FDB_ITERATION_COMPLETE after the last. */
int fieldstore_axes_next(fieldstore_axes_t* axes, const char** keyword, const char* const** values, size_t* count);
int fieldstore_delete_axes(fieldstore_axes_t* axes);

/* Counts of what req names (NULL: everything). */
typedef struct fieldstore_stats_t {
    uint64_t datasets;          /* data sets */
    uint64_t indexes;           /* visible indexes in them */
    uint64_t fields;            /* live fields */
    uint64_t bytes;             /* their bytes */
    uint64_t superseded_fields; /* fields replaced by newer archives of their keys (a purge reclaims them) */
    uint64_t superseded_bytes;  /* their bytes */
    uint64_t data_objects;      /* files or objects holding live fields */
} fieldstore_stats_t;
int fieldstore_stats(fdb_handle_t* fdb, const fdb_request_t* req, fieldstore_stats_t* stats);

/* Locks or unlocks actions ("archive", "retrieve", "list", "wipe") on the data sets req names
 * (it must name class, expver, stream, date and time). */
int fieldstore_lock(fdb_handle_t* fdb, const fdb_request_t* req, const char* const actions[], int count);
int fieldstore_unlock(fdb_handle_t* fdb, const fdb_request_t* req, const char* const actions[], int count);

/* Where the data sets req names (NULL: all) keep their catalogue and their bytes. */
struct fieldstore_where_t;
typedef struct fieldstore_where_t fieldstore_where_t;
int fieldstore_where(fdb_handle_t* fdb, const fdb_request_t* req, fieldstore_where_t** it);
/* The next data set's key and its catalogue's and store's places; FDB_ITERATION_COMPLETE after the last. */
int fieldstore_where_next(fieldstore_where_t* it, const char** dataset, const char** catalogue, const char** store);
int fieldstore_delete_where(fieldstore_where_t* it);

/* Grid points of every GRIB field req names, reading only the bytes that hold them (docs/extract.md):
 * `count` ranges, `ranges` holding each one's first point and the point after its last
 * (2 * count numbers, as gribjump flattens them). */
struct fieldstore_extraction_t;
typedef struct fieldstore_extraction_t fieldstore_extraction_t;
int fieldstore_extract(fdb_handle_t* fdb, const fdb_request_t* req, const size_t* ranges, size_t count, fieldstore_extraction_t** it);
/* The next field's key (k=v,...), its values (the ranges' points in turn, NaN where missing), their
 * number and the bytes read for it (bytes_read may be NULL); valid as long as the iterator.
 * FDB_ITERATION_COMPLETE after the last. */
int fieldstore_extraction_next(fieldstore_extraction_t* it, const char** key, const double** values, size_t* count, uint64_t* bytes_read);
int fieldstore_delete_extraction(fieldstore_extraction_t* it);

#ifdef __cplusplus
}
#endif

#endif
