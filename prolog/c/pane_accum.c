/*  The per-group loops of stream_panes.pl, in C.

    Why: a query kept per pane (docs/DIALECTS.md, "Incremental
    aggregates") folds each pane's matches per group, merges the pane's
    partials into the window's totals and takes the expired pane's out of
    them, and reads every group's value at each evaluation: for the
    sliding AVG of bench/windowed_cli.py, 100 groups a second, about six
    of its ~11 us of Prolog per event went to these loops (list cells, an
    accumulator term and a few arithmetic steps per group in the VM).
    Here each loop is one foreign call over the same Prolog terms: the
    partials and totals stay the lists GK-Acc that the window's dynamic
    predicates hold (so snapshots, restore and the Prolog code that reads
    them are unchanged), only the work per element is native.

    Exactness: a call handles the common accumulators only, exactly as
    the Prolog code computes them: acc(N, A1, ..., Ak) with Ai the
    integer of COUNT, the 0 of COUNT(*), or i(C, I) (SUM/AVG while every
    value is an xsd:integer), every number fitting 64 bits with no
    overflow.  Anything else (a decimal, float or double sum s/9, a MIN,
    MAX or SAMPLE, a big integer, an overflow, an xsd:int value) makes the
    call fail before it binds anything, and the caller runs the Prolog
    code for that call: the answer never depends on which path ran.

    Predicates (module stream_panes):

        pa_merge(+Specs, +Op, +Xs, +Ys, -Out)   merge_parts/5 (Op plus or sub)
        pa_merge3(+Specs, +Xs, +Plus, +Minus, -Out)   the two in one pass
        pa_fold(+Specs, +Pairs, -Parts)         fold_groups/3 (Sign 1)
        pa_values(+Specs, +Pairs, -Groups)      maplist(group_values(Specs), ...)

    The window's content (a set of matches, each with the pane of its
    latest occurrence) is kept, for the simple matches, in a hash table
    here (a blob: freed with the last reference to it) instead of the
    Prolog trie: a match t(S, P, O) with S and P atoms and O an atom or
    an integer that fits 64 bits.  Any other match always goes to the
    trie, so each match has one home and the content is their union.
    The table does not register the atoms of its keys: every key in it
    is also in the window's Store(J, Entries) facts (its latest pane's),
    which keep them alive, and leaves the table when that pane leaves.

        pa_table_new(-Table)
        pa_enter(+Table, +J, +Matches, -In, -Moved, -Rest)   entering/5
        pa_forget(+Table, +J, +Entries, -Rest)               forget_entries/3
        pa_lookup(+Table, +Key, -Pane)    Pane the pane, none, or other
                                          (not a simple key: the trie's)
        pa_put(+Table, +Key, +J)          (fails for a key not simple)
        pa_count(+Table, -N)
        pa_dump(+Table, -Pairs)           Key-Pane pairs, the table emptied
*/
#include <SWI-Stream.h>
#include <SWI-Prolog.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXAGG 16

enum { OP_COUNT_STAR, OP_COUNT, OP_SUM, OP_AVG };

static atom_t a_count_star, a_count, a_sum, a_avg, a_plus, a_sub, a_error, a_u, a_xsd_integer,
    a_xsd_decimal;
static functor_t f_minus2, f_i2, f_n3, f_agg3;
static functor_t f_acc[MAXAGG + 2];    /* acc/1 ... acc/(MAXAGG + 1) */

/* The aggregates of Specs ([agg(Op, Distinct, Sep), ...]) as OP_ codes;
   FALSE for an aggregate this file does not keep (MIN, MAX, SAMPLE). */
static int
get_specs(term_t specs, int *ops, int *n)
{
    term_t l = PL_copy_term_ref(specs), h = PL_new_term_ref(), a = PL_new_term_ref();
    atom_t op;
    *n = 0;
    while (PL_get_list(l, h, l)) {
        if (*n >= MAXAGG || !PL_is_functor(h, f_agg3) || !PL_get_arg(1, h, a) ||
            !PL_get_atom(a, &op))
            return FALSE;
        if (op == a_count_star)
            ops[*n] = OP_COUNT_STAR;
        else if (op == a_count)
            ops[*n] = OP_COUNT;
        else if (op == a_sum)
            ops[*n] = OP_SUM;
        else if (op == a_avg)
            ops[*n] = OP_AVG;
        else
            return FALSE;
        (*n)++;
    }
    return *n > 0 && PL_get_nil(l);
}

/* One accumulator slot: an integer (COUNT, COUNT(*)'s 0) or i(C, I). */
typedef struct { int64_t c, i; } slot;

typedef struct {
    int64_t n;
    slot s[MAXAGG];
} acc;

static int
get_i64(term_t t, int64_t *v)
{
    return PL_is_integer(t) && PL_get_int64(t, v);
}

/* acc(N, A1, ..., Ak) read into a (FALSE if not of the common kinds). */
static int
get_acc(term_t t, const int *ops, int k, acc *a, term_t x, term_t y)
{
    if (!PL_is_functor(t, f_acc[k + 1]))
        return FALSE;
    _PL_get_arg(1, t, x);
    if (!get_i64(x, &a->n))
        return FALSE;
    for (int j = 0; j < k; j++) {
        _PL_get_arg(j + 2, t, x);
        if (ops[j] == OP_SUM || ops[j] == OP_AVG) {
            if (!PL_is_functor(x, f_i2))
                return FALSE;
            _PL_get_arg(1, x, y);
            if (!get_i64(y, &a->s[j].c))
                return FALSE;
            _PL_get_arg(2, x, y);
            if (!get_i64(y, &a->s[j].i))
                return FALSE;
        } else {
            if (!get_i64(x, &a->s[j].c))
                return FALSE;
            a->s[j].i = 0;
        }
    }
    return TRUE;
}

/* t := acc(N, ...) (functor name as the Prolog code's: acc). */

static int
put_acc(term_t t, const int *ops, int k, const acc *a)
{
    if (k == 1) {                   /* one aggregate: one call */
        PL_put_variable(t);
        if (ops[0] == OP_SUM || ops[0] == OP_AVG)
            return PL_unify_term(t, PL_FUNCTOR, f_acc[2], PL_INT64, a->n,
                                 PL_FUNCTOR, f_i2, PL_INT64, a->s[0].c, PL_INT64, a->s[0].i);
        return PL_unify_term(t, PL_FUNCTOR, f_acc[2], PL_INT64, a->n, PL_INT64, a->s[0].c);
    }
    term_t args = PL_new_term_refs(k + 1);
    term_t c = PL_new_term_ref(), i = PL_new_term_ref();
    if (!args || !PL_put_int64(args, a->n))
        return FALSE;
    for (int j = 0; j < k; j++) {
        if (ops[j] == OP_SUM || ops[j] == OP_AVG) {
            if (!PL_put_int64(c, a->s[j].c) || !PL_put_int64(i, a->s[j].i) ||
                !PL_cons_functor(args + j + 1, f_i2, c, i))
                return FALSE;
        } else if (!PL_put_int64(args + j + 1, a->s[j].c))
            return FALSE;
    }
    return PL_cons_functor_v(t, f_acc[k + 1], args);
}

