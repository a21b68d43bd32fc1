"""RDF terms for the Prolog core: the rdflib <-> Prolog term codec."""
from .codec import (canonical_double, decode, encode, encode_seconds_as_datetime,
                    encode_seconds_as_duration)

__all__ = ["encode", "decode", "canonical_double", "encode_seconds_as_datetime",
           "encode_seconds_as_duration"]
