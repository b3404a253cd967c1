/* Every function of fdb_c.h and fieldstore_c.h against a store in a temporary directory:
 * results, error paths, iteration to the end and after, a retrieve read in odd-sized pieces
 * with seeks, and many handles in threads. Run by scripts/c-test.sh (under valgrind):
 *   test_fdb_c ROOT SAMPLE_GRIB
 * ROOT is an empty directory for the store; SAMPLE_GRIB holds 6 GRIB messages (steps 0, 6,
 * 12 x levels 500, 850 of param 130, class=od, expver=0001, date=20231201, time=1200). */
#include <pthread.h>
#include <stdint.h>

#include "check.h"

static char config[4096];

static const char* DATASET[][2] = {{"class", "rd"},  {"expver", "0001"}, {"stream", "oper"}, {"date", "20240101"},
                                   {"time", "0000"}, {"domain", "g"},    {"type", "fc"},     {"levtype", "pl"}};

/* A field's bytes, made from its step and level so a reader can tell them apart. */
static size_t payload(char* out, int step, int level, int version) {
    return (size_t)snprintf(out, 64, "field step=%d level=%d version=%d", step, level, version);
}

static fdb_handle_t* open_store(void) {
    fdb_handle_t* fdb = NULL;
    OK(fdb_new_handle_from_yaml(&fdb, config, ""));
    return fdb;
}

/* Archives one field of the test's data set; the code of fdb_archive. */
static int try_archive(fdb_handle_t* fdb, int step, int level, int version) {
    fdb_key_t* key;
    char value[32], data[64];
    OK(fdb_new_key(&key));
    OK(fdb_key_add(key, "step", "999")); /* replaced below: a keyword added again takes the new value */
    for (size_t i = 0; i < sizeof DATASET / sizeof DATASET[0]; i++) OK(fdb_key_add(key, DATASET[i][0], DATASET[i][1]));
    snprintf(value, sizeof value, "%d", step);
    OK(fdb_key_add(key, "step", value));
    snprintf(value, sizeof value, "%d", level);
    OK(fdb_key_add(key, "levelist", value));
    OK(fdb_key_add(key, "param", "130"));
    size_t n = payload(data, step, level, version);
    int rc = fdb_archive(fdb, key, data, n);
    OK(fdb_delete_key(key));
    return rc;
}

static void archive(fdb_handle_t* fdb, int step, int level, int version) {
    OK(try_archive(fdb, step, level, version));
}

/* A request for the test's data set, with `keyword` set to `values` if given. */
static fdb_request_t* request(const char* keyword, const char* values) {
    fdb_request_t* req;
    OK(fdb_new_request(&req));
    for (size_t i = 0; i < sizeof DATASET / sizeof DATASET[0]; i++) {
        const char* v[] = {DATASET[i][1]};
        OK(fdb_request_add(req, DATASET[i][0], v, 1));
    }
    if (keyword) {
        const char* v[] = {values};
        OK(fdb_request_add(req, keyword, v, 1));
    }
    return req;
}

static int listed(fdb_handle_t* fdb, fdb_request_t* req, bool duplicates, int depth) {
    fdb_listiterator_t* it;
    int n = 0, rc;
    OK(fdb_list(fdb, req, &it, duplicates, depth));
    while ((rc = fdb_listiterator_next(it)) == FDB_SUCCESS) n++;
    CHECK(rc == FDB_ITERATION_COMPLETE);
    CHECK(fdb_listiterator_next(it) == FDB_ITERATION_COMPLETE); /* and after */
    OK(fdb_delete_listiterator(it));
    return n;
}

static int handler_calls = 0, handler_code = -1;
static void handler(void* context, int code) {
    CHECK(context == &handler_calls);
    handler_calls++;
    handler_code = code;
}

