"""Rebuild the slice of CityBench's data in stream/ and background/ from a
checkout of CityBench/Benchmark (commit 8884af6), as CityBench's feeders
turn its CSV files into RDF.

    .venv/bin/python examples/citybench/make_stream.py CITYBENCH_CHECKOUT [SECONDS]

The streams are those the queries in csparql/ and cqels/ name.  CityBench
run at ``rate=1.0 frequency=1.0`` (its sample scripts, from
``startDate=2014-08-11T11:00:00``) pushes one observation of each stream
a second, the rows of the stream's file whose time stamp lies in
[startDate, endDate], in file order; here the i-th of them is at second i,
for the first SECONDS (default 24) of each stream.  Each observation is
written as ``getStatements`` of the feeder (``io/streams/csparql/*``)
writes it: per observed property of the sensor (``ssn:observes`` in
SensorRepository.n3) an ``ssn:Observation`` with ``ssn:observedBy``,
``ssn:observedProperty`` and ``sao:hasValue`` (a Jena typed literal: a
double, or a long for the integers); its IRI is the feeder's prefix and
id followed by a UUID, here a name-based one so that every run writes
the same bytes.  The user location's value is a blank node with
``ct:hasLatitude``/``ct:hasLongitude``.  The quirks are kept: the weather
and pollution ids are ``…Observation-0`` (``(int) Math.random() * 1000``),
a traffic feeder never sends the first row of its file.

The background is the part of the static data the queries read: from
SensorRepository.n3 the description of each streamed sensor, of the
properties it observes and of their features of interest; the first
EVENTS events (by IRI) of AarhusCulturalEvents.n3 and AarhusLibraryEvents.n3
with their feature of interest and its node.  Blank nodes are named
b0, b1, … in order of appearance, lines sorted: the same bytes on every run.
"""
from __future__ import annotations

import csv
import gzip
import re
import sys
import uuid
from collections.abc import Iterator
from datetime import datetime
from itertools import islice
from pathlib import Path

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD

HERE = Path(__file__).resolve().parent
PREFIX = "http://www.insight-centre.org/dataset/SampleEventService#"
SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
SAO = "http://purl.oclc.org/NET/sao/"
CT = "http://www.insight-centre.org/citytraffic#"
START, END = datetime(2014, 8, 11, 11, 0, 0), datetime(2014, 8, 31, 11, 0, 0)
SECONDS = 24                   # the first close of a 20-second window is at 20 s
EVENTS = 10
#: the fixed feature of interest CSPARQLLocationStream gives every location
LOCATION_FOI = ("http://iot.ee.surrey.ac.uk/citypulse/datasets/aarhusculturalevents/"
                "culturalEvents_aarhus#context_do63jk2t8c3bjkfb119ojgkhs7")


def stream_iris() -> list[str]:
    """Every stream IRI the vendored queries name, sorted."""
    out = set()
    for q in list((HERE / "csparql").glob("*.rq")) + list((HERE / "cqels").glob("*.rq")):
        out.update(re.findall(r"stream\s*<(" + re.escape(PREFIX) + r"[^>]+)>",
                              q.read_text(encoding="utf-8"), flags=re.IGNORECASE))
    return sorted(out)


def in_range(text: str, fmt: str) -> bool:
    t = datetime.strptime(text[:19], fmt)      # SimpleDateFormat.parse ignores the rest
    return START <= t <= END


def in_time(rows: list[dict], column: str, fmt: str) -> Iterator[dict]:
    """The rows whose ``column`` time is in [START, END], at most SECONDS
    of them (the feeders skip the others, and the run stops after SECONDS)."""
    return islice((r for r in rows if in_range(r[column], fmt)), SECONDS)


def jena(value: float) -> Literal:
    """Jena's ``addLiteral``: a Java double as xsd:double, an int as xsd:long."""
    if isinstance(value, float):
        return Literal(repr(value).replace("inf", "INF"), datatype=XSD.double)
    return Literal(str(value), datatype=XSD.long)


def observations(checkout: Path, iri: str, sensors: Graph) -> list[tuple[str, dict]]:
    """The first SECONDS observations the feeder of ``iri`` sends: (id, {property: value})."""
    name = iri.split("#")[1]
    props = sorted(str(p) for p in sensors.objects(URIRef(iri), URIRef(SSN + "observes")))
    kinds = {p: " ".join(str(t) for t in sensors.objects(URIRef(p), RDF.type)) for p in props}
    path = checkout / "streams" / f"{name}.stream"
    out: list[tuple[str, dict]] = []
    if name == "UserLocationService":
        for line in path.read_text(encoding="utf-8").splitlines()[:SECONDS]:
            lat, lon = (float(x) for x in line.split("|")[1].split(","))
            out.append(("UserLocationObservation-0", {props[0]: (lat, lon)}))
        return out
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if name.startswith("AarhusTraffic"):
        report = rows[0]["REPORT_ID"]
        with open(checkout / "dataset" / "MetaData" / "trafficMetaData.csv", newline="",
                  encoding="utf-8") as m:
            distance = float(int(next(r for r in csv.DictReader(m)
                                      if r["REPORT_ID"] == report)["DISTANCE_IN_METERS"]))
        # (the feeder's constructor has read the first row)
        for r in in_time(rows[1:], "TIMESTAMP", "%Y-%m-%dT%H:%M:%S"):
            speed, count = float(r["avgSpeed"]), float(r["vehicleCount"])
            values = {"AvgSpeed": speed, "VehicleCount": count,
                      "MeasuredTime": float(r["avgMeasuredTime"]),
                      "EstimatedTime": distance / speed if speed != 0 else -1.0,
                      "CongestionLevel": count / distance if distance != 0 else -1.0}
            out.append((f"AarhusTrafficObservation-{r['_id']}", by_kind(props, kinds, values)))
    elif name.startswith("AarhusPollution"):
        for r in in_time(rows, "timestamp", "%Y-%m-%d %H:%M:%S"):
            api = max(int(r[k]) for k in ("ozone", "particullate_matter", "carbon_monoxide",
                                          "sulfure_dioxide", "nitrogen_dioxide"))
            out.append(("AarhusPollutionObservation-0", {p: api for p in props}))
    elif name.startswith("AarhusWeather"):
        for r in in_time(rows, "TIMESTAMP", "%Y-%m-%dT%H:%M:%S"):
            values = {"Temperature": float(r["tempm"]), "Humidity": int(r["hum"]),
                      "WindSpeed": float(r["wspdm"])}
            out.append(("AarhusWeatherObservation-0", by_kind(props, kinds, values)))
    elif name.startswith("AarhusParking"):
        for r in in_time(rows, "updatetime", "%Y-%m-%d %H:%M:%S"):
            vacancies = int(r["totalspaces"]) - int(r["vehiclecount"])
            out.append((f"AarhusParkingObservation-{r['_id']}", {props[0]: vacancies}))
    else:
        raise SystemExit(f"no feeder for {iri}")
    return out[:SECONDS]