/* r := x + sign * y, per aggregate as acc_plus/4 and acc_sub/4 do (COUNT(*)'s
   slot is kept from x); FALSE on an overflow. */
static int
combine(const int *ops, int k, const acc *x, const acc *y, int sign, acc *r)
{
    int64_t yn = sign > 0 ? y->n : -y->n;
    if (y->n == INT64_MIN || __builtin_add_overflow(x->n, yn, &r->n))
        return FALSE;
    for (int j = 0; j < k; j++) {
        if (ops[j] == OP_COUNT_STAR) {
            r->s[j] = x->s[j];
            continue;
        }
        int64_t yc = y->s[j].c, yi = y->s[j].i;
        if (yc == INT64_MIN || yi == INT64_MIN)
            return FALSE;
        if (sign < 0) {
            yc = -yc;
            yi = -yi;
        }
        if (__builtin_add_overflow(x->s[j].c, yc, &r->s[j].c) ||
            __builtin_add_overflow(x->s[j].i, yi, &r->s[j].i))
            return FALSE;
    }
    return TRUE;
}

/* A growable array of term references (the output list's elements). */
typedef struct {
    term_t base;
    size_t n;
} cells;

/* The list of n terms from base. */
static int
make_list(term_t out, term_t base, size_t n)
{
    term_t l = PL_new_term_ref();
    PL_put_nil(l);
    for (size_t i = n; i-- > 0;) {
        if (!PL_cons_list(l, base + i, l))
            return FALSE;
    }
    return PL_unify(out, l);
}

/* The length of a proper list, 0 for anything else. */
static size_t
list_length(term_t l)
{
    size_t n = 0;
    return PL_skip_list(l, 0, &n) == PL_LIST ? n : 0;
}

/** pa_merge(+Specs, +Op, +Xs, +Ys, -Out): merge_parts/5 of the common
    accumulators (see the top); fails otherwise. */
static foreign_t
pa_merge(term_t specs, term_t opt, term_t xs, term_t ys, term_t out)
{
    int ops[MAXAGG], k;
    atom_t op;
    if (!get_specs(specs, ops, &k) || !PL_get_atom(opt, &op) || (op != a_plus && op != a_sub))
        return FALSE;
    int sign = op == a_plus ? 1 : -1;
    size_t cap = list_length(xs) + list_length(ys);
    term_t res = PL_new_term_refs(cap ? cap : 1);
    size_t n = 0;
    if (!res)
        return FALSE;                   /* no room: a resource error, not a crash */
    term_t lx = PL_copy_term_ref(xs), ly = PL_copy_term_ref(ys);
    term_t hx = PL_new_term_ref(), hy = PL_new_term_ref();
    term_t kx = PL_new_term_ref(), ky = PL_new_term_ref();
    term_t ax = PL_new_term_ref(), ay = PL_new_term_ref(), t = PL_new_term_ref();
    term_t s1 = PL_new_term_ref(), s2 = PL_new_term_ref();
    int havex = PL_get_list(lx, hx, lx), havey = PL_get_list(ly, hy, ly);
    acc x, y, r;

    while (havex || havey) {
        if (n >= cap)
            return FALSE;
        int c;
        if (!havey)
            c = -1;
        else if (!havex)
            c = 1;
        else {
            if (!PL_is_functor(hx, f_minus2) || !PL_is_functor(hy, f_minus2))
                return FALSE;
            _PL_get_arg(1, hx, kx);
            _PL_get_arg(1, hy, ky);
            c = PL_compare(kx, ky);
        }
        if (c < 0) {
            if (!PL_put_term(res + n++, hx))
                return FALSE;
            havex = PL_get_list(lx, hx, lx);
        } else if (c > 0) {
            if (sign > 0 && !PL_put_term(res + n++, hy))
                return FALSE;
            havey = PL_get_list(ly, hy, ly);
        } else {
            _PL_get_arg(2, hx, ax);
            _PL_get_arg(2, hy, ay);
            if (!get_acc(ax, ops, k, &x, s1, s2) || !get_acc(ay, ops, k, &y, s1, s2) ||
                !combine(ops, k, &x, &y, sign, &r))
                return FALSE;
            if (sign > 0 || r.n != 0) {
                if (!put_acc(t, ops, k, &r) || !PL_cons_functor(res + n, f_minus2, kx, t))
                    return FALSE;
                n++;
            }
            havex = PL_get_list(lx, hx, lx);
            havey = PL_get_list(ly, hy, ly);
        }
    }
    return make_list(out, res, n);
}

/** pa_merge3(+Specs, +Totals, +Plus, +Minus, -Out): merge_parts/5 of
    Totals and Plus (plus), then of that and Minus (sub), in one pass
    (an evaluation folds one pane in and takes one out); fails as
    pa_merge/5 does. */
static foreign_t
pa_merge3(term_t specs, term_t xs, term_t ns, term_t gs, term_t out)
{
    int ops[MAXAGG], k;
    if (!get_specs(specs, ops, &k))
        return FALSE;
    size_t cap = list_length(xs) + list_length(ns);
    term_t res = PL_new_term_refs(cap ? cap : 1);
    size_t n = 0;
    if (!res)
        return FALSE;
    term_t l[3] = { PL_copy_term_ref(xs), PL_copy_term_ref(ns), PL_copy_term_ref(gs) };
    term_t h[3] = { PL_new_term_ref(), PL_new_term_ref(), PL_new_term_ref() };
    term_t key[3] = { PL_new_term_ref(), PL_new_term_ref(), PL_new_term_ref() };
    int have[3];
    term_t a = PL_new_term_ref(), t = PL_new_term_ref();
    term_t s1 = PL_new_term_ref(), s2 = PL_new_term_ref();
    acc x, y, r, r2;

    for (int i = 0; i < 3; i++) {
        have[i] = PL_get_list(l[i], h[i], l[i]);
        if (have[i]) {
            if (!PL_is_functor(h[i], f_minus2))
                return FALSE;
            _PL_get_arg(1, h[i], key[i]);
        }
    }
    while (have[0] || have[1]) {
        /* the least key of the totals and the pane folded in */
        int m = !have[0] ? 1 : !have[1] ? 0 : (PL_compare(key[0], key[1]) <= 0 ? 0 : 1);
        term_t km = key[m];
        int inx = have[0] && (m == 0 || PL_compare(key[0], km) == 0);
        int inn = have[1] && (m == 1 || PL_compare(key[1], km) == 0);
        /* keys of the pane taken out that come before: nothing to take from */
        int c = 1;
        while (have[2] && (c = PL_compare(key[2], km)) < 0) {
            have[2] = PL_get_list(l[2], h[2], l[2]);
            if (have[2]) {
                if (!PL_is_functor(h[2], f_minus2))
                    return FALSE;
                _PL_get_arg(1, h[2], key[2]);
            }
        }
        int ing = have[2] && c == 0;
        if (n >= cap)
            return FALSE;
        if (!ing && !(inx && inn)) {
            if (!PL_put_term(res + n++, h[inx ? 0 : 1]))
                return FALSE;
        } else {
            if (inx) {
                _PL_get_arg(2, h[0], a);
                if (!get_acc(a, ops, k, &r, s1, s2))
                    return FALSE;
            }
            if (inn) {
                _PL_get_arg(2, h[1], a);
                if (!get_acc(a, ops, k, inx ? &y : &r, s1, s2))
                    return FALSE;
                if (inx) {
                    x = r;
                    if (!combine(ops, k, &x, &y, 1, &r))
                        return FALSE;
                }
            }
            if (ing) {
                _PL_get_arg(2, h[2], a);
                if (!get_acc(a, ops, k, &y, s1, s2) || !combine(ops, k, &r, &y, -1, &r2))
                    return FALSE;
                r = r2;
            }
            if (!ing || r.n != 0) {
                if (!put_acc(t, ops, k, &r) || !PL_cons_functor(res + n, f_minus2, km, t))
                    return FALSE;
                n++;
            }
        }
        for (int i = 0; i < 3; i++) {
            if ((i == 0 && inx) || (i == 1 && inn) || (i == 2 && ing)) {
                have[i] = PL_get_list(l[i], h[i], l[i]);
                if (have[i]) {
                    if (!PL_is_functor(h[i], f_minus2))
                        return FALSE;
                    _PL_get_arg(1, h[i], key[i]);
                }
            }
        }
    }
    return make_list(out, res, n);
}

