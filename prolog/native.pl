/*  The project's C parts (the .c files of prolog/c), built on first use.

    A foreign library is compiled from its source with the C compiler
    (CC, else cc) against the headers of the SWI-Prolog that runs, into a
    cache directory (EPSPARQL_NATIVE_DIR, else ~/.cache/epsparql/native),
    under a name made of the library's name, the SWI-Prolog version and
    architecture and a hash of the source (and of EPSPARQL_NATIVE_CFLAGS
    when set): a changed source, another SWI-Prolog or other flags (a
    sanitizer build: docs/CORE.md) gets its own build, an unchanged one is
    loaded as it is, whatever CC says then.  CC may be a command on the
    PATH or a file name.
    The build writes a temporary file and renames it, so processes that
    start together (Spark's workers, pytest-xdist) never load half a file.
    scripts/setup.sh builds it once, so a first run does not wait.
*/
:- module(native, [native_library/2]).
:- use_module(library(process), [process_create/3, process_wait/2]).
:- use_module(library(readutil), [read_stream_to_codes/2, read_file_to_codes/3]).
:- use_module(library(sha), [sha_hash/3, hash_atom/2]).
:- use_module(library(apply), [exclude/3, maplist/3]).
:- use_module(library(lists), [append/3]).

:- dynamic built/2.

%!  native_library(+Name, -Path) is det.
%
%   Path is the shared object of prolog/c/Name.c for this SWI-Prolog,
%   built now when it is not there.  Raises an error naming the compiler's
%   output when the build fails.
native_library(Name, Path) :-
    built(Name, Path0), !,
    Path = Path0.
native_library(Name, Path) :-
    source_file(native_library(_, _), Here),
    file_directory_name(Here, Dir),
    atomic_list_concat([Dir, '/c/', Name, '.c'], Source),
    read_file_to_codes(Source, Codes, []),
    current_prolog_flag(version, V),
    current_prolog_flag(arch, Arch),
    compiler(_, Flags),
    (   Flags == []                     % the plain build: its key as before
    ->  format(codes(Key), "~w ~w ~s", [V, Arch, Codes])
    ;   format(codes(Key), "~w ~w ~s ~q", [V, Arch, Codes, Flags])
    ),
    sha_hash(Key, Hash, []),
    hash_atom(Hash, Hex),
    sub_atom(Hex, 0, 16, _, Short),
    cache_dir(Cache),
    current_prolog_flag(shared_object_extension, Ext),
    atomic_list_concat([Cache, '/', Name, '-', V, '-', Arch, '-', Short, '.', Ext], Path1),
    (   exists_file(Path1) -> true ; build(Source, Cache, Path1) ),
    assertz(built(Name, Path1)),
    Path = Path1.

cache_dir(Dir) :-
    (   getenv('EPSPARQL_NATIVE_DIR', D), D \== ''
    ->  Dir = D
    ;   getenv('XDG_CACHE_HOME', X), X \== ''
    ->  atom_concat(X, '/epsparql/native', Dir)
    ;   getenv('HOME', H)
    ->  atom_concat(H, '/.cache/epsparql/native', Dir)
    ;   tmp_file(epsparql_native, Dir)
    ),
    make_directory_path(Dir).

%   compiler(-CC, -Flags): $CC (else cc) and the words of
%   $EPSPARQL_NATIVE_CFLAGS (e.g. -fsanitize=address -g), added to the
%   build's own flags.
compiler(CC, Flags) :-
    (   getenv('CC', CC0), CC0 \== '' -> CC = CC0 ; CC = cc ),
    (   getenv('EPSPARQL_NATIVE_CFLAGS', F), F \== ''
    ->  split_string(F, " \t", " \t", Fs0),
        exclude(==(""), Fs0, Fs1),
        maplist(atom_string, Flags, Fs1)
    ;   Flags = []
    ).

build(Source, Dir, Path) :-
    compiler(CC, Flags),
    (   sub_atom(CC, _, _, _, '/') -> Exe = CC ; Exe = path(CC) ),
    current_prolog_flag(home, Home),
    atom_concat(Home, '/include', Inc),
    atom_concat('-I', Inc, IncFlag),
    current_prolog_flag(pid, Pid),
    temp_name(Dir, Pid, Tmp1),
    % a call of an undeclared function is an error here, not a process
    % killed by the dynamic linker when the call first runs
    append(['-shared', '-fPIC', '-O2', '-Wall', '-Werror=implicit-function-declaration'|Flags],
           [IncFlag, '-o', Tmp1, Source], Args),
    catch(process_create(Exe, Args, [stderr(pipe(Err)), process(P)]), E,
          throw(error(native_build(CC, Source, E), _))),
    read_stream_to_codes(Err, Out),
    close(Err),
    process_wait(P, Status),
    (   Status == exit(0)
    ->  rename_file(Tmp1, Path)
    ;   catch(delete_file(Tmp1), _, true),
        string_codes(Msg, Out),
        throw(error(native_build(CC, Source, Status, Msg), _))
    ).

temp_name(Dir, Pid, Tmp) :-
    get_time(T),
    format(atom(Tmp), "~w/.build-~w-~0f.tmp", [Dir, Pid, T*1000000]).

:- multifile prolog:error_message//1.
prolog:error_message(native_build(CC, Source, exit(N), Msg)) -->
    [ 'could not build ~w with ~w (exit ~w): ~w'-[Source, CC, N, Msg] ].
prolog:error_message(native_build(CC, Source, Status, Msg)) -->
    [ 'could not build ~w with ~w (~w): ~w'-[Source, CC, Status, Msg] ].
prolog:error_message(native_build(CC, Source, E)) -->
    [ 'could not run the C compiler ~w to build ~w (set CC, or install gcc): '-[CC, Source] ],
    '$messages':translate_message(E).