static void test_versions_errors_and_the_failure_handler(void) {
    const char *version, *sha;
    OK(fdb_initialise());
    OK(fdb_initialise());
    OK(fdb_version(&version));
    CHECK(strcmp(version, "5.25.0") == 0);
    OK(fdb_vcs_version(&sha));
    CHECK(strlen(sha) == 40);
    CHECK(strlen(fieldstore_version()) > 0);
    CHECK(strcmp(fdb_error_string(FDB_SUCCESS), "Success") == 0);
    CHECK(strcmp(fdb_error_string(FDB_ITERATION_COMPLETE), "Iteration complete") == 0);
    CHECK(strcmp(fdb_error_string(99), "<unknown>") == 0);
    OK(fdb_set_failure_handler(handler, &handler_calls));
    FAILS(fdb_delete_key(NULL), "'key' is NULL");
    CHECK(handler_calls == 1 && handler_code == FDB_ERROR_GENERAL_EXCEPTION);
    /* The message stays until the next error; an iterator's end is no error. */
    OK(fdb_version(&version));
    CHECK(strstr(fdb_error_string(FDB_ERROR_GENERAL_EXCEPTION), "'key' is NULL"));
    fdb_split_key_t* sk;
    OK(fdb_new_splitkey(&sk));
    const char *k, *v;
    FAILS(fdb_splitkey_next_metadata(sk, &k, &v, NULL), "fdb_listiterator_splitkey first");
    CHECK(handler_calls == 2);
    OK(fdb_delete_splitkey(sk));
    OK(fdb_set_failure_handler(NULL, NULL));
    FAILS(fdb_new_key(NULL), "'key' is NULL");
    CHECK(handler_calls == 2);
    /* Every delete refuses NULL, but the wipe and purge iterators' (as FDB5). */
    FAILS(fdb_delete_request(NULL), "'req'");
    FAILS(fdb_delete_handle(NULL), "'fdb'");
    FAILS(fdb_delete_datareader(NULL), "'dr'");
    FAILS(fdb_delete_listiterator(NULL), "'it'");
    FAILS(fdb_delete_wipe_element(NULL), "'element'");
    FAILS(fdb_delete_purge_element(NULL), "'element'");
    OK(fdb_delete_wipe_iterator(NULL));
    OK(fdb_delete_purge_iterator(NULL));
}

static void get_values(fdb_request_t* req, const char* keyword, const char* expected) {
    char** values;
    size_t n;
    char joined[256] = "";
    OK(fdb_request_get(req, keyword, &values, &n));
    for (size_t i = 0; i < n; i++) {
        if (i) strcat(joined, ",");
        strcat(joined, values[i]);
        free(values[i]);
    }
    free(values);
    if (strcmp(joined, expected) != 0) {
        fprintf(stderr, "%s: got '%s', expected '%s'\n", keyword, joined, expected);
        exit(1);
    }
}

static void test_keys_and_requests(void) {
    fdb_key_t* key;
    OK(fdb_new_key(&key));
    OK(fdb_key_add(key, "step", "0"));
    OK(fdb_key_add(key, "step", "12"));
    FAILS(fdb_key_add(key, NULL, "1"), "'param' is NULL");
    FAILS(fdb_key_add(key, "step", NULL), "'value' is NULL");
    OK(fdb_delete_key(key));

    fdb_request_t* req;
    OK(fdb_new_request(&req));
    const char* range[] = {"0/to/12/by/6"};
    const char* split[] = {"1/2", "3"};
    const char* gaps[] = {"a//b"};
    const char* expver[] = {"1"};
    const char* param[] = {"t/130.128"};
    OK(fdb_request_add(req, "step", range, 1));
    OK(fdb_request_add(req, "levelist", split, 2));
    OK(fdb_request_add(req, "class", gaps, 1));
    OK(fdb_request_add(req, "expver", expver, 1));
    OK(fdb_request_add(req, "param", param, 1));
    get_values(req, "step", "0,to,12,by,6");
    get_values(req, "levelist", "1,2,3");
    get_values(req, "class", "a,b");
    char** values;
    size_t n;
    FAILS(fdb_request_get(req, "number", &values, &n), "no keyword 'number'");
    FAILS(fdb_request_get(req, "step", NULL, &n), "'values' is NULL");
    FAILS(fdb_request_add(req, "step", NULL, 1), "'values' is NULL");
    const char* none[] = {NULL};
    FAILS(fdb_request_add(req, "step", none, 1), "'values[0]' is NULL");
    OK(fdb_request_add(req, "number", range, 0));
    get_values(req, "number", "");
    OK(fdb_request_add(req, "number", range, -3)); /* a negative count is none, as in FDB5 */
    get_values(req, "number", "");
    const char* upper[] = {"18"};
    OK(fdb_request_add(req, "STEP", upper, 1)); /* keywords are read without regard to case */
    get_values(req, "step", "18");
    OK(fdb_request_add(req, "step", range, 1));
    OK(fdb_expand_request(req));
    get_values(req, "step", "0,6,12");
    get_values(req, "expver", "0001");
    get_values(req, "param", "130");
    get_values(req, "levelist", "1,2,3");
    /* An unknown keyword: refused, naming it, the request unchanged. */
    const char* bar[] = {"bar"};
    OK(fdb_request_add(req, "foo", bar, 1));
    FAILS(fdb_expand_request(req), "'foo'");
    get_values(req, "foo", "bar");
    FAILS(fdb_expand_request(NULL), "'req' is NULL");
    OK(fdb_delete_request(req));
}