/* The aggregate argument X of one match added to slot s (add_one/5, Sign
   1); FALSE for a value the Prolog code keeps otherwise (not an
   xsd:integer that fits 64 bits). */
static int
add_arg(int op, term_t x, slot *s, term_t tmp)
{
    atom_t a;
    int64_t v;
    switch (op) {
    case OP_COUNT_STAR:
        return TRUE;
    case OP_COUNT:
        if (PL_get_atom(x, &a) && (a == a_error || a == a_u))
            return TRUE;
        return !__builtin_add_overflow(s->c, 1, &s->c);
    default:
        if (PL_is_integer(x)) {
            if (!PL_get_int64(x, &v))
                return FALSE;
        } else if (PL_is_functor(x, f_n3)) {
            if (!PL_get_arg(2, x, tmp) || !PL_get_atom(tmp, &a) || a != a_xsd_integer ||
                !PL_get_arg(1, x, tmp) || !PL_is_integer(tmp) || !PL_get_int64(tmp, &v))
                return FALSE;
        } else
            return FALSE;
        return !__builtin_add_overflow(s->c, 1, &s->c) &&
               !__builtin_add_overflow(s->i, v, &s->i);
    }
}

/* The start of a call that maps Pairs to a list of results: Specs'
   aggregates as OP_ codes (FALSE if C does not keep them) and *res, term
   references for one result per pair (FALSE if there is no room: a
   resource error is pending). */
static int
pairs_start(term_t specs, term_t pairs, int *ops, int *k, size_t *cap, term_t *res)
{
    if (!get_specs(specs, ops, k))
        return FALSE;
    *cap = list_length(pairs);
    *res = PL_new_term_refs(*cap ? *cap : 1);
    return *res != 0;
}

/** pa_fold(+Specs, +Pairs, -Parts): fold_groups/3 (Pairs GK-AR sorted by
    GK) for the common accumulators; fails otherwise. */
static foreign_t
pa_fold(term_t specs, term_t pairs, term_t out)
{
    int ops[MAXAGG], k;
    size_t cap, n = 0;
    term_t res;
    if (!pairs_start(specs, pairs, ops, &k, &cap, &res))
        return FALSE;
    term_t l = PL_copy_term_ref(pairs), h = PL_new_term_ref();
    term_t gk = PL_new_term_ref(), ar = PL_new_term_ref(), x = PL_new_term_ref();
    term_t tmp = PL_new_term_ref(), t = PL_new_term_ref();
    int have = PL_get_list(l, h, l);
    acc a;

    while (have) {
        if (!PL_is_functor(h, f_minus2) || !PL_get_arg(1, h, gk))
            return FALSE;
        memset(&a, 0, sizeof a);
        term_t key = PL_copy_term_ref(gk);
        for (;;) {
            if (!PL_get_arg(2, h, ar))
                return FALSE;
            for (int j = 0; j < k; j++) {
                if (ops[j] == OP_COUNT_STAR)
                    continue;
                if (!PL_get_arg(j + 1, ar, x) || !add_arg(ops[j], x, &a.s[j], tmp))
                    return FALSE;
            }
            a.n++;
            have = PL_get_list(l, h, l);
            if (!have || !PL_is_functor(h, f_minus2) || !PL_get_arg(1, h, gk) ||
                PL_compare(gk, key) != 0)
                break;
        }
        if (n >= cap || !put_acc(t, ops, k, &a) || !PL_cons_functor(res + n, f_minus2, key, t))
            return FALSE;
        n++;
    }
    return make_list(out, res, n);
}

/* The decimal numeral of Sum / Count as integer_avg/3 makes it (the
   quotient rounded to 18 fractional digits, halves away from zero, in
   canonical form); FALSE if it does not fit 128-bit arithmetic. */
static int
avg_numeral(int64_t sum, int64_t count, char *buf, size_t size)
{
    const uint64_t P = 1000000000000000000ULL;
    uint64_t a = sum < 0 ? (uint64_t)0 - (uint64_t)sum : (uint64_t)sum;
    if (count <= 0 || a >= ((uint64_t)1 << 62) || size < 48)
        return FALSE;
    /* round(a * P / count) = q * P + round(r * P / count): one wide division */
    uint64_t q = a / (uint64_t)count, r = a % (uint64_t)count;
    uint64_t fr = (uint64_t)((2 * (unsigned __int128)r * P + (uint64_t)count) /
                             (2 * (unsigned __int128)(uint64_t)count));
    if (fr == P) {
        q++;
        fr = 0;
    }
    char *o = buf;
    if ((q != 0 || fr != 0) && sum < 0)
        *o++ = '-';
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + q % 10);
        q /= 10;
    } while (q);
    while (n)
        *o++ = tmp[--n];
    *o++ = '.';
    if (fr == 0)
        *o++ = '0';
    else {
        char frac[18];
        for (int d = 17; d >= 0; d--) {
            frac[d] = (char)('0' + fr % 10);
            fr /= 10;
        }
        int last = 17;
        while (frac[last] == '0')
            last--;
        memcpy(o, frac, (size_t)last + 1);
        o += last + 1;
    }
    *o = 0;
    return TRUE;
}

/* t := the value of aggregate op (value_one/4); FALSE to leave it to
   Prolog. */
static int
put_value(term_t t, int op, int64_t n, const slot *s)
{
    switch (op) {
    case OP_COUNT_STAR:
        return PL_put_int64(t, n);
    case OP_COUNT:
        return PL_put_int64(t, s->c);
    case OP_SUM:
        return PL_put_int64(t, s->i);
    default: {
        if (s->c == 0)
            return PL_put_int64(t, 0);
        char buf[64];
        if (!avg_numeral(s->i, s->c, buf, sizeof buf))
            return FALSE;
        term_t args = PL_new_term_refs(3);
        if (!args)
            return FALSE;
        /* the numeral's value as number_string/2 reads it: the nearest double */
        return (PL_put_float(args, strtod(buf, NULL)) && PL_put_atom(args + 1, a_xsd_decimal) &&
                PL_put_chars(args + 2, PL_STRING, (size_t)-1, buf) &&
                PL_cons_functor_v(t, f_n3, args));
    }
    }
}

