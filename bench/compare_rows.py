"""Shared by the bench/compare_*.sh reports: pairs the rows of the two sides by key
and says which rows one side lacks instead of dropping them silently, and compares
what both sides computed (shapes, checksums) with a relative tolerance."""
import sys


def pair(a, b, a_name, b_name, what="row"):
    """a, b: dicts key -> row. Returns the keys both have (in a's order, then b's),
    printing one line per key only one side has; the caller prints them in its table
    too. Returns (common_keys, missing) with missing a list of (key, side_that_has_it)."""
    common = [k for k in a if k in b]
    missing = [(k, a_name) for k in a if k not in b] + [(k, b_name) for k in b if k not in a]
    for k, has in missing:
        other = b_name if has == a_name else a_name
        print(f"note: {what} {fmt_key(k)} only on the {has} side (no {other} {what}): not compared", file=sys.stderr)
    return common, missing


def fmt_key(k):
    return " ".join(str(x) for x in k) if isinstance(k, tuple) else str(k)


def same_summary(x, y, rtol=1e-4):
    """x, y: {"shape", "sum", "abs_sum"[, "weighted_sum"]}. Returns an error string or None."""
    if list(x["shape"]) != list(y["shape"]):
        return f"shapes differ: {x['shape']} vs {y['shape']}"
    scale = max(abs(x["abs_sum"]), abs(y["abs_sum"]), 1.0)
    if abs(x["abs_sum"] - y["abs_sum"]) > rtol * scale:
        return f"sum |out| differs: {x['abs_sum']:.9g} vs {y['abs_sum']:.9g}"
    if abs(x["sum"] - y["sum"]) > rtol * scale:
        return f"sum out differs: {x['sum']:.9g} vs {y['sum']:.9g} (scale {scale:.3g})"
    if "weighted_sum" in x and "weighted_sum" in y and abs(x["weighted_sum"] - y["weighted_sum"]) > 3 * rtol * scale:
        return f"position-weighted sum differs: {x['weighted_sum']:.9g} vs {y['weighted_sum']:.9g} (scale {scale:.3g})"
    return None
