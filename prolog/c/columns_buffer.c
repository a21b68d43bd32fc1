/*  The detections' buffer of bridge_columns.pl, in C.

    Why: writing each answer's numbers into cells of a Prolog list
    (nb_setarg/3 per value, the run and mask bookkeeping in Prolog) and
    janus converting that list to Python floats and ints was about 0.87 us
    per answer, a third of the core's time on answer-heavy streams.  Here
    columns_sink/3 is one foreign call per answer: each value is written
    as 8 bytes (an int64 or a double) with a kind byte, and Python copies
    the whole buffer in one go (ctypes.string_at) and slices it into
    columns (epsparql/core/columns.py).

    Kinds (one byte per value, and per column of a run their bitwise or):

        1  an integer that fits 64 bits, the value itself
        2  a float, the value itself
        4  any other term: the int64 id the term dictionary gave it
           (bridge_columns:sink_id/2, Prolog; an atom equal to the last
           one at its argument position, or found in the call's atom
           cache, reuses its id without a call)
        8  a typed literal F(Value, Datatype, Lexical) of the codec
           (F n, d or dur; Value an integer that fits 64 bits or a float,
           Datatype an atom, Lexical a string of at most LIT_MAX
           printable ASCII characters): the index of its entry in the
           buffer's literals, which hold the value, the datatype's
           dictionary id and the lexical form (written to a text buffer,
           each followed by a newline)

    Why kind 8: a computed numeral (an AVG's decimal, a time, a duration)
    is new in nearly every answer; through the dictionary each cost a trie
    insert, a payload queued, converted by janus and decoded by Python
    (~6 us per answer in all); here it is a few copies, decoded in bulk.

    A buffer is a list of runs (detections of one head Name/Arity, one
    after the other); a detection is Arity + 2 values: its arguments, T1
    and T2.  It is sent (bridge_columns:flush_columns/0, Prolog, which
    reads it with colbuf_take/5 and empties it with colbuf_reset/0) when
    it holds MaxRows detections or the next one does not fit.

    State is per thread (each Prolog thread has its own engine calls) and
    per nesting level: with_columns/3 may run inside a Python function
    called by a rule of another with_columns/3 call (colbuf_open/1 and
    colbuf_close/0 push and pop a level).  Nothing is undone on
    backtracking, as with nb_setarg/3.
*/
#include <SWI-Prolog.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NPOS 16                 /* argument positions with a last-atom slot */
#define ACACHE 4096             /* slots of a call's atom cache (a power of 2) */
#define ROW_WIDTH 6             /* values per row a new buffer is sized for */
#define LIT_MAX 256             /* longest lexical form sent inline */

/* A literal's kind byte: the value's kind (1 integer, 2 float) plus its
   functor (LIT_N, LIT_D, LIT_DUR). */
#define LIT_N 0
#define LIT_D 4
#define LIT_DUR 8

typedef struct run {
    atom_t name;                /* registered while the run is in the buffer */
    size_t arity;
    size_t count;
    size_t kinds_off;           /* its columns' kinds in level.run_kinds */
} run;

typedef struct level {
    int64_t *slots;             /* int64 or double (memcpy) per value */
    unsigned char *kinds;       /* kind of each value */
    size_t cap, nslots, rows, max_rows;
    run *runs;
    size_t nruns, runs_cap;
    unsigned char *run_kinds;   /* per run, Arity + 2 or-ed kinds */
    size_t run_kinds_len, run_kinds_cap;
    atom_t last_atom[NPOS];     /* in the atom cache (see forget_last); 0 when none */
    int64_t last_id[NPOS];
    /* The ids of atoms seen in this call, direct-mapped by the atom handle
       (registered; 0 when empty).  An answer's atoms (IRIs: a group key,
       a subject) repeat from one answer to the next, but not at the same
       position in a row; a call to sink_id/2 costs about 1 us, a slot
       here a few ns.  The dictionary gives a term the same id for the
       whole call (it starts afresh only between calls), so the cache
       lives as long as the level's call: emptied by colbuf_open/1 and
       colbuf_close/0. */
    atom_t cache_atom[ACACHE];
    int64_t cache_id[ACACHE];
    unsigned short cache_used[ACACHE];  /* the slots filled, to empty them */
    size_t ncache_used;
    /* The buffer's inline literals (kind 8), in the order written. */
    int64_t *lit_vals;          /* int64 or double (memcpy) */
    int64_t *lit_dts;           /* the datatype's dictionary id */
    unsigned char *lit_kinds;   /* value kind | functor */
    size_t nlits, lits_cap;
    char *text;                 /* the lexical forms, each ended by '\n' */
    size_t text_len, text_cap;
} level;

