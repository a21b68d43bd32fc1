"""RDF terms for the Prolog core: the rdflib <-> Prolog term codec."""
from .codec import (decode, encode, encode_seconds_as_datetime,
                    encode_seconds_as_duration)

__all__ = ["encode", "decode", "encode_seconds_as_datetime",
           "encode_seconds_as_duration"]