static void test_handles_from_yaml(void) {
    fdb_handle_t* fdb;
    FAILS(fdb_new_handle_from_yaml(&fdb, NULL, ""), "'system_config' is NULL");
    FAILS(fdb_new_handle_from_yaml(&fdb, "catalogue: {type: posix, root: /x}\nstore: {type: nowhere}\n", ""), "nowhere");
    FAILS(fdb_new_handle_from_yaml(&fdb, config, "- a list"), "user_config is no YAML mapping");
    OK(fdb_new_handle_from_yaml(&fdb, config, "useSubToc: true"));
    OK(fdb_delete_handle(fdb));
}

static void test_archive_list_and_split_keys(void) {
    fdb_handle_t* fdb = open_store();
    for (int step = 0; step <= 12; step += 6)
        for (int level = 500; level <= 850; level += 350) archive(fdb, step, level, 1);
    fdb_request_t* all = request(NULL, NULL);
    CHECK(listed(fdb, all, true, 3) == 0); /* not flushed yet */
    OK(fdb_flush(fdb));
    CHECK(listed(fdb, all, true, 3) == 6);
    CHECK(listed(fdb, all, true, 2) == 1);
    CHECK(listed(fdb, all, true, 1) == 1);
    CHECK(listed(fdb, NULL, true, 3) == 6);
    CHECK(listed(fdb, all, true, 7) == 6); /* another depth is 3 */

    fdb_listiterator_t* it;
    fdb_split_key_t* sk;
    const char *uri, *k, *v;
    size_t off, len, level;
    OK(fdb_new_splitkey(&sk));
    OK(fdb_list(fdb, all, &it, true, 3));
    FAILS(fdb_listiterator_attrs(it, &uri, &off, &len), "fdb_listiterator_next first");
    FAILS(fdb_listiterator_splitkey(it, sk), "fdb_listiterator_next first");
    int fields = 0;
    while (fdb_listiterator_next(it) == FDB_SUCCESS) {
        OK(fdb_listiterator_attrs(it, &uri, &off, &len));
        FAILS(fdb_listiterator_attrs(it, &uri, NULL, &len), "'off' is NULL");
        /* The bytes are where the listing says, in a file other programs open. */
        char want[64], got[64];
        FILE* f = fopen(uri, "rb");
        CHECK(f && len < sizeof got);
        CHECK(fseek(f, (long)off, SEEK_SET) == 0 && fread(got, 1, len, f) == len);
        fclose(f);
        OK(fdb_listiterator_splitkey(it, sk));
        int step = -1, lev = -1, pairs = 0;
        size_t last_level = 0;
        char previous[64] = "";
        while (fdb_splitkey_next_metadata(sk, &k, &v, &level) == FDB_SUCCESS) {
            CHECK(level >= last_level && level <= 2);
            if (level == last_level) CHECK(strcmp(previous, k) < 0); /* alphabetical within a level */
            last_level = level;
            snprintf(previous, sizeof previous, "%s", k);
            if (strcmp(k, "step") == 0) {
                step = atoi(v);
                CHECK(level == 2);
            }
            if (strcmp(k, "levelist") == 0) lev = atoi(v);
            if (strcmp(k, "class") == 0) CHECK(level == 0 && strcmp(v, "rd") == 0);
            pairs++;
        }
        CHECK(pairs >= 11 && step >= 0 && lev >= 500);
        CHECK(fdb_splitkey_next_metadata(sk, &k, &v, NULL) == FDB_ITERATION_COMPLETE);
        CHECK(payload(want, step, lev, 1) == len && memcmp(want, got, len) == 0);
        fields++;
    }
    CHECK(fields == 6);
    FAILS(fdb_listiterator_attrs(it, &uri, &off, &len), "past its last element");
    OK(fdb_delete_listiterator(it));
    FAILS(fdb_listiterator_splitkey(NULL, sk), "'it' is NULL");
    /* The split key holds a copy: still read after the iterator is gone. */
    OK(fdb_list(fdb, all, &it, true, 3));
    OK(fdb_listiterator_next(it));
    OK(fdb_listiterator_splitkey(it, sk));
    OK(fdb_delete_listiterator(it));
    OK(fdb_splitkey_next_metadata(sk, &k, &v, &level));
    CHECK(strcmp(k, "class") == 0 && strcmp(v, "rd") == 0 && level == 0);
    OK(fdb_list(fdb, all, &it, true, 1));
    OK(fdb_listiterator_next(it));
    FAILS(fdb_listiterator_attrs(it, &uri, &off, &len), "no location");
    OK(fdb_listiterator_splitkey(it, sk));
    while (fdb_splitkey_next_metadata(sk, &k, &v, &level) == FDB_SUCCESS) CHECK(level == 0);
    OK(fdb_delete_listiterator(it));
    OK(fdb_delete_splitkey(sk));

    /* Nothing matched: an empty listing that says why. */
    fdb_request_t* none = request("step", "99");
    const char* why;
    OK(fdb_list(fdb, none, &it, true, 3));
    CHECK(fdb_listiterator_next(it) == FDB_ITERATION_COMPLETE);
    OK(fieldstore_listiterator_explanation(it, &why));
    CHECK(why && strstr(why, "step"));
    OK(fdb_delete_listiterator(it));
    OK(fdb_list(fdb, all, &it, true, 3));
    OK(fieldstore_listiterator_explanation(it, &why));
    CHECK(why == NULL);
    OK(fdb_delete_listiterator(it));
    OK(fdb_delete_request(none));
    OK(fdb_delete_request(all));

    /* A key the schema cannot place is refused, naming what is missing. */
    fdb_key_t* key;
    OK(fdb_new_key(&key));
    OK(fdb_key_add(key, "class", "rd"));
    FAILS(fdb_archive(fdb, key, "x", 1), "");
    FAILS(fdb_archive(fdb, key, NULL, 0), "'data' is NULL");
    FAILS(fdb_archive(fdb, key, "x", SIZE_MAX), "larger than any buffer");
    OK(fdb_delete_key(key));
    OK(fdb_delete_handle(fdb));
}