static __thread level **levels = NULL;
static __thread int nlevels = 0;
static __thread int depth = -1;

static predicate_t pred_sink_id;
static predicate_t pred_flush;
static atom_t atom_n, atom_d, atom_dur, atom_k, atom_v, atom_u, atom_error;

static int
resource_error(const char *what)
{
    term_t ex;
    return ((ex = PL_new_term_ref()) &&
            PL_unify_term(ex, PL_FUNCTOR_CHARS, "error", 2,
                          PL_FUNCTOR_CHARS, "resource_error", 1, PL_CHARS, what,
                          PL_VARIABLE) &&
            PL_raise_exception(ex));
}

static int
no_call_error(void)
{
    term_t ex;
    return ((ex = PL_new_term_ref()) &&
            PL_unify_term(ex, PL_FUNCTOR_CHARS, "error", 2,
                          PL_FUNCTOR_CHARS, "existence_error", 2,
                            PL_CHARS, "with_columns_call", PL_CHARS, "columns_sink",
                          PL_VARIABLE) &&
            PL_raise_exception(ex));
}

static void
forget_atoms(level *L)
{
    for (size_t i = 0; i < L->nruns; i++)
        PL_unregister_atom(L->runs[i].name);
    L->nruns = 0;
    L->run_kinds_len = 0;
    L->nslots = 0;
    L->rows = 0;
    L->nlits = 0;
    L->text_len = 0;
}

/* The last atoms are not registered: each is in the atom cache, which
   holds a reference (an atom the cache lets go is cleared here too).
   Why: the key of a grouped answer changes from one row to the next, and
   each unregistration counts towards SWI-Prolog's next atom garbage
   collection, which scans every atom and clause (one per 10,000). */
static void
forget_last(level *L)
{
    for (int i = 0; i < NPOS; i++)
        L->last_atom[i] = 0;
}

static void
forget_cache(level *L)
{
    for (size_t i = 0; i < L->ncache_used; i++) {
        unsigned short c = L->cache_used[i];
        PL_unregister_atom(L->cache_atom[c]);
        L->cache_atom[c] = 0;
    }
    L->ncache_used = 0;
}

static size_t
cache_slot(atom_t a)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 32) & (ACACHE - 1);
}

static void
free_levels(void *closure)
{
    (void)closure;
    for (int i = 0; i < nlevels; i++) {
        level *L = levels[i];
        forget_atoms(L);
        forget_last(L);
        forget_cache(L);
        free(L->slots);
        free(L->kinds);
        free(L->runs);
        free(L->run_kinds);
        free(L->lit_vals);
        free(L->lit_dts);
        free(L->lit_kinds);
        free(L->text);
        free(L);
    }
    free(levels);
    levels = NULL;
    nlevels = 0;
    depth = -1;
}

/* *p resized to n elements of size bytes (a resource error if not). */
static int
grow_array(void *p, size_t n, size_t size)
{
    void **a = p;
    void *x = realloc(*a, n * size);
    if (!x)
        return resource_error("memory");
    *a = x;
    return TRUE;
}

/* Room for n values in the (empty or not) buffer of L. */
static int
grow_slots(level *L, size_t n)
{
    if (n <= L->cap)
        return TRUE;
    if (!grow_array(&L->slots, n, sizeof *L->slots) || !grow_array(&L->kinds, n, 1))
        return FALSE;
    L->cap = n;
    return TRUE;
}

static level *
current(void)
{
    return depth >= 0 ? levels[depth] : NULL;
}

