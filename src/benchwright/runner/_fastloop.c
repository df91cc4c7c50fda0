/*
 * The event loops' hot path, compiled (benchwright.runner._fastloop).
 *
 * Why: on tpcb select-only the Python loop (event_loop_pq.PqEventLoop) spent 9.8-10.6 us of user CPU
 * per select against pgbench's 2.5-3.8, with the kernel's share equal (docs/workloads-sql.md); on
 * 16-command Redis pipelines the RESP loop spent 1.7 us per request against redis-benchmark's 0.9. No
 * single line of Python was the cost; the interpreter was. This module does in C what those loops do
 * for the common request, and nothing else:
 *
 *   libpq (PostgreSQL): a single prepared statement, its status judged by its row count (rows_found,
 *   rows_changed) or by its success alone (no check); or a fixed script of them on one connection
 *   (loop_parts.Steps: a transaction's BEGIN, statements and COMMIT), each sent when the previous
 *   one's result is in;
 *   MySQL / MariaDB (mysqlclient): a statement with no check or judged by its row count (YCSB's read:
 *   event_loop_my.rows_found), or a fixed script of them (Steps), sent
 *   with mysql_send_query and read with mysql_read_query_result / mysql_store_result on mysqlclient's
 *   own MYSQL handle, once the socket is readable; an error reply is handed back unread (REPLY), so
 *   mysqlclient raises and names it exactly as on a thread;
 *   RESP (Redis): a request of N commands written out in RESP (a pipeline), no check: OK unless one
 *   of its N replies is an error (redis-bench); or one command whose reply decides NOT_FOUND by being
 *   None or empty (YCSB's reads: reply_not_none, reply_nonempty);
 *   TPC-B select-only (UniformSelects, libpq): each select sent from its id with no request object
 *   made; the request tuple is made only if the select is handed back.
 *
 * The OK requests' instants are buffered here and handed to the recorder in one pass before any
 * Python runs (flush_completed).
 *
 * A few things more, outside the loop, for the request sources: redis-bench's blocks of pipelines
 * (key_pipelines, from random words Python's own generator gave), YCSB's hashed keys (ycsb_keys),
 * its uniform keys and operation mix (uniform_ints, choose_labels), and point selects (int_requests,
 * special_ids for sysbench's default distribution, UniformSelects).
 *
 * Everything else goes back to the Python loop, with the connection's state written back the way the
 * Python loop keeps it, before anything Python would need is consumed: a statement not yet prepared on
 * the session, a check that reads the result (follow-up steps, YCSB's NOT_FOUND), a send that did not
 * go out whole, an error (handed back with its SQLSTATE or its message), a lost session, a protocol
 * error, an overdue reply, the end of the connection's requests. It is one loop: the same epoll
 * descriptor, the same recorder, the same clock (CLOCK_MONOTONIC, which is perf_counter_ns on Linux),
 * the same timing: a request is timed from just before it is sent until the wake-up that brought its
 * last reply.
 *
 * The seam with Python is data (runner/fast_seam.py): the loop is made from a LoopSpec (its epoll
 * descriptor, the callbacks called here: the hand-back, the recorder's record / flush /
 * completed_buffers, closing a run of failures; the checks recognised by identity), a connection is
 * taken with a ConnectionSpec (its protocol, socket, request iterator, counters, client handle), and
 * it comes back with a HandBack (its request state, bytes read past the last reply), which Python
 * writes where its loop keeps it. C reads the specs by position, in the order of LOOP_SPEC_FIELDS /
 * CONNECTION_SPEC_FIELDS (exported; compiled.py refuses a build whose order differs from the
 * declaration's), and reads or writes no Python attribute by name. Calls into Python are those
 * callbacks, the request iterator, a Steps script's list (LoopSpec.steps_of) and the generator's
 * getrandbits / int.to_bytes in UniformSelects.
 *
 * libpq is the copy psycopg loaded (its path comes from Python): its functions are looked up in that
 * library, so the PGconn psycopg made is driven by the code that made it. Only libpq's stable ABI is
 * used: opaque pointers, and the values of three enums, written out below. RESP replies are counted
 * by a scanner of the protocol's framing (below); their contents are not turned into Python objects.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

typedef struct st_mysql MYSQL;
typedef struct st_mysql_res MYSQL_RES;
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

/* libpq-fe.h: ExecStatusType, ConnStatusType, PGTransactionStatusType, PG_DIAG_SQLSTATE */
enum { PGRES_COMMAND_OK = 1, PGRES_TUPLES_OK = 2 };
enum { CONNECTION_BAD = 1 };
enum { PQTRANS_IDLE = 0 };
#define PG_DIAG_SQLSTATE 'C'

/* Why a connection goes back to the Python loop (module constants of the same names). */
enum { SLOW = 1, FLUSH = 2, ERROR = 3, BROKEN = 4, DONE = 5, TIMEOUT = 6, IN_TRANSACTION = 7, PROTOCOL = 8, REPLY = 9 };
/* The protocol a connection speaks. */
enum { PQ = 1, RESP = 2, MY = 3 };
/* MySQL's wire protocol: a packet's 4-byte header, then its first byte; 0xFF opens an error packet. */
#define MY_HEADER 4
#define MY_ERR_PACKET 0xFF
/* What decides a fast request's status: libpq rows_found / rows_changed, RESP reply_not_none /
 * reply_nonempty (loop_parts.py), or nothing but success. */
enum { CHECK_NONE = 0, CHECK_FOUND = 1, CHECK_CHANGED = 2, CHECK_NOT_NONE = 3, CHECK_NONEMPTY = 4 };
/* What a RESP reply is worth to those checks: None, a false value (empty, zero), a true one. */
enum { REPLY_NULL = 0, REPLY_FALSE = 1, REPLY_TRUE = 2 };
#define MAX_PARAMS 64
#define MAX_EVENTS 64
#define RESP_BUFFER 65536 /* what one recv reads at most, to start with (as the Python loop) */
#define RESP_DEPTH 32      /* nested arrays deeper than this are not scanned here */
#define COMPLETED_NAMES 16 /* operation names whose OK requests are buffered here (more: appended) */

static struct {
    int (*consumeInput)(PGconn *);
    int (*isBusy)(PGconn *);
    PGresult *(*getResult)(PGconn *);
    int (*resultStatus)(const PGresult *);
    int (*ntuples)(const PGresult *);
    char *(*cmdTuples)(PGresult *);
    void (*clear)(PGresult *);
    int (*sendQueryPrepared)(PGconn *, const char *, int, const char *const *, const int *, const int *, int);
    int (*flush)(PGconn *);
    int (*status)(const PGconn *);
    int (*transactionStatus)(const PGconn *);
    char *(*resultErrorField)(const PGresult *, int);
} pq;
static int bound = 0;

/* The MySQL client library's C API (mysql.h), as mysqlclient's copy exports it. */
static struct {
    int (*send_query)(MYSQL *, const char *, unsigned long);
    char (*read_query_result)(MYSQL *); /* my_bool: 0 when the result is in */
    unsigned int (*field_count)(MYSQL *);
    MYSQL_RES *(*store_result)(MYSQL *);
    unsigned long long (*num_rows)(MYSQL_RES *);
    void (*free_result)(MYSQL_RES *);
    unsigned int (*errno_of)(MYSQL *);
    const char *(*ssl_cipher)(MYSQL *);
} my;
static int my_bound = 0;

/* The seam with Python (runner/fast_seam.py): the fields of the tuples C reads by position, in their
 * order, exported as module constants so that a field moved on one side only fails loudly. */
static const char *const LOOP_SPEC_FIELDS[] = {
    "epfd",      "handback",          "close_window", "record",     "flush",
    "completed", "completed_buffers", "not_found",    "rows_found", "rows_changed",
    "not_none",  "nonempty",          "steps_type",   "steps_of",
};
static const char *const CONNECTION_SPEC_FIELDS[] = {
    "conn",   "kind",    "fd",               "requests", "limit",
    "issued", "failing", "reply_timeout_ns", "pgconn",   "prepared",
    "mysql",
};
#define NFIELDS(names) ((Py_ssize_t)(sizeof names / sizeof names[0]))

/* What a connection's state is when it comes back (fast_seam.HandBack): a struct sequence. */
enum { BACK_ISSUED, BACK_LIMIT, BACK_REQUEST, BACK_PAYLOAD, BACK_STEP, BACK_STARTED, BACK_UNREAD, BACK_FIELDS };
static PyStructSequence_Field handback_fields[] = {
    {"issued", "requests issued so far"},
    {"limit", "its limit (what was issued, once its requests ran out); None: no limit"},
    {"request", "the request in flight, or None"},
    {"payload", "its step in flight"},
    {"step", "a Steps request: the step in flight; -1 otherwise"},
    {"started_ns", "when the request in flight was sent"},
    {"unread", "RESP: bytes read past the last whole reply, or None"},
    {NULL, NULL},
};
static PyStructSequence_Desc handback_desc = {"benchwright.runner._fastloop.HandBack",
                                              "A connection's state as the compiled loop hands it back.",
                                              handback_fields, BACK_FIELDS};
static PyTypeObject *HandBackType;

static PyObject *ONE; /* the int 1: a request's reply count */

