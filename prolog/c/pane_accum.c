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
        pa_fold(+Specs, +Pairs, -Parts)         fold_groups/3 (Sign 1)
        pa_values(+Specs, +Pairs, -Groups)      maplist(group_values(Specs), ...)
*/
#include <SWI-Prolog.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXAGG 16

enum { OP_COUNT_STAR, OP_COUNT, OP_SUM, OP_AVG };

static atom_t a_count_star, a_count, a_sum, a_avg, a_plus, a_sub, a_error, a_u, a_xsd_integer,
    a_xsd_decimal;
static functor_t f_minus2, f_i2, f_n3, f_agg3;

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
get_acc(term_t t, const int *ops, int k, acc *a)
{
    atom_t name;
    size_t arity;
    term_t x = PL_new_term_ref(), y = PL_new_term_ref();
    if (!PL_get_name_arity(t, &name, &arity) || arity != (size_t)k + 1)
        return FALSE;
    if (!PL_get_arg(1, t, x) || !get_i64(x, &a->n))
        return FALSE;
    for (int j = 0; j < k; j++) {
        if (!PL_get_arg(j + 2, t, x))
            return FALSE;
        if (ops[j] == OP_SUM || ops[j] == OP_AVG) {
            if (!PL_is_functor(x, f_i2) || !PL_get_arg(1, x, y) || !get_i64(y, &a->s[j].c) ||
                !PL_get_arg(2, x, y) || !get_i64(y, &a->s[j].i))
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
static functor_t f_acc[MAXAGG + 2];

static int
put_acc(term_t t, const int *ops, int k, const acc *a)
{
    term_t args = PL_new_term_refs(k + 1);
    term_t c = PL_new_term_ref(), i = PL_new_term_ref();
    if (!PL_put_int64(args, a->n))
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
    term_t lx = PL_copy_term_ref(xs), ly = PL_copy_term_ref(ys);
    term_t hx = PL_new_term_ref(), hy = PL_new_term_ref();
    term_t kx = PL_new_term_ref(), ky = PL_new_term_ref();
    term_t ax = PL_new_term_ref(), ay = PL_new_term_ref(), t = PL_new_term_ref();
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
            if (!PL_is_functor(hx, f_minus2) || !PL_is_functor(hy, f_minus2) ||
                !PL_get_arg(1, hx, kx) || !PL_get_arg(1, hy, ky))
                return FALSE;
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
            if (!PL_get_arg(2, hx, ax) || !PL_get_arg(2, hy, ay) || !get_acc(ax, ops, k, &x) ||
                !get_acc(ay, ops, k, &y) || !combine(ops, k, &x, &y, sign, &r))
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

/** pa_fold(+Specs, +Pairs, -Parts): fold_groups/3 (Pairs GK-AR sorted by
    GK) for the common accumulators; fails otherwise. */
static foreign_t
pa_fold(term_t specs, term_t pairs, term_t out)
{
    int ops[MAXAGG], k;
    if (!get_specs(specs, ops, &k))
        return FALSE;
    size_t cap = list_length(pairs);
    term_t res = PL_new_term_refs(cap ? cap : 1);
    size_t n = 0;
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
    const __int128 P = (__int128)1000000000000000000LL;
    unsigned __int128 a = sum < 0 ? (unsigned __int128)(-(__int128)sum) : (unsigned __int128)sum;
    if (count <= 0 || a >= ((unsigned __int128)1 << 62))
        return FALSE;
    unsigned __int128 s = (2 * a * (unsigned __int128)P + (unsigned __int128)count) /
                          (2 * (unsigned __int128)count);
    unsigned __int128 ip = s / (unsigned __int128)P;
    uint64_t fr = (uint64_t)(s % (unsigned __int128)P);
    if (ip > (unsigned __int128)UINT64_MAX)
        return FALSE;
    char frac[19];
    if (fr == 0)
        strcpy(frac, "0");
    else {
        snprintf(frac, sizeof frac, "%018llu", (unsigned long long)fr);
        for (int d = 17; d > 0 && frac[d] == '0'; d--)
            frac[d] = 0;
    }
    int w = snprintf(buf, size, "%s%llu.%s", (s != 0 && sum < 0) ? "-" : "",
                     (unsigned long long)ip, frac);
    return w > 0 && (size_t)w < size;
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
    if (!get_specs(specs, ops, &k))
        return FALSE;
    size_t cap = list_length(pairs);
    term_t res = PL_new_term_refs(cap ? cap : 1);
    size_t n = 0;
    term_t l = PL_copy_term_ref(pairs), h = PL_new_term_ref();
    term_t gk = PL_new_term_ref(), at = PL_new_term_ref(), av = PL_new_term_ref();
    term_t vs = PL_new_term_refs(k);
    acc a;

    while (PL_get_list(l, h, l)) {
        if (n >= cap || !PL_is_functor(h, f_minus2) || !PL_get_arg(1, h, gk) ||
            !PL_get_arg(2, h, at) || !get_acc(at, ops, k, &a))
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
    PL_register_foreign_in_module("stream_panes", "pa_fold", 3, pa_fold, 0);
    PL_register_foreign_in_module("stream_panes", "pa_values", 3, pa_values, 0);
}