static functor_t f_av[MAXAGG + 1];

/** pa_values(+Specs, +Pairs, -Groups): GK-av(V1, ..., Vk) per GK-Acc of
    Pairs (group_values/3) for the common accumulators; fails
    otherwise. */
static foreign_t
pa_values(term_t specs, term_t pairs, term_t out)
{
    int ops[MAXAGG], k;
    size_t cap, n = 0;
    term_t res;
    if (!pairs_start(specs, pairs, ops, &k, &cap, &res))
        return FALSE;
    term_t l = PL_copy_term_ref(pairs), h = PL_new_term_ref();
    term_t gk = PL_new_term_ref(), at = PL_new_term_ref(), av = PL_new_term_ref();
    term_t vs = PL_new_term_refs(k);
    term_t s1 = PL_new_term_ref(), s2 = PL_new_term_ref();
    acc a;
    if (!vs)
        return FALSE;

    while (PL_get_list(l, h, l)) {
        if (n >= cap || !PL_is_functor(h, f_minus2))
            return FALSE;
        _PL_get_arg(1, h, gk);
        _PL_get_arg(2, h, at);
        if (!get_acc(at, ops, k, &a, s1, s2))
            return FALSE;
        for (int j = 0; j < k; j++) {
            if (!put_value(vs + j, ops[j], a.n, &a.s[j]))
                return FALSE;
        }
        if (!PL_cons_functor_v(av, f_av[k], vs) || !PL_cons_functor(res + n, f_minus2, gk, av))
            return FALSE;
        n++;
    }
    return make_list(out, res, n);
}

		 /*******************************
		 *    THE CONTENT'S HASH TABLE  *
		 *******************************/

typedef struct {
    uintptr_t s, p, o;          /* atom handles; o an int64's bits when ok == 2 */
    int64_t pane;
    unsigned char ok;           /* 0 empty, 1 o an atom, 2 o an integer */
} centry;

typedef struct {
    centry *slots;
    size_t cap, count;          /* cap a power of 2 */
} ctable;

static functor_t f_t3;

static int
release_table(atom_t a)
{
    ctable *t = PL_blob_data(a, NULL, NULL);
    if (t) {
        free(t->slots);
        free(t);
    }
    return TRUE;
}

static int
write_table(IOSTREAM *s, atom_t a, int flags)
{
    (void)flags;
    ctable *t = PL_blob_data(a, NULL, NULL);
    Sfprintf(s, "<pane_table>(%p)", (void *)t);
    return TRUE;
}

static PL_blob_t table_blob = {
    .magic = PL_BLOB_MAGIC,
    .flags = PL_BLOB_UNIQUE | PL_BLOB_NOCOPY,
    .name = "pane_table",
    .release = release_table,
    .write = write_table,
};

static int
get_table(term_t t, ctable **out)
{
    PL_blob_t *type;
    void *data;
    if (!PL_get_blob(t, &data, NULL, &type) || type != &table_blob)
        return PL_type_error("pane_table", t);
    *out = data;
    return TRUE;
}

/* The key of match k if it is simple (see the top): 1, else 0. */
static int
simple_key(term_t k, centry *e, term_t tmp)
{
    atom_t a;
    int64_t v;
    if (!PL_is_functor(k, f_t3))
        return 0;
    if (!PL_get_arg(1, k, tmp) || !PL_get_atom(tmp, &a))
        return 0;
    e->s = (uintptr_t)a;
    if (!PL_get_arg(2, k, tmp) || !PL_get_atom(tmp, &a))
        return 0;
    e->p = (uintptr_t)a;
    if (!PL_get_arg(3, k, tmp))
        return 0;
    if (PL_get_atom(tmp, &a)) {
        e->o = (uintptr_t)a;
        e->ok = 1;
        return 1;
    }
    if (PL_is_integer(tmp) && PL_get_int64(tmp, &v)) {
        e->o = (uintptr_t)v;
        e->ok = 2;
        return 1;
    }
    return 0;
}

static size_t
key_hash(const centry *e)
{
    uint64_t h = (uint64_t)e->s * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)e->p + 0x7F4A7C159E3779B9ULL + (h << 6) + (h >> 2);
    h ^= ((uint64_t)e->o ^ e->ok) * 0xC2B2AE3D27D4EB4FULL + (h << 6) + (h >> 2);
    return (size_t)(h ^ (h >> 29));
}

static int
same_key(const centry *a, const centry *b)
{
    return a->ok == b->ok && a->s == b->s && a->p == b->p && a->o == b->o;
}

/* The slot of key e: its own, or the empty one where it would go. */
static size_t
find_slot(const ctable *t, const centry *e)
{
    size_t mask = t->cap - 1, i = key_hash(e) & mask;
    while (t->slots[i].ok && !same_key(&t->slots[i], e))
        i = (i + 1) & mask;
    return i;
}

static int
grow_table(ctable *t)
{
    size_t cap = t->cap ? 2 * t->cap : 1024;
    centry *old = t->slots, *slots = calloc(cap, sizeof *slots);
    size_t ocap = t->cap;
    if (!slots)
        return FALSE;
    t->slots = slots;
    t->cap = cap;
    for (size_t i = 0; i < ocap; i++) {
        if (old[i].ok)
            t->slots[find_slot(t, &old[i])] = old[i];
    }
    free(old);
    return TRUE;
}

/* Key e with pane j: inserted, or its pane updated. */
static int
table_put(ctable *t, const centry *e, int64_t j)
{
    if (2 * (t->count + 1) > t->cap && !grow_table(t))
        return FALSE;
    size_t i = find_slot(t, e);
    if (!t->slots[i].ok) {
        t->slots[i] = *e;
        t->count++;
    }
    t->slots[i].pane = j;
    return TRUE;
}

/* Remove slot i (linear probing: the later keys of its run shift back). */
static void
table_remove(ctable *t, size_t i)
{
    size_t mask = t->cap - 1, j = i;
    t->slots[i].ok = 0;
    t->count--;
    for (;;) {
        j = (j + 1) & mask;
        if (!t->slots[j].ok)
            return;
        size_t home = key_hash(&t->slots[j]) & mask;
        /* slot j's key may move to i if its home is not in (i, j] */
        if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
            t->slots[i] = t->slots[j];
            t->slots[j].ok = 0;
            i = j;
        }
    }
}

static int
memory_error(void)
{
    term_t ex;
    return ((ex = PL_new_term_ref()) &&
            PL_unify_term(ex, PL_FUNCTOR_CHARS, "error", 2,
                          PL_FUNCTOR_CHARS, "resource_error", 1, PL_CHARS, "memory",
                          PL_VARIABLE) &&
            PL_raise_exception(ex));
}