static inline int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One connection while the compiled loop drives it. */
typedef struct {
    PyObject *conn;     /* the loop's Connection (opaque here: given back to the hand-back) */
    PyObject *requests; /* its iterator of requests */
    PyObject *prepared; /* its channel's statements: SQL text -> statement name */
    PyObject *request;  /* the request in flight: (name, (sql, params), replies, check) */
    PyObject *steps;    /* a Steps request: its list of (sql, params) (borrowed: the request holds it) */
    Py_ssize_t step;    /* the step in flight */
    int proto;          /* PQ or RESP */
    PGconn *pg;
    PGresult *held; /* the result is in, ReadyForQuery is not yet */
    MYSQL *my;      /* MySQL: mysqlclient's handle (the connection object in ``conn`` keeps it alive) */
    int tls;        /* MySQL over TLS: the socket's bytes cannot be peeked at; Python drives it */
    char *buf;          /* RESP: bytes received, not yet a complete reply (handed back unread) */
    Py_ssize_t have, cap;
    long expected, got; /* RESP: replies the request in flight expects, and has */
    PyObject *error;    /* RESP: the first error reply's message (str) */
    int fd;
    int check;
    int sourced; /* the request in flight is the id below, from a libpq UniformSelects: no tuple made */
    long long id;
    int failing; /* the connection's run of failures is open: close it on the first success */
    int64_t started, timeout_ns, issued, limit; /* limit -1: none */
} Slot;

typedef struct {
    PyObject_HEAD
    /* the loop's LoopSpec (fast_seam.py), field by field; handback NULL once closed */
    PyObject *handback;     /* loop._handed_back(conn, why, end_ns, detail, HandBack) */
    PyObject *close_window; /* loop._close_window(conn, end_ns) */
    PyObject *record, *flush, *completed_buffers; /* the recorder's */
    PyObject *completed; /* recorder.completed: op -> (starts, ends), cleared in place by the recorder */
    PyObject *rows_found, *rows_changed, *not_found, *steps_type, *not_none, *nonempty, *steps_of;
    Slot **by_fd;
    int nfd;
    int epfd;
    int closing;   /* no new requests: the deadline, the stop flag or an abort */
    int held;      /* connections driven here */
    unsigned handed; /* hand-backs so far: after one, the Python loop has work of its own */
    int succeeded; /* a request ended well since the Python loop last asked */
    int64_t woke;  /* when epoll_wait last returned: the end of every request it completed */
    int64_t recorded;
    /* Requests that ended OK since Python last saw the recorder, by operation name: their start and
     * end instants, copied into ``recorder.completed``'s lists (``flush_completed``) before any
     * Python runs. Why: two ints made and appended per request, between the kernel's work for each,
     * missed the caches; made in one pass they do not. */
    struct {
        PyObject *name;
        int64_t *at; /* start, end, start, end, ... */
        Py_ssize_t n, cap;
    } done[COMPLETED_NAMES];
    int ndone;
} Fast;

/* ------------------------------------------------------------------ binding the client libraries */

typedef struct {
    void **slot;
    const char *symbol;
} Symbol;

/* Look ``symbols`` up in the library already loaded from ``path`` (RTLD_NOLOAD: the copy psycopg or
 * mysqlclient loaded, never a second one; the handle stays open, as they keep it loaded for the
 * process's life). -1 with ImportError when the library is not loaded or lacks one of them. */
static int bind_symbols(PyObject *arg, const char *what, const Symbol *symbols, size_t n) {
    const char *path = PyUnicode_AsUTF8(arg);
    if (path == NULL) return -1;
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL) {
        PyErr_Format(PyExc_ImportError, "%s is not loaded from %s", what, path);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if ((*symbols[i].slot = dlsym(lib, symbols[i].symbol)) == NULL) {
            PyErr_Format(PyExc_ImportError, "%s has no %s", path, symbols[i].symbol);
            return -1;
        }
    return 0;
}

#define SYMBOL(table, field, name) {(void **)&table.field, name}

static PyObject *bind_libpq(PyObject *module, PyObject *arg) {
    static const Symbol symbols[] = {
        SYMBOL(pq, consumeInput, "PQconsumeInput"),
        SYMBOL(pq, isBusy, "PQisBusy"),
        SYMBOL(pq, getResult, "PQgetResult"),
        SYMBOL(pq, resultStatus, "PQresultStatus"),
        SYMBOL(pq, ntuples, "PQntuples"),
        SYMBOL(pq, cmdTuples, "PQcmdTuples"),
        SYMBOL(pq, clear, "PQclear"),
        SYMBOL(pq, sendQueryPrepared, "PQsendQueryPrepared"),
        SYMBOL(pq, flush, "PQflush"),
        SYMBOL(pq, status, "PQstatus"),
        SYMBOL(pq, transactionStatus, "PQtransactionStatus"),
        SYMBOL(pq, resultErrorField, "PQresultErrorField"),
    };
    if (bind_symbols(arg, "libpq", symbols, sizeof symbols / sizeof symbols[0]) < 0) return NULL;
    bound = 1;
    Py_RETURN_NONE;
}

static PyObject *bind_mysql(PyObject *module, PyObject *arg) {
    static const Symbol symbols[] = {
        SYMBOL(my, send_query, "mysql_send_query"),
        SYMBOL(my, read_query_result, "mysql_read_query_result"),
        SYMBOL(my, field_count, "mysql_field_count"),
        SYMBOL(my, store_result, "mysql_store_result"),
        SYMBOL(my, num_rows, "mysql_num_rows"),
        SYMBOL(my, free_result, "mysql_free_result"),
        SYMBOL(my, errno_of, "mysql_errno"),
        SYMBOL(my, ssl_cipher, "mysql_get_ssl_cipher"),
    };
    if (bind_symbols(arg, "the MySQL client library", symbols, sizeof symbols / sizeof symbols[0]) < 0)
        return NULL;
    my_bound = 1;
    Py_RETURN_NONE;
}

#undef SYMBOL

/* ------------------------------------------------------------------ point selects made here */

/* Python's random.random() from two consecutive outputs of its generator (a 27-bit and a 26-bit
 * part, CPython's Modules/_randommodule.c), as getrandbits() hands them over: 32-bit words, least
 * significant first, which int.to_bytes(..., "little") lays out in order. */
static inline double random_of(const unsigned char *w) {
    uint32_t a, b;
    memcpy(&a, w, 4);
    memcpy(&b, w + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    a = __builtin_bswap32(a);
    b = __builtin_bswap32(b);
#endif
    return ((a >> 5) * 67108864.0 + (b >> 6)) * (1.0 / 9007199254740992.0);
}

/* ``v`` in decimal at the end of ``buf`` (24 bytes): its first character; ``*n`` its length. What
 * b"%d" % v writes, without snprintf's format parsing (a third of a request's making, in perf). */
static char *decimal(long long v, char *buf, int *n) {
    char *end = buf + 24, *p = end;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do *--p = (char)('0' + u % 10); while (u /= 10);
    if (v < 0) *--p = '-';
    *n = (int)(end - p);
    return p;
}

static PyObject *int_request(PyObject *name, PyObject *head, PyObject *tail, long long v, int libpq) {
    char buf[24];
    int nd;
    const char *digits = decimal(v, buf, &nd);
    if (libpq) {
        PyObject *param = PyBytes_FromStringAndSize(digits, nd);
        PyObject *params = param ? PyList_New(1) : NULL;
        if (params == NULL) {
            Py_XDECREF(param);
            return NULL;
        }
        PyList_SET_ITEM(params, 0, param);
        PyObject *payload = PyTuple_Pack(2, head, params);
        Py_DECREF(params);
        if (payload == NULL) return NULL;
        PyObject *request = PyTuple_Pack(4, name, payload, ONE, Py_None);
        Py_DECREF(payload);
        return request;
    }
    Py_ssize_t nhead = PyBytes_GET_SIZE(head), ntail = PyBytes_GET_SIZE(tail);
    PyObject *statement = PyBytes_FromStringAndSize(NULL, nhead + nd + ntail);
    if (statement == NULL) return NULL;
    char *p = PyBytes_AS_STRING(statement);
    memcpy(p, PyBytes_AS_STRING(head), nhead);
    memcpy(p + nhead, digits, nd);
    memcpy(p + nhead + nd, PyBytes_AS_STRING(tail), ntail);
    PyObject *request = PyTuple_Pack(4, name, statement, ONE, Py_None);
    Py_DECREF(statement);
    return request;
}

/* UniformSelects(name, head, tail, getrandbits, low, count, libpq): the endless requests of point
 * selects on ``low + floor(random() * count)``, one at a time (an iterator): the request
 * int_requests makes, the ids the Python comprehension draws from the same generator (its words
 * fetched 64 draws at a time, as uniform_ints reads them). TPC-B select-only on the loop. Why one at
 * a time: a request made when it is sent reuses the memory the last one freed, still in the caches;
 * a block of 64 made at once, even in C, cost 0.9 us of CPU a select in the worker against 0.3 run
 * alone. */
#define SOURCE_BLOCK 64
typedef struct {
    PyObject_HEAD
    PyObject *name, *head, *tail, *getrandbits;
    long long low, count;
    int libpq, at, n;
    long long ids[SOURCE_BLOCK];
} UniformSelects;

static PyObject *UniformSelects_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *name, *head, *tail, *getrandbits;
    long long low, count;
    int libpq;
    if (!PyArg_ParseTuple(args, "UO!O!OLLp", &name, &PyBytes_Type, &head, &PyBytes_Type, &tail, &getrandbits, &low,
                          &count, &libpq))
        return NULL;
    if (count < 1 || count > (1LL << 53) || !PyCallable_Check(getrandbits)) {
        PyErr_SetString(PyExc_ValueError, "UniformSelects: 1 <= count <= 2**53 and a getrandbits to call");
        return NULL;
    }
    UniformSelects *self = (UniformSelects *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->name = Py_NewRef(name);
    self->head = Py_NewRef(head);
    self->tail = Py_NewRef(tail);
    self->getrandbits = Py_NewRef(getrandbits);
    self->low = low;
    self->count = count;
    self->libpq = libpq;
    return (PyObject *)self;
}

static void UniformSelects_dealloc(UniformSelects *self) {
    Py_XDECREF(self->name);
    Py_XDECREF(self->head);
    Py_XDECREF(self->tail);
    Py_XDECREF(self->getrandbits);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The next 64 ids: one call to the generator for their words. */
static int UniformSelects_refill(UniformSelects *self) {
    PyObject *bits = PyObject_CallFunction(self->getrandbits, "i", 64 * SOURCE_BLOCK);
    PyObject *words = bits ? PyObject_CallMethod(bits, "to_bytes", "is", 8 * SOURCE_BLOCK, "little") : NULL;
    Py_XDECREF(bits);
    if (words == NULL) return -1;
    if (!PyBytes_Check(words) || PyBytes_GET_SIZE(words) != 8 * SOURCE_BLOCK) {
        Py_DECREF(words);
        PyErr_Format(PyExc_TypeError, "getrandbits gave no %d-bit integer", 64 * SOURCE_BLOCK);
        return -1;
    }
    const unsigned char *w = (const unsigned char *)PyBytes_AS_STRING(words);
    for (int i = 0; i < SOURCE_BLOCK; i++, w += 8)
        self->ids[i] = self->low + (long long)floor(random_of(w) * (double)self->count);
    Py_DECREF(words);
    self->at = 0;
    self->n = SOURCE_BLOCK;
    return 0;
}

/* The next id, or -1 with an exception (``*id`` set on success). */
static int UniformSelects_id(UniformSelects *self, long long *id) {
    if (self->at == self->n && UniformSelects_refill(self) < 0) return -1;
    *id = self->ids[self->at++];
    return 0;
}

static PyObject *UniformSelects_next(UniformSelects *self) {
    long long id;
    if (UniformSelects_id(self, &id) < 0) return NULL;
    return int_request(self->name, self->head, self->tail, id, self->libpq);
}

static PyTypeObject UniformSelectsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "benchwright.runner._fastloop.UniformSelects",
    .tp_basicsize = sizeof(UniformSelects),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Endless point-select requests on uniform ids, made one at a time: see int_request.",
    .tp_new = UniformSelects_new,
    .tp_dealloc = (destructor)UniformSelects_dealloc,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)UniformSelects_next,
};