static void test_retrieve_and_the_data_reader(void) {
    fdb_handle_t* fdb = open_store();
    fdb_datareader_t* dr;
    long size, pos, got;
    char buf[256], want[256];
    OK(fdb_new_datareader(&dr));
    FAILS(fdb_datareader_open(dr, &size), "fdb_retrieve first");
    FAILS(fdb_datareader_read(dr, buf, 1, &got), "fdb_retrieve first");
    /* In the order the request names values: step 12, then 0. */
    fdb_request_t* req = request("step", "12/0");
    const char* level[] = {"500"};
    OK(fdb_request_add(req, "levelist", level, 1));
    OK(fdb_retrieve(fdb, req, dr));
    size_t first = payload(want, 12, 500, 1);
    size_t second = payload(want + first, 0, 500, 1);
    size_t total = first + second;
    OK(fdb_datareader_size(dr, &size));
    CHECK(size == (long)total);
    OK(fdb_datareader_read(dr, buf, 10, &got)); /* before open: nothing, as in FDB5 */
    CHECK(got == 0);
    OK(fdb_datareader_tell(dr, &pos));
    CHECK(pos == 0);
    OK(fdb_datareader_open(dr, NULL));
    OK(fdb_datareader_open(dr, &size));
    CHECK(size == (long)total);
    /* Odd-sized pieces across the field boundary. */
    long at = 0;
    for (long piece = 7; at < (long)total; piece += 6) {
        OK(fdb_datareader_read(dr, buf + at, piece, &got));
        CHECK(got > 0 && got <= piece);
        at += got;
        OK(fdb_datareader_tell(dr, &pos));
        CHECK(pos == at);
    }
    CHECK(at == (long)total && memcmp(buf, want, total) == 0);
    OK(fdb_datareader_read(dr, buf, 10, &got));
    CHECK(got == 0);
    /* Seeks and skips, forward and back, and reads from there. */
    OK(fdb_datareader_seek(dr, 3));
    OK(fdb_datareader_read(dr, buf, 5, &got));
    CHECK(got == 5 && memcmp(buf, want + 3, 5) == 0);
    OK(fdb_datareader_skip(dr, (long)first - 8)); /* to the second field's start */
    OK(fdb_datareader_tell(dr, &pos));
    CHECK(pos == (long)first);
    OK(fdb_datareader_read(dr, buf, 4, &got));
    CHECK(got == 4 && memcmp(buf, want + first, 4) == 0);
    OK(fdb_datareader_skip(dr, -6));
    OK(fdb_datareader_read(dr, buf, 6, &got));
    CHECK(got == 6 && memcmp(buf, want + first - 2, 6) == 0);
    OK(fdb_datareader_seek(dr, (long)total));
    FAILS(fdb_datareader_seek(dr, (long)total + 1), "outside the retrieved data");
    FAILS(fdb_datareader_seek(dr, -1), "outside the retrieved data");
    FAILS(fdb_datareader_skip(dr, 1), "outside the retrieved data");
    FAILS(fdb_datareader_read(dr, buf, -1, &got), "negative");
    FAILS(fdb_datareader_read(dr, NULL, 1, &got), "'buf' is NULL");
    OK(fdb_datareader_close(dr));
    OK(fdb_datareader_close(dr));
    /* Opened again: from the start. */
    OK(fdb_datareader_open(dr, &size));
    OK(fdb_datareader_read(dr, buf, sizeof buf, &got));
    CHECK(got == (long)total && memcmp(buf, want, total) == 0);
    const char* why;
    OK(fieldstore_datareader_explanation(dr, &why));
    CHECK(why == NULL);
    OK(fdb_delete_request(req));
    /* Nothing matched: an empty stream, and why. */
    req = request("step", "99");
    OK(fdb_retrieve(fdb, req, dr));
    OK(fdb_datareader_open(dr, &size));
    CHECK(size == 0);
    OK(fdb_datareader_read(dr, buf, 10, &got));
    CHECK(got == 0);
    OK(fieldstore_datareader_explanation(dr, &why));
    CHECK(why && strstr(why, "step"));
    OK(fdb_delete_request(req));
    /* A range as FDB5 programs give it: one value, or expanded first. */
    req = request("step", "0/to/12/by/6");
    OK(fdb_retrieve(fdb, req, dr));
    OK(fdb_datareader_size(dr, &size));
    CHECK(size > 0);
    OK(fdb_expand_request(req));
    OK(fdb_retrieve(fdb, req, dr));
    OK(fdb_datareader_size(dr, &pos));
    CHECK(pos == size);
    OK(fdb_delete_request(req));
    OK(fdb_delete_datareader(dr));
    OK(fdb_delete_handle(fdb));
}

