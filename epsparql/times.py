"""Application time: seconds, their text in streams, calendar arithmetic.

Times are seconds since the Unix epoch (``int`` or ``float``).  Streams
write them as numbers or as ``xsd:dateTime`` lexical forms; the engine
takes numbers or :class:`datetime.datetime` values.  The calendar is the
proleptic Gregorian one of XSD (year 0 is 1 BCE), computed with integer
arithmetic (Howard Hinnant's days-from-civil), so years beyond
``datetime``'s range work too; :mod:`epsparql.rdf.codec` reads
``xsd:dateTime`` literals with the same functions.
"""
from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone

__all__ = ["seconds", "parse_time", "format_time", "NUMBER_RE",
           "days_from_civil", "civil_from_days", "date_days", "tz_offset"]


def seconds(t: float | int | datetime) -> float | int:
    """Application time in seconds: numbers as given, datetimes since the epoch
    (a naive datetime is taken as UTC)."""
    if isinstance(t, datetime):
        if t.tzinfo is None:
            t = t.replace(tzinfo=timezone.utc)
        return t.timestamp()
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        raise TypeError(f"a time is a number of seconds or a datetime, got {t!r}")
    if isinstance(t, float) and not math.isfinite(t):
        raise ValueError(f"a time must be finite, got {t!r}")
    return t


# ---------------------------------------------------------------------------
# the calendar

_DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (year 0 = 1 BCE)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((m + 9) % 12) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    """Inverse of :func:`days_from_civil`: (year, month, day)."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def date_days(y: int, m: int, d: int) -> int | None:
    """:func:`days_from_civil` of a date that exists, else None."""
    if not 1 <= m <= 12 or d < 1:
        return None
    leap = m == 2 and y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    if d > _DAYS_IN_MONTH[m] + leap:
        return None
    return days_from_civil(y, m, d)


def tz_offset(tz: str | None) -> int | None:
    """Seconds east of UTC of a timezone ``Z`` or ``±hh:mm`` (0 for none);
    None when out of range (beyond ±14:00)."""
    if not tz or tz == "Z":
        return 0
    h, mi = int(tz[1:3]), int(tz[4:6])
    if mi > 59 or h > 14 or (h == 14 and mi):
        return None
    s = h * 3600 + mi * 60
    return -s if tz[0] == "-" else s


# ---------------------------------------------------------------------------
# times as stream text

#: A number as the stream formats write times (no sign-less exponent
#: forms beyond ``1.7e9``; ``inf``/``nan`` are not numbers here).
NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DATETIME_RE = re.compile(
    r"(-?)([0-9]{4,})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?")


def parse_time(text: str) -> int | float:
    """A time as seconds since the Unix epoch: a number (``1700000000``,
    ``-3.5``, ``1.7e9``) or an ``xsd:dateTime`` lexical form
    (``2024-01-01T09:30:00Z``, ``2024-01-01T09:30:00.25+02:00``; no
    timezone = UTC).  Whole seconds come back as ``int``.  Raises
    ValueError for anything else, including non-finite numbers."""
    t = text.strip()
    if NUMBER_RE.fullmatch(t):
        if "." in t or "e" in t or "E" in t:
            v = float(t)
            if not math.isfinite(v):
                raise ValueError(f"time {text!r} is not finite")
            return int(v) if v.is_integer() and abs(v) < 2**53 else v
        return int(t)
    m = _DATETIME_RE.fullmatch(t)
    if m is None:
        low = t.lower().lstrip("+-")
        if low in ("nan", "inf", "infinity"):
            raise ValueError(f"time {text!r} is not finite")
        raise ValueError(f"time {text!r} is neither a number of seconds nor an "
                         f"xsd:dateTime (e.g. 2024-01-01T09:30:00Z)")
    sign, y, mo, d, h, mi, s, frac, tz = m.groups()
    year = -int(y) if sign else int(y)
    days = date_days(year, int(mo), int(d))
    if days is None:
        raise ValueError(f"time {text!r}: no such date")
    hour, minute, sec = int(h), int(mi), int(s)
    if hour == 24 and minute == 0 and sec == 0 and not (frac and frac.strip(".0")):
        pass                                   # 24:00:00 is the next midnight
    elif hour > 23 or minute > 59 or sec > 59:
        raise ValueError(f"time {text!r}: no such time of day")
    offset = tz_offset(tz)
    if offset is None:
        raise ValueError(f"time {text!r}: bad timezone offset")
    whole = days * 86400 + hour * 3600 + minute * 60 + sec - offset
    if frac and frac.strip(".0"):
        return float(f"{whole}{frac}") if whole >= 0 else whole + float("0" + frac)
    return whole


def format_time(t: float | int, style: str = "seconds") -> str:
    """A time as the stream formats write it: seconds (integral values
    without a fraction, others with the shortest exact decimal) or, with
    ``style="iso"``, an ``xsd:dateTime`` in UTC."""
    if style == "iso":
        return _iso(t)
    if isinstance(t, float):
        if t.is_integer() and abs(t) < 1e16:
            return str(int(t))
        return repr(t)
    return str(t)


def _iso(t: float | int) -> str:
    whole = math.floor(t)
    frac = t - whole
    try:
        dt = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=int(whole))
    except OverflowError:
        return format_time(t)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        micro = round(frac * 1e6)
        if micro >= 1_000_000:
            return _iso(whole + 1)
        if micro:
            text += f".{micro:06d}".rstrip("0")
    return text + "Z"