/* ------------------------------------------------------------------ slots */

static Slot *slot_of(Fast *self, int fd) { return fd >= 0 && fd < self->nfd ? self->by_fd[fd] : NULL; }

static void free_slot(Fast *self, Slot *s) {
    if (s->fd >= 0 && s->fd < self->nfd && self->by_fd[s->fd] == s) {
        self->by_fd[s->fd] = NULL;
        self->held--;
    }
    if (s->held) pq.clear(s->held);
    PyMem_Free(s->buf);
    Py_XDECREF(s->error);
    Py_XDECREF(s->requests);
    Py_XDECREF(s->prepared);
    Py_XDECREF(s->request);
    Py_XDECREF(s->conn);
    PyMem_Free(s);
}

/* The connection's state for the Python loop (a HandBack, fast_seam.py): what ``_send_next`` would
 * have set up for the request in flight, if any; RESP bytes read past the last reply. */
static PyObject *state_of(Slot *s) {
    PyObject *back = PyStructSequence_New(HandBackType);
    if (back == NULL) return NULL;
    PyObject *request = s->request ? s->request : Py_None, *payload = Py_None;
    if (s->request != NULL) /* a Steps request goes on in Python from the step in flight */
        payload = s->steps != NULL ? PyList_GET_ITEM(s->steps, s->step) : PyTuple_GET_ITEM(s->request, 1);
    PyObject *values[BACK_FIELDS] = {
        [BACK_ISSUED] = PyLong_FromLongLong(s->issued),
        [BACK_LIMIT] = s->limit >= 0 ? PyLong_FromLongLong(s->limit) : Py_NewRef(Py_None),
        [BACK_REQUEST] = Py_NewRef(request),
        [BACK_PAYLOAD] = Py_NewRef(payload),
        [BACK_STEP] = PyLong_FromSsize_t(s->steps != NULL ? s->step : -1),
        [BACK_STARTED] = PyLong_FromLongLong(s->started),
        [BACK_UNREAD] = s->have > 0 ? PyBytes_FromStringAndSize(s->buf, s->have) : Py_NewRef(Py_None),
    };
    int ok = 1;
    for (int i = 0; i < BACK_FIELDS; i++) {
        ok = ok && values[i] != NULL;
        PyStructSequence_SET_ITEM(back, i, values[i] ? values[i] : Py_NewRef(Py_None));
    }
    if (!ok) Py_CLEAR(back);
    return back;
}

/* Give the connection back to the Python loop: free the slot, then call ``handback(conn, why,
 * end_ns, detail, state)`` with its state (``state_of``). ``detail`` (a new reference, or NULL for
 * None): the SQLSTATE or the error message, or how many bytes of a partial send went out. */
static int flush_completed(Fast *self);

static int hand_back(Fast *self, Slot *s, int why, int64_t end, PyObject *detail) {
    if (s->sourced) { /* the Python loop goes on from the request as its source would have made it */
        UniformSelects *u = (UniformSelects *)s->requests;
        s->request = int_request(u->name, u->head, u->tail, s->id, 1);
        s->sourced = 0;
        if (s->request == NULL) {
            Py_XDECREF(detail);
            return -1;
        }
    }
    if (flush_completed(self) < 0) {
        Py_XDECREF(detail);
        return -1;
    }
    PyObject *conn = Py_NewRef(s->conn), *state = state_of(s);
    self->handed++;
    free_slot(self, s);
    int rc = -1;
    if (state != NULL) {
        PyObject *result = PyObject_CallFunction(self->handback, "OiLOO", conn, why, (long long)end,
                                                 detail ? detail : Py_None, state);
        rc = result ? 0 : -1;
        Py_XDECREF(result);
    }
    Py_XDECREF(state);
    Py_XDECREF(detail);
    Py_DECREF(conn);
    return rc;
}

/* ------------------------------------------------------------------ one request */

/* The statement name of a step (sql, params) this module can send: prepared on this session, its
 * parameters text (bytes) or NULL (None). NULL when it cannot (PyErr_Occurred() on an error). */
static PyObject *sendable(Slot *s, PyObject *payload) {
    if (!PyTuple_CheckExact(payload) || PyTuple_GET_SIZE(payload) != 2) return NULL;
    PyObject *statement = PyDict_GetItemWithError(s->prepared, PyTuple_GET_ITEM(payload, 0));
    if (statement == NULL || !PyBytes_CheckExact(statement)) return NULL; /* the Python loop prepares it */
    PyObject *params = PyTuple_GET_ITEM(payload, 1);
    if (!PyList_CheckExact(params) && !PyTuple_CheckExact(params)) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(params);
    if (n > MAX_PARAMS) return NULL;
    PyObject **items = PySequence_Fast_ITEMS(params);
    for (Py_ssize_t i = 0; i < n; i++)
        if (items[i] != Py_None && !PyBytes_CheckExact(items[i])) return NULL;
    return statement;
}

/* Send one step (``sendable`` said yes); the connection is handed back if the send breaks or does
 * not go out whole. */
static int send_step(Fast *self, Slot *s, PyObject *payload) {
    PyObject *statement = sendable(s, payload);
    if (statement == NULL) return PyErr_Occurred() ? -1 : hand_back(self, s, SLOW, 0, NULL);
    PyObject *params = PyTuple_GET_ITEM(payload, 1);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(params);
    PyObject **items = PySequence_Fast_ITEMS(params);
    const char *values[MAX_PARAMS];
    for (Py_ssize_t i = 0; i < n; i++) /* bytes are NUL-terminated, as libpq reads text parameters */
        values[i] = items[i] == Py_None ? NULL : PyBytes_AS_STRING(items[i]);
    if (!pq.sendQueryPrepared(s->pg, PyBytes_AS_STRING(statement), (int)n, values, NULL, NULL, 0))
        return hand_back(self, s, BROKEN, now_ns(), NULL);
    int pending = pq.flush(s->pg);
    if (pending < 0) return hand_back(self, s, BROKEN, now_ns(), NULL);
    if (pending) return hand_back(self, s, FLUSH, 0, NULL); /* the Python loop waits to write the rest */
    return 0;
}

static int resp_send(Fast *self, Slot *s);
static int my_send(Fast *self, Slot *s);

/* A Steps request's script, when every step of it can be sent from here (libpq: prepared on this
 * session; MySQL: bytes): set as ``s->steps`` from step 0, 1. 0: the request runs in Python (a
 * statement not prepared yet, say); -1 on a Python error. */
static int take_script(Fast *self, Slot *s, PyObject *check) {
    if (Py_TYPE(check) != (PyTypeObject *)self->steps_type) return 0;
    PyObject *steps = PyObject_CallOneArg(self->steps_of, check);
    if (steps == NULL) return -1;
    Py_DECREF(steps); /* the Steps object, held by the request, keeps its list */
    if (!PyList_CheckExact(steps) || PyList_GET_SIZE(steps) < 1) return 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(steps); i++) {
        PyObject *step = PyList_GET_ITEM(steps, i);
        if (s->proto == MY ? !PyBytes_CheckExact(step) : sendable(s, step) == NULL) return PyErr_Occurred() ? -1 : 0;
    }
    s->steps = steps;
    s->step = 0;
    return 1;
}

/* The connection's next request, sent now; or the connection handed back when it cannot be. */
/* The next point select of a libpq UniformSelects, sent with no Python object made: its id drawn,
 * written in decimal here, the statement prepared on this session. Why: making and freeing the
 * request tuple per select was a tenth of the client's user time left (perf). */