static void test_duplicates_and_purge(void) {
    fdb_handle_t* fdb = open_store();
    archive(fdb, 0, 500, 2); /* a newer version of a field */
    OK(fdb_flush(fdb));
    fdb_request_t* req = request("step", "0");
    const char* level[] = {"500"};
    OK(fdb_request_add(req, "levelist", level, 1));
    /* FDB5 5.25's meaning: duplicates=true leaves out the older, false lists it too. */
    CHECK(listed(fdb, req, true, 3) == 1);
    CHECK(listed(fdb, req, false, 3) == 2);
    fdb_datareader_t* dr;
    char buf[64], want[64];
    long got;
    OK(fdb_new_datareader(&dr));
    OK(fdb_retrieve(fdb, req, dr));
    OK(fdb_datareader_open(dr, NULL));
    OK(fdb_datareader_read(dr, buf, sizeof buf, &got));
    CHECK((size_t)got == payload(want, 0, 500, 2) && memcmp(buf, want, (size_t)got) == 0);
    OK(fdb_delete_datareader(dr));

    fdb_purge_iterator_t* it;
    fdb_purge_element_t* el;
    const char* line;
    int lines = 0, rc;
    FAILS(fdb_purge(fdb, NULL, false, false, &it), "'req' is NULL");
    fdb_request_t* partial;
    OK(fdb_new_request(&partial));
    const char* rd[] = {"rd"};
    OK(fdb_request_add(partial, "class", rd, 1));
    FAILS(fdb_purge(fdb, partial, false, false, &it), "needs 'expver'");
    OK(fdb_delete_request(partial));
    fdb_request_t* dataset = request(NULL, NULL);
    OK(fdb_purge(fdb, dataset, false, false, &it));
    while ((rc = fdb_purge_iterator_next(it, &el)) == FDB_SUCCESS) {
        OK(fdb_purge_element_string(el, &line));
        if (lines++ == 0) CHECK(strstr(line, "Superseded fields: 1"));
        OK(fdb_delete_purge_element(el));
    }
    CHECK(rc == FDB_ITERATION_COMPLETE && lines >= 4);
    OK(fdb_purge_element_string(el, &line)); /* the empty element of the end, deleted by the caller */
    CHECK(strcmp(line, "") == 0);
    OK(fdb_delete_purge_element(el));
    OK(fdb_delete_purge_iterator(it));
    OK(fdb_purge(fdb, dataset, true, true, &it));
    while (fdb_purge_iterator_next(it, &el) == FDB_SUCCESS) OK(fdb_delete_purge_element(el));
    OK(fdb_delete_purge_element(el));
    OK(fdb_delete_purge_iterator(it));
    CHECK(listed(fdb, req, true, 3) == 1);
    OK(fdb_delete_request(dataset));
    OK(fdb_delete_request(req));
    OK(fdb_delete_handle(fdb));
}