/* A change to the table made by a call, so that a call that fails
   midway (no room on the stacks to build its answer: a resource error)
   leaves the table as it found it; the table must always agree with the
   window's Store(J, Keys) facts, which keep its keys' atoms alive. */
typedef struct {
    centry e;                   /* the key */
    int64_t old;                /* its pane before, unless fresh */
    int fresh;                  /* inserted by the call */
} change;

static void
undo_changes(ctable *t, const change *log, size_t n)
{
    while (n-- > 0) {
        size_t i = find_slot(t, &log[n].e);
        if (!t->slots[i].ok)
            continue;
        if (log[n].fresh)
            table_remove(t, i);
        else
            t->slots[i].pane = log[n].old;
    }
}

/* k := the key of h, an entry (Key-GK)-AR (ka := Key-GK); FALSE if h is
   not one. */
static int
entry_key(term_t h, term_t ka, term_t k)
{
    return PL_is_functor(h, f_minus2) && PL_get_arg(1, h, ka) && PL_is_functor(ka, f_minus2) &&
           PL_get_arg(1, ka, k);
}

/** pa_table_new(-Table): an empty content table. */
static foreign_t
pa_table_new(term_t out)
{
    ctable *t = calloc(1, sizeof *t);
    if (!t || !grow_table(t)) {
        free(t);
        return memory_error();
    }
    return PL_unify_blob(out, t, sizeof *t, &table_blob);
}

/** pa_enter(+Table, +J, +Matches, -In, -Moved, -Rest): entering/5 for the
    simple matches of Matches (Key-GK-AR, sorted): In those that enter
    pane J (new, or moved from an earlier pane J0: listed in Moved as
    J0-(GK-AR)), in order; Rest the other matches, in order, for the
    trie. */
static foreign_t
pa_enter(term_t tbl, term_t jt, term_t ms, term_t in, term_t moved, term_t rest)
{
    ctable *t = NULL;
    int64_t j;
    if (!get_table(tbl, &t) || !PL_get_int64_ex(jt, &j))
        return FALSE;
    size_t cap = list_length(ms);
    term_t ins = PL_new_term_refs(cap ? cap : 1), mvs = PL_new_term_refs(cap ? cap : 1),
           rst = PL_new_term_refs(cap ? cap : 1);
    size_t nin = 0, nmv = 0, nrs = 0, nlog = 0;
    if (!ins || !mvs || !rst)
        return FALSE;
    change *log = malloc((cap ? cap : 1) * sizeof *log);
    if (!log)
        return memory_error();
    term_t l = PL_copy_term_ref(ms), h = PL_new_term_ref(), k = PL_new_term_ref(),
           ka = PL_new_term_ref(), ga = PL_new_term_ref(), tmp = PL_new_term_ref(),
           jo = PL_new_term_ref();
    centry e;
    while (PL_get_list(l, h, l)) {
        if (!entry_key(h, ka, k)) {
            PL_type_error("pane_match", h);
            goto fail;
        }
        memset(&e, 0, sizeof e);
        if (!simple_key(k, &e, tmp)) {
            if (nrs >= cap || !PL_put_term(rst + nrs++, h))
                goto fail;
            continue;
        }
        if (nin >= cap)
            goto fail;                  /* not a proper list (cap 0) */
        size_t i = find_slot(t, &e);
        if (t->slots[i].ok) {
            int64_t j0 = t->slots[i].pane;
            if (j0 == j)
                continue;
            t->slots[i].pane = j;
            log[nlog++] = (change){ e, j0, 0 };
            if (!PL_put_term(ins + nin++, h) || !PL_get_arg(2, ka, ga) ||
                !PL_get_arg(2, h, tmp) || !PL_put_int64(jo, j0) ||
                !PL_cons_functor(tmp, f_minus2, ga, tmp) ||
                !PL_cons_functor(mvs + nmv++, f_minus2, jo, tmp))
                goto fail;
        } else {
            if (!table_put(t, &e, j)) {
                memory_error();
                goto fail;
            }
            log[nlog++] = (change){ e, 0, 1 };
            if (!PL_put_term(ins + nin++, h))
                goto fail;
        }
    }
    if (make_list(in, ins, nin) && make_list(moved, mvs, nmv) && make_list(rest, rst, nrs)) {
        free(log);
        return TRUE;
    }
fail:
    undo_changes(t, log, nlog);
    free(log);
    return FALSE;
}

/** pa_forget(+Table, +J, +Entries, -Rest): forget_entries/3 for the
    simple matches of Entries (the keys of pane J, or Key-GK-AR, which leaves the
    window): each leaves the table unless it moved to a later pane; Rest
    the other entries, for the trie. */
static foreign_t
pa_forget(term_t tbl, term_t jt, term_t es, term_t rest)
{
    ctable *t = NULL;
    int64_t j;
    if (!get_table(tbl, &t) || !PL_get_int64_ex(jt, &j))
        return FALSE;
    size_t cap = list_length(es);
    term_t rst = PL_new_term_refs(cap ? cap : 1);
    size_t nrs = 0;
    if (!rst)
        return FALSE;
    term_t l = PL_copy_term_ref(es), h = PL_new_term_ref(), k = PL_new_term_ref(),
           ka = PL_new_term_ref(), tmp = PL_new_term_ref();
    centry e;
    while (PL_get_list(l, h, l)) {
        if (PL_is_functor(h, f_t3))     /* a key (an older snapshot's: Key-GK-AR) */
            PL_put_term(k, h);
        else if (!entry_key(h, ka, k))
            return PL_type_error("pane_match", h);
        memset(&e, 0, sizeof e);
        if (!simple_key(k, &e, tmp)) {
            if (!PL_put_term(rst + nrs++, h))
                return FALSE;
            continue;
        }
        size_t i = find_slot(t, &e);
        if (t->slots[i].ok && t->slots[i].pane == j)
            table_remove(t, i);
    }
    return make_list(rest, rst, nrs);
}

/** pa_lookup(+Table, +Key, -Pane): the pane of Key's latest occurrence,
    none if it is not in the window, other if Key is not simple. */
static foreign_t
pa_lookup(term_t tbl, term_t k, term_t pane)
{
    ctable *t = NULL;
    centry e;
    term_t tmp = PL_new_term_ref();
    if (!get_table(tbl, &t))
        return FALSE;
    memset(&e, 0, sizeof e);
    if (!simple_key(k, &e, tmp))
        return PL_unify_atom_chars(pane, "other");
    size_t i = find_slot(t, &e);
    if (!t->slots[i].ok)
        return PL_unify_atom_chars(pane, "none");
    return PL_unify_int64(pane, t->slots[i].pane);
}

/** pa_put(+Table, +Key, +J): Key's latest pane is J (fails if Key is not
    simple). */
static foreign_t
pa_put(term_t tbl, term_t k, term_t jt)
{
    ctable *t = NULL;
    centry e;
    int64_t j;
    term_t tmp = PL_new_term_ref();
    if (!get_table(tbl, &t) || !PL_get_int64_ex(jt, &j))
        return FALSE;
    memset(&e, 0, sizeof e);
    if (!simple_key(k, &e, tmp))
        return FALSE;
    return table_put(t, &e, j) ? TRUE : memory_error();
}