static int send_sourced(Fast *self, Slot *s) {
    UniformSelects *u = (UniformSelects *)s->requests;
    if (UniformSelects_id(u, &s->id) < 0) return -1;
    s->issued++;
    s->sourced = 1;
    s->check = CHECK_NONE;
    s->started = now_ns();
    PyObject *statement = PyDict_GetItemWithError(s->prepared, u->head);
    if (statement == NULL || !PyBytes_CheckExact(statement)) /* the Python loop prepares it */
        return PyErr_Occurred() ? -1 : hand_back(self, s, SLOW, 0, NULL);
    char buf[25];
    int nd;
    char *digits = decimal(s->id, buf, &nd);
    buf[24] = '\0'; /* libpq reads text parameters up to their NUL */
    const char *values[1] = {digits};
    if (!pq.sendQueryPrepared(s->pg, PyBytes_AS_STRING(statement), 1, values, NULL, NULL, 0))
        return hand_back(self, s, BROKEN, now_ns(), NULL);
    int pending = pq.flush(s->pg);
    if (pending < 0) return hand_back(self, s, BROKEN, now_ns(), NULL);
    if (pending) return hand_back(self, s, FLUSH, 0, NULL);
    return 0;
}

static int send_next(Fast *self, Slot *s) {
    Py_CLEAR(s->request);
    s->sourced = 0;
    s->steps = NULL;
    if (self->closing || (s->limit >= 0 && s->issued >= s->limit)) return hand_back(self, s, DONE, 0, NULL);
    if (s->proto == PQ && Py_IS_TYPE(s->requests, &UniformSelectsType) && ((UniformSelects *)s->requests)->libpq)
        return send_sourced(self, s);
    PyObject *request = PyIter_Next(s->requests);
    if (request == NULL) {
        if (PyErr_Occurred()) return -1;
        s->limit = s->issued; /* the workload has nothing more for this connection */
        return hand_back(self, s, DONE, 0, NULL);
    }
    s->issued++;
    s->request = request;
    s->started = now_ns();
    if (!PyTuple_CheckExact(request) || PyTuple_GET_SIZE(request) != 4) goto slow;
    if (s->proto == RESP) return resp_send(self, s);
    if (s->proto == MY) return my_send(self, s);
    /* the libpq shapes run here: (name, (sql, params), 1, check) with a check judged by row count
     * alone, or (name, first step, 1, Steps) whose every step can be sent from here */
    PyObject *replies = PyTuple_GET_ITEM(request, 2), *check = PyTuple_GET_ITEM(request, 3);
    if (!PyLong_CheckExact(replies) || PyLong_AsLong(replies) != 1) goto slow;
    s->check = CHECK_NONE;
    if (check == self->rows_found)
        s->check = CHECK_FOUND;
    else if (check == self->rows_changed)
        s->check = CHECK_CHANGED;
    else if (check != Py_None) {
        int script = take_script(self, s, check);
        if (script <= 0) return script < 0 ? -1 : hand_back(self, s, SLOW, 0, NULL);
        return send_step(self, s, PyList_GET_ITEM(s->steps, 0));
    }
    return send_step(self, s, PyTuple_GET_ITEM(request, 1));
slow:
    return hand_back(self, s, SLOW, 0, NULL);
}

/* The recorder's (starts, ends) lists for ``name``, made on first use (borrowed). */
static PyObject *completed_buffers(Fast *self, PyObject *name) {
    PyObject *buffers = PyDict_GetItemWithError(self->completed, name);
    if (buffers == NULL && !PyErr_Occurred()) {
        buffers = PyObject_CallOneArg(self->completed_buffers, name);
        Py_XDECREF(buffers); /* the recorder's dict holds it */
    }
    return buffers;
}

/* Append one (start, end) to the recorder's lists for ``name`` at once. */
static int append_completed(Fast *self, PyObject *name, int64_t start, int64_t end) {
    PyObject *buffers = completed_buffers(self, name);
    if (buffers == NULL) return -1;
    PyObject *a = PyLong_FromLongLong(start), *b = PyLong_FromLongLong(end);
    int rc = (a && b) ? (PyList_Append(PyTuple_GET_ITEM(buffers, 0), a) || PyList_Append(PyTuple_GET_ITEM(buffers, 1), b))
                      : -1;
    Py_XDECREF(a);
    Py_XDECREF(b);
    return rc;
}

/* Copy the buffered OK requests into ``recorder.completed`` (in the order they ended, per name):
 * called before anything Python could read the recorder or record into it runs. */
static int flush_completed(Fast *self) {
    for (int k = 0; k < self->ndone; k++) {
        Py_ssize_t n = self->done[k].n;
        if (n == 0) continue;
        PyObject *buffers = completed_buffers(self, self->done[k].name);
        if (buffers == NULL) return -1;
        PyObject *starts = PyList_New(n), *ends = starts ? PyList_New(n) : NULL;
        if (ends == NULL) {
            Py_XDECREF(starts);
            return -1;
        }
        const int64_t *at = self->done[k].at;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *a = PyLong_FromLongLong(at[2 * i]), *b = PyLong_FromLongLong(at[2 * i + 1]);
            if (a == NULL || b == NULL) {
                Py_XDECREF(a);
                Py_XDECREF(b);
                Py_DECREF(starts);
                Py_DECREF(ends);
                return -1;
            }
            PyList_SET_ITEM(starts, i, a);
            PyList_SET_ITEM(ends, i, b);
        }
        PyObject *into_starts = PyTuple_GET_ITEM(buffers, 0), *into_ends = PyTuple_GET_ITEM(buffers, 1);
        int rc = PyList_SetSlice(into_starts, PY_SSIZE_T_MAX, PY_SSIZE_T_MAX, starts) ||
                 PyList_SetSlice(into_ends, PY_SSIZE_T_MAX, PY_SSIZE_T_MAX, ends);
        Py_DECREF(starts);
        Py_DECREF(ends);
        if (rc) return -1;
        self->done[k].n = 0;
    }
    return 0;
}

/* Buffer one OK request of ``name`` (``flush_completed`` hands them over); a name past the table's
 * size goes straight to the recorder's lists. */
static int buffer_completed(Fast *self, PyObject *name, int64_t start, int64_t end) {
    int k = 0;
    while (k < self->ndone && self->done[k].name != name) k++;
    if (k == self->ndone) {
        if (k == COMPLETED_NAMES) return append_completed(self, name, start, end);
        self->done[k].name = Py_NewRef(name);
        self->done[k].n = self->done[k].cap = 0;
        self->done[k].at = NULL;
        self->ndone++;
    }
    if (self->done[k].n == self->done[k].cap) {
        Py_ssize_t cap = self->done[k].cap ? 2 * self->done[k].cap : 1024;
        int64_t *grown = PyMem_Realloc(self->done[k].at, (size_t)cap * 2 * sizeof(int64_t));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->done[k].at = grown;
        self->done[k].cap = cap;
    }
    int64_t *at = self->done[k].at + 2 * self->done[k].n++;
    at[0] = start;
    at[1] = end;
    return 0;
}

/* The request ended with the status its check gives: record it as the Python loop does (an OK one
 * buffered for the recorder's ``completed`` lists, the rest through ``record``). */
static int record(Fast *self, Slot *s, int found) {
    PyObject *name = s->sourced ? ((UniformSelects *)s->requests)->name : PyTuple_GET_ITEM(s->request, 0);
    int64_t end = self->woke;
    if (found) {
        if (buffer_completed(self, name, s->started, end) < 0) return -1;
    } else {
        if (flush_completed(self) < 0) return -1; /* what ended before comes first */
        PyObject *r = PyObject_CallFunction(self->record, "OLLO", name, (long long)s->started, (long long)end,
                                            self->not_found);
        if (r == NULL) return -1;
        Py_DECREF(r);
        if (!(++self->recorded & 0xFFFF)) { /* keeps the recorder's pending buffers small */
            r = PyObject_CallNoArgs(self->flush);
            if (r == NULL) return -1;
            Py_DECREF(r);
        }
    }
    self->succeeded = 1;
    if (s->failing) { /* the first success after failures closes this client's run of them */
        s->failing = 0;
        if (flush_completed(self) < 0) return -1;
        PyObject *r = PyObject_CallFunction(self->close_window, "OL", s->conn, (long long)end);
        if (r == NULL) return -1;
        Py_DECREF(r);
    }
    return 0;
}

/* libpq: the connection's socket is readable (or broken): read what came, and when the result is
 * complete judge it, record it and send the next request (or the script's next statement). */
static int pq_readable(Fast *self, Slot *s) {
    PGconn *pg = s->pg;
    if (!pq.consumeInput(pg)) return hand_back(self, s, BROKEN, self->woke, NULL);
    if (pq.isBusy(pg)) return 0;
    PGresult *result = s->held ? s->held : pq.getResult(pg);
    s->held = NULL;
    if (result != NULL && pq.isBusy(pg)) {
        s->held = result; /* the result is in; ReadyForQuery is not yet */
        return 0;
    }
    PGresult *extra;
    while ((extra = pq.getResult(pg)) != NULL) pq.clear(extra); /* one statement: nothing more */
    if (result == NULL) return hand_back(self, s, BROKEN, self->woke, NULL); /* the session ended */
    int status = pq.resultStatus(result), found = 1;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        char state[6] = "";
        const char *field = pq.resultErrorField(result, PG_DIAG_SQLSTATE);
        if (field) snprintf(state, sizeof state, "%s", field);
        pq.clear(result);
        if (pq.status(pg) == CONNECTION_BAD) return hand_back(self, s, BROKEN, self->woke, NULL);
        return hand_back(self, s, ERROR, self->woke, PyUnicode_FromString(state));
    }
    if (s->check == CHECK_FOUND) {
        found = pq.ntuples(result) > 0;
    } else if (s->check == CHECK_CHANGED) {
        const char *count = pq.cmdTuples(result); /* "" when the command reports none */
        found = count[0] != '\0' && !(count[0] == '0' && count[1] == '\0');
    }
    pq.clear(result);
    if (s->steps != NULL && ++s->step < PyList_GET_SIZE(s->steps)) /* the script's next statement */
        return send_step(self, s, PyList_GET_ITEM(s->steps, s->step));
    if (record(self, s, found) < 0) return -1;
    if (pq.transactionStatus(pg) != PQTRANS_IDLE) /* e.g. a BEGIN sent on its own: Python rolls back */
        return hand_back(self, s, IN_TRANSACTION, self->woke, NULL);
    return send_next(self, s);
}


