"""Stream input and answer output for epsparql.

Streams (rows ``(s, p, o, start, end)`` of rdflib terms and seconds):

    from epsparql.io import read_stream, write_stream
    for chunk in ...: engine.push_many(rows)      # rows = read_stream("events.nt")
    write_stream(rows, "copy.jsonl", "jsonl")

Formats: ``nt`` (N-Triples with times), ``jsonl``, ``csv`` -- see
docs/CLI.md.  Answers: :func:`answer_writer` / :func:`write_answers` in
``jsonl``, ``csv``, ``sparql-json``, ``nt`` (CONSTRUCT triples) and
``table``; :func:`to_arrow` (pyarrow) and :func:`to_dataframe` (pandas).
"""
from .arrow import to_arrow
from .dataframe import to_dataframe
from .results import (OUTPUT_FORMATS, AnswerWriter, CsvWriter, JsonLinesWriter,
                      NTriplesWriter, SparqlJsonWriter, TableWriter, answer_from_json,
                      answer_to_json, answer_writer, read_answers, read_answers_csv,
                      write_answers)
from .streams import (FORMATS, StreamFormatError, StreamHeaderError, StreamReader,
                      StreamWriter, guess_format, read_stream, write_stream)
from ..rdf.ntriples import format_term, parse_term
from ..rdf.sparql_json import term_from_json, term_to_json
from ..times import format_time, parse_time

__all__ = [
    "FORMATS", "StreamFormatError", "StreamHeaderError", "StreamReader", "StreamWriter",
    "read_stream", "write_stream", "guess_format", "parse_term", "format_term", "parse_time", "format_time",
    "term_to_json", "term_from_json",
    "OUTPUT_FORMATS", "AnswerWriter", "JsonLinesWriter", "CsvWriter", "SparqlJsonWriter",
    "NTriplesWriter", "TableWriter", "answer_writer", "write_answers", "answer_to_json",
    "answer_from_json", "read_answers", "read_answers_csv",
    "to_arrow", "to_dataframe",
]