/** pa_dump(+Table, -Pairs): the table's keys as Key-Pane pairs (in no
    order), and the table emptied: the window's content moves to the trie
    when a pane index does not fit 64 bits (stream_panes:content_for/4). */
static foreign_t
pa_dump(term_t tbl, term_t out)
{
    ctable *t = NULL;
    if (!get_table(tbl, &t))
        return FALSE;
    term_t l = PL_new_term_ref(), k = PL_new_term_ref(), j = PL_new_term_ref(),
           pair = PL_new_term_ref();
    if (!l || !k || !j || !pair)
        return FALSE;
    PL_put_nil(l);
    for (size_t i = 0; i < t->cap; i++) {
        const centry *e = &t->slots[i];
        if (!e->ok)
            continue;
        if (!(e->ok == 1 ? PL_unify_term(k, PL_FUNCTOR, f_t3, PL_ATOM, (atom_t)e->s,
                                         PL_ATOM, (atom_t)e->p, PL_ATOM, (atom_t)e->o)
                         : PL_unify_term(k, PL_FUNCTOR, f_t3, PL_ATOM, (atom_t)e->s,
                                         PL_ATOM, (atom_t)e->p, PL_INT64, (int64_t)e->o)) ||
            !PL_put_int64(j, e->pane) || !PL_cons_functor(pair, f_minus2, k, j) ||
            !PL_cons_list(l, pair, l))
            return FALSE;
        PL_put_variable(k);
    }
    if (!PL_unify(out, l))
        return FALSE;
    memset(t->slots, 0, t->cap * sizeof *t->slots);
    t->count = 0;
    return TRUE;
}

/** pa_count(+Table, -N): the keys in the table. */
static foreign_t
pa_count(term_t tbl, term_t n)
{
    ctable *t = NULL;
    return get_table(tbl, &t) && PL_unify_int64(n, (int64_t)t->count);
}


		 /*******************************
		 *   A SEGMENT'S ARRIVALS AT ONCE *
		 *******************************/

static functor_t f_e3, f_triple3, f_at2, f_p6, f_shape3;
static atom_t a_gk, a_ar, a_lt, a_le, a_inf;

/* The pane of integer time tau: ((J-1)G, JG] holds it, or with origin
   (at(G, T0)) [T0 + (J-1)G, T0 + JG) (pane_of/3 of stream_panes.pl). */
static int
pane_of_int(int64_t tau, int64_t g, int at, int64_t t0, int64_t *j)
{
    if (at) {
        int64_t d;
        if (__builtin_sub_overflow(tau, t0, &d))
            return FALSE;
        int64_t q = d / g;
        if (d % g != 0 && d < 0)
            q--;                            /* floor */
        *j = q + 1;
    } else {
        int64_t q = tau / g;
        if (tau % g != 0 && tau > 0)
            q++;                            /* ceiling */
        *j = q;
    }
    return TRUE;
}

/* t := the group key or aggregate arguments of a match: Name (no
   arguments) or Name(X1, ...), each Xi the subject (1), the object (3)
   or 0, as pos[] says. */
static int
put_args(term_t t, atom_t name, const int *pos, int n, term_t s, term_t o, term_t args)
{
    if (n == 0)
        return PL_put_atom(t, name);
    for (int i = 0; i < n; i++) {
        if (!(pos[i] == 1 ? PL_put_term(args + i, s)
                          : pos[i] == 3 ? PL_put_term(args + i, o) : PL_put_int64(args + i, 0)))
            return FALSE;
    }
    return PL_cons_functor_v(t, PL_new_functor(name, (size_t)n), args);
}

/* A list of small integers 1, 3 or 0 (the positions of put_args). */
static int
get_positions(term_t l0, int *pos, int *n)
{
    term_t l = PL_copy_term_ref(l0), h = PL_new_term_ref();
    int v;
    *n = 0;
    while (PL_get_list(l, h, l)) {
        if (*n >= MAXAGG || !PL_get_integer(h, &v) || (v != 0 && v != 1 && v != 3))
            return FALSE;
        pos[(*n)++] = v;
    }
    return PL_get_nil(l);
}

/* Sort idx[0..n) by the standard order of keys[idx[i]] (a merge sort:
   stable, no global state). */