/* ------------------------------------------------------------------ MySQL (mysqlclient) */

/* Hand the connection back with the client library's error number (a send that failed, a result cut
 * off after it began well): the Python loop judges it as it judges the exception mysqlclient raises. */
static int my_failed(Fast *self, Slot *s) {
    return hand_back(self, s, ERROR, now_ns(), PyLong_FromUnsignedLong(my.errno_of(s->my)));
}

/* Send one step: the statement's bytes, parameters already quoted in (event_loop_my.MySqlWire). */
static int my_send_step(Fast *self, Slot *s, PyObject *payload) {
    if (my.send_query(s->my, PyBytes_AS_STRING(payload), (unsigned long)PyBytes_GET_SIZE(payload)))
        return my_failed(self, s);
    return 0;
}

/* Send the request in ``s->request``: (name, bytes, 1, None), (name, bytes, 1, rows_found: YCSB's
 * read, NOT_FOUND without a row) or (name, first step, 1, Steps) whose every step is bytes; anything
 * else is handed back. */
static int my_send(Fast *self, Slot *s) {
    PyObject *payload = PyTuple_GET_ITEM(s->request, 1), *replies = PyTuple_GET_ITEM(s->request, 2);
    PyObject *check = PyTuple_GET_ITEM(s->request, 3);
    if (s->tls || !PyBytes_CheckExact(payload) || !PyLong_CheckExact(replies) || PyLong_AsLong(replies) != 1)
        return hand_back(self, s, SLOW, 0, NULL);
    s->check = CHECK_NONE;
    if (check != Py_None && check == self->rows_found) {
        s->check = CHECK_FOUND;
    } else if (check != Py_None) {
        int script = take_script(self, s, check);
        if (script <= 0) return script < 0 ? -1 : hand_back(self, s, SLOW, 0, NULL);
        payload = PyList_GET_ITEM(s->steps, 0);
    }
    return my_send_step(self, s, payload);
}

/* The socket is readable: the reply has begun (or the session ended). An error packet, a closed
 * socket or a header not yet whole goes back to the Python loop unread; anything else is read here
 * (mysql_read_query_result waits at most for the rest of a reply already being sent, as the Python
 * loop's call does), its rows received and freed, and the request recorded or its script advanced. */
