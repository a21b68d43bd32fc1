"""Generate the bundled buoy stream (buoy.csv) with planted tsunami-like events.

A DART-style bottom-pressure recorder reports the water-column height above
it every 15 seconds.  This synthetic record covers two days:

* mean depth 4 500 m (heights are in millimetres, as the NDBC threshold is);
* tides: a semidiurnal (M2, 12.42 h) and a diurnal (K1, 23.93 h) sine;
* a slow, smooth 150 mm surge over six hours (weather; must *not* alarm);
* white noise, sigma 3 mm;
* three planted tsunami-like events: a damped 20-minute oscillation of a
  few hundred millimetres starting abruptly at the planted onset (one of
  them with a leading depression, i.e. the sea first falls).

Deterministic (seeded), so the bundled file and the expected detections
stay stable.

    python examples/tsunami/generate.py > examples/tsunami/buoy.csv
"""
from __future__ import annotations

import math
import random
import sys

START = 1_269_129_600          # 2010-03-21T00:00:00Z
STEP = 15                      # seconds between samples
DAYS = 2
DEPTH_MM = 4_500_000.0
TIDES = [                      # (amplitude mm, period h, phase rad)
    (500.0, 12.42, 0.7),
    (250.0, 23.93, 2.1),
]
NOISE_MM = 3.0
SURGE = (START + 12 * 3600, 6 * 3600, 150.0)     # start, duration s, height mm
# planted events: (onset, amplitude mm); the sea starts moving at the onset
PLANTED = [
    (START + 7 * 3600 + 7 * 60 + 30, 400.0),             # day 1, 07:07:30
    (START + 21 * 3600 + 41 * 60 + 15, -300.0),          # day 1, 21:41:15, leading depression
    (START + 37 * 3600 + 22 * 60 + 45, 250.0),           # day 2, 13:22:45
]
WAVE_PERIOD = 20 * 60          # s
WAVE_DECAY = 30 * 60           # s (e-folding time of the envelope)


def tsunami(t: float) -> float:
    """The planted events' contribution at time t (mm)."""
    h = 0.0
    for onset, amp in PLANTED:
        tau = t - onset
        if tau >= 0:
            h += amp * math.sin(2 * math.pi * tau / WAVE_PERIOD) * math.exp(-tau / WAVE_DECAY)
    return h


def surge(t: float) -> float:
    """A smooth (raised-cosine) rise of the mean level: no tsunami."""
    start, dur, height = SURGE
    if t <= start:
        return 0.0
    if t >= start + dur:
        return height
    return height * 0.5 * (1 - math.cos(math.pi * (t - start) / dur))


def level(t: float) -> float:
    """The noise-free water-column height at time t (mm)."""
    h = DEPTH_MM + surge(t) + tsunami(t)
    for amp, period_h, phase in TIDES:
        h += amp * math.sin(2 * math.pi * (t - START) / (period_h * 3600) + phase)
    return h


def samples(seed: int = 2010):
    """(time, height mm) every 15 s over DAYS days."""
    rnd = random.Random(seed)
    for i in range(DAYS * 86400 // STEP):
        t = START + i * STEP
        yield t, round(level(t) + rnd.gauss(0.0, NOISE_MM), 1)


def main(out=sys.stdout) -> None:
    out.write("time,height_mm\n")
    for t, h in samples():
        out.write(f"{t},{h:.1f}\n")


if __name__ == "__main__":
    main()