/** colbuf_open(+MaxRows): a new level for a with_columns/3 call. */
static foreign_t
pl_colbuf_open(term_t max_rows)
{
    int64_t mr;
    if (!PL_get_int64_ex(max_rows, &mr))
        return FALSE;
    if (mr < 1)
        return PL_domain_error("positive_integer", max_rows);
    if (depth + 1 >= nlevels) {
        if (!levels)
            PL_thread_at_exit(free_levels, NULL, FALSE);
        level **ls = realloc(levels, (size_t)(nlevels + 1) * sizeof *ls);
        if (!ls)
            return resource_error("memory");
        levels = ls;
        level *L = calloc(1, sizeof *L);
        if (!L)
            return resource_error("memory");
        levels[nlevels++] = L;
    }
    level *L = levels[depth + 1];
    forget_atoms(L);
    forget_last(L);
    forget_cache(L);
    L->max_rows = (size_t)mr;
    if (!grow_slots(L, (size_t)mr * ROW_WIDTH))
        return FALSE;
    depth++;
    return TRUE;
}

/** colbuf_close: the current level is done (its buffer is dropped). */
static foreign_t
pl_colbuf_close(void)
{
    level *L = current();
    if (L) {
        forget_atoms(L);
        forget_last(L);
        forget_cache(L);
        depth--;
    }
    return TRUE;
}

/** colbuf_rows(-Rows): detections in the current buffer. */
static foreign_t
pl_colbuf_rows(term_t rows)
{
    level *L = current();
    return PL_unify_int64(rows, L ? (int64_t)L->rows : 0);
}

/** colbuf_reset: empty the current buffer. */
static foreign_t
pl_colbuf_reset(void)
{
    level *L = current();
    if (L)
        forget_atoms(L);
    return TRUE;
}

/** colbuf_take(-Runs, -Values, -Kinds, -Count, -Lits): the current
    buffer: Runs the flat list Name, Arity, Count, ColumnKinds per run
    (the list of the or-ed kinds of its Arity + 2 columns), Values and
    Kinds the addresses of its Count values and kind bytes, Lits its
    inline literals: [] when none, else [N, Vals, Dts, LitKinds, Text,
    TextLen] (the addresses of N values, N datatype ids, N kind bytes and
    of the TextLen bytes of their lexical forms).  The addresses are
    valid until the buffer is reset or written to. */
static foreign_t
pl_colbuf_take(term_t runs, term_t values, term_t kinds, term_t count, term_t lits)
{
    level *L = current();
    if (!L)
        return no_call_error();
    term_t list = PL_new_term_ref();
    term_t ks = PL_new_term_ref();
    term_t h = PL_new_term_ref();
    PL_put_nil(list);
    for (size_t i = L->nruns; i-- > 0;) {
        run *r = &L->runs[i];
        if (r->count == 0)
            continue;
        PL_put_nil(ks);
        for (size_t j = r->arity + 2; j-- > 0;) {
            if (!PL_put_int64(h, L->run_kinds[r->kinds_off + j]) || !PL_cons_list(ks, h, ks))
                return FALSE;
        }
        if (!PL_cons_list(list, ks, list) ||
            !PL_put_int64(h, (int64_t)r->count) || !PL_cons_list(list, h, list) ||
            !PL_put_int64(h, (int64_t)r->arity) || !PL_cons_list(list, h, list) ||
            !PL_put_atom(h, r->name) || !PL_cons_list(list, h, list))
            return FALSE;
    }
    term_t ls = PL_new_term_ref();
    PL_put_nil(ls);
    if (L->nlits) {
        int64_t items[6] = { (int64_t)L->nlits, (int64_t)(intptr_t)L->lit_vals,
                             (int64_t)(intptr_t)L->lit_dts, (int64_t)(intptr_t)L->lit_kinds,
                             (int64_t)(intptr_t)L->text, (int64_t)L->text_len };
        for (int j = 5; j >= 0; j--) {
            if (!PL_put_int64(h, items[j]) || !PL_cons_list(ls, h, ls))
                return FALSE;
        }
    }
    return (PL_unify(runs, list) && PL_unify(lits, ls) &&
            PL_unify_int64(values, (int64_t)(intptr_t)L->slots) &&
            PL_unify_int64(kinds, (int64_t)(intptr_t)L->kinds) &&
            PL_unify_int64(count, (int64_t)L->nslots));
}

/* The dictionary id of t (Prolog: bridge_columns:sink_id/2). */
static int
term_id(term_t t, int64_t *id)
{
    term_t av = PL_new_term_refs(2);
    return (av && PL_put_term(av, t) &&
            PL_call_predicate(NULL, PL_Q_PASS_EXCEPTION, pred_sink_id, av) &&
            PL_get_int64_ex(av + 1, id));
}