def by_kind(props: list[str], kinds: dict[str, str], values: dict) -> dict:
    """The value of each property, by the name in its type (as the feeders'
    ``pStr.contains("AvgSpeed")``); a property of no known kind (a traffic
    sensor's ``ct:MeasureTime``: the feeder looks for "MeasuredTime") gets
    an observation without ``sao:hasValue``."""
    return {p: next((v for k, v in values.items() if k in kinds[p]), None) for p in props}


def stream_lines(checkout: Path, sensors: Graph) -> list[str]:
    rows: list[tuple[int, str]] = []
    for iri in stream_iris():
        for i, (obid, values) in enumerate(observations(checkout, iri, sensors)):
            for p, v in sorted(values.items(), key=lambda pv: pv[0]):
                ob = URIRef(PREFIX + obid + str(uuid.uuid5(uuid.NAMESPACE_URL, f"{iri}/{i}/{p}")))
                triples = [(ob, RDF.type, URIRef(SSN + "Observation")),
                           (ob, URIRef(SSN + "observedBy"), URIRef(iri)),
                           (ob, URIRef(SSN + "observedProperty"), URIRef(p))]
                if isinstance(v, tuple):
                    loc = BNode(f"loc{i}")
                    triples += [(ob, URIRef(SSN + "featureOfInterest"), URIRef(LOCATION_FOI)),
                                (ob, URIRef(SAO + "hasValue"), loc),
                                (loc, URIRef(CT + "hasLatitude"), jena(v[0])),
                                (loc, URIRef(CT + "hasLongitude"), jena(v[1]))]
                elif v is not None:
                    triples.append((ob, URIRef(SAO + "hasValue"), jena(v)))
                rows += [(i, f"{s.n3()} {pr.n3()} {o.n3()} <{iri}> {i} .\n") for s, pr, o in triples]
    return [line for _, line in sorted(rows)]


def describe(g: Graph, roots: list, out: Graph) -> None:
    """Add the triples of ``roots`` and of the blank nodes they reach."""
    todo = list(roots)
    while todo:
        s = todo.pop()
        for p, o in g.predicate_objects(s):
            if (s, p, o) not in out:
                out.add((s, p, o))
                if isinstance(o, BNode):
                    todo.append(o)


def ntriples(g: Graph) -> str:
    """Sorted N-Triples, blank nodes renamed b0, b1, … by first appearance."""
    names: dict = {}

    def term(t) -> str:
        if isinstance(t, BNode):
            return "_:" + names.setdefault(t, f"b{len(names)}")
        return t.n3()
    key = lambda tr: tuple(("~" if isinstance(x, BNode) else "") + x.n3() for x in tr)
    return "".join(sorted(f"{term(s)} {term(p)} {term(o)} .\n" for s, p, o in sorted(g, key=key)))


def background(checkout: Path, sensors: Graph) -> dict[str, str]:
    ds = checkout / "dataset"
    sr = Graph()
    for iri in stream_iris():
        s = URIRef(iri)
        describe(sensors, [s], sr)
        for p in sensors.objects(s, URIRef(SSN + "observes")):
            describe(sensors, [p], sr)
            describe(sensors, list(sensors.objects(p, URIRef(SSN + "isPropertyOf"))), sr)
    out = {"SensorRepository.nt": ntriples(sr)}
    for name in ("AarhusCulturalEvents", "AarhusLibraryEvents"):
        g = Graph().parse(ds / f"{name}.n3", format="n3")
        events = sorted(set(g.subjects(URIRef(SSN + "featureOfInterest"), None)))[:EVENTS]
        sl = Graph()
        describe(g, events, sl)
        describe(g, [f for e in events for f in g.objects(e, URIRef(SSN + "featureOfInterest"))], sl)
        out[f"{name}.nt"] = ntriples(sl)
    return out


def main(checkout: str, seconds: int = SECONDS) -> None:
    global SECONDS
    SECONDS = seconds
    root = Path(checkout)
    sensors = Graph().parse(root / "dataset" / "SensorRepository.n3", format="n3")
    with open(HERE / "stream" / "citybench.nqt.gz", "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
        f.write("".join(stream_lines(root, sensors)).encode("utf-8"))
    for name, text in background(root, sensors).items():
        (HERE / "background" / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:3]))