static void test_archive_multiple(const char* sample) {
    FILE* f = fopen(sample, "rb");
    CHECK(f);
    char* data = malloc(1 << 20);
    size_t length = fread(data, 1, 1 << 20, f);
    fclose(f);
    fdb_handle_t* fdb = open_store();
    fdb_request_t* req;
    OK(fdb_new_request(&req));
    const char* klass[] = {"od"};
    const char* step[] = {"0/6"};
    OK(fdb_request_add(req, "class", klass, 1));
    OK(fdb_request_add(req, "step", step, 1));
    /* Messages the request does not name (step 12): refused, nothing archived. */
    FAILS(fdb_archive_multiple(fdb, req, data, length), "is not one request");
    fieldstore_stats_t stats;
    OK(fdb_flush(fdb));
    fdb_request_t* od;
    OK(fdb_new_request(&od));
    OK(fdb_request_add(od, "class", klass, 1));
    OK(fieldstore_stats(fdb, od, &stats));
    CHECK(stats.fields == 0);
    /* A request naming more than the messages hold: refused. */
    const char* steps[] = {"0/6/12/18"};
    OK(fdb_request_add(req, "step", steps, 1));
    FAILS(fdb_archive_multiple(fdb, req, data, length), "names 4 fields, the data holds 3");
    const char* all_steps[] = {"0/to/12/by/6"};
    OK(fdb_request_add(req, "step", all_steps, 1));
    OK(fdb_archive_multiple(fdb, req, data, length));
    OK(fdb_flush(fdb));
    OK(fdb_archive_multiple(fdb, NULL, data, length)); /* again, without a request */
    OK(fdb_flush(fdb));
    OK(fieldstore_stats(fdb, od, &stats));
    CHECK(stats.datasets == 1 && stats.fields == 6 && stats.superseded_fields == 6 && stats.bytes > 0);
    FAILS(fdb_archive_multiple(fdb, NULL, "not GRIB at all", 15), "GRIB");
    /* Grid points of the GRIB fields (constant ones: every point the same value). */
    fieldstore_extraction_t* ex;
    const size_t ranges[] = {0, 3, 10, 11};
    const char* key;
    const double* values;
    size_t count;
    uint64_t read;
    int extracted = 0;
    OK(fieldstore_extract(fdb, od, ranges, 2, &ex));
    while (fieldstore_extraction_next(ex, &key, &values, &count, &read) == FDB_SUCCESS) {
        CHECK(strstr(key, "class=od") && count == 4 && read > 0);
        CHECK(values[0] == values[0] && values[0] == values[1] && values[0] == values[3]); /* not NaN, constant */
        extracted++;
    }
    CHECK(extracted == (int)stats.fields); /* the live fields, not the superseded ones */
    CHECK(fieldstore_extraction_next(ex, &key, &values, &count, NULL) == FDB_ITERATION_COMPLETE);
    OK(fieldstore_delete_extraction(ex));
    const size_t beyond[] = {0, (size_t)1 << 40};
    FAILS(fieldstore_extract(fdb, od, beyond, 1, &ex), "beyond the field");
    FAILS(fieldstore_extract(fdb, od, NULL, 1, &ex), "'ranges' is NULL");
    OK(fdb_delete_request(req));
    OK(fdb_delete_request(od));
    OK(fdb_delete_handle(fdb));
    free(data);
}