/* Write number t as the double value k of L's buffer. */
static int
put_double(level *L, size_t k, term_t t)
{
    double d;
    if (!PL_get_float(t, &d))
        return FALSE;
    memcpy(&L->slots[k], &d, sizeof d);
    L->kinds[k] = 2;
    return TRUE;
}

/* The dictionary id of atom a (term t), through the call's atom cache. */
static int
cached_atom_id(level *L, atom_t a, term_t t, int64_t *id)
{
    size_t c = cache_slot(a);
    if (L->cache_atom[c] == a) {
        *id = L->cache_id[c];
        return TRUE;
    }
    if (!term_id(t, id))
        return FALSE;
    if (L->cache_atom[c]) {
        for (int i = 0; i < NPOS; i++) {
            if (L->last_atom[i] == L->cache_atom[c])
                L->last_atom[i] = 0;
        }
        PL_unregister_atom(L->cache_atom[c]);
    } else
        L->cache_used[L->ncache_used++] = (unsigned short)c;
    PL_register_atom(a);
    L->cache_atom[c] = a;
    L->cache_id[c] = *id;
    return TRUE;
}

/* Room for one more literal of len text bytes (and its newline). */
static int
grow_lits(level *L, size_t len)
{
    if (L->nlits == L->lits_cap) {
        size_t n = L->lits_cap ? 2 * L->lits_cap : 1024;
        if (!grow_array(&L->lit_vals, n, sizeof *L->lit_vals)
            || !grow_array(&L->lit_dts, n, sizeof *L->lit_dts)
            || !grow_array(&L->lit_kinds, n, 1))
            return FALSE;
        L->lits_cap = n;
    }
    if (L->text_len + len + 1 > L->text_cap) {
        size_t n = 2 * (L->text_len + len + 1) + 4096;
        if (!grow_array(&L->text, n, 1))
            return FALSE;
        L->text_cap = n;
    }
    return TRUE;
}

/* Write t as inline literal (kind 8) k of L's buffer if it is one of the
   codec's typed literals of kind 8 (see the top): 1 if written, 0 if t
   is not one (it goes to the dictionary), -1 on an error. */
static int
put_literal(level *L, size_t k, term_t t)
{
    atom_t name, dt;
    size_t arity, len;
    unsigned char lk;
    int64_t v, dtid;
    char *s;

    if (!PL_get_name_arity(t, &name, &arity) || arity != 3)
        return 0;
    if (name == atom_n)
        lk = LIT_N;
    else if (name == atom_d)
        lk = LIT_D;
    else if (name == atom_dur)
        lk = LIT_DUR;
    else
        return 0;
    term_t a = PL_new_term_refs(3);
    if (!a || !PL_get_arg(1, t, a) || !PL_get_arg(2, t, a + 1) || !PL_get_arg(3, t, a + 2))
        return -1;
    switch (PL_term_type(a)) {
    case PL_INTEGER:
        if (!PL_get_int64(a, &v))
            return 0;           /* a big integer */
        lk |= 1;
        break;
    case PL_FLOAT: {
        double d;
        if (!PL_get_float(a, &d))
            return 0;
        memcpy(&v, &d, sizeof v);
        lk |= 2;
        break;
    }
    default:
        return 0;
    }
    if (PL_term_type(a + 1) != PL_ATOM || !PL_get_atom(a + 1, &dt) ||
        PL_term_type(a + 2) != PL_STRING)
        return 0;
    /* the datatype's id first: it may call Prolog (sink_id/2), which may
       move the string's text */
    if (!cached_atom_id(L, dt, a + 1, &dtid))
        return -1;
    if (!PL_get_nchars(a + 2, &len, &s, CVT_STRING | REP_ISO_LATIN_1) || len > LIT_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
            return 0;
    }
    if (!grow_lits(L, len))
        return -1;
    size_t i = L->nlits++;
    L->lit_vals[i] = v;
    L->lit_dts[i] = dtid;
    L->lit_kinds[i] = lk;
    memcpy(L->text + L->text_len, s, len);
    L->text[L->text_len + len] = '\n';
    L->text_len += len + 1;
    L->slots[k] = (int64_t)i;
    L->kinds[k] = 8;
    return 1;
}

/* Write term t as value k of L's buffer; pos: its argument position
   (-1 for the times). */