static int my_readable(Fast *self, Slot *s) {
    if (s->request == NULL) return 0;
    unsigned char head[MY_HEADER + 1];
    ssize_t n = recv(s->fd, head, sizeof head, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
    if (n < (ssize_t)sizeof head || head[MY_HEADER] == MY_ERR_PACKET) return hand_back(self, s, REPLY, 0, NULL);
    if (my.read_query_result(s->my)) return my_failed(self, s);
    int found = s->check != CHECK_FOUND; /* rows_found: a row came back */
    if (my.field_count(s->my)) {
        MYSQL_RES *rows = my.store_result(s->my);
        if (rows == NULL) return my_failed(self, s);
        if (s->check == CHECK_FOUND) found = my.num_rows(rows) > 0;
        my.free_result(rows);
    }
    if (s->steps != NULL && ++s->step < PyList_GET_SIZE(s->steps)) /* the script's next statement */
        return my_send_step(self, s, PyList_GET_ITEM(s->steps, s->step));
    if (record(self, s, found) < 0) return -1;
    return send_next(self, s);
}


/* ------------------------------------------------------------------ RESP (Redis) */

/* A RESP integer (a length or a count) from ``p`` up to ``end``. */
static long long resp_int(const char *p, const char *end) {
    int negative = p < end && *p == '-';
    long long value = 0;
    for (p += negative; p < end && *p >= '0' && *p <= '9'; p++) value = value * 10 + (*p - '0');
    return negative ? -value : value;
}

/* The length of the complete reply that starts at ``p`` (``n`` bytes there): > 0; 0 while it is
 * incomplete; -1 when the bytes are not RESP. ``*error``: the reply is an error (RESP2 ``-``, RESP3
 * ``!``), and ``*message`` / ``*message_len`` its text. Replies inside arrays are counted, not judged
 * (the Python loop judges only the top-level ones too). */
static Py_ssize_t resp_reply(const char *p, Py_ssize_t n, int depth, int *error, const char **message,
                             Py_ssize_t *message_len, int *truth) {
    if (n < 3) return 0;
    const char *cr = memchr(p, '\r', (size_t)n);
    if (cr == NULL || cr + 1 >= p + n) return 0;
    if (cr[1] != '\n') return -1;
    Py_ssize_t line = cr - p + 2;
    *truth = REPLY_TRUE; /* what Python's truth would make of the reply hiredis builds */
    switch (p[0]) {
    case '-':
        *error = 1;
        *message = p + 1;
        *message_len = cr - p - 1;
        return line;
    case '_':
        *truth = REPLY_NULL;
        return line;
    case '+':
        if (cr == p + 1) *truth = REPLY_FALSE; /* an empty string */
        return line;
    case ':': case '(':
        if (resp_int(p + 1, cr) == 0) *truth = REPLY_FALSE;
        return line;
    case ',':
        if (strtod(p + 1, NULL) == 0.0) *truth = REPLY_FALSE;
        return line;
    case '#':
        if (p[1] == 'f') *truth = REPLY_FALSE;
        return line;
    case '$': case '!': case '=': {
        long long len = resp_int(p + 1, cr);
        if (len < 0) { /* a null bulk string */
            *truth = REPLY_NULL;
            return line;
        }
        if (len == 0) *truth = REPLY_FALSE;
        if (n < line + len + 2) return 0;
        if (p[0] == '!') {
            *error = 1;
            *message = p + line;
            *message_len = (Py_ssize_t)len;
        }
        return line + (Py_ssize_t)len + 2;
    }
    case '*': case '~': case '>': case '%': {
        long long count = resp_int(p + 1, cr);
        if (count < 0) { /* a null array */
            *truth = REPLY_NULL;
            return line;
        }
        if (count == 0) *truth = REPLY_FALSE;
        if (p[0] == '%') count *= 2;
        if (depth >= RESP_DEPTH) return -1;
        Py_ssize_t at = line;
        for (long long i = 0; i < count; i++) {
            int inner = 0, inner_truth;
            const char *m;
            Py_ssize_t m_len;
            Py_ssize_t r = resp_reply(p + at, n - at, depth + 1, &inner, &m, &m_len, &inner_truth);
            if (r <= 0) return r;
            at += r;
        }
        return at;
    }
    default:
        return -1;
    }
}

/* Send the RESP request in ``s->request``: (name, bytes, replies, None); anything else is handed back. */
static int resp_send(Fast *self, Slot *s) {
    PyObject *payload = PyTuple_GET_ITEM(s->request, 1), *replies = PyTuple_GET_ITEM(s->request, 2);
    PyObject *check = PyTuple_GET_ITEM(s->request, 3);
    if (!PyBytes_CheckExact(payload) || !PyLong_CheckExact(replies)) return hand_back(self, s, SLOW, 0, NULL);
    s->expected = PyLong_AsLong(replies);
    s->got = 0;
    Py_CLEAR(s->error);
    if (check == Py_None)
        s->check = CHECK_NONE;
    else if (check == self->not_none && s->expected == 1) /* a check reads the request's one reply */
        s->check = CHECK_NOT_NONE;
    else if (check == self->nonempty && s->expected == 1)
        s->check = CHECK_NONEMPTY;
    else
        return hand_back(self, s, SLOW, 0, NULL);
    if (s->expected < 1) return hand_back(self, s, SLOW, 0, NULL);
    Py_ssize_t len = PyBytes_GET_SIZE(payload);
    ssize_t sent = send(s->fd, PyBytes_AS_STRING(payload), (size_t)len, MSG_NOSIGNAL);
    if (sent < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return hand_back(self, s, BROKEN, now_ns(), NULL);
        sent = 0;
    }
    if (sent < len) /* the Python loop writes the rest when the socket is writable */
        return hand_back(self, s, FLUSH, 0, PyLong_FromSsize_t(sent));
    return 0;
}

/* The socket is readable: count the replies that came; when the request has them all, record it (an
 * error among them hands it back) and send the next. */
static int resp_readable(Fast *self, Slot *s) {
    if (s->have == s->cap) { /* a reply longer than the buffer: grow it */
        char *grown = PyMem_Realloc(s->buf, (size_t)s->cap * 2);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        s->buf = grown;
        s->cap *= 2;
    }
    ssize_t n = recv(s->fd, s->buf + s->have, (size_t)(s->cap - s->have), 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
    if (n <= 0) return hand_back(self, s, BROKEN, self->woke, NULL); /* closed, or reset */
    s->have += n;
    Py_ssize_t at = 0;
    int truth = REPLY_TRUE; /* of the last reply */
    while (s->got < s->expected) {
        int error = 0;
        const char *message = NULL;
        Py_ssize_t message_len = 0;
        Py_ssize_t len = resp_reply(s->buf + at, s->have - at, 0, &error, &message, &message_len, &truth);
        if (len == 0) break;
        if (len < 0) { /* the parser gets the bytes from the bad reply on, and names the error */
            memmove(s->buf, s->buf + at, (size_t)(s->have - at));
            s->have -= at;
            return hand_back(self, s, PROTOCOL, self->woke, NULL);
        }
        if (error && s->error == NULL) { /* the first error decides the request's status */
            s->error = PyUnicode_DecodeUTF8(message, message_len, "replace");
            if (s->error == NULL) return -1;
        }
        at += len;
        s->got++;
    }
    if (at > 0) {
        memmove(s->buf, s->buf + at, (size_t)(s->have - at));
        s->have -= at;
    }
    if (s->got < s->expected) return 0;
    if (s->error != NULL) {
        PyObject *message = s->error;
        s->error = NULL;
        return hand_back(self, s, ERROR, self->woke, message);
    }
    int found = s->check == CHECK_NOT_NONE   ? truth != REPLY_NULL
                : s->check == CHECK_NONEMPTY ? truth == REPLY_TRUE
                                             : 1;
    if (record(self, s, found) < 0) return -1;
    return send_next(self, s);
}

/* The connection's socket is readable (or broken). */
static int readable(Fast *self, Slot *s) {
    return s->proto == PQ ? pq_readable(self, s) : s->proto == MY ? my_readable(self, s) : resp_readable(self, s);
}

/* ------------------------------------------------------------------ the Python type */

/* ``spec`` is a tuple of ``n`` fields (the fast_seam.py class ``what``); -1 with a TypeError naming it
 * otherwise. */
static int check_spec(PyObject *spec, const char *what, Py_ssize_t n) {
    if (!PyTuple_Check(spec)) {
        PyErr_Format(PyExc_TypeError, "%s: a tuple of %zd fields (fast_seam.%s), not %.100s", what, n, what,
                     Py_TYPE(spec)->tp_name);
        return -1;
    }
    if (PyTuple_GET_SIZE(spec) != n) {
        PyErr_Format(PyExc_TypeError, "%s: %zd fields, expected %zd (fast_seam.%s; rebuild with make ext)", what,
                     PyTuple_GET_SIZE(spec), n, what);
        return -1;
    }
    return 0;
}

/* FastLoop(spec): ``spec`` a LoopSpec, read by position in LOOP_SPEC_FIELDS' order. */
static PyObject *Fast_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *spec;
    if (!PyArg_ParseTuple(args, "O:FastLoop", &spec) || check_spec(spec, "LoopSpec", NFIELDS(LOOP_SPEC_FIELDS)) < 0)
        return NULL;
    int epfd;
    PyObject *f[NFIELDS(LOOP_SPEC_FIELDS) - 1]; /* every field after epfd, in order */
    if (!PyArg_ParseTuple(spec, "iOOOOO!OOOOOOOO:LoopSpec", &epfd, &f[0], &f[1], &f[2], &f[3], &PyDict_Type, &f[4],
                          &f[5], &f[6], &f[7], &f[8], &f[9], &f[10], &f[11], &f[12]))
        return NULL;
    static const int callables[] = {0, 1, 2, 3, 5, 12}; /* handback, close_window, record, flush, completed_buffers, steps_of */
    for (size_t i = 0; i < sizeof callables / sizeof callables[0]; i++)
        if (!PyCallable_Check(f[callables[i]]))
            return PyErr_Format(PyExc_TypeError, "LoopSpec.%s is not callable", LOOP_SPEC_FIELDS[callables[i] + 1]);
    Fast *self = (Fast *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    PyObject **into[] = {&self->handback,  &self->close_window, &self->record,       &self->flush,
                         &self->completed, &self->completed_buffers, &self->not_found, &self->rows_found,
                         &self->rows_changed, &self->not_none, &self->nonempty, &self->steps_type,
                         &self->steps_of};
    for (size_t i = 0; i < sizeof into / sizeof into[0]; i++) *into[i] = Py_NewRef(f[i]);
    self->epfd = epfd;
    return (PyObject *)self;
}

/* close(): drop every connection held without handing it back (the loop is over), and the loop's
 * references; returns [(conn, issued)] for those connections, which the Python loop writes back. */
static PyObject *Fast_close(Fast *self, PyObject *unused) {
    if (self->completed != NULL) { /* best effort: the loop is over (or being dropped while an error unwinds) */
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        if (flush_completed(self) < 0) PyErr_Clear();
        PyErr_Restore(type, value, traceback);
    }
    for (int k = 0; k < self->ndone; k++) {
        Py_CLEAR(self->done[k].name);
        PyMem_Free(self->done[k].at);
        self->done[k].at = NULL;
        self->done[k].n = self->done[k].cap = 0;
    }
    self->ndone = 0;
    PyObject *held = PyList_New(0);
    for (int fd = 0; fd < self->nfd; fd++) {
        Slot *s = self->by_fd[fd];
        if (s == NULL) continue;
        PyObject *pair = held ? Py_BuildValue("(OL)", s->conn, (long long)s->issued) : NULL;
        if (pair == NULL || PyList_Append(held, pair) < 0) Py_CLEAR(held); /* the slots go all the same */
        Py_XDECREF(pair);
        free_slot(self, s);
    }
    PyMem_Free(self->by_fd);
    self->by_fd = NULL;
    self->nfd = 0;
    Py_CLEAR(self->handback);
    Py_CLEAR(self->close_window);
    Py_CLEAR(self->record);
    Py_CLEAR(self->flush);
    Py_CLEAR(self->completed);
    Py_CLEAR(self->completed_buffers);
    Py_CLEAR(self->rows_found);
    Py_CLEAR(self->rows_changed);
    Py_CLEAR(self->not_found);
    Py_CLEAR(self->steps_type);
    Py_CLEAR(self->not_none);
    Py_CLEAR(self->nonempty);
    Py_CLEAR(self->steps_of);
    return held;
}

static void Fast_dealloc(Fast *self) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *r = Fast_close(self, NULL);
    Py_XDECREF(r);
    PyErr_Restore(type, value, traceback);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* take(spec): the compiled loop drives this connection (a ConnectionSpec, read by position in
 * CONNECTION_SPEC_FIELDS' order) from its next request on (nothing in flight, its socket watched
 * for reading only). It may come straight back (the hand-back). */
static PyObject *Fast_take(Fast *self, PyObject *spec) {
    if (self->handback == NULL) return PyErr_Format(PyExc_RuntimeError, "closed");
    if (check_spec(spec, "ConnectionSpec", NFIELDS(CONNECTION_SPEC_FIELDS)) < 0) return NULL;
    PyObject *conn, *requests, *pgconn, *prepared, *mysql;
    int kind, fd, failing;
    long long limit, issued, timeout_ns;
    if (!PyArg_ParseTuple(spec, "OiiOLLpLOOO:ConnectionSpec", &conn, &kind, &fd, &requests, &limit, &issued, &failing,
                          &timeout_ns, &pgconn, &prepared, &mysql))
        return NULL;
    if (!PyIter_Check(requests)) return PyErr_Format(PyExc_TypeError, "ConnectionSpec.requests is not an iterator");
    if (fd < 0) return PyErr_Format(PyExc_ValueError, "ConnectionSpec.fd: the connection is not open");
    Slot *s = PyMem_Calloc(1, sizeof(Slot));
    if (s == NULL) return PyErr_NoMemory();
    s->fd = -1;
    s->proto = kind;
    if (kind == PQ) {
        if (!bound) PyErr_SetString(PyExc_RuntimeError, "bind(libpq path) first");
        else if (!PyDict_Check(prepared)) PyErr_SetString(PyExc_TypeError, "ConnectionSpec.prepared is not a dict");
        else if ((s->pg = (PGconn *)PyLong_AsVoidPtr(pgconn)) == NULL && !PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "ConnectionSpec.pgconn: no PGconn");
        else s->prepared = Py_NewRef(prepared);
    } else if (kind == MY) {
        if (!my_bound) PyErr_SetString(PyExc_RuntimeError, "bind_mysql(library path) first");
        else if (!PyCapsule_CheckExact(mysql)) PyErr_SetString(PyExc_TypeError, "ConnectionSpec.mysql is not a capsule");
        else if ((s->my = PyCapsule_GetPointer(mysql, PyCapsule_GetName(mysql))) != NULL)
            s->tls = my.ssl_cipher(s->my) != NULL;
    } else if (kind == RESP) {
        if ((s->buf = PyMem_Malloc(RESP_BUFFER)) == NULL) PyErr_NoMemory();
        s->cap = RESP_BUFFER;
    } else {
        PyErr_Format(PyExc_ValueError, "ConnectionSpec.kind: %d is none of PQ, RESP, MY", kind);
    }
    if (PyErr_Occurred()) {
        free_slot(self, s);
        return NULL;
    }
    s->conn = Py_NewRef(conn);
    s->requests = Py_NewRef(requests);
    s->fd = fd;
    s->limit = limit;
    s->issued = issued;
    s->failing = failing;
    s->timeout_ns = timeout_ns;
    if (s->fd >= self->nfd) { /* descriptors are small integers: a table indexed by them */
        int n = s->fd * 2 + 16;
        Slot **grown = PyMem_Realloc(self->by_fd, n * sizeof(Slot *));
        if (grown == NULL) {
            s->fd = -1;
            free_slot(self, s);
            return PyErr_NoMemory();
        }
        for (int i = self->nfd; i < n; i++) grown[i] = NULL;
        self->by_fd = grown;
        self->nfd = n;
    }
    if (self->by_fd[s->fd]) free_slot(self, self->by_fd[s->fd]); /* a closed connection's descriptor, reused */
    self->by_fd[s->fd] = s;
    self->held++;
    if (send_next(self, s) < 0) return NULL;
    Py_RETURN_NONE;
}

/* poll(timeout_s): wait on the loop's epoll descriptor and drive the connections this module holds,
 * wake-up after wake-up, until the Python loop has something to do: events on its own connections
 * (returned as ``select.epoll.poll`` would, (fd, mask) pairs), a connection handed back, none held
 * any more, or ``timeout_s`` gone by (its tick). The interpreter is not entered between requests. */
static PyObject *Fast_poll(Fast *self, PyObject *arg) {
    double timeout = PyFloat_AsDouble(arg);
    if (timeout == -1.0 && PyErr_Occurred()) return NULL;
    if (self->handback == NULL) return PyErr_Format(PyExc_RuntimeError, "closed");
    PyObject *rest = PyList_New(0);
    if (rest == NULL) return NULL;
    struct epoll_event events[MAX_EVENTS];
    int64_t until = now_ns() + (timeout > 0 ? (int64_t)(timeout * 1e9) : 0);
    unsigned handed = self->handed;
    for (;;) {
        int64_t left = until - now_ns();
        int ms = left <= 0 ? 0 : (int)((left + 999999) / 1000000), n;
        Py_BEGIN_ALLOW_THREADS
        n = epoll_wait(self->epfd, events, MAX_EVENTS, ms);
        Py_END_ALLOW_THREADS
        self->woke = now_ns();
        if (n < 0) {
            if (errno != EINTR) {
                Py_DECREF(rest);
                return PyErr_SetFromErrno(PyExc_OSError);
            }
            if (PyErr_CheckSignals()) {
                Py_DECREF(rest);
                return NULL;
            }
            n = 0;
        }
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            Slot *s = slot_of(self, fd);
            if (s == NULL) {
                PyObject *pair = Py_BuildValue("(iI)", fd, events[i].events);
                if (pair == NULL || PyList_Append(rest, pair) < 0) {
                    Py_XDECREF(pair);
                    Py_DECREF(rest);
                    return NULL;
                }
                Py_DECREF(pair);
            } else if (readable(self, s) < 0) {
                Py_DECREF(rest);
                return NULL;
            }
        }
        if (PyList_GET_SIZE(rest) || self->handed != handed || !self->held || self->woke >= until) {
            if (flush_completed(self) < 0) { /* the Python loop reads the recorder next */
                Py_DECREF(rest);
                return NULL;
            }
            return rest;
        }
    }
}

/* expire(now_ns): hand back every connection whose reply is overdue (the Python loop fails it). */
static PyObject *Fast_expire(Fast *self, PyObject *arg) {
    int64_t now = PyLong_AsLongLong(arg);
    if (now == -1 && PyErr_Occurred()) return NULL;
    for (int fd = 0; fd < self->nfd; fd++) {
        Slot *s = self->by_fd[fd];
        if (s && (s->request || s->sourced) && now - s->started > s->timeout_ns &&
            hand_back(self, s, TIMEOUT, now, NULL) < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

/* succeeded(): whether a request ended well since the last call (the loop is not failing). */
static PyObject *Fast_succeeded(Fast *self, PyObject *unused) {
    int was = self->succeeded;
    self->succeeded = 0;
    return PyBool_FromLong(was);
}

static PyObject *Fast_get_woke(Fast *self, void *unused) { return PyLong_FromLongLong(self->woke); }
static PyObject *Fast_get_closing(Fast *self, void *unused) { return PyBool_FromLong(self->closing); }
static int Fast_set_closing(Fast *self, PyObject *value, void *unused) {
    int truth = value ? PyObject_IsTrue(value) : 0;
    if (truth < 0) return -1;
    self->closing = truth;
    return 0;
}

static PyMethodDef Fast_methods[] = {
    {"take", (PyCFunction)Fast_take, METH_O, "Drive this connection from its next request on."},
    {"poll", (PyCFunction)Fast_poll, METH_O, "Wait, drive the fast connections, return the other events."},
    {"expire", (PyCFunction)Fast_expire, METH_O, "Hand back every connection whose reply is overdue."},
    {"succeeded", (PyCFunction)Fast_succeeded, METH_NOARGS, "A request ended well since the last call."},
    {"close", (PyCFunction)Fast_close, METH_NOARGS, "Drop every connection held; the loop is over."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Fast_getset[] = {
    {"woke_ns", (getter)Fast_get_woke, NULL, "When epoll_wait last returned (perf_counter_ns).", NULL},
    {"closing", (getter)Fast_get_closing, (setter)Fast_set_closing, "No new requests.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FastType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "benchwright.runner._fastloop.FastLoop",
    .tp_basicsize = sizeof(Fast),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The event loops' hot path: see the module's source for what it does and does not do.",
    .tp_new = Fast_new,
    .tp_dealloc = (destructor)Fast_dealloc,
    .tp_methods = Fast_methods,
    .tp_getset = Fast_getset,
};

/* ------------------------------------------------------------------ redis-bench's keys */

/* key_pipelines(words, head, between, tail, size, keyspace): the requests of a block of redis-bench
 * pipelines of ``size`` one-key commands, each ``head`` + the keys' 12 digits joined by ``between``
 * + ``tail``. ``words`` is ``rng.getrandbits(64 * n * size).to_bytes(8 * n * size, "little")``:
 * key i is floor(random() * keyspace) for the i-th random() those words stand for, so the keys are
 * the ones Python's own draws give from the same generator state, and the generator has moved on as
 * far. Why: at -P 16 drawing and formatting 16 keys in Python was most of the client's user time per
 * request (276-436 ns a key against redis-benchmark's whole 100 ns a request). */
static PyObject *key_pipelines(PyObject *module, PyObject *args) {
    Py_buffer words;
    const char *head, *between, *tail;
    Py_ssize_t nhead, nbetween, ntail, size;
    long long keyspace;
    if (!PyArg_ParseTuple(args, "y*y#y#y#nL", &words, &head, &nhead, &between, &nbetween, &tail, &ntail, &size,
                          &keyspace))
        return NULL;
    PyObject *out = NULL;
    if (size < 1 || keyspace < 1 || keyspace > 1000000000000LL || words.len % (8 * size)) {
        PyErr_SetString(PyExc_ValueError, "key_pipelines: size >= 1, 1 <= keyspace <= 10**12, 8*size bytes a request");
        goto done;
    }
    Py_ssize_t n = words.len / (8 * size), length = nhead + 12 * size + nbetween * (size - 1) + ntail;
    const unsigned char *w = words.buf;
    out = PyList_New(n);
    if (out == NULL) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *request = PyBytes_FromStringAndSize(NULL, length);
        if (request == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        char *p = PyBytes_AS_STRING(request);
        memcpy(p, head, nhead);
        p += nhead;
        for (Py_ssize_t k = 0; k < size; k++, w += 8) {
            if (k) {
                memcpy(p, between, nbetween);
                p += nbetween;
            }
            long long key = (long long)floor(random_of(w) * (double)keyspace);
            for (int d = 11; d >= 0; d--, key /= 10) p[d] = (char)('0' + key % 10);
            p += 12;
        }
        memcpy(p, tail, ntail);
        PyList_SET_ITEM(out, i, request);
    }
done:
    PyBuffer_Release(&words);
    return out;
}

/* ------------------------------------------------------------------ point selects */

/* uniform_ints(words, low, count): ``low + floor(random() * count)`` for each random() the words stand
 * for (``rng.getrandbits(64 * n).to_bytes(8 * n, "little")``, as key_pipelines reads them): the same
 * integers a comprehension of Python's own draws gives, and the generator has moved on as far. */
static PyObject *uniform_ints(PyObject *module, PyObject *args) {
    Py_buffer words;
    long long low, count;
    if (!PyArg_ParseTuple(args, "y*LL", &words, &low, &count)) return NULL;
    PyObject *out = NULL;
    if (count < 1 || count > (1LL << 53) || words.len % 8) {
        PyErr_SetString(PyExc_ValueError, "uniform_ints: 1 <= count <= 2**53, 8 bytes a draw");
        goto done;
    }
    Py_ssize_t n = words.len / 8;
    const unsigned char *w = words.buf;
    out = PyList_New(n);
    if (out == NULL) goto done;
    for (Py_ssize_t i = 0; i < n; i++, w += 8) {
        PyObject *v = PyLong_FromLongLong(low + (long long)floor(random_of(w) * (double)count));
        if (v == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, v);
    }
done:
    PyBuffer_Release(&words);
    return out;
}

/* special_ids(random, n, (low, high, cold, band_start, band, scale, iters)): ``n`` ids of sysbench's
 * ``special`` distribution exactly as oltp.rand._special draws them, each random() a call to
 * ``random`` (the generator's own method: a draw takes one or 1 + ``iters`` of them):
 *   first = random(); first < cold: low + int(sum of iters randoms, left to right, * scale)
 *   else: low + int(band_start + first * (band + 1)); either way at most ``high``.
 * Why: OLTP point selects draw their ids a block at a time, and on the loop a block's Python draws
 * cost about a microsecond a select (4 clients, 2 cores). */
static PyObject *special_ids(PyObject *module, PyObject *args) {
    PyObject *random;
    Py_ssize_t n;
    long long low, high;
    double cold, band_start, band, scale;
    int iters;
    if (!PyArg_ParseTuple(args, "On(LLddddi)", &random, &n, &low, &high, &cold, &band_start, &band, &scale, &iters))
        return NULL;
    if (n < 0 || iters < 1 || high < low) {
        PyErr_SetString(PyExc_ValueError, "special_ids: n >= 0, iters >= 1, low <= high");
        return NULL;
    }
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        double first = 0, total = 0;
        int k = -1;
        do { /* first, then (cold) iters more */
            PyObject *r = PyObject_CallNoArgs(random);
            double u = r ? PyFloat_AsDouble(r) : -1.0;
            Py_XDECREF(r);
            if (u == -1.0 && PyErr_Occurred()) goto fail;
            if (k < 0)
                first = u;
            else
                total += u;
        } while (++k == 0 ? first < cold : k < iters);
        double x = first < cold ? total * scale : band_start + first * (band + 1);
        if (!(x > -9.2e18 && x < 9.2e18)) {
            PyErr_SetString(PyExc_OverflowError, "special_ids: an id past 64 bits");
            goto fail;
        }
        long long id = low + (long long)x; /* int(): toward zero */
        PyObject *v = PyLong_FromLongLong(id < high ? id : high);
        if (v == NULL) goto fail;
        PyList_SET_ITEM(out, i, v);
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* choose_labels(words, edges, labels): ``labels[bisect_right(edges, random())]`` for each random() the
 * words stand for (YCSB's operation mix, ycsb.generators.DiscreteChooser.block): ``edges`` ascending
 * floats, the last above 1, as long as ``labels``. */
static PyObject *choose_labels(PyObject *module, PyObject *args) {
    Py_buffer words;
    PyObject *edges, *labels;
    if (!PyArg_ParseTuple(args, "y*O!O!", &words, &PyList_Type, &edges, &PyList_Type, &labels)) return NULL;
    PyObject *out = NULL;
    Py_ssize_t m = PyList_GET_SIZE(edges);
    double bounds[16];
    if (words.len % 8 || m < 1 || m > 16 || PyList_GET_SIZE(labels) != m) {
        PyErr_SetString(PyExc_ValueError, "choose_labels: 1 to 16 edges, one label each, 8 bytes a draw");
        goto done;
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        bounds[k] = PyFloat_AsDouble(PyList_GET_ITEM(edges, k));
        if (bounds[k] == -1.0 && PyErr_Occurred()) goto done;
    }
    if (bounds[m - 1] <= 1.0) {
        PyErr_SetString(PyExc_ValueError, "choose_labels: the last edge must be above 1");
        goto done;
    }
    Py_ssize_t n = words.len / 8;
    const unsigned char *w = words.buf;
    out = PyList_New(n);
    if (out == NULL) goto done;
    for (Py_ssize_t i = 0; i < n; i++, w += 8) {
        double u = random_of(w);
        Py_ssize_t k = 0;
        while (k < m - 1 && !(u < bounds[k])) k++; /* bisect_right: the first edge above u */
        PyObject *label = PyList_GET_ITEM(labels, k);
        Py_INCREF(label);
        PyList_SET_ITEM(out, i, label);
    }
done:
    PyBuffer_Release(&words);
    return out;
}

/* One point-select request for ``v``: libpq ``(name, (head, [b"%d" % v]), 1, None)``, MySQL
 * ``(name, head + b"%d" % v + tail, 1, None)``. */
/* int_requests(name, head, tail, values, libpq): a block of point selects as event-loop requests, one
 * per integer of ``values``: libpq ``(name, (head, [b"%d" % v]), 1, None)`` (``head``: the prepared
 * statement's text, ``tail`` unused), MySQL ``(name, head + b"%d" % v + tail, 1, None)`` (the
 * statement with its one parameter written in). What ``PostgresSqlWire.int_statements`` and
 * ``MySqlWire.int_statements`` build in a comprehension: 0.31 us a request against 0.49 run alone.
 * Inside a run most of a block's cost is the caches it finds cold (0.90 us a select either way, timed
 * in the worker), which is why select-only sends from UniformSelects instead; OLTP's point selects,
 * whose ids the workload draws, still come in blocks made here. */
static PyObject *int_requests(PyObject *module, PyObject *args) {
    PyObject *name, *head, *tail, *values;
    int libpq;
    if (!PyArg_ParseTuple(args, "UO!O!O!p", &name, &PyBytes_Type, &head, &PyBytes_Type, &tail, &PyList_Type, &values,
                          &libpq))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(values);
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v = PyLong_AsLongLong(PyList_GET_ITEM(values, i));
        PyObject *request = (v == -1 && PyErr_Occurred()) ? NULL : int_request(name, head, tail, v, libpq);
        if (request == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, request);
    }
    return out;
}


/* ------------------------------------------------------------------ YCSB's keys */

/* ycsb_keys(numbers, pad): YCSB's hashed keys for a list of record numbers, "user" + the decimal
 * FNV-1 64-bit hash (Utils.fnvhash64: the 8 low-order bytes, then Math.abs on a Java long) padded
 * with zeros to ``pad`` characters (str.zfill); ycsb.generators.fnv_hash64 is the same in Python.
 * Why: a block's keys came from a per-process cache of 65,536 strings, and at 20,000 records its
 * lookups missed the processor's caches: 0.7-1.0 us of user time per operation more than 1,000
 * records. Hashing and formatting here touch no memory but the key. */
static PyObject *ycsb_keys(PyObject *module, PyObject *args) {
    PyObject *numbers;
    Py_ssize_t pad;
    if (!PyArg_ParseTuple(args, "O!n", &PyList_Type, &numbers, &pad)) return NULL;
    if (pad < 0 || pad > 64) {
        PyErr_SetString(PyExc_ValueError, "ycsb_keys: 0 <= pad <= 64");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(numbers);
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long long v = PyLong_AsUnsignedLongLongMask(PyList_GET_ITEM(numbers, i));
        if (v == (unsigned long long)-1 && PyErr_Occurred()) {
            Py_DECREF(out);
            return NULL;
        }
        uint64_t h = 0xCBF29CE484222325ULL;
        for (int b = 0; b < 8; b++, v >>= 8) h = (h ^ (v & 0xFF)) * 1099511628211ULL;
        int negative = h == 0x8000000000000000ULL; /* Math.abs(Long.MIN_VALUE) stays negative */
        if ((int64_t)h < 0 && !negative) h = (uint64_t)(-(int64_t)h);
        char digits[20];
        int nd = 0;
        do digits[sizeof digits - 1 - nd++] = (char)('0' + h % 10); while (h /= 10);
        Py_ssize_t zeros = pad > nd + negative ? pad - nd - negative : 0;
        PyObject *key = PyUnicode_New(4 + negative + zeros + nd, 127);
        if (key == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        char *p = (char *)PyUnicode_1BYTE_DATA(key);
        memcpy(p, "user", 4);
        p += 4;
        if (negative) *p++ = '-';
        memset(p, '0', zeros);
        memcpy(p + zeros, digits + sizeof digits - nd, nd);
        PyList_SET_ITEM(out, i, key);
    }
    return out;
}

static PyMethodDef module_methods[] = {
    {"bind", bind_libpq, METH_O, "Look up libpq's functions in the copy loaded from this path."},
    {"bind_mysql", bind_mysql, METH_O, "Look up the MySQL client library's functions in the copy loaded from this path."},
    {"ycsb_keys", ycsb_keys, METH_VARARGS, "YCSB's hashed keys (user + FNV-1 64) of a list of record numbers."},
    {"key_pipelines", key_pipelines, METH_VARARGS, "A block of redis-bench pipelines, their keys drawn from random words."},
    {"uniform_ints", uniform_ints, METH_VARARGS, "low + floor(random() * count) for each random() of a block of random words."},
    {"special_ids", special_ids, METH_VARARGS, "Ids of sysbench's special distribution, drawn with the generator's random()."},
    {"choose_labels", choose_labels, METH_VARARGS, "labels[bisect_right(edges, random())] for each random() of a block of random words."},
    {"int_requests", int_requests, METH_VARARGS, "A block of point-select requests, one per integer (libpq or MySQL)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "benchwright.runner._fastloop", "The event loops' hot path, compiled.", -1,
    module_methods,
};

/* The names of ``names`` (``n`` of them) as a tuple of str. */
static PyObject *names_of(const char *const *names, Py_ssize_t n) {
    PyObject *out = PyTuple_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *name = PyUnicode_FromString(names[i]);
        if (name == NULL) Py_CLEAR(out);
        else PyTuple_SET_ITEM(out, i, name);
    }
    return out;
}

/* ``name`` = ``value`` in module ``m`` (a new reference, stolen; NULL: an error already set); -1 on error. */
static int add_object(PyObject *m, const char *name, PyObject *value) {
    if (value == NULL) return -1;
    int rc = PyModule_AddObjectRef(m, name, value);
    Py_DECREF(value);
    return rc;
}

PyMODINIT_FUNC PyInit__fastloop(void) {
    if ((ONE = PyLong_FromLong(1)) == NULL) return NULL;
    if (PyType_Ready(&FastType) < 0 || PyType_Ready(&UniformSelectsType) < 0) return NULL;
    if (HandBackType == NULL && (HandBackType = PyStructSequence_NewType(&handback_desc)) == NULL) return NULL;
    const char *handback_names[BACK_FIELDS];
    for (int i = 0; i < BACK_FIELDS; i++) handback_names[i] = handback_fields[i].name;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    static const struct {
        const char *name;
        int value;
    } constants[] = {
        {"SLOW", SLOW},       {"FLUSH", FLUSH},   {"ERROR", ERROR},
        {"BROKEN", BROKEN},   {"DONE", DONE},     {"TIMEOUT", TIMEOUT},
        {"IN_TRANSACTION", IN_TRANSACTION},       {"PROTOCOL", PROTOCOL},
        {"REPLY", REPLY},     {"PQ", PQ},         {"RESP", RESP},
        {"MY", MY},
    };
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
        if (PyModule_AddIntConstant(m, constants[i].name, constants[i].value) < 0) goto fail;
    if (PyModule_AddObjectRef(m, "FastLoop", (PyObject *)&FastType) < 0 ||
        PyModule_AddObjectRef(m, "UniformSelects", (PyObject *)&UniformSelectsType) < 0 ||
        PyModule_AddObjectRef(m, "HandBack", (PyObject *)HandBackType) < 0 ||
        add_object(m, "LOOP_SPEC_FIELDS", names_of(LOOP_SPEC_FIELDS, NFIELDS(LOOP_SPEC_FIELDS))) < 0 ||
        add_object(m, "CONNECTION_SPEC_FIELDS", names_of(CONNECTION_SPEC_FIELDS, NFIELDS(CONNECTION_SPEC_FIELDS))) < 0 ||
        add_object(m, "HANDBACK_FIELDS", names_of(handback_names, BACK_FIELDS)) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