static void test_axes_locks_where_and_wipe(void) {
    fdb_handle_t* fdb = open_store();
    fdb_request_t* req = request(NULL, NULL);
    fieldstore_axes_t* axes;
    const char* keyword;
    const char* const* values;
    size_t count;
    int seen = 0;
    OK(fieldstore_axes(fdb, req, &axes));
    while (fieldstore_axes_next(axes, &keyword, &values, &count) == FDB_SUCCESS) {
        if (strcmp(keyword, "step") == 0) CHECK(count == 3 && strcmp(values[0], "0") == 0 && strcmp(values[2], "12") == 0);
        seen++;
    }
    CHECK(seen >= 10);
    CHECK(fieldstore_axes_next(axes, &keyword, &values, &count) == FDB_ITERATION_COMPLETE);
    OK(fieldstore_delete_axes(axes));

    fieldstore_where_t* where;
    const char *dataset, *catalogue, *store;
    OK(fieldstore_where(fdb, req, &where));
    OK(fieldstore_where_next(where, &dataset, &catalogue, &store));
    CHECK(strstr(dataset, "class=rd") && strstr(catalogue, "posix") && strlen(store) > 0);
    CHECK(fieldstore_where_next(where, &dataset, &catalogue, &store) == FDB_ITERATION_COMPLETE);
    OK(fieldstore_delete_where(where));

    const char* archive_action[] = {"archive"};
    const char* bad_action[] = {"explode"};
    FAILS(fieldstore_lock(fdb, req, bad_action, 1), "'explode'");
    OK(fieldstore_lock(fdb, req, archive_action, 1));
    if (try_archive(fdb, 18, 500, 1) == FDB_SUCCESS) FAILS(fdb_flush(fdb), "locked");
    CHECK(strstr(fdb_error_string(FDB_ERROR_GENERAL_EXCEPTION), "locked"));
    OK(fieldstore_unlock(fdb, req, archive_action, 1));

    /* Wipe: FDB5's minimum keys, a dry run, then done. */
    fdb_wipe_iterator_t* it;
    fdb_wipe_element_t* el;
    const char* line;
    int lines = 0, removed = 0;
    fdb_request_t* partial;
    OK(fdb_new_request(&partial));
    const char* rd[] = {"rd"};
    OK(fdb_request_add(partial, "class", rd, 1));
    FAILS(fdb_wipe(fdb, partial, true, false, false, &it), "needs 'expver'");
    OK(fdb_delete_request(partial));
    OK(fdb_wipe(fdb, req, false, false, false, &it));
    while (fdb_wipe_iterator_next(it, &el) == FDB_SUCCESS) {
        OK(fdb_wipe_element_string(el, &line));
        if (lines++ == 0) CHECK(strstr(line, "[Database: ") && strstr(line, "dry run"));
        OK(fdb_delete_wipe_element(el));
    }
    OK(fdb_delete_wipe_element(el));
    OK(fdb_delete_wipe_iterator(it));
    CHECK(lines >= 2 && listed(fdb, req, true, 3) == 6);
    /* The work is done at the first next, as in FDB5: an iterator never read wipes nothing. */
    OK(fdb_wipe(fdb, req, true, true, false, &it));
    OK(fdb_delete_wipe_iterator(it));
    CHECK(listed(fdb, req, true, 3) == 6);
    OK(fdb_wipe(fdb, req, true, true, false, &it));
    while (fdb_wipe_iterator_next(it, &el) == FDB_SUCCESS) {
        OK(fdb_wipe_element_string(el, &line));
        /* porcelain: the paths removed, data files' absolute, index files' in their data set */
        CHECK(strchr(line, '/') && !strchr(line, ' '));
        removed += line[0] == '/';
        OK(fdb_delete_wipe_element(el));
    }
    OK(fdb_delete_wipe_element(el));
    OK(fdb_delete_wipe_iterator(it));
    CHECK(removed >= 1 && listed(fdb, req, true, 3) == 0);
    /* Nothing left to wipe: no element. */
    OK(fdb_wipe(fdb, req, true, false, false, &it));
    CHECK(fdb_wipe_iterator_next(it, &el) == FDB_ITERATION_COMPLETE);
    OK(fdb_delete_wipe_element(el));
    OK(fdb_delete_wipe_iterator(it));
    /* The handle that wiped archives into the data set again. */
    archive(fdb, 0, 500, 3);
    OK(fdb_flush(fdb));
    CHECK(listed(fdb, req, true, 3) == 1);
    OK(fdb_wipe(fdb, req, true, false, false, &it)); /* and leaves the store empty for the next test */
    while (fdb_wipe_iterator_next(it, &el) == FDB_SUCCESS) OK(fdb_delete_wipe_element(el));
    OK(fdb_delete_wipe_element(el));
    OK(fdb_delete_wipe_iterator(it));
    CHECK(listed(fdb, req, true, 3) == 0);
    OK(fdb_delete_request(req));
    OK(fdb_delete_handle(fdb));
}

