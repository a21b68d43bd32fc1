/*  The e/3 items of a batch of stream triples (bridge_python.pl's
    triple_rows_batch/3), in C, for the common batch.

    Why: the windows' arrivals come as janus data, five lists of a batch's
    rows (subject, predicate and object places in the batch's term table,
    or the objects themselves as lit(Value), and the times); making each
    row's e(triple(S, P, O), T1, T2) in Prolog took about 15 inferences a
    row, a tenth of what the windowed benchmark's count spends per event.

    triple_rows_c(+Ss, +Ps, +Os, +T1s, +T2s, +Table, -Batch) builds the
    items when every place is an integer within Table's arity, every
    object a place or lit(X), and every time an integer (an exact time as
    it is); it fails, binding nothing, on anything else (a float time to
    make exact, a bad place, lists of different lengths), and the Prolog
    code then does the batch, with its errors naming the place.
*/
#include <SWI-Prolog.h>
#include <stdint.h>

static functor_t f_e3, f_triple3, f_lit1;

static int
place(term_t table, size_t arity, term_t id, term_t out)
{
    int64_t i;
    if (!PL_is_integer(id) || !PL_get_int64(id, &i) || i < 1 || (uint64_t)i > arity)
        return FALSE;
    _PL_get_arg((size_t)i, table, out);
    return TRUE;
}

/** triple_rows_c(+Ss, +Ps, +Os, +T1s, +T2s, +Table, -Batch) */
static foreign_t
triple_rows_c(term_t ss, term_t ps, term_t os, term_t t1s, term_t t2s, term_t table,
              term_t batch)
{
    atom_t name;
    size_t arity;
    if (!PL_get_name_arity(table, &name, &arity))
        return FALSE;
    term_t l[5] = { PL_copy_term_ref(ss), PL_copy_term_ref(ps), PL_copy_term_ref(os),
                    PL_copy_term_ref(t1s), PL_copy_term_ref(t2s) };
    term_t h = PL_new_term_refs(5);
    term_t s = PL_new_term_ref(), p = PL_new_term_ref(), o = PL_new_term_ref();
    term_t tail = PL_copy_term_ref(batch), item = PL_new_term_ref();
    for (;;) {
        int more = PL_get_list(l[0], h, l[0]);
        for (int k = 1; k < 5; k++) {
            if (PL_get_list(l[k], h + k, l[k]) != more)
                return FALSE;
        }
        if (!more)
            break;
        if (!place(table, arity, h, s) || !place(table, arity, h + 1, p))
            return FALSE;
        if (PL_is_functor(h + 2, f_lit1))
            _PL_get_arg(1, h + 2, o);
        else if (!place(table, arity, h + 2, o))
            return FALSE;
        if (!PL_is_integer(h + 3) || !PL_is_integer(h + 4))
            return FALSE;               /* a float time: made exact in Prolog */
        if (!PL_unify_list(tail, item, tail) ||
            !PL_unify_term(item, PL_FUNCTOR, f_e3,
                             PL_FUNCTOR, f_triple3, PL_TERM, s, PL_TERM, p, PL_TERM, o,
                             PL_TERM, h + 3, PL_TERM, h + 4))
            return FALSE;
    }
    for (int k = 0; k < 5; k++) {
        if (!PL_get_nil(l[k]))
            return FALSE;
    }
    return PL_unify_nil(tail);
}

install_t
install_rows_batch(void)
{
    f_e3 = PL_new_functor(PL_new_atom("e"), 3);
    f_triple3 = PL_new_functor(PL_new_atom("triple"), 3);
    f_lit1 = PL_new_functor(PL_new_atom("lit"), 1);
    PL_register_foreign_in_module("bridge_python", "triple_rows_c", 7, triple_rows_c, 0);
}
