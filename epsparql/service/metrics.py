"""The service's counters in Prometheus' text exposition format (``GET /metrics``)."""
from __future__ import annotations

from typing import Any

__all__ = ["prometheus_text"]


def _label(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus_text(room: Any, hub: Any, refused: int) -> str:
    """Every counter and gauge, one ``# HELP``/``# TYPE`` block each."""
    out: list[str] = []

    def metric(name: str, kind: str, help_: str, samples: list[tuple[str, Any]]) -> None:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} {kind}")
        for labels, v in samples:
            out.append(f"{name}{labels} {v}")

    deps = list(room.deployments.values())

    def per(fn: Any) -> list[tuple[str, Any]]:
        return [(f'{{deployment="{_label(d.spec.name)}"}}', fn(d)) for d in deps]

    metric("epsparql_events_total", "counter", "Events (rows) taken in.", [("", room.events)])
    metric("epsparql_inputs_total", "counter", "Inputs (HTTP batches, MQTT messages) taken in.",
           [("", room.inputs)])
    metric("epsparql_late_events_total", "counter",
           "Events that came later than the allowed lateness (not processed).",
           [("", room.late)])
    metric("epsparql_malformed_lines_total", "counter", "Input lines skipped as malformed.",
           [("", room.malformed)])
    metric("epsparql_answers_total", "counter", "Answers given, all deployments.",
           [("", room.answers)])
    metric("epsparql_queue_depth", "gauge", "Inputs waiting for the engine room.",
           [("", room.queued)])
    metric("epsparql_deployments", "gauge", "Deployments registered.", [("", len(deps))])
    metric("epsparql_deployment_events_total", "counter", "Events fed to a deployment.",
           per(lambda d: d.events))
    metric("epsparql_deployment_answers_total", "counter", "Answers a deployment gave.",
           per(lambda d: d.answers))
    metric("epsparql_deployment_late_events_total", "counter",
           "Events a deployment could not process (late).", per(lambda d: d.late))
    metric("epsparql_deployment_running", "gauge", "1 if the deployment is fed, else 0.",
           per(lambda d: int(d.running)))
    metric("epsparql_subscribers", "gauge", "Connected answer subscribers.",
           per(lambda d: hub.count(d.spec.name)))
    metric("epsparql_subscribers_dropped_total", "counter",
           "Subscribers dropped for falling too far behind.", [("", hub.dropped)])
    metric("epsparql_requests_refused_total", "counter",
           "Requests refused (authentication, limits, bad input).", [("", refused)])
    mqtt = getattr(room, "mqtt", None)    # the MQTT bridge, when there is one
    if mqtt is not None:
        metric("epsparql_mqtt_connected", "gauge", "1 while connected to the MQTT broker.",
               [("", int(mqtt.connected))])
        metric("epsparql_mqtt_messages_total", "counter", "MQTT messages received.",
               [("", mqtt.received)])
        metric("epsparql_mqtt_duplicates_total", "counter",
               "Redelivered MQTT messages already logged (not taken again).",
               [("", mqtt.duplicates)])
        metric("epsparql_mqtt_answers_published_total", "counter",
               "Answers handed to the MQTT broker.", [("", mqtt.published)])
        metric("epsparql_mqtt_answers_dropped_total", "counter",
               "Answers not published to MQTT: the broker gone or too slow.",
               [("", mqtt.dropped)])
    try:                                  # Linux: resident pages of this process
        import os
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        rss = None
    if rss is not None:
        metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
               [("", rss)])
    return "\n".join(out) + "\n"