static int
put_value(level *L, size_t k, term_t t, long pos)
{
    int64_t v;
    atom_t a;

    switch (PL_term_type(t)) {
    case PL_INTEGER:
        if (PL_get_int64(t, &v)) {
            L->slots[k] = v;
            L->kinds[k] = 1;
            return TRUE;
        }
        break;                  /* a big integer: by the dictionary */
    case PL_FLOAT:
        return put_double(L, k, t);
    case PL_RATIONAL:           /* an exact time (bridge_python:exact_time/2): a float again */
        if (pos < 0)
            return put_double(L, k, t);
        break;
    case PL_TERM:
        if (pos >= 0) {
            int r = put_literal(L, k, t);
            if (r)
                return r > 0;
        }
        break;
    case PL_ATOM:
        if (pos >= 0 && pos < NPOS && PL_get_atom(t, &a)) {
            if (L->last_atom[pos] != a) {
                if (!cached_atom_id(L, a, t, &v))   /* a is in the cache now */
                    return FALSE;
                L->last_atom[pos] = a;
                L->last_id[pos] = v;
            }
            L->slots[k] = L->last_id[pos];
            L->kinds[k] = 4;
            return TRUE;
        }
        break;
    default:
        break;
    }
    if (!term_id(t, &v))
        return FALSE;
    L->slots[k] = v;
    L->kinds[k] = 4;
    return TRUE;
}

static int
flush(void)
{
    return PL_call_predicate(NULL, PL_Q_PASS_EXCEPTION, pred_flush, 0);
}

/* A new run of head name/arity, at the end of L's runs. */
static int
new_run(level *L, atom_t name, size_t arity)
{
    size_t w = arity + 2;
    if (L->nruns == L->runs_cap) {
        size_t n = L->runs_cap ? 2 * L->runs_cap : 16;
        if (!grow_array(&L->runs, n, sizeof *L->runs))
            return FALSE;
        L->runs_cap = n;
    }
    if (L->run_kinds_len + w > L->run_kinds_cap) {
        size_t n = 2 * (L->run_kinds_len + w) + 64;
        if (!grow_array(&L->run_kinds, n, 1))
            return FALSE;
        L->run_kinds_cap = n;
    }
    run *r = &L->runs[L->nruns++];
    PL_register_atom(name);
    r->name = name;
    r->arity = arity;
    r->count = 0;
    r->kinds_off = L->run_kinds_len;
    memset(L->run_kinds + L->run_kinds_len, 0, w);
    L->run_kinds_len += w;
    return TRUE;
}

/* One detection name(vals[0], ..., vals[arity - 1]) with times t1, t2
   into L's buffer (sent when full). */
static int
sink_row(level *L, atom_t name, size_t arity, term_t vals, term_t t1, term_t t2)
{
    size_t w = arity + 2;
    if (L->nslots + w > L->cap) {
        if (L->rows > 0 && !flush())
            return FALSE;
        if (!grow_slots(L, w))  /* a row wider than a whole buffer */
            return FALSE;
    }
    size_t base = L->nslots;
    for (size_t i = 0; i < arity; i++) {
        if (!put_value(L, base + i, vals + i, (long)i))
            return FALSE;
    }
    if (!put_value(L, base + arity, t1, -1) || !put_value(L, base + arity + 1, t2, -1))
        return FALSE;
    run *r = L->nruns ? &L->runs[L->nruns - 1] : NULL;
    if (!r || r->name != name || r->arity != arity) {
        if (!new_run(L, name, arity))
            return FALSE;
        r = &L->runs[L->nruns - 1];
    }
    unsigned char *rk = L->run_kinds + r->kinds_off;
    const unsigned char *k = L->kinds + base;
    for (size_t j = 0; j < w; j++)
        rk[j] |= k[j];
    r->count++;
    L->nslots += w;
    L->rows++;
    if (L->rows >= L->max_rows)
        return flush();
    return TRUE;
}

/** columns_sink(+Event, +T1, +T2): the detection into the buffer of the
    current with_columns/3 call; the buffer is sent when full. */
static foreign_t
pl_columns_sink(term_t e, term_t t1, term_t t2)
{
    level *L = current();
    atom_t name;
    size_t arity;

    if (!L)
        return no_call_error();
    if (!PL_get_name_arity(e, &name, &arity))
        return PL_type_error("callable", e);
    term_t vals = PL_new_term_refs(arity ? arity : 1);
    for (size_t i = 0; i < arity; i++) {
        if (!PL_get_arg(i + 1, e, vals + i))
            return FALSE;
    }
    return sink_row(L, name, arity, vals, t1, t2);
}