/* Threads: each archives its own level through its own handle and one shared handle, and
 * reads everything back. */
#define THREADS 6
#define STEPS 20
static fdb_handle_t* shared_handle;

static void* worker(void* arg) {
    int level = 100 + (int)(intptr_t)arg;
    /* Each thread has its own last error. */
    char expected[64];
    snprintf(expected, sizeof expected, "thread %d", level);
    fdb_key_t* key;
    OK(fdb_new_key(&key));
    FAILS(fdb_key_add(key, expected, NULL), "'value' is NULL");
    OK(fdb_delete_key(key));
    fdb_handle_t* own = open_store();
    for (int step = 0; step < STEPS; step++) archive(step % 2 ? own : shared_handle, step, level, 1);
    OK(fdb_flush(own));
    OK(fdb_flush(shared_handle));
    char value[16];
    snprintf(value, sizeof value, "%d", level);
    fdb_request_t* req = request("levelist", value);
    fdb_datareader_t* dr;
    long size, got;
    char buf[64 * STEPS], want[64];
    OK(fdb_new_datareader(&dr));
    OK(fdb_retrieve(own, req, dr));
    OK(fdb_datareader_open(dr, &size));
    OK(fdb_datareader_read(dr, buf, sizeof buf, &got));
    CHECK(got == size);
    size_t at = 0;
    for (int step = 0; step < STEPS; step++) {
        size_t n = payload(want, step, level, 1);
        CHECK(memcmp(buf + at, want, n) == 0);
        at += n;
    }
    CHECK(at == (size_t)size);
    OK(fdb_delete_datareader(dr));
    OK(fdb_delete_request(req));
    OK(fdb_delete_handle(own));
    return NULL;
}

static void test_many_handles_in_threads(void) {
    pthread_t threads[THREADS];
    FAILS(fdb_new_request(NULL), "'req' is NULL"); /* this thread's error, which the others' leave */
    shared_handle = open_store();
    for (intptr_t i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, worker, (void*)i) == 0);
    for (int i = 0; i < THREADS; i++) CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(strstr(fdb_error_string(FDB_ERROR_GENERAL_EXCEPTION), "'req' is NULL"));
    fdb_request_t* req = request(NULL, NULL);
    CHECK(listed(shared_handle, req, true, 3) == THREADS * STEPS);
    OK(fdb_delete_request(req));
    OK(fdb_delete_handle(shared_handle));
}

static void test_the_environment_names_the_store(const char* root) {
    char path[4096];
    snprintf(path, sizeof path, "%s/by-environment", root);
    CHECK(setenv("FIELDSTORE_ROOT", path, 1) == 0);
    unsetenv("FIELDSTORE_CONFIG");
    fdb_handle_t* fdb;
    OK(fdb_new_handle(&fdb));
    archive(fdb, 0, 500, 1);
    OK(fdb_delete_handle(fdb)); /* flushes */
    OK(fdb_new_handle(&fdb));
    fdb_request_t* req = request(NULL, NULL);
    CHECK(listed(fdb, req, true, 3) == 1);
    OK(fdb_delete_request(req));
    OK(fdb_delete_handle(fdb));
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s ROOT SAMPLE_GRIB\n", argv[0]);
        return 2;
    }
    snprintf(config, sizeof config, "catalogue: {type: posix, root: %s/store, create: true}\nstore: {type: posix, root: %s/store, create: true}\n", argv[1], argv[1]);
    test_versions_errors_and_the_failure_handler();
    test_keys_and_requests();
    test_handles_from_yaml();
    test_archive_list_and_split_keys();
    test_retrieve_and_the_data_reader();
    test_duplicates_and_purge();
    test_archive_multiple(argv[2]);
    test_axes_locks_where_and_wipe();
    test_many_handles_in_threads();
    test_the_environment_names_the_store(argv[1]);
    printf("test_fdb_c: all checks passed\n");
    return 0;
}
