/*  Operators of the event rule language.

    Kept in a module of their own so that the compiler, the reader of rule
    files and rule text, and user modules all see the same table.
    Lower priority binds tighter:

        Head <- Body                 1200 xfx
        P within Seconds             1095 yfx   (time window of P)
        P where Condition            1090 xfx   (Prolog condition)
        P or Q                       1080 yfx
        P and Q                      1070 yfx
        P par Q                      1060 yfx
        P cnot E                     1055 yfx   (P with no E inside it)
        P seq Q                      1050 yfx
        P equals|meets|during|starts|finishes Q   1040 yfx

    All binary operators are left-associative, so `a seq b seq c` reads as
    `(a seq b) seq c`: the left-associative binarisation of the
    specification.
*/
:- module(ep_ops, [ ep_op/3 ]).

%!  ep_op(?Priority, ?Type, ?Name) is nondet.
%
%   The operator table of the event rule language.
ep_op(1200, xfx, <-).
ep_op(1095, yfx, within).
ep_op(1090, xfx, where).
ep_op(1080, yfx, or).
ep_op(1070, yfx, and).
ep_op(1060, yfx, par).
ep_op(1055, yfx, cnot).
ep_op(1050, yfx, seq).
ep_op(1040, yfx, equals).
ep_op(1040, yfx, meets).
ep_op(1040, yfx, during).
ep_op(1040, yfx, starts).
ep_op(1040, yfx, finishes).