/** columns_groups(+Head, +Map, +Groups, +T1, +T2): the answers of a
    windowed query kept per pane whose rows are its group keys and
    aggregates as they are (stream_window.pl's direct evaluation): for
    each GK-AV of Groups, the detection Head(V1, ..., Vn), Vi argument I
    of GK for k(I) in Map, of AV for v(I), and '$error' where that is
    '$u' (emit_rows/8's rows without building them).  Times as
    columns_sink/3. */
static foreign_t
pl_columns_groups(term_t head, term_t map, term_t groups, term_t t1, term_t t2)
{
    level *L = current();
    atom_t name;
    if (!L)
        return no_call_error();
    if (!PL_get_atom_ex(head, &name))
        return FALSE;
    size_t n = 0;
    if (PL_skip_list(map, 0, &n) != PL_LIST)
        return PL_domain_error("columns_groups_map", map);
    /* as many columns as the query has (a SELECT may repeat an aggregate
       any number of times: one v(I) each) */
    int *src = malloc((n ? n : 1) * sizeof *src);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    int ok = FALSE;
    if (!src || !idx) {
        ok = resource_error("memory");
        goto out;
    }
    size_t arity = 0;
    term_t l = PL_copy_term_ref(map), h = PL_new_term_ref(), a = PL_new_term_ref();
    while (PL_get_list(l, h, l)) {
        atom_t f;
        size_t fa;
        int64_t i;
        if (arity >= n || !PL_get_name_arity(h, &f, &fa) || fa != 1 || !PL_get_arg(1, h, a) ||
            !PL_get_int64(a, &i) || i < 1 || (f != atom_k && f != atom_v)) {
            ok = PL_domain_error("columns_groups_map", map);
            goto out;
        }
        idx[arity] = (size_t)i;
        src[arity++] = f == atom_k ? 0 : 1;
    }
    term_t vals = PL_new_term_refs(arity ? arity : 1);
    term_t g = PL_copy_term_ref(groups), pair = PL_new_term_ref();
    term_t parts = PL_new_term_refs(2);
    atom_t x;
    while (PL_get_list(g, pair, g)) {
        if (!PL_get_arg(1, pair, parts) || !PL_get_arg(2, pair, parts + 1)) {
            ok = PL_type_error("group_pair", pair);
            goto out;
        }
        for (size_t i = 0; i < arity; i++) {
            if (!PL_get_arg(idx[i], parts + src[i], vals + i)) {
                ok = PL_type_error("group_pair", pair);
                goto out;
            }
            if (PL_get_atom(vals + i, &x) && x == atom_u && !PL_put_atom(vals + i, atom_error))
                goto out;
        }
        if (!sink_row(L, name, arity, vals, t1, t2))
            goto out;
    }
    ok = TRUE;
out:
    free(src);
    free(idx);
    return ok;
}

install_t
install_columns_buffer(void)
{
    pred_sink_id = PL_predicate("sink_id", 2, "bridge_columns");
    pred_flush = PL_predicate("flush_columns", 0, "bridge_columns");
    atom_n = PL_new_atom("n");
    atom_d = PL_new_atom("d");
    atom_dur = PL_new_atom("dur");
    atom_k = PL_new_atom("k");
    atom_v = PL_new_atom("v");
    atom_u = PL_new_atom("$u");
    atom_error = PL_new_atom("$error");
    PL_register_foreign_in_module("bridge_columns", "columns_sink", 3, pl_columns_sink, 0);
    PL_register_foreign_in_module("bridge_columns", "colbuf_open", 1, pl_colbuf_open, 0);
    PL_register_foreign_in_module("bridge_columns", "colbuf_close", 0, pl_colbuf_close, 0);
    PL_register_foreign_in_module("bridge_columns", "colbuf_rows", 1, pl_colbuf_rows, 0);
    PL_register_foreign_in_module("bridge_columns", "colbuf_reset", 0, pl_colbuf_reset, 0);
    PL_register_foreign_in_module("bridge_columns", "colbuf_take", 5, pl_colbuf_take, 0);
    PL_register_foreign_in_module("bridge_columns", "columns_groups", 5, pl_columns_groups, 0);
}