static void
sort_by_key(size_t *idx, size_t *tmp, size_t n, term_t keys)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_by_key(idx, tmp, h, keys);
    sort_by_key(idx + h, tmp, n - h, keys);
    if (PL_compare(keys + idx[h - 1], keys + idx[h]) <= 0)
        return;                         /* already in order: the common case */
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = PL_compare(keys + idx[i], keys + idx[j]) <= 0 ? idx[i++] : idx[j++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

/* part := In's matches (their group keys gks[0..n), aggregate arguments
   ars[0..n)) folded per group, GK-Acc in the order of GK (group_parts/3);
   none if an argument is not one pa_fold/3 keeps. */
static int
fold_in(term_t part, const int *ops, int k, term_t gks, term_t ars, size_t n, size_t *idx,
        size_t *tmp, term_t res, term_t scratch)
{
    /* res: n refs, scratch: 3, both made by the caller before it changed
       the table (so that no allocation here can fail after) */
    term_t x = scratch, tt = scratch + 1, t = scratch + 2;
    size_t m = 0;
    acc a;
    if (k == 0)
        return PL_put_atom_chars(part, "none");
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    sort_by_key(idx, tmp, n, gks);
    for (size_t i = 0; i < n;) {
        size_t first = idx[i];
        memset(&a, 0, sizeof a);
        do {
            for (int j = 0; j < k; j++) {
                if (ops[j] == OP_COUNT_STAR)
                    continue;
                if (!PL_get_arg(j + 1, ars + idx[i], x) || !add_arg(ops[j], x, &a.s[j], tt))
                    return PL_put_atom_chars(part, "none");
            }
            a.n++;
            i++;
        } while (i < n && PL_compare(gks + idx[i], gks + first) == 0);
        if (!put_acc(t, ops, k, &a) || !PL_cons_functor(res + m++, f_minus2, gks + first, t))
            return FALSE;
    }
    PL_put_variable(part);
    return make_list(part, res, m);
}

/* in := [] if part holds the fold, else the entries Key-GK-AR of keys[i],
   gks[i], ars[i] (i < n), for group_parts/3 in Prolog. */
static int
entries_if(term_t in, term_t part, term_t keys, term_t gks, term_t ars, size_t n, term_t es,
           term_t x)
{
    if (!PL_is_atom(part))
        return PL_unify_nil(in);
    for (size_t i = 0; i < n; i++) {
        if (!PL_cons_functor(x, f_minus2, keys + i, gks + i) ||
            !PL_cons_functor(es + i, f_minus2, x, ars + i))
            return FALSE;
    }
    return make_list(in, es, n);
}

/** pa_segment(+Shape, +Specs, +Table, +Width, +Seg, -Raw, -Panes): the arrivals
    of a segment (e(triple(S, P, O), T1, Tau) items, Tau nondecreasing)
    at a window whose match clause is exactly "the triple with predicate
    P, S and O distinct variables" (Shape shape(P, GKs, ARs): the group
    key gk(...) and the aggregate arguments ar(...) as positions, see
    put_args): Raw the distinct panes of the segment's time stamps, in
    order; Panes p(J, Keys, In, Moved, Rest, Part) per pane J with
    matches, in order: Keys the keys of the matches that enter pane J
    (new, or moved from an earlier pane: Moved, as pa_enter/6 gives it),
    Part their GK-AR folded per group for Specs (group_parts/3), or none
    where pa_fold/3 would fail and then In their entries Key-GK-AR ([]
    otherwise); Rest the matches that are not simple keys, for the trie.
    Fails, before it changes anything, unless every time stamp and the
    width are 64-bit integers (the Prolog code takes the segment then);
    out of room on the stacks, raises a resource error with the table as
    it was. */
static foreign_t
pa_segment(term_t shape, term_t specs, term_t tbl, term_t width, term_t seg, term_t raw,
           term_t panes)
{
    ctable *t = NULL;
    term_t a = PL_new_term_ref(), l = PL_new_term_ref(), h = PL_new_term_ref(),
           tr = PL_new_term_ref(), s = PL_new_term_ref(), p = PL_new_term_ref(),
           o = PL_new_term_ref(), tmp = PL_new_term_ref();
    atom_t pred, pa;
    int gpos[MAXAGG], apos[MAXAGG], ng, na, at = 0;
    int64_t g, t0 = 0, tau, j;

    if (!PL_is_functor(shape, f_shape3))
        return FALSE;
    _PL_get_arg(1, shape, a);
    if (!PL_get_atom(a, &pred))
        return FALSE;
    _PL_get_arg(2, shape, a);
    if (!get_positions(a, gpos, &ng))
        return FALSE;
    _PL_get_arg(3, shape, a);
    if (!get_positions(a, apos, &na))
        return FALSE;
    if (PL_is_functor(width, f_at2)) {
        at = 1;
        _PL_get_arg(1, width, a);
        if (!get_i64(a, &g))
            return FALSE;
        _PL_get_arg(2, width, a);
        if (!get_i64(a, &t0))
            return FALSE;
    } else if (!get_i64(width, &g))
        return FALSE;
    if (g <= 0 || !get_table(tbl, &t))
        return FALSE;
    int ops[MAXAGG], k;
    if (!get_specs(specs, ops, &k))
        k = 0;                          /* Part none */

    /* pass 1: the shape of every item, and the length */
    size_t n = 0;
    PL_put_term(l, seg);
    while (PL_get_list(l, h, l)) {
        if (!PL_is_functor(h, f_e3))
            return FALSE;
        _PL_get_arg(1, h, tr);
        if (!PL_is_functor(tr, f_triple3))
            return FALSE;
        _PL_get_arg(3, h, a);
        if (!get_i64(a, &tau) || !pane_of_int(tau, g, at, t0, &j))
            return FALSE;
        n++;
    }
    if (!PL_get_nil(l))
        return FALSE;

    /* pass 2: the matches, pane by pane */
    term_t rawv = PL_new_term_refs(n ? n : 1), panev = PL_new_term_refs(n ? n : 1);
    term_t ins = PL_new_term_refs(n ? n : 1), mvs = PL_new_term_refs(n ? n : 1),
           rst = PL_new_term_refs(n ? n : 1), gks = PL_new_term_refs(n ? n : 1),
           ars = PL_new_term_refs(n ? n : 1), fres = PL_new_term_refs(n ? n : 1),
           scratch = PL_new_term_refs(3);
    term_t key = PL_new_term_ref(), gk = PL_new_term_ref(), ar = PL_new_term_ref(),
           ent = PL_new_term_ref(), jo = PL_new_term_ref(), mv = PL_new_term_ref(),
           args = PL_new_term_refs(MAXAGG), pv = PL_new_term_refs(6);
    if (!rawv || !panev || !ins || !mvs || !rst || !gks || !ars || !fres || !scratch || !key ||
        !gk || !ar || !ent || !jo || !mv || !args || !pv)
        return FALSE;                   /* no room: a resource error (nothing changed) */
    size_t *idx = malloc(2 * (n ? n : 1) * sizeof *idx);
    change *log = malloc((n ? n : 1) * sizeof *log);
    size_t nlog = 0;
    if (!idx || !log) {
        free(idx);
        free(log);
        return memory_error();
    }
    size_t nraw = 0, npane = 0, nin = 0, nmv = 0, nrs = 0;
    int64_t lastraw = 0, cur = 0;
    int have_cur = 0;
    centry e;

#define FLUSH_PANE()                                                                     \
    do {                                                                                 \
        if (have_cur && (nin || nrs)) {                                                  \
            if (!PL_put_int64(pv, cur) || !make_list(pv + 1, ins, nin) ||                \
                !make_list(pv + 3, mvs, nmv) || !make_list(pv + 4, rst, nrs) ||          \
                !fold_in(pv + 5, ops, k, gks, ars, nin, idx, idx + n, fres, scratch) ||  \
                !entries_if(pv + 2, pv + 5, ins, gks, ars, nin, fres, scratch) ||        \
                !PL_cons_functor_v(panev + npane++, f_p6, pv))                           \
                goto fail;                                                               \
        }                                                                                \
        nin = nmv = nrs = 0;                                                             \
        for (int v_ = 1; v_ < 6; v_++)                                                   \
            PL_put_variable(pv + v_);                                                    \
    } while (0)

    PL_put_term(l, seg);
    while (PL_get_list(l, h, l)) {
        _PL_get_arg(3, h, a);
        get_i64(a, &tau);
        pane_of_int(tau, g, at, t0, &j);
        if (nraw == 0 || j != lastraw) {
            if (!PL_put_int64(rawv + nraw++, j))
                goto fail;
            lastraw = j;
        }
        _PL_get_arg(1, h, tr);
        _PL_get_arg(2, tr, p);
        if (!PL_get_atom(p, &pa) || pa != pred)
            continue;
        if (!have_cur || j != cur) {
            FLUSH_PANE();
            cur = j;
            have_cur = 1;
        }
        _PL_get_arg(1, tr, s);
        _PL_get_arg(3, tr, o);
        if (!PL_cons_functor(key, f_t3, s, p, o) ||
            !put_args(gk, a_gk, gpos, ng, s, o, args) ||
            !put_args(ar, a_ar, apos, na, s, o, args))
            goto fail;
        memset(&e, 0, sizeof e);
        if (!simple_key(key, &e, tmp)) {
            if (!PL_cons_functor(ent, f_minus2, key, gk) || !PL_cons_functor(ent, f_minus2, ent, ar) ||
                !PL_put_term(rst + nrs++, ent))
                goto fail;
            continue;
        }
        size_t i = find_slot(t, &e);
        if (t->slots[i].ok) {
            int64_t j0 = t->slots[i].pane;
            if (j0 == j)
                continue;
            t->slots[i].pane = j;
            log[nlog++] = (change){ e, j0, 0 };
            if (!PL_put_term(gks + nin, gk) || !PL_put_term(ars + nin, ar) ||
                !PL_put_term(ins + nin++, key) || !PL_put_int64(jo, j0) ||
                !PL_cons_functor(mv, f_minus2, gk, ar) ||
                !PL_cons_functor(mvs + nmv++, f_minus2, jo, mv))
                goto fail;
        } else {
            if (!table_put(t, &e, j))
                { memory_error(); goto fail; }
            log[nlog++] = (change){ e, 0, 1 };
            if (!PL_put_term(gks + nin, gk) || !PL_put_term(ars + nin, ar) ||
                !PL_put_term(ins + nin++, key))
                goto fail;
        }
    }
    FLUSH_PANE();
#undef FLUSH_PANE
    if (make_list(raw, rawv, nraw) && make_list(panes, panev, npane)) {
        free(idx);
        free(log);
        return TRUE;
    }
fail:
    undo_changes(t, log, nlog);
    free(idx);
    free(log);
    return FALSE;
}


/** pa_cut(+N, +Events, +Cmp, +Due, -Seg, -K, -Rest, -Last): the longest
    prefix Seg (K long, at most N) of Events (e(triple(S, P, O), T1, Tau)
    items, Tau nondecreasing) whose time stamps are before Due (Cmp <)
    or at or before it (Cmp =<), Rest what follows, Last the time stamp
    of Seg's last item (stream_window's segment/7 and last/2); fails,
    binding nothing, unless Due is an integer or infinite and every time
    stamp examined is an integer (64 bits), or if Seg is empty. */
static foreign_t
pa_cut(term_t nt, term_t events, term_t cmpt, term_t duet, term_t seg, term_t kt, term_t rest,
       term_t last)
{
    int64_t n, due = 0, tau, lastv = 0;
    double d;
    int inf = 0, strict;
    atom_t cmp;
    if (!get_i64(nt, &n) || !PL_get_atom(cmpt, &cmp))
        return FALSE;
    if (cmp == a_lt)
        strict = 1;
    else if (cmp == a_le)
        strict = 0;
    else
        return FALSE;
    if (PL_get_atom(duet, &cmp) && cmp == a_inf)
        inf = 1;                        /* the runtime's "nothing due" */
    else if (PL_is_float(duet)) {
        if (!PL_get_float(duet, &d) || !(isinf(d) && d > 0))       /* +inf only */
            return FALSE;
        inf = 1;
    } else if (!get_i64(duet, &due))
        return FALSE;
    term_t l = PL_copy_term_ref(events), h = PL_new_term_ref(), a = PL_new_term_ref(),
           tr = PL_new_term_ref(), here = PL_new_term_ref(), tail = PL_copy_term_ref(seg),
           item = PL_new_term_ref();
    if (!l || !h || !a || !tr || !here || !tail || !item)
        return FALSE;
    /* Seg made as it is walked (no array of N term references: N is the
       run's length, the events may be fewer; a failure undoes the binding) */
    size_t k = 0;
    while ((int64_t)k < n) {
        PL_put_term(here, l);
        if (!PL_get_list(l, h, l))
            break;
        if (!PL_is_functor(h, f_e3))
            return FALSE;
        _PL_get_arg(1, h, tr);
        if (!PL_is_functor(tr, f_triple3))
            return FALSE;
        _PL_get_arg(3, h, a);
        if (!get_i64(a, &tau))
            return FALSE;
        if (!inf && (strict ? !(tau < due) : !(tau <= due))) {
            PL_put_term(l, here);
            break;
        }
        if (!PL_unify_list(tail, item, tail) || !PL_unify(item, h))
            return FALSE;
        k++;
        lastv = tau;
    }
    if (k == 0)
        return FALSE;
    return PL_unify_nil(tail) && PL_unify_int64(kt, (int64_t)k) && PL_unify(rest, l) &&
           PL_unify_int64(last, lastv);
}

install_t
install_pane_accum(void)
{
    a_count_star = PL_new_atom("count_star");
    a_count = PL_new_atom("count");
    a_sum = PL_new_atom("sum");
    a_avg = PL_new_atom("avg");
    a_plus = PL_new_atom("plus");
    a_sub = PL_new_atom("sub");
    a_error = PL_new_atom("$error");
    a_u = PL_new_atom("$u");
    a_xsd_integer = PL_new_atom("http://www.w3.org/2001/XMLSchema#integer");
    a_xsd_decimal = PL_new_atom("http://www.w3.org/2001/XMLSchema#decimal");
    f_minus2 = PL_new_functor(PL_new_atom("-"), 2);
    f_i2 = PL_new_functor(PL_new_atom("i"), 2);
    f_n3 = PL_new_functor(PL_new_atom("n"), 3);
    f_agg3 = PL_new_functor(PL_new_atom("agg"), 3);
    atom_t acc_name = PL_new_atom("acc"), av_name = PL_new_atom("av");
    for (int i = 1; i <= MAXAGG + 1; i++)
        f_acc[i] = PL_new_functor(acc_name, (size_t)i);
    for (int i = 1; i <= MAXAGG; i++)
        f_av[i] = PL_new_functor(av_name, (size_t)i);
    PL_register_foreign_in_module("stream_panes", "pa_merge", 5, pa_merge, 0);
    PL_register_foreign_in_module("stream_panes", "pa_merge3", 5, pa_merge3, 0);
    PL_register_foreign_in_module("stream_panes", "pa_fold", 3, pa_fold, 0);
    PL_register_foreign_in_module("stream_panes", "pa_values", 3, pa_values, 0);
    f_t3 = PL_new_functor(PL_new_atom("t"), 3);
    PL_register_foreign_in_module("stream_panes", "pa_table_new", 1, pa_table_new, 0);
    PL_register_foreign_in_module("stream_panes", "pa_enter", 6, pa_enter, 0);
    PL_register_foreign_in_module("stream_panes", "pa_forget", 4, pa_forget, 0);
    PL_register_foreign_in_module("stream_panes", "pa_lookup", 3, pa_lookup, 0);
    PL_register_foreign_in_module("stream_panes", "pa_put", 3, pa_put, 0);
    PL_register_foreign_in_module("stream_panes", "pa_count", 2, pa_count, 0);
    PL_register_foreign_in_module("stream_panes", "pa_dump", 2, pa_dump, 0);
    f_e3 = PL_new_functor(PL_new_atom("e"), 3);
    f_triple3 = PL_new_functor(PL_new_atom("triple"), 3);
    f_at2 = PL_new_functor(PL_new_atom("at"), 2);
    f_p6 = PL_new_functor(PL_new_atom("p"), 6);
    f_shape3 = PL_new_functor(PL_new_atom("shape"), 3);
    a_gk = PL_new_atom("gk");
    a_ar = PL_new_atom("ar");
    a_lt = PL_new_atom("<");
    a_le = PL_new_atom("=<");
    a_inf = PL_new_atom("inf");
    PL_register_foreign_in_module("stream_panes", "pa_cut", 8, pa_cut, 0);
    PL_register_foreign_in_module("stream_panes", "pa_segment", 7, pa_segment, 0);
}
