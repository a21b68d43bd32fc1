"""Generate the bundled stock-price stream (prices.csv).

Daily closing prices of five companies over two years: a geometric random
walk, with planted crashes (a fall of more than 30%) followed, for some,
by a rebound above the pre-crash price within 30 days.  Deterministic
(seeded) so the bundled file and the expected detections stay stable.

    python examples/stock/generate.py > examples/stock/prices.csv
"""
import math
import random
import sys

DAY = 86400
START = 1_704_067_200  # 2024-01-01T00:00:00Z
COMPANIES = ["ACME", "GLOBEX", "INITECH", "UMBRELLA", "HOOLI"]
# company -> (crash day, rebounds?)
PLANTED = {"ACME": (120, True), "GLOBEX": (300, False), "INITECH": (450, True),
           "HOOLI": (600, True)}


def main(out=sys.stdout, days=730, seed=7):
    rnd = random.Random(seed)
    out.write("time,company,price\n")
    price = {c: rnd.uniform(20, 200) for c in COMPANIES}
    shock = {c: [] for c in COMPANIES}
    for c, (day, rebound) in PLANTED.items():
        # falls 40% over 3 days, then (maybe) climbs back 80% over 12 days
        shock[c] = [(day + i, math.log(0.6) / 3) for i in range(3)]
        if rebound:
            shock[c] += [(day + 8 + i, math.log(1.8) / 12) for i in range(12)]
    for d in range(days):
        for c in COMPANIES:
            drift = sum(r for (sd, r) in shock[c] if sd == d)
            price[c] *= math.exp(rnd.gauss(0, 0.012) + drift)
            out.write(f"{START + d * DAY},{c},{price[c]:.2f}\n")


if __name__ == "__main__":
    main()
